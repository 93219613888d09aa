"""Engine objects in Python: proxy classes generated from `extension_api.json`, method calls, singletons.

`gdbridge.classes.Node` (or `engine_class("Node")`) is a Python class whose methods and properties
call the engine's; Python-declared classes subclass these. An Object pointer coming back from the
engine maps to its Python instance when it is one of ours, else to a fresh proxy of its class.
"""

from __future__ import annotations

import functools
import gzip
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from gdbridge import _variant
from gdbridge.types import VARIANT_OF_NAME, VariantType

T = VariantType
ffi: Any = None
lib: Any = None
API: dict[str, Any] = {}
_names: dict[str, Any] = {}
_classes: dict[str, type] = {}
# Our own instances by id (the id is the instance pointer the engine hands back to us).
instances: dict[int, Any] = {}
# RefCounted ones only Python references keep alive (see gdbridge.classdb, "RefCounted lifetime").
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


class _CallError(Exception):
    """Raised by the C call with the engine's call error code; turned into a GodotError."""


def _fast_call_missing(*args: Any) -> Any:
    raise GodotError("gdbridge is not attached to an engine")


_fast_call: Callable[..., Any] = _fast_call_missing
_fast_emit_all: Callable[..., Any] = _fast_call_missing
_emit_signal_bind = 0  # Object.emit_signal's method bind, resolved on first use


def bind(ffi_: Any, lib_: Any, api_path: Path) -> None:
    global ffi, lib
    ffi, lib = ffi_, lib_
    API.update(json.loads(gzip.decompress(api_path.read_bytes())))  # gdbridge_api.json.gz
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
    _variant._wrap_object = wrap
    _variant._wrap_variant = wrap_variant
    _variant._variant_call = variant_call
    _variant._variant_equal = _variant_equal
    _variant._variant_hash = _iface["variant_hash"]
    _variant._object_ptr = object_ptr
    global _fast_call, _fast_emit_all, _fast_dropped, _forget_texts, take_queued, _fast  # noqa: PLW0603 - set once, at start-up
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
    _fast_dropped = _gdbridge_fast.dropped
    _forget_texts = _gdbridge_fast.forget_texts
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


# ---- objects ----
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


def wrap(ptr: Any, owned: bool = False) -> Any:
    """The Python object for an engine Object pointer (None for null)."""
    if ptr == ffi.NULL:
        return None
    iid = lib.gdb_instance_of(ptr)
    if iid:
        obj = lookup(iid)
        if obj is not None and obj._gd_owns is False and obj._gd_refcounted:
            _arrive(obj)
        return obj
    name = class_name_of(ptr)
    cls = engine_class(name) if name in API["classes"] else _nearest_class(name)
    proxy = object.__new__(cls)
    proxy._ptr = ptr
    proxy._id = lib.gdb_object_id(ptr)
    if cls._gd_refcounted:
        if not owned:
            _ref_method("reference")(proxy)
        proxy._gd_owns = True
    return proxy


# ---- Python-defined RefCounted objects arriving in Python ----
# One the engine made carries no Python reference (its count is the engine's own, as in godot-cpp).
# When it arrives (an argument, an engine call's result) it takes one at once, so the engine cannot
# free it under Python; one Python makes (`Tally()`) holds one from the start. At the end of the
# engine's callback `settle_arrivals` gives that reference back unless Python kept the object
# (stored it: more references than the bookkeeping's own); a kept one stays owned until Python's
# references go (see gdbridge.classdb, "RefCounted lifetime").
arrivals: list[Any] = []
# Those Python holds an engine reference for (`_gd_owns`) while `instances` also holds them (the
# engine holds references too, or the move to weak is pending): when nothing else refers to one,
# Python let go of it, and its engine reference is given back at the end of that callback, as a
# godot-cpp Ref<T> going out of scope (the count falls at once, or the object is freed).
held: dict[int, Any] = {}


def hold(obj: Any) -> None:
    if not held:
        lib.gdb_watch_held(1)  # the C settle checks `held` only while it has members
    held[id(obj)] = obj


def unhold(iid: int) -> Any:
    """The held object of `iid` (None if it was not held), no longer held."""
    obj = held.pop(iid, None)
    if obj is not None and not held:
        lib.gdb_watch_held(0)
    return obj

_fast_dropped: Callable[[], list[int]] = list  # _gdbridge_fast.dropped, set by bind
_forget_texts: Callable[[], object] = dict  # _gdbridge_fast.forget_texts, set by bind


def _arrive(obj: Any) -> None:
    _ref_method("reference")(obj)
    obj._gd_owns = True
    arrivals.append(obj)


def settle_arrivals() -> None:
    from gdbridge import classdb

    while arrivals:
        obj = arrivals.pop()
        # `instances`, this name and getrefcount's argument: 3; more means Python kept it.
        if sys.getrefcount(obj) > 3:
            classdb.created_by_python(obj)
            continue
        obj._gd_owns = False
        if obj._ptr is not None and _ref_method("unreference")(obj):
            _iface["object_destroy"](obj._ptr)
    if held:
        from gdbridge import classdb

        classdb.release_dropped(_fast_dropped())


def wrap_variant(v: Any) -> Any:
    """The object an Object Variant holds: None for null, a freed wrapper (invalid, every use
    raises GodotError) when the object is gone; the freed memory is never read."""
    found = ffi.new("uint64_t*")
    ptr = lib.gdb_variant_object(v, found)
    if ptr != ffi.NULL:
        return wrap(ptr)
    if lib.gdb_as_object(v) == ffi.NULL:
        return None
    return freed_object()


def freed_object() -> Any:
    """A wrapper standing for an object the engine already freed (like GDScript's "previously freed")."""
    proxy = object.__new__(engine_class("Object"))
    proxy._ptr = None
    proxy._id = 0
    return proxy


def _nearest_class(name: str) -> type:
    # A class the API file does not know (another extension's): ask ClassDB for its ancestry.
    classdb = singleton("ClassDB")
    while name and name not in API["classes"]:
        name = str(classdb.get_parent_class(name))
    return engine_class(name or "Object")


def _ref_method(name: str) -> Callable[..., Any]:
    return getattr(engine_class("RefCounted"), name)


def singleton(name: str) -> Any:
    """An engine singleton (Engine, ProjectSettings, Input, ...) or one registered from Python."""
    ptr = _iface["global_get_singleton"](sn(name))
    if ptr == ffi.NULL:
        raise GodotError(f"no engine singleton named {name!r}")
    return wrap(ptr)


_own_singletons: list[tuple[str, Any]] = []


def register_singleton(name: str, obj: Any) -> None:
    """Make `obj` an engine singleton: `Engine.get_singleton(name)`, and `name.method()` in GDScript.

    Call it while the entry modules are imported (SCENE level), so scripts compiled later see the
    name. gdbridge unregisters and frees it at shutdown.
    """
    from gdbridge import classdb

    if classdb.state.get("reloading") is not None and any(known == name for known, _ in _own_singletons):
        # A reloaded module made its singleton again: the engine keeps the first one.
        if not type(obj)._gd_refcounted:
            obj.free()
        return
    singleton("Engine").register_singleton(name, obj)
    _own_singletons.append((name, obj))


_frame_hooks: list[Callable[[], None]] = []


def add_frame_hook(hook: Callable[[], None]) -> bool:
    """Call `hook()` once per engine frame, after every node's `_process`, from the main loop itself
    (Godot 4.5+ main-loop callbacks): no node carries it, so no game code can remove it. False when
    the engine has no main-loop callbacks (the caller needs another per-frame hook then)."""
    if not _frame_hooks and not lib.gdb_register_frame_callback():
        return False
    if hook not in _frame_hooks:
        _frame_hooks.append(hook)
    return True


def run_frame_hooks() -> None:
    """The main loop's frame callback: every hook, each one's exception reported on its own."""
    for hook in tuple(_frame_hooks):
        try:
            hook()
        except Exception:
            import traceback

            name = getattr(hook, "__qualname__", repr(hook))
            lib.gdb_error(f"Python: frame hook {name} failed".encode(), traceback.format_exc().encode())


def shutdown() -> None:
    """SCENE-level teardown: our singletons go, then the StringNames cached by `sn`."""
    _frame_hooks.clear()
    engine = singleton("Engine")
    while _own_singletons:
        name, obj = _own_singletons.pop()
        engine.unregister_singleton(name)
        if not type(obj)._gd_refcounted and obj._ptr is not None:
            obj.free()


def shutdown_names() -> None:
    _forget_texts()  # the Strings the C layer keeps for interned strs
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


class GodotClassMeta(type):
    """Calling a Godot class constructs the engine object (which builds the Python side)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            raise TypeError(f"{cls.__name__}() takes no arguments; set properties after creating it")
        info = cls.__dict__.get("_gd_info")
        if info is None and cls._gd_native:
            if not cls._gd_instantiable:
                raise TypeError(f"{cls.__name__} cannot be instantiated")
            ptr = _iface["classdb_construct_object2"](sn(cls.__name__))
            obj = wrap(ptr, owned=True)
            if cls._gd_refcounted:
                _ref_method("init_ref")(obj)
            obj.notification(0)  # NOTIFICATION_POSTINITIALIZE: the constructor's caller sends it
            return obj
        if info is None:
            raise TypeError(f"{cls.__name__} is not registered with Godot")
        if info.abstract:
            raise TypeError(
                f"{cls.__name__} is abstract (declared abstract=True): create one of its subclasses"
            )
        from gdbridge import classdb

        with classdb.constructing_from_python():
            if info.internal:  # the engine makes no unexposed class: its native base, then ours
                ptr = classdb.create(info.cid, 0)
            else:
                ptr = _iface["classdb_construct_object2"](sn(info.name))
        obj = lookup(lib.gdb_instance_of(ptr)) if ptr != ffi.NULL else None
        if obj is None:
            raise GodotError(f"the engine made no {info.name} (see its error above)")
        if cls._gd_refcounted:
            arrivals.append(obj)  # Python's reference is given back if Python does not keep it
        obj.notification(0)  # NOTIFICATION_POSTINITIALIZE, through the whole class chain
        return obj


class Object(metaclass=GodotClassMeta):
    """Root of every Godot class seen from Python."""

    __slots__ = ("__weakref__", "_gd_owns", "_id", "_ptr")
    _gd_native: ClassVar[bool] = True
    _gd_refcounted: ClassVar[bool] = False
    _gd_instantiable: ClassVar[bool] = True
    _gd_is_node: ClassVar[bool] = False

    def __bool__(self) -> bool:
        """False once the engine freed the object (as `if obj:` is in GDScript)."""
        return self.is_valid

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Object) and self._id != 0 and self._id == other._id)

    def __hash__(self) -> int:
        return hash(self._id)

    def __repr__(self) -> str:
        if not self.is_valid:
            return f"<{type(self).__name__} (freed)>"
        return f"<{type(self).__name__}#{self._id}>"

    def __del__(self) -> None:
        if getattr(self, "_gd_owns", False) and self._ptr is not None and lib is not None:
            self._gd_owns = False
            if _ref_method("unreference")(self):
                _iface["object_destroy"](self._ptr)

    def __init_subclass__(
        cls,
        *,
        name: str | None = None,
        tool: bool = False,
        abstract: bool = False,
        icon: str = "",
        internal: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        if "_gd_native" not in cls.__dict__:
            from gdbridge import classdb

            classdb.collect(cls, name, tool, abstract, icon, internal)

    def __getattr__(self, name: str) -> Any:
        """Script members (a GDScript attached to an engine object): methods and properties."""
        if name.startswith(("__", "_gd")) or name in ("_ptr", "_id"):
            raise AttributeError(name)
        if not self.is_valid:
            raise FreedObjectError(f"{type(self).__name__}.{name}: the instance was freed")
        if self.has_method(name):
            return lambda *args: self.call(name, *args)
        if any(prop["name"] == name for prop in self.get_property_list()):
            return self.get(name)
        raise AttributeError(f"{type(self).__name__} object has no attribute, method or property {name!r}")

    def free(self) -> None:
        """Delete the object now (Object.free); Python-defined instances go with it."""
        if self._ptr is None or lib.gdb_object_from_id(self._id) != self._ptr:
            raise GodotError(f"{type(self).__name__} instance was already freed")
        ptr = self._ptr
        if type(self)._gd_refcounted:
            raise GodotError(f"{type(self).__name__} is reference-counted: drop references instead of free()")
        self._ptr = None
        _iface["object_destroy"](ptr)

    @property
    def is_valid(self) -> bool:
        """False once the engine freed the object."""
        return self._ptr is not None and lib.gdb_object_from_id(self._id) == self._ptr


def engine_class(name: str) -> type:
    """The Python proxy class of engine class `name`, built on first use."""
    found = _classes.get(name)
    if found is not None:
        return found
    spec = API["classes"][name]
    parent = engine_class(spec["parent"]) if spec["parent"] else None
    if parent is None:
        cls = Object
        namespace: dict[str, Any] = {}
    else:
        namespace = {
            "__slots__": (),
            "__module__": "gdbridge.classes",
            "__qualname__": name,
            "_gd_native": True,
        }
        cls = None
    namespace["_gd_refcounted"] = spec["refcounted"]
    namespace["_gd_instantiable"] = spec["instantiable"]
    if name == "Node":
        namespace["_gd_is_node"] = True
    for method, mspec in spec["methods"].items():
        namespace[method] = _engine_method(name, method, mspec)
    for prop, (setter, getter, index) in spec["properties"].items():
        if prop not in namespace:
            namespace[prop] = _engine_property(setter, getter, index)
    for signal_name in spec.get("signals", []):
        if signal_name not in namespace:
            namespace[signal_name] = _engine_signal(signal_name)
    for constant, value in spec["constants"].items():
        namespace.setdefault(constant, value)
    if cls is None:
        cls = GodotClassMeta(name, (parent,), namespace)
    else:
        for key, value in namespace.items():
            setattr(cls, key, value)
    _classes[name] = cls
    return cls


def method_bind(class_name: str, name: str, hash_: int) -> int:
    """The address of engine method `class_name.name` (its API hash `hash_`)."""
    found = _iface["classdb_get_method_bind"](sn(class_name), sn(name), hash_)
    if found == ffi.NULL:
        raise GodotError(f"{class_name}.{name} is not in this engine")
    return int(ffi.cast("intptr_t", found))


def _engine_method(class_name: str, name: str, spec: list) -> Callable[..., Any]:
    hash_, is_static = spec[0], spec[1]
    mb = None
    label = f"{class_name}.{name}"
    thread_safe = name in THREAD_SAFE

    def bind() -> int:
        nonlocal mb
        mb = method_bind(class_name, name, hash_)
        return mb

    def failed(error: _CallError, owner: str) -> GodotError:
        if error.args[0] == -1:
            return GodotError(f"{label}: {owner} instance was freed")
        return GodotError(f"{label}: {_call_error(error.args[0])}")

    def method(self: Any, *args: Any) -> Any:
        if self._ptr is None:
            raise GodotError(f"{label}: {type(self).__name__} instance was freed")
        if not thread_safe and self._gd_is_node and threading.get_ident() != MAIN_THREAD:
            check_thread(self, label)
        try:  # the C call looks the object up by id: a freed one is refused
            return _fast_call(mb or bind(), self._id, *args)
        except _CallError as error:
            raise failed(error, type(self).__name__) from None

    def static(*args: Any) -> Any:
        """A static method has no receiver: every argument is the engine's (address 0)."""
        try:
            return _fast_call(mb or bind(), 0, *args)
        except _CallError as error:
            raise failed(error, class_name) from None

    chosen = static if is_static else method
    chosen.__name__ = name
    chosen.__qualname__ = label
    return staticmethod(static) if is_static else method  # type: ignore[return-value]


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


class AnswerTable:
    """The C table of a `declare.answered` method (`answer_table(read)`), Main thread only."""

    def __init__(self, read: Callable[..., Any]) -> None:
        self.id = getattr(read, "_gd_answered_id", 0)
        if not self.id:
            raise TypeError(f"{getattr(read, '__name__', read)!r} is not a registered answered method")
        self.close: Callable[[int], None] = functools.partial(_fast.answers_close, self.id)
        """close(key): the read's calls on `key` run in Python until the next `set`."""

    def set(  # noqa: PLR0917 - the table's columns
        self, pair_keys: Any, pair_ids: Any, answers: Any, keys: Any, budgets: Any, written: Any
    ) -> None:
        """Replace the table: the answer of each (key, id) pair, and per key how many queued calls
        of the writer the answers survive and the answer for an id one of them wrote (-1: none).
        int64 arrays."""
        import numpy as np

        columns = [np.ascontiguousarray(column, dtype=np.int64) for column in
                   (pair_keys, pair_ids, answers, keys, budgets, written)]  # fmt: skip
        _fast.answers_set(self.id, *columns)

    def clear(self) -> None:
        """Every call of the read runs in Python until the next `set`."""
        _fast.answers_clear(self.id)

    def asked(self) -> list[tuple[int, int]]:
        """The (key, id) pairs answered from the table since the last call, in call order."""
        import numpy as np

        pairs = np.frombuffer(_fast.answers_asked(self.id), dtype=np.int64).reshape(-1, 2)
        return list(map(tuple, pairs.tolist()))


def answer_table(read: Callable[..., Any]) -> AnswerTable:
    """The C table of `declare.answered` method `read` (the function, once its class is registered)."""
    return AnswerTable(read)


def queued_total() -> int:
    """How many calls the binding queued in C since start."""
    return _fast.queued_total()


def answered_total() -> int:
    """How many calls the binding answered in C since start."""
    return _fast.answered_total()


def _no_queue() -> None:
    """Before `bind` (no engine): nothing is ever queued."""


take_queued: Callable[[], None] = _no_queue  # hand the queued calls to Python now; set by bind
_fast: Any = None  # the _gdbridge_fast module, set by bind


def emit_signals(calls: list[tuple[Any, ...]]) -> list[tuple[int, str]]:
    """Emit many signals in one crossing: each call is (object's instance id, signal name as a
    StringName, *arguments), emitted in order as `obj.emit_signal(name, *arguments)` would. A freed
    object's call is skipped, and one that fails does not stop the others: returns the position
    and the reason of each that failed. Main thread only, as emitting is."""
    global _emit_signal_bind  # noqa: PLW0603 - resolved once, on first use
    if not _emit_signal_bind:
        spec = API["classes"]["Object"]["methods"]["emit_signal"]
        _emit_signal_bind = method_bind("Object", "emit_signal", spec[0])
    return [
        (position, "its arguments do not convert to Variants" if code == -2 else _call_error(code))
        for position, code in _fast_emit_all(_emit_signal_bind, calls)
        if code != -1
    ]


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


def _engine_signal(name: str) -> property:
    from gdbridge.declare import BoundSignal

    return property(lambda self: BoundSignal(self, name), doc=f"The engine signal {name!r}.")


def _engine_property(setter: str, getter: str, index: int | None) -> property:
    def get(self: Any) -> Any:
        method = getattr(self, getter)
        return method() if index is None else method(index)

    def put(self: Any, value: Any) -> None:
        method = getattr(self, setter)
        if index is None:
            method(value)
        else:
            method(index, value)

    return property(get if getter else None, put if setter else None)


def _typed_argument(vtype: int, value: Any, label: str) -> Any:
    """`value` as a Python value that crosses as exactly `vtype` (a typed ptrcall argument)."""
    if vtype == T.FLOAT and isinstance(value, int | float):
        return float(value)
    if vtype == T.INT and isinstance(value, int) and not isinstance(value, float):
        return int(value)
    if vtype == T.BOOL and isinstance(value, bool | int):
        return bool(value)
    if value is not None and vtype != T.NIL and _variant.type_of(value) == vtype:
        return value
    if vtype == T.OBJECT and value is None:
        return None
    raise TypeError(f"{label}: expected {T(vtype).name}, got {type(value).__name__}")


class Utility:
    """Global utility functions (print, str, lerpf, randi, ...): `gdbridge.utility.lerpf(0, 10, 0.5)`.

    Every utility of the engine API is callable: typed arguments are converted to the declared type
    (a wrong type or count raises TypeError before the engine is called), results come back in the
    declared type. `is_instance_valid(obj)` is also True/False for a freed Python wrapper."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        spec = API["utility"].get(name)
        if spec is None:
            raise AttributeError(f"Godot has no utility function named {name!r}")
        hash_, vararg, arg_types, ret_type = spec
        found = _iface["variant_get_ptr_utility_function"](sn(name), hash_)
        if found == ffi.NULL:
            raise GodotError(f"utility function {name} is not in this engine")
        fn = ffi.cast("GDExtensionPtrUtilityFunction", found)
        arg_vtypes = [vtype_of(t) for t in arg_types]  # None: a Variant
        ret_vtype = vtype_of(ret_type) if ret_type else T.NIL
        # Vararg utilities check their count themselves (and a Variant-typed print takes none).
        least = len(arg_vtypes) if not vararg or ret_type else 0

        def call(*args: Any) -> Any:
            n = len(args)
            if n < least or (not vararg and n != len(arg_vtypes)):
                wanted = f"at least {least}" if vararg else str(len(arg_vtypes))
                raise TypeError(f"{name}() takes {wanted} arguments ({n} given)")
            if name == "is_instance_valid" and isinstance(args[0], Object):
                return args[0].is_valid
            buf = ffi.new("gdb_variant[]", n + 1)  # zeroed: Nil, safe to destroy
            ptrs = ffi.new("void*[]", max(n, 1))
            try:
                for i, arg in enumerate(args):
                    vtype = arg_vtypes[i] if i < len(arg_vtypes) and not vararg else None
                    if vtype is None:
                        _variant.to_variant(buf + i, arg)
                        ptrs[i] = buf + i
                    else:
                        value = _typed_argument(vtype, arg, f"{name}() argument {i + 1}")
                        _variant.to_variant(buf + i, value, vtype)
                        ptrs[i] = lib.gdb_vinternal(buf + i, vtype)
                return _utility_result(fn, ptrs, n, ret_vtype, buf + n)
            finally:
                for i in range(n + 1):
                    lib.gdb_vdestroy(buf + i)

        call.__name__ = name
        setattr(self, name, call)
        return call


def _utility_result(fn: Any, ptrs: Any, n: int, ret_vtype: int | None, slot: Any) -> Any:
    """Call utility `fn` with a return value of the declared type (a Variant only when it says so)."""
    if ret_vtype is None:
        fn(slot, ptrs, n)
        return _variant.from_variant(slot)
    if ret_vtype == T.NIL:
        fn(slot, ptrs, n)  # written to by nothing; a valid place all the same
        return None
    if ret_vtype == T.OBJECT:
        out = ffi.new("void**")
        fn(out, ptrs, n)
        return wrap(out[0])
    raw = lib.gdb_vnew(slot, ret_vtype)
    fn(raw, ptrs, n)
    return _variant.from_variant(slot)


utility = Utility()
