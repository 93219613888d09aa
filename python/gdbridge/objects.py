"""Engine objects in Python: proxy classes generated from `extension_api.json`, singletons, utilities.

`gdbridge.classes.Node` (or `engine_class("Node")`) is a Python class whose methods and properties
call the engine's; Python-declared classes subclass these. An Object pointer coming back from the
engine maps to its Python instance when it is one of ours, else to a fresh proxy of its class.

The calls through the engine interface live in `gdbridge.interface` (the names game code reaches
through this module are imported from there); the registration of Python-declared classes
(`gdbridge.classdb`) sits above this module and plugs itself in (`serve_declared_classes`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from gdbridge import _variant, interface, lifetime
from gdbridge.declare import BoundSignal
from gdbridge.interface import (  # noqa: F401 - the binding's face for game code: gdbridge.objects.<name>
    API,
    MAIN_THREAD,
    THREAD_SAFE,
    AnswerTable,
    ChoiceTable,
    FreedObjectError,
    GodotError,
    HandedFrame,
    _call_error,
    _CallError,
    _iface,
    add_frame_hook,
    answer_table,
    answered_total,
    checked_total,
    choice_table,
    emit_prepared,
    emit_signals,
    fast_frames,
    frame_arm,
    frame_disarm,
    frame_rest,
    frame_seconds,
    frame_setup,
    frame_wait,
    instances,
    library_path,
    lookup,
    only_frame_hook,
    queue_calls,
    queued_names,
    queued_total,
    rested_frames,
    sn,
    update_busy,
    update_waited,
    vtype_of,
    weak_instances,
)
from gdbridge.types import VariantType

T = VariantType
_classes: dict[str, type] = {}


def bind(ffi: Any, lib: Any, api_path: Path) -> None:
    """Attach to the engine: the interface, and the conversions that make Python objects of Objects."""
    _variant._wrap_object = wrap
    _variant._wrap_variant = wrap_variant
    interface.bind(ffi, lib, api_path)


def _no_registration(*args: Any) -> Any:
    raise GodotError("gdbridge.classdb was not imported: Python-declared classes are not registered")


# A subclass statement hands its class to `_collect_declared`; constructing one from Python asks
# `_construct_declared(info)` for the engine object. Both are gdbridge.classdb's, set when it is
# imported (the gdbridge package imports it), since registering uses the proxies made here.
_collect_declared: Callable[..., None] = _no_registration
_construct_declared: Callable[[Any], Any] = _no_registration


def serve_declared_classes(collect: Callable[..., None], construct: Callable[[Any], Any]) -> None:
    global _collect_declared, _construct_declared
    _collect_declared, _construct_declared = collect, construct


def wrap(ptr: Any, owned: bool = False) -> Any:
    """The Python object for an engine Object pointer (None for null)."""
    if ptr == interface.ffi.NULL:
        return None
    iid = interface.lib.gdb_instance_of(ptr)
    if iid:
        obj = lookup(iid)
        if obj is not None and obj._gd_owns is False and obj._gd_refcounted:
            lifetime.arrive(obj)
        return obj
    name = interface.class_name_of(ptr)
    cls = engine_class(name) if name in API["classes"] else _nearest_class(name)
    proxy = object.__new__(cls)
    proxy._ptr = ptr
    proxy._id = interface.lib.gdb_object_id(ptr)
    if cls._gd_refcounted:
        if not owned:
            _ref_method("reference")(proxy)
        proxy._gd_owns = True
    return proxy


def wrap_variant(v: Any) -> Any:
    """The object an Object Variant holds: None for null, a freed wrapper (invalid, every use
    raises GodotError) when the object is gone; the freed memory is never read."""
    found = interface.ffi.new("uint64_t*")
    ptr = interface.lib.gdb_variant_object(v, found)
    if ptr != interface.ffi.NULL:
        return wrap(ptr)
    if interface.lib.gdb_as_object(v) == interface.ffi.NULL:
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
    if ptr == interface.ffi.NULL:
        raise GodotError(f"no engine singleton named {name!r}")
    return wrap(ptr)


_own_singletons: list[tuple[str, Any]] = []


def register_singleton(name: str, obj: Any) -> None:
    """Make `obj` an engine singleton: `Engine.get_singleton(name)`, and `name.method()` in GDScript.

    Call it while the entry modules are imported (SCENE level), so scripts compiled later see the
    name. gdbridge unregisters and frees it at shutdown.
    """
    if interface.state.get("reloading") is not None and any(known == name for known, _ in _own_singletons):
        # A reloaded module made its singleton again: the engine keeps the first one.
        if not type(obj)._gd_refcounted:
            obj.free()
        return
    singleton("Engine").register_singleton(name, obj)
    _own_singletons.append((name, obj))


def shutdown() -> None:
    """SCENE-level teardown: the frame hooks and our singletons go (then the StringNames cached by
    `interface.sn`, in `interface.shutdown_names`)."""
    interface.clear_frame_hooks()
    engine = singleton("Engine")
    while _own_singletons:
        name, obj = _own_singletons.pop()
        engine.unregister_singleton(name)
        if not type(obj)._gd_refcounted and obj._ptr is not None:
            obj.free()


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
        ptr = _construct_declared(info)
        obj = lookup(interface.lib.gdb_instance_of(ptr)) if ptr != interface.ffi.NULL else None
        if obj is None:
            raise GodotError(f"the engine made no {info.name} (see its error above)")
        if cls._gd_refcounted:
            lifetime.arrivals.append(obj)  # Python's reference is given back if Python does not keep it
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
        if getattr(self, "_gd_owns", False) and self._ptr is not None and interface.lib is not None:
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
            _collect_declared(cls, name, tool, abstract, icon, internal)

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
        if self._ptr is None or interface.lib.gdb_object_from_id(self._id) != self._ptr:
            raise GodotError(f"{type(self).__name__} instance was already freed")
        ptr = self._ptr
        if type(self)._gd_refcounted:
            raise GodotError(f"{type(self).__name__} is reference-counted: drop references instead of free()")
        self._ptr = None
        _iface["object_destroy"](ptr)

    @property
    def is_valid(self) -> bool:
        """False once the engine freed the object."""
        return self._ptr is not None and interface.lib.gdb_object_from_id(self._id) == self._ptr


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
    fast_call = interface._fast_call  # set by interface.bind, before any engine class is built

    def bind() -> int:
        nonlocal mb
        mb = interface.method_bind(class_name, name, hash_)
        return mb

    def failed(error: _CallError, owner: str) -> GodotError:
        if error.args[0] == -1:
            return GodotError(f"{label}: {owner} instance was freed")
        return GodotError(f"{label}: {_call_error(error.args[0])}")

    def method(self: Any, *args: Any) -> Any:
        if self._ptr is None:
            raise GodotError(f"{label}: {type(self).__name__} instance was freed")
        if not thread_safe and self._gd_is_node and threading.get_ident() != MAIN_THREAD:
            interface.check_thread(self, label)
        try:  # the C call looks the object up by id: a freed one is refused
            return fast_call(mb or bind(), self._id, *args)
        except _CallError as error:
            raise failed(error, type(self).__name__) from None

    def static(*args: Any) -> Any:
        """A static method has no receiver: every argument is the engine's (address 0)."""
        try:
            return fast_call(mb or bind(), 0, *args)
        except _CallError as error:
            raise failed(error, class_name) from None

    chosen = static if is_static else method
    chosen.__name__ = name
    chosen.__qualname__ = label
    return staticmethod(static) if is_static else method  # type: ignore[return-value]  # a staticmethod is callable once bound to its class


def _engine_signal(name: str) -> property:
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
        if found == interface.ffi.NULL:
            raise GodotError(f"utility function {name} is not in this engine")
        fn = interface.ffi.cast("GDExtensionPtrUtilityFunction", found)
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
            buf = interface.ffi.new("gdb_variant[]", n + 1)  # zeroed: Nil, safe to destroy
            ptrs = interface.ffi.new("void*[]", max(n, 1))
            try:
                for i, arg in enumerate(args):
                    vtype = arg_vtypes[i] if i < len(arg_vtypes) and not vararg else None
                    if vtype is None:
                        _variant.to_variant(buf + i, arg)
                        ptrs[i] = buf + i
                    else:
                        value = _typed_argument(vtype, arg, f"{name}() argument {i + 1}")
                        _variant.to_variant(buf + i, value, vtype)
                        ptrs[i] = interface.lib.gdb_vinternal(buf + i, vtype)
                return _utility_result(fn, ptrs, n, ret_vtype, buf + n)
            finally:
                for i in range(n + 1):
                    interface.lib.gdb_vdestroy(buf + i)

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
        out = interface.ffi.new("void**")
        fn(out, ptrs, n)
        return wrap(out[0])
    raw = interface.lib.gdb_vnew(slot, ret_vtype)
    fn(raw, ptrs, n)
    return _variant.from_variant(slot)


utility = Utility()
