"""Engine objects in Python: proxy classes generated from `extension_api.json`, method calls, singletons.

`gdbridge.classes.Node` (or `engine_class("Node")`) is a Python class whose methods and properties
call the engine's; Python-declared classes subclass these. An Object pointer coming back from the
engine maps to its Python instance when it is one of ours, else to a fresh proxy of its class.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from gdbridge import _variant
from gdbridge.types import VariantType

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


class _CallError(Exception):
    """Raised by the C call with the engine's call error code; turned into a GodotError."""


def _fast_call_missing(*args: Any) -> Any:
    raise GodotError("gdbridge is not attached to an engine")


_fast_call: Callable[..., Any] = _fast_call_missing


def bind(ffi_: Any, lib_: Any, api_path: Path) -> None:
    global ffi, lib
    ffi, lib = ffi_, lib_
    API.update(json.loads(api_path.read_text()))
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
        ("variant_booleanize", "GDExtensionInterfaceVariantBooleanize"),
    ):
        _iface[name] = ffi.cast(ctype, lib.gdb_get_proc(name.encode()))
    _variant._wrap_object = wrap
    _variant._booleanize = _iface["variant_booleanize"]
    _variant._object_ptr = object_ptr
    global _fast_call  # noqa: PLW0603 - set once, at start-up
    if not lib.gdb_install_fast(id(_CallError)):
        raise GodotError("could not create the _gdbridge_fast module")
    import _gdbridge_fast

    _fast_call = _gdbridge_fast.call
    _variant._fast_fill = _gdbridge_fast.fill
    _variant._fast_read = _gdbridge_fast.read
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
    vtype = getattr(T, _SNAKE.get(type_name, type_name.upper()))
    fn = _iface["variant_get_ptr_builtin_method"](vtype, sn(method), API["builtin"][f"{type_name}.{method}"])
    if fn == ffi.NULL:
        raise GodotError(f"builtin method {type_name}.{method} not found")
    return ffi.cast("GDExtensionPtrBuiltInMethod", fn)


_SNAKE = {t.name.title().replace("_", ""): t.name for t in T}


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
    simple = {"int": T.INT, "float": T.FLOAT, "bool": T.BOOL, "Nil": T.NIL}
    if type_name in simple:
        return simple[type_name]
    key = _SNAKE.get(type_name)
    if key is not None:
        return T[key]
    return T.OBJECT


# ---- objects ----
def object_ptr(value: Any) -> Any:
    if value is None:
        return ffi.NULL
    ptr = value._ptr
    if ptr is None:
        raise GodotError(f"{type(value).__name__} instance was freed")
    return ptr


def class_name_of(ptr: Any) -> str:
    out = ffi.new("uint64_t*")
    _iface["object_get_class_name"](ptr, lib.gdb_get_library(), out)
    name = _variant.utf8_of(out, T.STRING_NAME)
    lib.gdb_value_destroy(T.STRING_NAME, out)
    return name


def wrap(ptr: Any, owned: bool = False) -> Any:
    """The Python object for an engine Object pointer (None for null)."""
    if ptr == ffi.NULL:
        return None
    iid = lib.gdb_instance_of(ptr)
    if iid:
        return lookup(iid)
    name = class_name_of(ptr)
    cls = engine_class(name) if name in API["classes"] else _nearest_class(name)
    proxy = object.__new__(cls)
    proxy._ptr = ptr
    proxy._addr = int(ffi.cast("intptr_t", ptr))
    if cls._gd_refcounted:
        if not owned:
            _ref_method("reference")(proxy)
        proxy._gd_owns = True
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
            return obj
        if info is None:
            raise TypeError(f"{cls.__name__} is not registered with Godot")
        ptr = _iface["classdb_construct_object2"](sn(info.name))
        obj = lookup(lib.gdb_instance_of(ptr))
        if cls._gd_refcounted:
            from gdbridge import classdb

            classdb.created_by_python(obj)
        return obj


class Object(metaclass=GodotClassMeta):
    """Root of every Godot class seen from Python."""

    __slots__ = ("__weakref__", "_addr", "_gd_owns", "_ptr")
    _gd_native: ClassVar[bool] = True
    _gd_refcounted: ClassVar[bool] = False
    _gd_instantiable: ClassVar[bool] = True
    _gd_is_node: ClassVar[bool] = False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Object) and self._ptr == other._ptr

    def __hash__(self) -> int:
        return hash(int(ffi.cast("intptr_t", self._ptr))) if self._ptr is not None else 0

    def __repr__(self) -> str:
        if self._ptr is None:
            return f"<{type(self).__name__} (freed)>"
        return f"<{type(self).__name__}#{self.get_instance_id()}>"

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
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        if "_gd_native" not in cls.__dict__:
            from gdbridge import classdb

            classdb.collect(cls, name, tool, abstract, icon)

    def __getattr__(self, name: str) -> Any:
        """Script members (a GDScript attached to an engine object): methods and properties."""
        if name.startswith(("__", "_gd")) or name == "_ptr" or object.__getattribute__(self, "_ptr") is None:
            raise AttributeError(name)
        if self.has_method(name):
            return lambda *args: self.call(name, *args)
        if any(prop["name"] == name for prop in self.get_property_list()):
            return self.get(name)
        raise AttributeError(f"{type(self).__name__} object has no attribute, method or property {name!r}")

    def free(self) -> None:
        """Delete the object now (Object.free); Python-defined instances go with it."""
        ptr = self._ptr
        if ptr is None:
            raise GodotError(f"{type(self).__name__} instance was already freed")
        if type(self)._gd_refcounted:
            raise GodotError(f"{type(self).__name__} is reference-counted: drop references instead of free()")
        self._ptr = None
        _iface["object_destroy"](ptr)

    @property
    def is_valid(self) -> bool:
        """False once the engine freed the object."""
        return (
            self._ptr is not None
            and _iface["object_get_instance_from_id"](self.get_instance_id()) != ffi.NULL
        )


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


def _engine_method(class_name: str, name: str, spec: list) -> Callable[..., Any]:
    hash_, is_static = spec[0], spec[1]
    mb = None
    label = f"{class_name}.{name}"
    thread_safe = name in THREAD_SAFE

    def method(self: Any, *args: Any) -> Any:
        nonlocal mb
        if mb is None:
            found = _iface["classdb_get_method_bind"](sn(class_name), sn(name), hash_)
            if found == ffi.NULL:
                raise GodotError(f"{label} is not in this engine")
            mb = int(ffi.cast("intptr_t", found))
        if is_static:
            address = 0
        else:
            if self._ptr is None:
                raise GodotError(f"{label}: {type(self).__name__} instance was freed")
            if not thread_safe and self._gd_is_node and threading.get_ident() != MAIN_THREAD:
                check_thread(self, label)
            address = self._addr
        try:
            return _fast_call(mb, address, *args)
        except _CallError as error:
            raise GodotError(f"{label}: {_call_error(error.args[0])}") from None

    method.__name__ = name
    method.__qualname__ = label
    return staticmethod(method) if is_static else method  # type: ignore[return-value]


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


class Utility:
    """Global utility functions (print, push_error, randf, ...): `gdbridge.utility.print("hi")`."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        spec = API["utility"].get(name)
        if spec is None:
            raise AttributeError(name)
        fn = _iface["variant_get_ptr_utility_function"](sn(name), spec)

        def call(*args: Any) -> Any:
            n = len(args)
            buf = ffi.new("gdb_variant[]", n + 1)
            for i, arg in enumerate(args):
                _variant.to_variant(buf + i, arg)
            lib.gdb_vnil(buf + n)
            try:
                lib.gdb_utility(fn, buf, n, buf + n)
                return _variant.from_variant(buf + n)
            finally:
                for i in range(n + 1):
                    lib.gdb_vdestroy(buf + i)

        setattr(self, name, call)
        return call


utility = Utility()
