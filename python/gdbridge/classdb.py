"""Python classes as ClassDB classes: registration, and the callbacks the engine makes into them.

A class that subclasses an engine class (`class Wanderer(gdbridge.classes.Node3D)`) is collected
when its module is imported and registered with ClassDB at the SCENE level (or at once, if that
level has passed). Engine callbacks carry small integer ids (class, method, virtual) looked up in
the lists below; the instance pointer is the Python object's address (`interface.instances`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import inspect
import threading
import typing
from collections.abc import Callable, Iterator
from typing import Any

from gdbridge import _variant, declare, interface, lifetime, objects
from gdbridge.declare import Constant, Export, Group, Signal, TypeSpec, type_spec, typed_from_hint
from gdbridge.interface import state
from gdbridge.types import GODOT_NAMES, PropertyHint, PropertyUsage, StringName, VariantType

T = VariantType
# Game virtuals: in the editor they only run for tool classes.
GAME_VIRTUALS = frozenset({"_ready", "_process", "_physics_process", "_enter_tree", "_exit_tree", "_input",
                           "_unhandled_input", "_shortcut_input", "_unhandled_key_input"})  # fmt: skip
SHAPE_NO_ARGS = frozenset({"_ready", "_enter_tree", "_exit_tree"})
SHAPE_ONE_FLOAT = frozenset({"_process", "_physics_process"})
METADATA = {T.INT: 4, T.FLOAT: 10}  # int64 and double on the ptrcall path
_METHOD_FLAG_NORMAL = 1
_METHOD_FLAG_VARARG = 16
_METHOD_FLAG_STATIC = 32


@dataclasses.dataclass
class ClassInfo:
    cls: type
    name: str
    parent: str
    native: str
    tool: bool
    abstract: bool
    icon: str
    doc: str
    internal: bool = False  # registered but not exposed: not in Create Node, docs or ClassDB.instantiate
    cid: int = 0
    registered: bool = False
    level: int = 2  # the initialization level it was registered at (SCENE, or EDITOR for editor classes)
    was_registered: bool = False  # registered once (a library reload registers it again)


@dataclasses.dataclass
class MethodInfo:
    name: str
    func: Callable[..., Any]
    args: list[tuple[str, TypeSpec]]
    ret: TypeSpec | None
    defaults: list[Any]
    is_static: bool = False
    vararg: bool = False  # a `*args` parameter: extra arguments after the declared ones


classes: list[ClassInfo | None] = [None]  # class id -> info (0 is never used)
_pending: list[ClassInfo] = []
_ptrcalls: list[Callable[..., Any] | None] = [None]  # method id -> ptrcall adapter
_varcalls: list[Callable[..., Any] | None] = [None]  # method id -> variant-call adapter
_vcalls: list[Callable[..., Any] | None] = [None]  # virtual id -> function (or adapter)
_virtual_ids: dict[tuple[int, str], int] = {}
_keep: list[Any] = []  # cdata that must outlive registration calls
_iface: dict[str, Any] = {}


def _fn(name: str, ctype: str) -> Any:
    found = _iface.get(name)
    if found is None:
        found = interface.ffi.cast(ctype, interface.lib.gdb_get_proc(name.encode()))
        _iface[name] = found
    return found


# ---- collecting classes ----
def collect(  # noqa: PLR0917 - the class statement's keywords, in order
    cls: type, name: str | None, tool: bool, abstract: bool, icon: str, internal: bool = False
) -> None:
    reloading = state.get("reloading")
    if reloading is not None:
        # A module re-imported by gdbridge.reload: the class the engine knows gets this one's
        # members; nothing is registered.
        godot_name = name or cls.__name__
        known = next(
            (i for i in classes[1:] if i is not None and i.registered and i.name == godot_name), None
        )
        if known is not None:
            cls._gd_info = known
            cls._gd_native = False
            reloading[godot_name] = cls
            return
    parent = next(base for base in cls.__mro__[1:] if hasattr(base, "_gd_native"))
    native = next(base for base in cls.__mro__[1:] if base.__dict__.get("_gd_native", False))
    parent_info = parent.__dict__.get("_gd_info")
    info = ClassInfo(
        cls=cls,
        name=name or cls.__name__,
        parent=parent_info.name if parent_info else parent.__name__,
        native=native.__name__,
        tool=tool or bool(parent_info and parent_info.tool),
        abstract=abstract,
        icon=icon,
        doc=inspect.cleandoc(cls.__doc__ or ""),
        internal=internal,
    )
    cls._gd_info = info
    cls._gd_native = False
    if state["scene_ready"]:
        register(info)
    else:
        _pending.append(info)


def register_pending() -> None:
    while _pending:
        try:
            register(_pending.pop(0))
        except TypeError as error:  # reported; the other classes are still registered
            interface.report(type(error), error, error.__traceback__)


# ---- registration ----
def _property_info(
    name: str, spec: TypeSpec, usage: int = PropertyUsage.DEFAULT, method: bool = False
) -> Any:
    """A PropertyInfo (a property's, or with `method` a method argument's or result's)."""
    ffi = interface.ffi
    info = ffi.new("GDExtensionPropertyInfo*")
    info.type = spec.vtype
    info.name = interface.sn(name)
    info.class_name = interface.sn(spec.class_name)
    hint, text = spec.method_hint() if method else (spec.hint, spec.hint_string)
    info.hint = hint
    hint_string = ffi.new("uint64_t*")
    _variant.new_text(hint_string, T.STRING, text)
    info.hint_string = hint_string
    if spec.is_variant:
        usage |= PropertyUsage.NIL_IS_VARIANT
    info.usage = usage
    _keep.append(hint_string)
    return info


def _spec_for(cls: type, attr: str, declared: Any) -> TypeSpec:
    hints = typing.get_type_hints(cls) if declared is None else {}
    annotation = declared if declared is not None else hints.get(attr)
    if annotation is None:
        raise TypeError(f"{cls.__name__}.{attr}: give the export a type annotation or type=")
    return type_spec(annotation)


def register(info: ClassInfo) -> None:
    ffi, lib = interface.ffi, interface.lib
    if objects.singleton("ClassDB").class_exists(info.name):
        raise TypeError(f"{info.cls.__module__}.{info.cls.__qualname__}: Godot already has a class named "
                        f"{info.name!r}; rename it or give name=... in the class statement")  # fmt: skip
    library = lib.gdb_get_library()
    cls = info.cls
    info.cid = len(classes)
    info.level = state["level"]
    classes.append(info)
    creation = ffi.new("GDExtensionClassCreationInfo5*")
    creation.is_virtual = False
    creation.is_abstract = info.abstract
    creation.is_exposed = not info.internal
    creation.is_runtime = False
    icon = ffi.new("uint64_t*")
    _variant.new_text(icon, T.STRING, info.icon)
    creation.icon_path = icon
    has_notification = _defines(cls, "_notification")
    has_validate = _defines(cls, "_validate_property")
    lib.gdb_fill_class_info(creation, info.cid, has_notification, has_validate, bool(cls._gd_refcounted))
    hooks = 0
    for hook, bit in _PROPERTY_HOOKS.items():
        if _defines(cls, hook):
            hooks |= bit
    lib.gdb_fill_class_properties(creation, hooks)
    register_class = _fn(
        "classdb_register_extension_class5", "GDExtensionInterfaceClassdbRegisterExtensionClass5"
    )
    register_class(library, interface.sn(info.name), interface.sn(info.parent), creation)
    lib.gdb_value_destroy(T.STRING, icon)
    info.registered = info.was_registered = True

    class_sn = interface.sn(info.name)
    members = _members(cls)
    methods = _collect_methods(cls)
    exported_names = set()
    for attr, value in list(members.items()):
        if isinstance(value, Export):
            value.spec = _spec_for(cls, attr, value.type)
            if value.hint:
                value.spec.hint, value.spec.hint_string = value.hint, value.hint_string
                typed_from_hint(value.spec)
            exported_names.add(attr)
    for method_info in methods:
        _register_method(class_sn, method_info)
        _method_records.setdefault(info.name, {})[method_info.name] = (len(_ptrcalls) - 1, method_info)
    for attr, value in members.items():
        default = getattr(value, "_gd_virtual", None)
        if default is not None:
            method = _method_info(cls, attr, attr, value, default)
            _register_virtual(class_sn, method, getattr(value, "_gd_required", False))
    register_property = _fn(
        "classdb_register_extension_class_property",
        "GDExtensionInterfaceClassdbRegisterExtensionClassProperty",
    )
    register_group = _fn(
        "classdb_register_extension_class_property_group",
        "GDExtensionInterfaceClassdbRegisterExtensionClassPropertyGroup",
    )
    register_subgroup = _fn(
        "classdb_register_extension_class_property_subgroup",
        "GDExtensionInterfaceClassdbRegisterExtensionClassPropertySubgroup",
    )
    user_methods = {m.name for m in methods}
    for attr, value in list(members.items()):
        if isinstance(value, Group):
            title, prefix = ffi.new("uint64_t*"), ffi.new("uint64_t*")
            _variant.new_text(title, T.STRING, value.title)
            _variant.new_text(prefix, T.STRING, value.prefix)
            (register_subgroup if value.subgroup else register_group)(library, class_sn, title, prefix)
            lib.gdb_value_destroy(T.STRING, title)
            lib.gdb_value_destroy(T.STRING, prefix)
        elif isinstance(value, Export):
            setter, getter = f"set_{attr}", f"get_{attr}"
            if setter not in user_methods:
                _register_method(class_sn, _setter_method(attr, value))
            if getter not in user_methods:
                _register_method(class_sn, _getter_method(attr, value))
            register_property(
                library,
                class_sn,
                _property_info(attr, value.spec, value.usage),
                interface.sn(setter),
                interface.sn(getter),
            )
    register_signal = _fn(
        "classdb_register_extension_class_signal", "GDExtensionInterfaceClassdbRegisterExtensionClassSignal"
    )
    register_constant = _fn(
        "classdb_register_extension_class_integer_constant",
        "GDExtensionInterfaceClassdbRegisterExtensionClassIntegerConstant",
    )
    for attr, value in list(members.items()):
        if isinstance(value, Signal):
            infos = [_property_info(arg, type_spec(annotation)) for arg, annotation in value.args.items()]
            array = ffi.new("GDExtensionPropertyInfo[]", max(1, len(infos)))
            for i, one in enumerate(infos):
                array[i] = one[0]
            register_signal(library, class_sn, interface.sn(attr), array, len(infos))
        elif isinstance(value, Constant):
            register_constant(library, class_sn, interface.sn(""), interface.sn(attr), value.value, False)
        elif isinstance(value, type) and issubclass(value, enum.IntEnum | enum.IntFlag):
            bitfield = issubclass(value, enum.IntFlag)
            for member in value:
                register_constant(
                    library, class_sn, interface.sn(attr), interface.sn(member.name), member.value, bitfield
                )
    for text in _keep:
        lib.gdb_value_destroy(T.STRING, text)
    _keep.clear()


def _members(cls: type) -> dict[str, Any]:
    """What `cls` declares for Godot: its own namespace over those of its plain Python mixins (bases
    that are not Godot classes and that no Godot base of `cls` already has)."""
    godot_base = next(c for c in cls.__mro__[1:] if hasattr(c, "_gd_native"))
    inherited = set(godot_base.__mro__)
    found: dict[str, Any] = {}
    for mixin in reversed(cls.__mro__[1:]):
        if mixin is not object and not hasattr(mixin, "_gd_native") and mixin not in inherited:
            found.update(mixin.__dict__)
    found.update(cls.__dict__)
    return found


def _collect_methods(cls: type) -> list[MethodInfo]:
    found = []
    for attr, value in _members(cls).items():
        func = value.__func__ if isinstance(value, staticmethod | classmethod) else value
        if not inspect.isfunction(func):
            continue
        exposed = getattr(func, "_gd_expose", "" if attr.startswith("_") else attr)
        if not exposed or hasattr(func, "_gd_virtual"):
            continue
        try:
            found.append(_method_info(cls, attr, exposed, value, func))
        except TypeError as error:  # reported; the class's other methods are still registered
            interface.report(type(error), error, error.__traceback__)
    return found


def _method_info(cls: type, attr: str, exposed: str, value: Any, func: Callable[..., Any]) -> MethodInfo:
    hints = typing.get_type_hints(func)
    params = list(inspect.signature(func).parameters.values())
    is_static = isinstance(value, staticmethod)
    if not is_static:
        params = params[1:]
    args, defaults, vararg = [], [], False
    for param in params:
        if param.kind == param.VAR_POSITIONAL:
            vararg = True  # `*args`: a vararg method, extra arguments arrive as Variants
            continue
        if param.kind not in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            raise TypeError(f"{cls.__name__}.{attr}: keyword-only parameters cannot be exposed to Godot")
        args.append((param.name, type_spec(hints.get(param.name, typing.Any))))
        if param.default is not param.empty:
            defaults.append(param.default)
    ret_annotation = hints.get("return", typing.Any)
    ret = None if ret_annotation in (None, type(None)) else type_spec(ret_annotation)
    if is_static:
        func = _drop_self(func)
    return MethodInfo(exposed, func, args, ret, defaults, is_static, vararg)


def _drop_self(func: Callable[..., Any]) -> Callable[..., Any]:
    # Static methods get the (null) instance like the others; drop it.
    return lambda _obj, *values: func(*values)


def _setter_method(attr: str, export: Export) -> MethodInfo:
    def setter(self: Any, value: Any) -> None:
        setattr(self, attr, value)

    return MethodInfo(f"set_{attr}", setter, [("value", export.spec)], None, [])


def _getter_method(attr: str, export: Export) -> MethodInfo:
    def getter(self: Any) -> Any:
        return getattr(self, attr)

    return MethodInfo(f"get_{attr}", getter, [], export.spec, [])


def _register_method(class_sn: Any, method: MethodInfo) -> None:
    ffi, lib = interface.ffi, interface.lib
    mid = len(_ptrcalls)
    _ptrcalls.append(_make_ptrcall(method))
    _varcalls.append(_make_varcall(method))
    _set_fast_path(mid, method)
    info = ffi.new("GDExtensionClassMethodInfo*")
    info.name = interface.sn(method.name)
    info.method_flags = _METHOD_FLAG_NORMAL | (_METHOD_FLAG_STATIC if method.is_static else 0)
    if method.vararg or any(spec.vtype == T.OBJECT for _, spec in method.args):
        # Called with Variants only: a typed ptrcall hands over a bare Object pointer, which may be
        # an object GDScript already freed; a Variant carries its instance id, checked first.
        info.method_flags |= _METHOD_FLAG_VARARG
    ret_info = None  # owns the struct the method info points at, until registration returns
    if method.ret is not None:
        info.has_return_value = True
        ret_info = _property_info("", method.ret, PropertyUsage.NONE, method=True)
        info.return_value_info = ret_info
        info.return_value_metadata = METADATA.get(method.ret.vtype, 0)
    arg_infos, metadata = _argument_infos(method)
    info.argument_count = len(method.args)
    info.arguments_info = arg_infos
    info.arguments_metadata = metadata
    defaults = ffi.new("gdb_variant[]", max(1, len(method.defaults)))
    default_ptrs = ffi.new("GDExtensionVariantPtr[]", max(1, len(method.defaults)))
    for i, value in enumerate(method.defaults):
        _variant.to_variant(defaults + i, value)
        default_ptrs[i] = defaults + i
    info.default_argument_count = len(method.defaults)
    info.default_arguments = default_ptrs
    lib.gdb_fill_method_info(info, mid)
    register_method = _fn(
        "classdb_register_extension_class_method", "GDExtensionInterfaceClassdbRegisterExtensionClassMethod"
    )
    register_method(lib.gdb_get_library(), class_sn, info)
    del ret_info
    for i in range(len(method.defaults)):
        lib.gdb_vdestroy(defaults + i)


_METHOD_FLAG_VIRTUAL = 8
_METHOD_FLAG_VIRTUAL_REQUIRED = 128


def _argument_infos(method: MethodInfo) -> tuple[Any, Any]:
    """The PropertyInfo and metadata arrays of a method's arguments (kept alive by the caller)."""
    n = len(method.args)
    arg_infos = interface.ffi.new("GDExtensionPropertyInfo[]", max(1, n))
    metadata = interface.ffi.new("GDExtensionClassMethodArgumentMetadata[]", max(1, n))
    for i, (arg_name, spec) in enumerate(method.args):
        arg_infos[i] = _property_info(arg_name, spec, PropertyUsage.NONE, method=True)[0]
        metadata[i] = METADATA.get(spec.vtype, 0)
    return arg_infos, metadata


def _register_virtual(class_sn: Any, method: MethodInfo, required: bool) -> None:
    """A virtual method GDScript can override (its signature in ClassDB, no method bind)."""
    ffi, lib = interface.ffi, interface.lib
    info = ffi.new("GDExtensionClassVirtualMethodInfo*")
    info.name = interface.sn(method.name)
    info.method_flags = (
        _METHOD_FLAG_NORMAL | _METHOD_FLAG_VIRTUAL | (_METHOD_FLAG_VIRTUAL_REQUIRED if required else 0)
    )
    ret = method.ret if method.ret is not None else TypeSpec(T.NIL, py_type=type(None))
    info.return_value = _property_info("", ret, PropertyUsage.NONE, method=True)[0]
    info.return_value_metadata = METADATA.get(ret.vtype, 0)
    arg_infos, metadata = _argument_infos(method)
    info.argument_count = len(method.args)
    info.arguments = arg_infos
    info.arguments_metadata = metadata
    register = _fn(
        "classdb_register_extension_class_virtual_method",
        "GDExtensionInterfaceClassdbRegisterExtensionClassVirtualMethod",
    )
    register(lib.gdb_get_library(), class_sn, info)


_method_records: dict[str, dict[str, tuple[int, MethodInfo]]] = {}  # class -> method -> (id, info)


def registered_methods(class_name: str) -> dict[str, tuple[int, MethodInfo]]:
    """The methods declared by the class itself that ClassDB has (not the generated set_/get_)."""
    return dict(_method_records.get(class_name, {}))


def replace_method(class_name: str, mid: int, method: MethodInfo) -> None:
    """ClassDB's method `mid` calls `method` from now on (same signature: a reload)."""
    _ptrcalls[mid] = _make_ptrcall(method)
    _varcalls[mid] = _make_varcall(method)
    _set_fast_path(mid, method)
    _method_records[class_name][method.name] = (mid, method)


def reloaded(info: ClassInfo) -> None:
    """After a reload updated `info.cls` in place: the virtual overrides of it and its subclasses
    run the new functions (objects made from now on also find virtuals it did not define)."""
    _chains.clear()
    for (cid, name), result in list(_virtual_ids.items()):
        target = classes[cid]
        if target is None or info.cls not in target.cls.__mro__:
            continue
        if not result:
            del _virtual_ids[(cid, name)]
            continue
        owner = next((c for c in target.cls.__mro__ if name in c.__dict__), None)
        if owner is None or owner.__dict__.get("_gd_native") is True:
            continue
        func = owner.__dict__[name]
        vid, shape = result >> 2, result & 3
        if shape:
            _vcalls[vid] = func
            _fast_keep.append(func)
            interface.lib.gdb_set_fast_virtual(vid, id(func))
        else:
            _vcalls[vid] = _virtual_adapter(target, name, func)


def _set_fast_path(mid: int, method: MethodInfo) -> None:
    """Register the method with the C fast path (arguments boxed in C, vectorcall); the Python
    adapters stay as the fallback (more than 7 arguments, or an untyped call relying on defaults)."""
    if len(method.args) > 7 or (method.ret is not None and method.ret.items) or method.vararg:
        return  # more than 7 arguments, a typed container result, extra arguments: the Python path
    types = [-1 if spec.is_variant else int(spec.vtype) for _, spec in method.args]
    ret = method.ret
    ret_type = -2 if ret is None else (-1 if ret.is_variant else int(ret.vtype))
    raw_write = _ret_writer(method)
    ffi = interface.ffi

    def writer(address: int, value: Any, into_variant: int) -> None:
        ptr = ffi.cast("void*", address)
        if into_variant:
            interface.lib.gdb_vdestroy(ptr)
            _variant.to_variant(ptr, value)
        else:
            raw_write(ptr, value)

    _fast_keep.extend((method.func, writer))
    array = ffi.new("int[]", types or [0])
    interface.lib.gdb_set_fast_method(
        mid, id(method.func), id(writer), array, len(types), ret_type, method.is_static
    )
    queued = getattr(method.func, "_gd_queued", None)
    if queued is not None:
        _set_queued(mid, method, *queued)
    elif mid in _queued_mids:  # a reload took the declaration away
        _queued_mids.discard(mid)
        interface.lib.gdb_set_queued_method(mid, 0, ffi.NULL, ffi.NULL, ffi.NULL, 0)
    writes = getattr(method.func, "_gd_answered", None)
    if writes is not None:
        _set_answered(mid, method, writes)
    elif mid in _answered_mids:
        _answered_mids.discard(mid)
        interface.lib.gdb_set_answered_method(mid, 0)
    apart = bool(getattr(method.func, "_gd_apart", False))
    if apart or mid in _apart_mids:
        (_apart_mids.add if apart else _apart_mids.discard)(mid)
        interface.lib.gdb_set_apart_method(mid, apart)


def _set_answered(mid: int, method: MethodInfo, writes: Callable[..., Any]) -> None:
    """Register a `declare.answered` method: its C table, updated by the calls of `writes`."""
    label = f"answered method {method.name}"
    if (
        method.is_static or method.vararg or len(method.args) != 1 or method.args[0][1].is_variant
        or method.args[0][1].vtype != T.INT or method.ret is None or method.ret.vtype != T.INT
    ):  # fmt: skip
        raise TypeError(f"{label}: one int parameter and an int result")
    writer = _queued_mid_of.get(writes)
    if writer is None:  # registered after this one: linked by _set_queued
        _answers_waiting[writes] = mid
        writer = 0
    _answered_mids.add(mid)
    method.func._gd_answered_id = mid  # type: ignore[attr-defined]  # for objects.answer_table
    interface.lib.gdb_set_answered_method(mid, writer)


def _set_queued(
    mid: int, method: MethodInfo, take: Callable[..., Any], bounds: dict[str, tuple[int, int]]
) -> None:
    """Register a `declare.queued` method's C queue: its parameter types and int bounds."""
    label = f"queued method {method.name}"
    if method.ret is not None or method.is_static or method.vararg or len(method.args) > 4:
        raise TypeError(f"{label}: up to 4 parameters, not static, returning nothing")
    names = [name for name, _ in method.args]
    unknown = set(bounds) - set(names)
    if unknown:
        raise TypeError(f"{label}: bounds for unknown parameters {sorted(unknown)}")
    types, lows, highs = [], [], []
    for name, spec in method.args:
        if spec.is_variant or spec.vtype not in {T.INT, T.FLOAT}:
            raise TypeError(f"{label}: parameter {name} must be int or float")
        low, high = bounds.get(name, declare.INT64_RANGE)
        if spec.vtype == T.FLOAT and name in bounds:
            raise TypeError(f"{label}: float parameter {name} takes no bounds (any finite float)")
        if not declare.INT64_RANGE[0] <= low <= high <= declare.INT64_RANGE[1]:
            raise TypeError(f"{label}: bounds of {name} must be int64 values, low <= high")
        types.append(int(spec.vtype))
        lows.append(low)
        highs.append(high)
    ffi = interface.ffi
    _fast_keep.append(take)
    _queued_mids.add(mid)
    _queued_mid_of[method.func] = mid
    interface.lib.gdb_set_queued_method(
        mid, id(take), ffi.new("int[]", types or [0]), ffi.new("int64_t[]", lows or [0]),
        ffi.new("int64_t[]", highs or [0]), len(types),
    )  # fmt: skip
    answers = _answers_waiting.pop(method.func, None)
    if answers is not None:
        interface.lib.gdb_set_answered_method(answers, mid)


_fast_keep: list[Any] = []  # functions the C fast paths hold borrowed references to
_queued_mids: set[int] = set()  # methods with a C queue (`declare.queued`)
_queued_mid_of: dict[Callable[..., Any], int] = {}  # a queued method's function -> its id
_answered_mids: set[int] = set()  # methods answered from a C table (`declare.answered`)
_answers_waiting: dict[Callable[..., Any], int] = {}  # queued function -> answered id, until registered
_apart_mids: set[int] = set()  # `declare.apart` methods


# ---- adapters: raw arguments -> Python call -> raw return ----
def _reader(spec: TypeSpec) -> Callable[[Any], Any]:
    if spec.is_variant:
        return _variant.from_variant
    return _variant._READERS[spec.vtype]


def _write_variant(ptr: Any, value: Any) -> None:
    interface.lib.gdb_vdestroy(ptr)
    _variant.to_variant(ptr, value)


def _ret_writer(method: MethodInfo) -> Callable[[Any, Any], None] | None:
    """How a result is stored into the (initialized) return value of a ptrcall."""
    ret = method.ret
    if ret is None:
        return None
    if ret.is_variant:
        return _write_variant
    if ret.vtype == T.OBJECT and _is_refcounted(ret):
        return _write_ref
    if ret.items:
        return lambda ptr, value: typed_container(ptr, ret, value, in_variant=False)
    return _variant._WRITERS[ret.vtype]


def _make_ptrcall(method: MethodInfo) -> Callable[..., Any]:
    func = method.func
    readers = [_reader(spec) for _, spec in method.args]
    write = _ret_writer(method)
    n = len(readers)
    # Specialized shapes for the common small arities: every attribute lookup counts here.
    if n == 0 and write is None:
        return lambda obj, args, ret: func(obj)
    if n == 0:
        return lambda obj, args, ret: write(ret, func(obj))
    if n == 1:
        (r0,) = readers
        if write is None:
            return lambda obj, args, ret: func(obj, r0(args[0]))
        return lambda obj, args, ret: write(ret, func(obj, r0(args[0])))
    if n == 2:
        r0, r1 = readers
        if write is None:
            return lambda obj, args, ret: func(obj, r0(args[0]), r1(args[1]))
        return lambda obj, args, ret: write(ret, func(obj, r0(args[0]), r1(args[1])))

    def call(obj: Any, args: Any, ret: Any) -> None:
        result = func(obj, *[reader(args[i]) for i, reader in enumerate(readers)])
        if write is not None:
            write(ret, result)

    return call


def _is_refcounted(spec: TypeSpec) -> bool:
    cls = spec.py_type
    return isinstance(cls, type) and bool(getattr(cls, "_gd_refcounted", False))


def _write_ref(ptr: Any, value: Any) -> None:
    interface._iface["ref_set_object"](ptr, interface.object_ptr(value))


_COERCE = {T.FLOAT: float, T.INT: int, T.BOOL: bool}
# a dropped call's result (`declare.converts`), by the declared result type; any other: null
_ZERO: dict[int, Callable[[], Any]] = {
    T.FLOAT: float, T.INT: int, T.BOOL: bool, T.DICTIONARY: dict, T.ARRAY: list,
}  # fmt: skip
_REFUSED = object()


def _coerced(vtype: int, value: Any) -> Any:
    """A number for an int/float/bool parameter, as the engine converts one (bool, int and float
    into each other), or `_REFUSED`: a string or anything else is a call error, never parsed, and a
    float with a fraction is not silently truncated into an int."""
    if not isinstance(value, bool | int | float):
        return _REFUSED
    if vtype == T.INT and isinstance(value, float) and not value.is_integer():
        return _REFUSED
    return _COERCE[vtype](value)


_nil_script = [None]  # a Nil Variant: "no script" for set_typed


def typed_container(ptr: Any, spec: TypeSpec, value: Any, in_variant: bool) -> None:
    """Replace the Array/Dictionary at `ptr` (a Variant, or a raw ptrcall result) with a new typed
    one (Array[X], Dictionary[K, V] of `spec`) holding `value`. The items go into an untyped
    container first, and the engine's typed constructor checks and converts them, so a typed
    container never holds an item of another type (the engine reports one that does not fit)."""
    ffi, lib = interface.ffi, interface.lib
    try:
        _check_items(spec, value)
    except TypeError:
        typed_container(ptr, spec, {} if spec.vtype == T.DICTIONARY else [], in_variant)  # still typed
        raise
    if _nil_script[0] is None:
        _nil_script[0] = ffi.new("gdb_variant*")
    nil = _nil_script[0]
    untyped = ffi.new("gdb_variant*")
    inner = lib.gdb_vnew(untyped, spec.vtype)
    try:
        if spec.vtype == T.ARRAY:
            _variant.fill_array(inner, value)
            (item,) = spec.items
            args = [inner, ffi.new("int64_t*", _element_type(item)), interface.sn(item.class_name), nil]
        else:
            _variant.fill_dict(inner, value)
            key, item = spec.items
            args = [inner, ffi.new("int64_t*", _element_type(key)), interface.sn(key.class_name), nil,
                    ffi.new("int64_t*", _element_type(item)), interface.sn(item.class_name), nil]  # fmt: skip
        construct = interface._iface["variant_get_ptr_constructor"](spec.vtype, 2)  # (base, types...)
        raw = ffi.new("uint64_t[2]")
        construct(raw, ffi.new("void*[]", args))
        if in_variant:
            lib.gdb_vdestroy(ptr)
            lib.gdb_vraw(ptr, spec.vtype, raw)
            lib.gdb_value_destroy(spec.vtype, raw)
        else:
            lib.gdb_value_destroy(spec.vtype, ptr)
            copy = interface._iface["variant_get_ptr_constructor"](spec.vtype, 1)  # (from: same type)
            copy(ptr, ffi.new("void*[]", [raw]))
            lib.gdb_value_destroy(spec.vtype, raw)
    finally:
        lib.gdb_vdestroy(untyped)


def _check_items(spec: TypeSpec, value: Any) -> None:
    """TypeError for an item whose Variant type cannot be the declared one (int for float is fine)."""
    pairs = [(spec.items[0], list(value))] if spec.vtype == T.ARRAY else [
        (spec.items[0], list(value.keys())), (spec.items[1], list(value.values()))]  # fmt: skip
    for item, values in pairs:
        if item.is_variant:
            continue
        for one in values:
            kind = _variant.type_of(one)
            if kind != item.vtype and not (item.vtype == T.FLOAT and kind == T.INT) and one is not None:
                raise TypeError(
                    f"a container of {item.type_name} cannot hold {one!r} ({GODOT_NAMES[T(kind)]})"
                )


def _element_type(spec: TypeSpec) -> int:
    return T.NIL if spec.is_variant else spec.vtype


def _make_varcall(method: MethodInfo) -> Callable[..., Any]:
    func = method.func
    specs = [spec for _, spec in method.args]
    coercers = [_COERCE.get(spec.vtype) for spec in specs]  # None: no conversion
    wants_return = method.ret is not None
    typed_ret = wants_return and bool(method.ret.items)
    total = len(specs)
    required = total - len(method.defaults)

    vararg = method.vararg
    converters = getattr(func, "_gd_converts", {})  # `declare.converts`: name -> converter
    convert = [converters.get(name) for name, _ in method.args]

    def call(obj: Any, args: Any, n: int, ret: Any) -> tuple[int, int, int]:
        """(error, expected, argument) as the engine's GDExtensionCallError has them."""
        if n > total and not vararg:
            return 3, total, 0
        if n < required:
            return 4, required, 0
        values = []
        for i in range(n):
            value = _variant.from_variant(args[i])
            if i < total and coercers[i] is not None:  # (null is no number: refused, as GDScript does)
                number = _coerced(specs[i].vtype, value)
                if number is _REFUSED and convert[i] is not None:
                    value = convert[i](obj, value)
                    if value is declare.DROP:
                        if wants_return:
                            interface.lib.gdb_vdestroy(ret)
                            zero = _ZERO.get(method.ret.vtype)
                            _variant.to_variant(ret, zero() if zero is not None else None)
                        return 0, 0, 0
                    number = _coerced(specs[i].vtype, value)
                if number is _REFUSED:
                    return 2, specs[i].vtype, i  # CALL_ERROR_INVALID_ARGUMENT: the engine names it
                value = number
            values.append(value)
        result = func(obj, *values)
        if typed_ret:
            typed_container(ret, method.ret, result, in_variant=True)
        elif wants_return:
            interface.lib.gdb_vdestroy(ret)
            _variant.to_variant(ret, result)
        return 0, 0, 0

    return call


# ---- instances ----
def create(cid: int, notify: int) -> Any:
    info = classes[cid]
    ptr = interface._iface["classdb_construct_object2"](interface.sn(info.native))
    _attach(info, ptr, notify)
    return ptr


def recreate(cid: int, ptr: Any) -> int:
    """The engine reloaded the library: the Python object it had before for this engine object
    (a new one if there was none); the engine sets its stored properties again next."""
    ffi, lib = interface.ffi, interface.lib
    info = classes[cid]
    obj = _detached.pop(lib.gdb_object_id(ptr), None)
    if obj is None:
        return id(_attach(info, ptr, 0))
    if type(obj) is not info.cls:
        obj.__class__ = info.cls
    iid = id(obj)
    interface.instances[iid] = obj
    if obj._gd_owns:
        lifetime.created_by_python(obj)
    _fn("object_set_instance", "GDExtensionInterfaceObjectSetInstance")(
        ptr, interface.sn(info.name), ffi.cast("void*", iid)
    )
    _fn("object_set_instance_binding", "GDExtensionInterfaceObjectSetInstanceBinding")(
        ptr, lib.gdb_get_library(), ffi.cast("void*", iid), lib.gdb_binding_callbacks_ptr()
    )
    return iid


def register_again(level: int) -> None:
    """After a library reload's unregistering: every class registered at `level` before, again
    (with its current members: a method or export added since is registered now)."""
    state["level"] = level
    seen: set[int] = set()
    for info in list(classes[1:]):
        again = info is not None and info.was_registered and not info.registered and info.level == level
        if not again or id(info) in seen:
            continue
        seen.add(id(info))
        try:
            register(info)
        except TypeError as error:
            interface.report(type(error), error, error.__traceback__)


def _attach(info: ClassInfo, ptr: Any, notify: int) -> Any:
    ffi, lib = interface.ffi, interface.lib
    cls = info.cls
    obj = object.__new__(cls)
    obj._ptr = ptr
    obj._id = lib.gdb_object_id(ptr)
    obj._gd_owns = False
    # The instance pointer given to the engine is the Python object's address (the C fast paths
    # call it directly); `instances` keeps the object alive until the engine frees it.
    iid = id(obj)
    interface.instances[iid] = obj
    _fn("object_set_instance", "GDExtensionInterfaceObjectSetInstance")(
        ptr, interface.sn(info.name), ffi.cast("void*", iid)
    )
    _fn("object_set_instance_binding", "GDExtensionInterfaceObjectSetInstanceBinding")(
        ptr, lib.gdb_get_library(), ffi.cast("void*", iid), lib.gdb_binding_callbacks_ptr()
    )
    from_python = getattr(_constructing, "python", False)
    _constructing.python = False  # objects __init__ makes are not Python's unless it asks for them
    if cls._gd_refcounted and from_python:
        # Made by Python code (`Counter()`): Python holds one engine reference for as long as the
        # Python object lives; `instances` holds the Python object strongly while the engine holds
        # more (see `lifetime.reference_changed`). Made by the engine (GDScript `Counter.new()`, a scene
        # load): no Python reference, so the count is the engine's own, as in godot-cpp.
        objects.engine_class("RefCounted").init_ref(obj)
        obj._gd_owns = True
    if type(obj).__init__ is not object.__init__:
        try:
            obj.__init__()
        except Exception as error:  # reported; the engine still gets its object
            interface.report(type(error), error, error.__traceback__)
    if notify:
        obj.notification(0)
    return obj


_constructing = threading.local()


@contextlib.contextmanager
def constructing_from_python() -> Iterator[None]:
    """Marks the engine construction Python asked for (create() then takes Python's reference)."""
    before = getattr(_constructing, "python", False)
    _constructing.python = True
    try:
        yield
    finally:
        _constructing.python = before


def construct(info: ClassInfo) -> Any:
    """The engine object of a Python-declared class Python constructs (`Wanderer()`), with its
    Python object attached (NULL when the engine made none)."""
    with constructing_from_python():
        if info.internal:  # the engine makes no unexposed class: its native base, then ours
            return create(info.cid, 0)
        return interface._iface["classdb_construct_object2"](interface.sn(info.name))


def free(cid: int, iid: int) -> None:
    with lifetime.moving:
        obj = lifetime.forget(iid)
        if obj is not None and state.get("library_reload"):
            # The engine reloads the library: its object stays, and gets this Python object back
            # from `recreate` (its Python state intact; the engine sets the stored properties again).
            _detached[obj._id] = obj
        elif obj is not None:
            obj._ptr = None
            obj._gd_owns = False


_detached: dict[int, Any] = {}  # engine object id -> its Python object, during a library reload


def drop_detached() -> None:
    """After a library reload: the objects whose class was not registered again are plain engine
    objects now."""
    while _detached:
        _, obj = _detached.popitem()
        if obj._gd_owns and obj.is_valid and objects.engine_class("RefCounted").unreference(obj):
            interface._iface["object_destroy"](obj._ptr)
        obj._ptr = None
        obj._gd_owns = False


def install_weakener() -> None:
    """Register the class whose object's deferred call moves RefCounted Python objects to weak
    references on the main loop (`lifetime.weaken_pending`), at the end of SCENE start-up."""

    class GdbridgeWeakener(objects.Object):
        """Internal to gdbridge: moves RefCounted Python objects to weak references."""

        def weaken_pending(self) -> None:
            lifetime.weaken_pending()

    register_pending()
    lifetime.install_weakener(GdbridgeWeakener)


def get_virtual(cid: int, name_ptr: Any) -> int:
    name = _variant.utf8_of(name_ptr, T.STRING_NAME)
    key = (cid, name)
    found = _virtual_ids.get(key)
    if found is not None:
        return found
    info = classes[cid]
    owner = next((c for c in info.cls.__mro__ if name in c.__dict__), None)
    # Written in Python: a Python-defined Godot class (`_gd_native` False) or a plain mixin (none).
    python_defined = owner is not None and owner.__dict__.get("_gd_native") is not True
    editor_skips = state["editor"] and name in GAME_VIRTUALS and not info.tool
    if not python_defined or editor_skips or not callable(owner.__dict__[name]):
        result = 0
    else:
        func = owner.__dict__[name]
        vid = len(_vcalls)
        if name in SHAPE_NO_ARGS or name in SHAPE_ONE_FLOAT:
            _vcalls.append(func)
            interface.lib.gdb_set_fast_virtual(vid, id(func))
            result = vid << 2 | (1 if name in SHAPE_NO_ARGS else 2)
        else:
            _vcalls.append(_virtual_adapter(info, name, func))
            result = vid << 2
    _virtual_ids[key] = result
    return result


def _virtual_adapter(info: ClassInfo, name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    spec = _find_virtual(info.native, name)
    if spec is None:
        raise TypeError(f"{info.name}.{name}: not a virtual method of {info.native}")
    arg_types, ret_type = spec
    vtypes = map(interface.vtype_of, arg_types)
    readers = [_variant.from_variant if t is None else _variant._READERS[t] for t in vtypes]
    ret_vtype = interface.vtype_of(ret_type) if ret_type else T.NIL
    writer = _variant._WRITERS.get(ret_vtype) if ret_type and ret_type != "Variant" else None
    if ret_type == "Variant":
        writer = _write_variant
    elif ret_type.startswith("typedarray::"):
        # An Array[X] result: made typed by the engine's constructor, never holding another type.
        element = _api_type_spec(ret_type.removeprefix("typedarray::").rpartition(":")[2])
        typed = TypeSpec(T.ARRAY, items=(element,))

        def writer(ptr: Any, value: Any) -> None:
            typed_container(ptr, typed, value, in_variant=False)

    elif ret_vtype == T.OBJECT and interface.API["classes"].get(ret_type, {}).get("refcounted"):
        writer = _write_ref  # a Ref<T> result: it must take its reference

    def call(obj: Any, args: Any, ret: Any) -> None:
        result = func(obj, *[reader(args[i]) for i, reader in enumerate(readers)])
        if writer is not None:
            writer(ret, result)

    return call


def _api_type_spec(type_name: str) -> TypeSpec:
    """TypeSpec of a type as the engine API names it ("int", "Vector2i", "Image", "Variant")."""
    vtype = interface.vtype_of(type_name)
    if vtype is None:
        return TypeSpec(T.NIL)
    return TypeSpec(vtype, class_name=type_name if vtype == T.OBJECT else "")


def _find_virtual(class_name: str, name: str) -> tuple[list[str], str] | None:
    while class_name:
        spec = interface.API["classes"][class_name]
        found = spec["virtuals"].get(name)
        if found is not None:
            return found[0], found[1]
        class_name = spec["parent"]
    return None


def notification(iid: int, what: int, reversed_: int) -> None:
    """Every `_notification` of the object's Python classes (mixins too), base class first as the
    engine sends notifications forward, most derived first when it sends them `reversed`."""
    obj = interface.lookup(iid)
    if obj is None:
        return
    chain = _notification_chain(type(obj))
    for handler in reversed(chain) if reversed_ else chain:
        handler(obj, what)


_chains: dict[type, list[Callable[..., Any]]] = {}


def _notification_chain(cls: type) -> list[Callable[..., Any]]:
    found = _chains.get(cls)
    if found is None:
        found = _chains[cls] = [c.__dict__["_notification"] for c in reversed(_python_mro(cls))
                                if "_notification" in c.__dict__]  # fmt: skip
    return found


def _python_mro(cls: type) -> list[type]:
    """The classes of `cls`'s MRO written in Python (Python-defined Godot classes and plain mixins),
    not the engine's proxies."""
    return [c for c in cls.__mro__ if c is not object and not c.__dict__.get("_gd_native", False)]


def _defines(cls: type, name: str) -> bool:
    return any(name in c.__dict__ for c in _python_mro(cls))


# ---- dynamic properties: _set, _get, _get_property_list, _property_can_revert, _property_get_revert ----
_PROPERTY_HOOKS = {
    "_set": 1,
    "_get": 2,
    "_get_property_list": 4,
    "_property_can_revert": 8,
    "_property_get_revert": 8,
}
_CAN_REVERT = 2  # the C layer's GDB_PROP_CAN_REVERT (3 is GET_REVERT)


def property_hook(iid: int, op: int, name_ptr: Any, value: Any) -> int:
    """The engine's can-revert/get-revert by name (`_set` and `_get`, asked for every property by
    name, are called from C). As in GDScript, `_property_get_revert` returns None for a name it does
    not handle."""
    obj = interface.lookup(iid)
    if obj is None:
        return 0
    name = StringName(_variant.utf8_of(name_ptr, T.STRING_NAME))
    if op == _CAN_REVERT:
        return int(hasattr(type(obj), "_property_can_revert") and bool(obj._property_can_revert(name)))
    hook = getattr(obj, "_property_get_revert", None)
    result = hook(name) if hook is not None else None
    if result is None:
        return 0
    interface.lib.gdb_vdestroy(value)
    _variant.to_variant(value, result)
    return 1


_lists: dict[int, tuple[Any, list[Any]]] = {}  # property lists the engine holds, by address


def property_list(iid: int, count: Any) -> Any:
    """`_get_property_list()`: dicts as in GDScript ({"name", "type", "hint", "hint_string",
    "usage", "class_name"}); "type" is a VariantType or any annotation gdbridge maps (float, a
    Resource class, list[int]...), which also gives the hint when none is given."""
    ffi = interface.ffi
    obj = interface.lookup(iid)
    entries = list(obj._get_property_list() or []) if obj is not None else []
    array = ffi.new("GDExtensionPropertyInfo[]", max(1, len(entries)))
    texts: list[Any] = []
    for i, entry in enumerate(entries):
        kind = entry.get("type", T.NIL)
        spec = TypeSpec(int(kind)) if isinstance(kind, int) else type_spec(kind)
        item = array[i]
        item.name = interface.sn(str(entry["name"]))
        item.type = spec.vtype
        item.class_name = interface.sn(entry.get("class_name", spec.class_name))
        item.hint = entry.get("hint", spec.hint)
        hint_string = ffi.new("uint64_t*")
        _variant.new_text(hint_string, T.STRING, entry.get("hint_string", spec.hint_string))
        texts.append(hint_string)
        item.hint_string = hint_string
        item.usage = entry.get(
            "usage", PropertyUsage.DEFAULT | (PropertyUsage.NIL_IS_VARIANT if spec.is_variant else 0)
        )
    _lists[int(ffi.cast("intptr_t", array))] = (array, texts)
    count[0] = len(entries)
    return array


def free_property_list(iid: int, array: Any) -> None:
    _, texts = _lists.pop(int(interface.ffi.cast("intptr_t", array)), (None, []))
    for text in texts:
        interface.lib.gdb_value_destroy(T.STRING, text)


@dataclasses.dataclass
class PropertyView:
    """What `_validate_property(self, prop)` may change: hint, hint_string, usage."""

    name: str
    hint: int
    hint_string: str
    usage: int


def validate_property(iid: int, info: Any) -> int:
    obj = interface.lookup(iid)
    if obj is None:
        return 0
    view = PropertyView(
        _variant.utf8_of(info.name, T.STRING_NAME),
        info.hint,
        _variant.utf8_of(info.hint_string, T.STRING),
        info.usage,
    )
    before = dataclasses.astuple(view)
    obj._validate_property(view)
    if dataclasses.astuple(view) == before:
        return 0
    info.hint, info.usage = view.hint, view.usage
    if view.hint_string != before[2]:
        interface.lib.gdb_value_destroy(T.STRING, info.hint_string)
        _variant.new_text(info.hint_string, T.STRING, view.hint_string)
    return 1


def to_string(iid: int, valid: Any, out: Any) -> None:
    obj = interface.lookup(iid)
    method = getattr(type(obj), "_to_string", None)
    if obj is None or method is None:
        valid[0] = 0
        return
    text = str(method(obj))
    interface.lib.gdb_value_destroy(T.STRING, out)
    _variant.new_text(out, T.STRING, text)
    valid[0] = 1


def unregister_all(level: int) -> None:
    """Unregister the classes registered at `level`, children first."""
    unregister = _fn(
        "classdb_unregister_extension_class", "GDExtensionInterfaceClassdbUnregisterExtensionClass"
    )
    library = interface.lib.gdb_get_library()
    for info in reversed(classes[1:]):
        if info is not None and info.registered and info.level == level:
            unregister(library, interface.sn(info.name))
            info.registered = False


__all__ = ["PropertyHint", "PropertyUsage", "collect", "register_pending"]

objects.serve_declared_classes(collect, construct)
