"""Adapters between the engine's calls and Python functions: raw or Variant arguments read into
Python values, the result written back as the engine wants it (typed containers checked item by
item, numbers coerced as the engine converts them), for methods and for virtuals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gdbridge import _variant, declare, interface
from gdbridge.classinfo import ClassInfo, MethodInfo
from gdbridge.declare import TypeSpec
from gdbridge.types import GODOT_NAMES, VariantType

T = VariantType


# ---- adapters: raw arguments -> Python call -> raw return ----
def _reader(spec: TypeSpec) -> Callable[[Any], Any]:
    if spec.is_variant:
        return _variant.from_variant
    return _variant._READERS[spec.vtype]


def _write_variant(ptr: Any, value: Any) -> None:
    interface.lib.gdb_vdestroy(ptr)
    _variant.to_variant(ptr, value)


def ret_writer(method: MethodInfo) -> Callable[[Any, Any], None] | None:
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


def make_ptrcall(method: MethodInfo) -> Callable[..., Any]:
    func = method.func
    readers = [_reader(spec) for _, spec in method.args]
    write = ret_writer(method)
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


def make_varcall(method: MethodInfo) -> Callable[..., Any]:
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


def virtual_adapter(info: ClassInfo, name: str, func: Callable[..., Any]) -> Callable[..., Any]:
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
