"""Python classes as ClassDB classes: registration, and the callbacks the engine makes into them.

A class that subclasses an engine class (`class Wanderer(gdbridge.classes.Node3D)`) is collected
when its module is imported and registered with ClassDB at the SCENE level (or at once, if that
level has passed). Engine callbacks carry small integer ids (class, method, virtual) looked up in
the lists below; the instance pointer is the Python object's address (`interface.instances`).
"""

from __future__ import annotations

import enum
import inspect
import typing
from collections.abc import Callable
from typing import Any

from gdbridge import _variant, adapters, fastpath, instances, interface, lifetime, objects, properties
from gdbridge.classinfo import ClassInfo, MethodInfo, classes, defines, interface_function, python_mro
from gdbridge.declare import Constant, Export, Group, Signal, TypeSpec, type_spec, typed_from_hint
from gdbridge.interface import state
from gdbridge.types import PropertyHint, PropertyUsage, VariantType

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

_pending: list[ClassInfo] = []
_ptrcalls: list[Callable[..., Any] | None] = [None]  # method id -> ptrcall adapter
_varcalls: list[Callable[..., Any] | None] = [None]  # method id -> variant-call adapter
_vcalls: list[Callable[..., Any] | None] = [None]  # virtual id -> function (or adapter)
_virtual_ids: dict[tuple[int, str], int] = {}
_keep: list[Any] = []  # cdata that must outlive registration calls


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
    has_notification = defines(cls, "_notification")
    has_validate = defines(cls, "_validate_property")
    lib.gdb_fill_class_info(creation, info.cid, has_notification, has_validate, bool(cls._gd_refcounted))
    hooks = 0
    for hook, bit in properties.PROPERTY_HOOKS.items():
        if defines(cls, hook):
            hooks |= bit
    lib.gdb_fill_class_properties(creation, hooks)
    register_class = interface_function(
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
    register_property = interface_function(
        "classdb_register_extension_class_property",
        "GDExtensionInterfaceClassdbRegisterExtensionClassProperty",
    )
    register_group = interface_function(
        "classdb_register_extension_class_property_group",
        "GDExtensionInterfaceClassdbRegisterExtensionClassPropertyGroup",
    )
    register_subgroup = interface_function(
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
    register_signal = interface_function(
        "classdb_register_extension_class_signal", "GDExtensionInterfaceClassdbRegisterExtensionClassSignal"
    )
    register_constant = interface_function(
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
    _ptrcalls.append(adapters.make_ptrcall(method))
    _varcalls.append(adapters.make_varcall(method))
    fastpath.set_fast_path(mid, method)
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
    register_method = interface_function(
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
    register = interface_function(
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
    _ptrcalls[mid] = adapters.make_ptrcall(method)
    _varcalls[mid] = adapters.make_varcall(method)
    fastpath.set_fast_path(mid, method)
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
            fastpath.keep.append(func)
            interface.lib.gdb_set_fast_virtual(vid, id(func))
        else:
            _vcalls[vid] = adapters.virtual_adapter(target, name, func)


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
            _vcalls.append(adapters.virtual_adapter(info, name, func))
            result = vid << 2
    _virtual_ids[key] = result
    return result


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
        found = _chains[cls] = [c.__dict__["_notification"] for c in reversed(python_mro(cls))
                                if "_notification" in c.__dict__]  # fmt: skip
    return found


def unregister_all(level: int) -> None:
    """Unregister the classes registered at `level`, children first."""
    unregister = interface_function(
        "classdb_unregister_extension_class", "GDExtensionInterfaceClassdbUnregisterExtensionClass"
    )
    library = interface.lib.gdb_get_library()
    for info in reversed(classes[1:]):
        if info is not None and info.registered and info.level == level:
            unregister(library, interface.sn(info.name))
            info.registered = False


__all__ = ["PropertyHint", "PropertyUsage", "collect", "register_pending"]

objects.serve_declared_classes(collect, instances.construct)
