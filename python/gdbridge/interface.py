"""The engine's GDExtension interface as Python sees it: the library and its C layer, the API
table, StringNames, method binds and the calls through them, the table of our instances, the
binding's run state, errors and the per-frame hooks.

The bottom of gdbridge's Python layers (above `types` and `_variant`): it knows no Python class of
an engine object (`gdbridge.objects` builds those), so every other module may import it.
"""

from __future__ import annotations

import functools
import gzip
import json
import struct
import sys
import threading
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from gdbridge import _variant
from gdbridge.types import VARIANT_OF_NAME, VariantType

T = VariantType
ffi: Any = None
lib: Any = None
API: dict[str, Any] = {}
_names: dict[str, Any] = {}

# Our own instances by id (the id is the instance pointer the engine hands back to us).
instances: dict[int, Any] = {}
# RefCounted ones only Python references keep alive (see gdbridge.lifetime).
weak_instances: dict[int, Any] = {}


def lookup(iid: int) -> Any:
    """Our Python object for an instance id, or None once it is gone."""
    obj = instances.get(iid)
    if obj is None:
        ref = weak_instances.get(iid)
        obj = ref() if ref is not None else None
    return obj


MAIN_THREAD = threading.main_thread().ident
# Safe on a node inside the tree from any thread: they queue work for the main thread.
THREAD_SAFE = frozenset({"call_deferred", "set_deferred", "call_thread_safe", "set_thread_safe"})
_iface: dict[str, Any] = {}


class GodotError(RuntimeError):
    """An engine call failed (wrong arguments, freed object, unsafe thread)."""


class FreedObjectError(GodotError, AttributeError):
    """A member of an object the engine already freed was asked for (also an AttributeError, so
    `hasattr` and `getattr(obj, name, default)` on a freed wrapper answer instead of raising)."""


class ReportedError(Exception):
    """A call's failure already told the user (once, naming the node and the fix): the binding
    fails the call with no message of its own, so its repeats are not a flood."""


class _CallError(Exception):
    """Raised by the C call with the engine's call error code; turned into a GodotError."""


def _fast_call_missing(*args: Any) -> Any:
    raise GodotError("gdbridge is not attached to an engine")


_fast_call: Callable[..., Any] = _fast_call_missing
_fast_emit_all: Callable[..., Any] = _fast_call_missing
# The binding's run state: the SCENE level's start-up done ("scene_ready"), running in the editor,
# loaded late by a running editor, the initialization level classes register at, and during a
# reload the classes a re-imported module made ("reloading") or the library reload in progress.
state: dict[str, Any] = {"scene_ready": False, "editor": False, "late_load": False, "level": 2}


def report(exc_type: Any, exc: BaseException | None, tb: Any) -> None:
    """cffi's onerror: an exception in a callback becomes an engine error with its traceback
    (a `ReportedError` one is silent: it was told already)."""
    if isinstance(exc, ReportedError):
        return
    text = "".join(traceback.format_exception(exc_type, exc, tb))
    try:
        lib.gdb_error(f"Python: {exc_type.__name__}: {exc}".encode(), text.encode())
    except Exception:
        sys.__stderr__.write(text)


def load_api(api_path: Path) -> dict[str, Any]:
    """The engine API the build trimmed from the engine's dump, stored gzipped (gdbridge_api.json.gz)."""
    return json.loads(gzip.decompress(api_path.read_bytes()))  # type: ignore[no-any-return]  # the engine's API dump: a JSON object


def bind(ffi_: Any, lib_: Any, api_path: Path) -> None:
    """Resolve the interface functions, the C fast module and the builtin methods the C layer uses."""
    global ffi, lib
    ffi, lib = ffi_, lib_
    API.update(load_api(api_path))
    for name, ctype in (
        ("classdb_get_method_bind", "GDExtensionInterfaceClassdbGetMethodBind"),
        ("classdb_construct_object2", "GDExtensionInterfaceClassdbConstructObject2"),
        ("object_get_class_name", "GDExtensionInterfaceObjectGetClassName"),
        ("global_get_singleton", "GDExtensionInterfaceGlobalGetSingleton"),
        ("object_destroy", "GDExtensionInterfaceObjectDestroy"),
        ("variant_get_ptr_utility_function", "GDExtensionInterfaceVariantGetPtrUtilityFunction"),
        ("variant_get_ptr_builtin_method", "GDExtensionInterfaceVariantGetPtrBuiltinMethod"),
        ("variant_get_ptr_constructor", "GDExtensionInterfaceVariantGetPtrConstructor"),
        ("object_get_instance_id", "GDExtensionInterfaceObjectGetInstanceId"),
        ("object_get_instance_from_id", "GDExtensionInterfaceObjectGetInstanceFromId"),
        ("ref_set_object", "GDExtensionInterfaceRefSetObject"),
        ("ref_get_object", "GDExtensionInterfaceRefGetObject"),
        ("variant_call", "GDExtensionInterfaceVariantCall"),
        ("variant_evaluate", "GDExtensionInterfaceVariantEvaluate"),
        ("variant_hash", "GDExtensionInterfaceVariantHash"),
        ("get_library_path", "GDExtensionInterfaceGetLibraryPath"),
    ):
        _iface[name] = ffi.cast(ctype, lib.gdb_get_proc(name.encode()))
    _variant._variant_call = variant_call
    _variant._variant_equal = _variant_equal
    _variant._variant_hash = _iface["variant_hash"]
    _variant._object_ptr = object_ptr
    global _fast_call, _fast_emit_all, take_queued, _fast  # noqa: PLW0603 - set once, at start-up
    if not lib.gdb_install_fast(id(_CallError)):
        raise GodotError("could not create the _gdbridge_fast module")
    import _gdbridge_fast

    _fast_call = _gdbridge_fast.call
    _fast_emit_all = _gdbridge_fast.emit_all
    valid_hash = API["utility"]["is_instance_valid"][0]
    valid = _iface["variant_get_ptr_utility_function"](sn("is_instance_valid"), valid_hash)
    lib.gdb_resolve_objects(valid)
    _variant._fast_fill = _gdbridge_fast.fill
    _variant._fast_read = _gdbridge_fast.read
    take_queued = _gdbridge_fast.take_queued
    _fast = _gdbridge_fast
    builtin = API["builtin"]
    for type_name, vtype in (("Array", T.ARRAY), *((t.name.title().replace("_", ""), t) for t in _PACKED)):
        lib.gdb_set_builtin(vtype, 0, builtin_method(type_name, "size"))
        lib.gdb_set_builtin(vtype, 1, builtin_method(type_name, "resize"))
    for vtype in _PACKED:
        fname = f"{vtype.name.lower()}_operator_index"
        lib.gdb_set_builtin(vtype, 4, lib.gdb_get_proc(fname.encode()))
    for vtype, index in ((T.STRING_NAME, 2), (T.NODE_PATH, 3)):
        lib.gdb_set_builtin(vtype, 2, _iface["variant_get_ptr_constructor"](T.STRING, index))
    lib.gdb_set_builtin(T.NODE_PATH, 3, _iface["variant_get_ptr_constructor"](T.NODE_PATH, 2))
    for name in ("keys", "values"):
        _variant._dict_methods[name] = builtin_method("Dictionary", name)
    if not builtin:
        raise GodotError("extension API has no builtin method table")


_PACKED = (
    T.PACKED_BYTE_ARRAY,
    T.PACKED_INT32_ARRAY,
    T.PACKED_INT64_ARRAY,
    T.PACKED_FLOAT32_ARRAY,
    T.PACKED_FLOAT64_ARRAY,
    T.PACKED_STRING_ARRAY,
    T.PACKED_VECTOR2_ARRAY,
    T.PACKED_VECTOR3_ARRAY,
    T.PACKED_COLOR_ARRAY,
    T.PACKED_VECTOR4_ARRAY,
)


def builtin_method(type_name: str, method: str) -> Any:
    vtype = VARIANT_OF_NAME[type_name]
    fn = _iface["variant_get_ptr_builtin_method"](vtype, sn(method), API["builtin"][f"{type_name}.{method}"])
    if fn == ffi.NULL:
        raise GodotError(f"builtin method {type_name}.{method} not found")
    return ffi.cast("GDExtensionPtrBuiltInMethod", fn)


def sn(name: str) -> Any:
    """A StringName for `name`, created once and kept for the life of the process."""
    found = _names.get(name)
    if found is None:
        made = ffi.new("uint64_t*")
        _variant.new_text(made, T.STRING_NAME, name)
        # Another thread may have made the same name meanwhile (C calls release the GIL): keep one.
        found = _names.setdefault(name, made)
        if found is not made:
            lib.gdb_value_destroy(T.STRING_NAME, made)
    return found


def vtype_of(type_name: str) -> int | None:
    """Variant type of an API type string; None for Variant (any)."""
    if type_name == "Variant":
        return None
    if type_name.startswith(("enum::", "bitfield::")):
        return T.INT
    if type_name.startswith("typedarray::"):
        return T.ARRAY
    if type_name.startswith("typeddictionary::"):
        return T.DICTIONARY
    return VARIANT_OF_NAME.get(type_name, T.OBJECT)


def object_ptr(value: Any) -> Any:
    """The engine pointer of a live object (NULL for None); GodotError once the object was freed."""
    if value is None:
        return ffi.NULL
    ptr = value._ptr
    if ptr is None or lib.gdb_object_from_id(value._id) != ptr:
        raise GodotError(f"{type(value).__name__} instance was freed")
    return ptr


def class_name_of(ptr: Any) -> str:
    out = ffi.new("uint64_t*")
    _iface["object_get_class_name"](ptr, lib.gdb_get_library(), out)
    name = _variant.utf8_of(out, T.STRING_NAME)
    lib.gdb_value_destroy(T.STRING_NAME, out)
    return name


def library_path() -> str:
    """The file of this extension library as the engine loaded it (godot-cpp's get_library_path):
    an absolute path, in the editor, a game or an exported build."""
    out = ffi.new("uint64_t*")
    _iface["get_library_path"](lib.gdb_get_library(), out)
    path = _variant.utf8_of(out, T.STRING)
    lib.gdb_value_destroy(T.STRING, out)
    return path


_frame_hooks: list[Callable[[], None]] = []


def add_frame_hook(hook: Callable[[], None]) -> bool:
    """Call `hook()` once per engine frame, after every node's `_process`, from the main loop itself
    (Godot 4.5+ main-loop callbacks): no node carries it, so no game code can remove it. False when
    the engine has no main-loop callbacks (the caller needs another per-frame hook then)."""
    if not _frame_hooks:
        if not lib.gdb_register_frame_callback():
            return False
        _fast.set_frame_hook(run_frame_hooks)
    if hook not in _frame_hooks:
        _frame_hooks.append(hook)
    return True


def only_frame_hook(hook: Callable[[], None]) -> bool:
    """Whether `hook` is the one hook the frame callback runs."""
    return _frame_hooks == [hook]


def run_frame_hooks() -> None:
    """The main loop's frame callback: every hook, each one's exception reported on its own, once
    per hook and cause (the exception and where it was raised): a hook that fails every frame
    prints one traceback, and its repeats are counted (`frame_hook_failures`)."""
    for hook in tuple(_frame_hooks):
        try:
            hook()
        except Exception as failure:
            name = getattr(hook, "__qualname__", repr(hook))
            where = traceback.extract_tb(failure.__traceback__)[-1]
            cause = (name, type(failure).__name__, where.filename, where.lineno)
            seen = _hook_failures.get(cause, 0)
            _hook_failures[cause] = seen + 1
            if not seen:
                lib.gdb_error(
                    f"Python: frame hook {name} failed (its repeats are counted, not printed:"
                    " gdbridge.interface.frame_hook_failures())".encode(),
                    traceback.format_exc().encode(),
                )


_hook_failures: dict[tuple[str, str, str, int | None], int] = {}


def frame_hook_failures() -> dict[str, int]:
    """How often each frame hook failed, by hook and cause ("hook: Error at file:line")."""
    causes = _hook_failures.items()
    return {f"{name}: {error} at {path}:{line}": count for (name, error, path, line), count in causes}


def clear_frame_hooks() -> None:
    _frame_hooks.clear()
    _fast.set_frame_hook(None)


def shutdown_names() -> None:
    _fast.forget_texts()  # the Strings the C layer keeps for interned strs
    for name in list(_names):
        lib.gdb_value_destroy(T.STRING_NAME, _names.pop(name))


def call_bind(mb: Any, ptr: Any, args: tuple, label: str) -> Any:
    """Call a method bind with Variant arguments (the engine converts and applies defaults)."""
    out: list[Any] = []
    code = lib.gdb_call_py(mb, ptr, id(args), id(out))
    if code == 0:
        return out[0]
    if code == -2:
        raise out[0]
    if code > 0:
        raise GodotError(f"{label}: {_call_error(code)}")
    return _call_bind_python(mb, ptr, args, label)


def variant_call(v: Any, method: str, args: tuple) -> Any:
    """Builtin method `method` of the Variant at `v` (Callable.bind, Signal.get_name, ...)."""
    n = len(args)
    buf = ffi.new("gdb_variant[]", n + 1)  # zeroed: Nil, safe to destroy whatever happens
    ptrs = ffi.new("void*[]", max(n, 1))
    err = ffi.new("GDExtensionCallError*")
    try:
        for i, arg in enumerate(args):
            _variant.to_variant(buf + i, arg)
            ptrs[i] = buf + i
        _iface["variant_call"](v, sn(method), ptrs, n, buf + n, err)
        take_queued()  # Callable.call may have run a script making queued calls
        if err.error:
            raise GodotError(
                f"{T(lib.gdb_vtype(v)).name.title()}.{method}: {_call_error(err.error * 1000 + err.argument)}"
            )
        return _variant.from_variant(buf + n)
    finally:
        for i in range(n + 1):
            lib.gdb_vdestroy(buf + i)


def _variant_equal(a: Any, b: Any) -> bool:
    out = ffi.new("gdb_variant*")
    valid = ffi.new("GDExtensionBool*")
    _iface["variant_evaluate"](0, a, b, out, valid)  # OP_EQUAL
    try:
        return bool(valid[0]) and _variant.from_variant(out) is True
    finally:
        lib.gdb_vdestroy(out)


def _call_bind_python(mb: Any, ptr: Any, args: tuple, label: str) -> Any:
    """call_bind for more than 16 arguments."""
    n = len(args)
    buf = ffi.new("gdb_variant[]", n + 1)
    done = 0
    try:
        for i, arg in enumerate(args):
            _variant.to_variant(buf + i, arg)
            done += 1
        err = lib.gdb_call(mb, ptr, buf, n, buf + n)
        done += 1000
        if err:
            raise GodotError(f"{label}: {_call_error(err)}")
        return _variant.from_variant(buf + n)
    finally:
        for i in range(min(done, n)):
            lib.gdb_vdestroy(buf + i)
        if done >= 1000:
            lib.gdb_vdestroy(buf + n)


def _call_error(code: int) -> str:
    kind, argument = divmod(code, 1000)
    return {
        1: "no such method",
        2: f"argument {argument + 1} has the wrong type",
        3: "too many arguments",
        4: "too few arguments",
        5: "the instance is null",
        6: "method is not const",
    }.get(kind, f"call error {kind}")


def method_bind(class_name: str, name: str, hash_: int) -> int:
    """The address of engine method `class_name.name` (its API hash `hash_`)."""
    found = _iface["classdb_get_method_bind"](sn(class_name), sn(name), hash_)
    if found == ffi.NULL:
        raise GodotError(f"{class_name}.{name} is not in this engine")
    return int(ffi.cast("intptr_t", found))


_binds: dict[tuple[str, str], int] = {}


def call_engine(class_name: str, name: str, receiver_id: int, *args: Any) -> Any:
    """Engine method `class_name.name` on the object of instance id `receiver_id` (0: static), for
    the layers under the Python proxy classes (`gdbridge.objects`) that need one."""
    mb = _bind_of(class_name, name)
    try:
        return _fast_call(mb, receiver_id, *args)
    except _CallError as error:
        what = "the instance was freed" if error.args[0] == -1 else _call_error(error.args[0])
        raise GodotError(f"{class_name}.{name}: {what}") from None


def queue_calls(obj: Any, key: int) -> None:
    """Let the binding queue `obj`'s calls of its `declare.queued` methods under `key` (an int,
    handed to the method's `take` with each row); 0: its calls run in Python again (for an object
    the engine freed already, nothing). Main thread only. The key goes with the object when the
    engine frees it."""
    if lookup(id(obj)) is not obj:  # only an engine instance's key is ever taken back (at its free)
        if key:
            raise TypeError(f"queue_calls takes an object of a Python-defined class, got {obj!r}")
        return  # freed: its key went with it (its address may hold another instance's now)
    _fast.queue_key(obj, key)


class QueuedNames:
    """The numbers a `declare.queued` method's StringName parameter is queued with
    (`queued_names(method)`): a call naming one of `names` is queued with its index there; any other
    name runs the method. Names are numbered on the main thread only (from another, `number` leaves
    them for a later call)."""

    def __init__(self, method: Callable[..., Any]) -> None:
        self.id = getattr(method, "_gd_queued_id", 0)
        if not self.id:
            raise TypeError(f"{getattr(method, '__name__', method)!r} is not a registered queued method")
        self.names: list[str] = []  # by number (the take's rows carry the number)
        self._known: set[str] = set()

    def number(self, names: Iterable[str]) -> None:
        """Give the names not numbered yet (nor empty: never queued) the next numbers, in order."""
        new = [str(name) for name in dict.fromkeys(names) if name and str(name) not in self._known]
        if not new:
            return
        count = _fast.queued_names_add(self.id, new)
        if count < 0:  # shutting down, or another thread: not numbered (a later call numbers them)
            return
        self.names += new
        self._known.update(new)
        if count != len(self.names):
            raise RuntimeError(f"queued names: the binding numbered {count}, Python {len(self.names)}")


_queued_names: dict[int, QueuedNames] = {}


def queued_names(method: Callable[..., Any]) -> QueuedNames:
    """The names of `declare.queued` method `method`'s StringName parameter (the function, once its
    class is registered), one table a method."""
    table = QueuedNames(method)
    return _queued_names.setdefault(table.id, table)


class AnswerTable:
    """The C table of a `declare.answered` method (`answer_table(read)`), Main thread only."""

    def __init__(self, read: Callable[..., Any]) -> None:
        self.id = getattr(read, "_gd_answered_id", 0)
        if not self.id:
            raise TypeError(f"{getattr(read, '__name__', read)!r} is not a registered answered method")
        self.close: Callable[[int], None] = functools.partial(_fast.answers_close, self.id)
        """close(key): the read's calls on `key` run in Python until the next `set`."""

    def set(  # noqa: PLR0917 - the table's columns
        self, pair_keys: Any, pair_ids: Any, answers: Any, keys: Any, writes_left: Any, after_write: Any
    ) -> None:
        """Replace the table (int64 arrays): the answer of each (key, id) pair, and per key for how
        many more queued calls of the writer the answers hold and the answer for an id one of
        those calls names (-1: the method answers it). Keys not listed are answered by the method."""
        import numpy as np

        columns = [np.ascontiguousarray(column, dtype=np.int64) for column in
                   (pair_keys, pair_ids, answers, keys, writes_left, after_write)]  # fmt: skip
        _fast.answers_set(self.id, *columns)

    def clear(self) -> None:
        """Every call of the read runs in Python until the next `set`."""
        _fast.answers_clear(self.id)

    def asked(self) -> list[tuple[int, int]]:
        """The (key, id) pairs answered from the table since the last call, in call order."""
        return list(map(tuple, self.asked_pairs().tolist()))

    def asked_pairs(self) -> Any:
        """`asked` as a read-only int64 array of shape (pairs, 2), one (key, id) pair a row."""
        import numpy as np

        return np.frombuffer(_fast.answers_asked(self.id), dtype=np.int64).reshape(-1, 2)


class ChoiceTable:
    """The C table of a `declare.chosen` method (`choice_table(read)`). Main thread only."""

    def __init__(self, read: Callable[..., Any]) -> None:
        self.id = getattr(read, "_gd_chosen_id", 0)
        if not self.id:
            raise TypeError(f"{getattr(read, '__name__', read)!r} is not a registered chosen method")
        self.close: Callable[[int], None] = functools.partial(_fast.choices_close, self.id)
        """close(key): the read's calls on `key` run in Python until it is put again."""
        self.moved: Callable[[int], tuple[float, ...] | None]
        self.moved = functools.partial(_fast.choices_moved, self.id)
        """moved(key): the open entry's newest numbers when its group's check answered a call with
        other numbers since it was put or last read here, else None."""

    def put(
        self, groups: list[tuple[Any, ...]], keys: Any, group_of: Any, values: Any, answers: Any
    ) -> None:
        """Put entries (each replaced, open): `groups` (input names, answer names[, check]) each,
        every group put so far, in the order first put (the table adds the new ones); per key
        (int64) its group (an index into `groups`), its answer (an index into that group's names)
        and, in `values` (float64, the keys one after another), the number of each of its group's
        input names. Keys never put are answered by the method. A check, None or (function
        address, data address): a C function `int32_t check(void *data, const double *values,
        int64_t answer)` saying whether an entry's answer holds for other finite numbers (then the
        call gets it and the entry keeps them: `moved`); it and its data must outlive the table."""
        import numpy as np

        _fast.choices_put(
            self.id, [(list(inputs), list(names), *check[:1]) for inputs, names, *check in groups],
            np.ascontiguousarray(keys, dtype=np.int64), np.ascontiguousarray(group_of, dtype=np.int64),
            np.ascontiguousarray(values, dtype=np.float64), np.ascontiguousarray(answers, dtype=np.int64),
        )  # fmt: skip

    def clear(self) -> None:
        """Every entry goes (the groups too): every call of the read runs in Python until the next `put`."""
        _fast.choices_clear(self.id)


def choice_table(read: Callable[..., Any]) -> ChoiceTable:
    """The C table of `declare.chosen` method `read` (the function, once its class is registered)."""
    return ChoiceTable(read)


def answer_table(read: Callable[..., Any]) -> AnswerTable:
    """The C table of `declare.answered` method `read` (the function, once its class is registered)."""
    return AnswerTable(read)


def update_busy(busy: bool) -> None:
    """Raise the flag (another thread is about to work on Python's state: the main thread waits, in
    C, before it enters Python) or lower it (that work is done). Calls the binding queues or answers
    in C do not wait."""
    _fast.update_busy(busy)


def update_waited() -> float:
    """The seconds the main thread waited for the flag to come down since the last call."""
    return float(_fast.update_waited())


class HandedFrame(NamedTuple):
    """A frame the main loop handed to the update thread (`frame_wait`)."""

    delta: float  # the frame's (scaled) process delta, Node.get_process_delta_time
    time_scale: float  # Engine.get_time_scale at the frame's start
    paused: bool  # SceneTree.is_paused
    wall: float  # time.monotonic() then
    signals: float  # seconds the signals armed with took to emit


def frame_setup(root: Any, engine: Any, tree: Any) -> None:
    """What a frame run on the update thread (`frame_arm`) reads: the root Window's process delta,
    the Engine's time scale, the SceneTree's pause. Main thread."""
    _fast.frame_setup(
        _bind_of("Object", "emit_signal"),
        _bind_of("Node", "get_process_delta_time"), root._id,
        _bind_of("Engine", "get_time_scale"), engine._id,
        _bind_of("SceneTree", "is_paused"), tree._id,
    )  # fmt: skip


def frame_arm(calls: list[tuple[Any, ...]]) -> None:
    """From the update thread, before it lowers the flag (`update_busy(False)`): the next frame
    runs no Python on the main thread. Its callback emits `calls` (as `emit_signals` takes them),
    reads the frame's values and hands them, with the queued calls, to the update thread
    (`frame_wait`), unless main-thread Python runs first (the frame is then Python's, which emits
    `calls` first: `emit_prepared`). A call that does not convert raises, nothing armed."""
    _fast.frame_arm(calls)


def frame_wait() -> HandedFrame | None:
    """On the update thread after `frame_arm`: the frame handed to it, the flag up and the queued
    calls handed to Python, or None once the frame is Python's (disarmed)."""
    handed = _fast.frame_wait()
    return None if handed is None else HandedFrame(*handed)


def frame_disarm() -> None:
    """The next frame is Python's (wakes a `frame_wait`)."""
    _fast.frame_disarm()


def emit_prepared() -> None:
    """Emit now, in order, the signals an update armed with that no frame emitted yet. Main thread."""
    _fast.emit_prepared()


def frame_rest(take: Callable[[list[HandedFrame]], None]) -> None:
    """The server rests from the next frame on: until main-thread Python runs, a call is queued or
    256 frames are kept, each frame callback keeps the frame's values in C and runs no Python. The
    next main-thread Python entry first hands them to `take`, in order, on the main thread (each a
    `HandedFrame`, its `signals` 0.0). Any thread: the update thread rests before it lowers the flag."""
    _fast.frame_rest(functools.partial(_hand_rested, take))


def _hand_rested(take: Callable[[list[HandedFrame]], None], raw: bytes) -> None:
    take([
        HandedFrame(delta, time_scale, paused != 0.0, wall, 0.0)
        for delta, time_scale, paused, wall in struct.iter_unpack("4d", raw)
    ])  # fmt: skip


def rested_frames() -> int:
    """How many frames a resting server kept in C since start (`frame_rest`)."""
    return int(_fast.rested_frames())


def fast_frames() -> int:
    """How many frames ran on the update thread since start (`frame_arm`)."""
    return int(_fast.fast_frames())


def frame_seconds() -> float:
    """The whole time of the last main-loop frame callback (`add_frame_hook`'s), in seconds: the
    hooks, and before them the queued calls' hand-over to Python and the wait for the GIL, which a
    clock in the hooks does not see (0.0 before the first)."""
    return _fast.frame_seconds()


def queued_total() -> int:
    """How many calls the binding queued in C since start."""
    return _fast.queued_total()


def checked_total() -> int:
    """How many calls a choice table's check answered (with numbers other than its entry's) since start."""
    return _fast.checked_total()


def answered_total() -> int:
    """How many calls the binding answered in C since start."""
    return _fast.answered_total()


def _no_queue() -> None:
    """Before `bind` (no engine): nothing is ever queued."""


take_queued: Callable[[], None] = _no_queue  # hand the queued calls to Python now; set by bind
_fast: Any = None  # the _gdbridge_fast module, set by bind


def _bind_of(class_name: str, name: str) -> int:
    """Engine method `class_name.name`'s bind, resolved once."""
    key = (class_name, name)
    mb = _binds.get(key)
    if mb is None:
        mb = _binds[key] = method_bind(class_name, name, API["classes"][class_name]["methods"][name][0])
    return mb


def call_many(class_name: str, name: str, calls: list[tuple[Any, ...]]) -> list[tuple[int, str]]:
    """Engine method `class_name.name` on many objects in one crossing: each call is (object's
    instance id, *arguments), made in order. A freed object's call is skipped, and one that fails
    does not stop the others: returns the position and the reason of each that failed. Main thread
    only, as the scene tree is."""
    return [
        (position, "its arguments do not convert to Variants" if code == -2 else _call_error(code))
        for position, code in _fast_emit_all(_bind_of(class_name, name), calls)
        if code != -1
    ]


def emit_signals(calls: list[tuple[Any, ...]]) -> list[tuple[int, str]]:
    """Emit many signals in one crossing: each call is (object's instance id, signal name as a
    StringName, *arguments), emitted in order as `obj.emit_signal(name, *arguments)` would
    (`call_many` of Object.emit_signal)."""
    return call_many("Object", "emit_signal", calls)


def node_poses(ids: Any, dimension: int, out: Any) -> None:
    """Each node's global position then unit facing (2D: its x axis; 3D: -z) into `out`, in one
    crossing: `ids` a buffer of instance ids (8-byte integers), `out` a float64 buffer of
    len(ids) x 2 x dimension; a row of NaN for an id that is 0, freed, or not a Node2D (2) /
    Node3D (3). Main thread only, as the scene tree is."""
    if dimension not in (2, 3):
        raise ValueError(f"node_poses: the dimension is 2 or 3, not {dimension!r}")
    owner = "CanvasItem" if dimension == 2 else "Node3D"  # (a Node2D's is CanvasItem's)
    _fast.poses(_bind_of(owner, "get_global_transform"), dimension, ids, out)


MOVE_SKIP, MOVE_HALT, MOVE_GO = 0, 1, 2  # what `move_bodies` does with a body (its mode's low bits)
MOVE_FACE, MOVE_KEEP_VERTICAL = 4, 8  # flags added to a mode


def move_bodies(dimension: int, ids: Any, velocities: Any, yaws: Any, modes: Any) -> None:
    """Many CharacterBody2D (2) / CharacterBody3D (3) moves in one crossing: per body (`ids`, a
    buffer of 8-byte instance ids) its velocity (`velocities`, float64, ids x dimension) set;
    MOVE_HALT stops there, MOVE_GO then turns it to its yaw (`yaws`, float64 radians: a 2D body's
    rotation, a 3D body's about y) with MOVE_FACE and calls move_and_slide. MOVE_KEEP_VERTICAL
    keeps a 3D body's own vertical velocity. A body that is 0, freed or of another class is
    skipped. Main thread only, as physics is."""
    if dimension not in (2, 3):
        raise ValueError(f"move_bodies: the dimension is 2 or 3, not {dimension!r}")
    body, node = f"CharacterBody{dimension}D", f"Node{dimension}D"
    binds = (
        _bind_of(body, "set_velocity"), _bind_of(body, "get_velocity"), _bind_of(body, "move_and_slide"),
        _bind_of(node, "set_global_rotation"), _bind_of(node, "get_global_rotation"),
    )  # fmt: skip
    _fast.moves(dimension, binds, ids, velocities, yaws, modes)


def check_thread(node: Any, label: str) -> None:
    global _inside_tree_bind  # noqa: PLW0603 - resolved once, on first use
    if _inside_tree_bind is None:
        spec = API["classes"]["Node"]["methods"]["is_inside_tree"]
        _inside_tree_bind = _iface["classdb_get_method_bind"](sn("Node"), sn("is_inside_tree"), spec[0])
    if call_bind(_inside_tree_bind, node._ptr, (), "Node.is_inside_tree"):
        raise GodotError(
            f"{label} called from a non-main thread on a node inside the scene tree; "
            "use call_deferred, set_deferred or call_thread_safe"
        )


_inside_tree_bind: Any = None
