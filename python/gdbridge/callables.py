"""Godot Callables from Python: an object and a method name (what signals connect to)."""

from __future__ import annotations

from typing import Any

from gdbridge import _variant, objects
from gdbridge.types import VariantType

T = VariantType
_constructor: Any = None


def object_method(obj: Any, method: str) -> _variant.VariantValue:
    """Callable(obj, method): `obj` any Godot object (engine or Python-defined)."""
    global _constructor  # noqa: PLW0603 - resolved once, on first use
    ffi, lib = objects.ffi, objects.lib
    if _constructor is None:
        _constructor = objects._iface["variant_get_ptr_constructor"](T.CALLABLE, 2)
    raw = ffi.new("uint64_t[2]")
    holder = ffi.new("void**", objects.object_ptr(obj))
    args = ffi.new("void*[2]", [holder, objects.sn(method)])
    _constructor(raw, args)
    v = ffi.new("gdb_variant*")
    lib.gdb_vraw(v, T.CALLABLE, raw)
    lib.gdb_value_destroy(T.CALLABLE, raw)
    value = _variant.VariantValue(v)
    lib.gdb_vdestroy(v)
    return value


def as_callable(target: Any, method: str | None = None) -> Any:
    """A Callable from (object, "method"), a bound method of a Godot object, or a Callable value."""
    if isinstance(target, _variant.VariantValue):
        return target
    if method is not None:
        return object_method(target, method)
    owner = getattr(target, "__self__", None)
    if owner is not None and hasattr(owner, "_ptr"):
        name = getattr(target.__func__, "_gd_expose", None) or target.__name__
        return object_method(owner, name)
    raise TypeError(
        "connect a Godot object and a method name, or a bound method of a Godot object "
        "(the method must be exposed to Godot)"
    )
