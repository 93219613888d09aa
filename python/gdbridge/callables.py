"""Godot Callables from Python: an object and a method name, or any Python callable."""

from __future__ import annotations

import inspect
from typing import Any

from gdbridge import _variant, interface
from gdbridge.types import VariantType

T = VariantType
_constructor: Any = None


def _take_callable(raw: Any) -> _variant.VariantValue:
    """A Variant value holding the Callable built in `raw`; `raw` itself is destroyed."""
    ffi, lib = interface.ffi, interface.lib
    v = ffi.new("gdb_variant*")
    lib.gdb_vraw(v, T.CALLABLE, raw)
    lib.gdb_value_destroy(T.CALLABLE, raw)
    value = _variant.VariantValue(v)
    lib.gdb_vdestroy(v)
    return value


def object_method(obj: Any, method: str) -> _variant.VariantValue:
    """Callable(obj, method): `obj` any Godot object (engine or Python-defined)."""
    global _constructor  # noqa: PLW0603 - resolved once, on first use
    ffi = interface.ffi
    if _constructor is None:
        _constructor = interface._iface["variant_get_ptr_constructor"](T.CALLABLE, 2)
    raw = ffi.new("uint64_t[2]")
    holder = ffi.new("void**", interface.object_ptr(obj))
    args = ffi.new("void*[2]", [holder, interface.sn(method)])
    _constructor(raw, args)
    return _take_callable(raw)


_functions: dict[int, Any] = {}  # custom Callable id -> the Python callable it runs
_next_id = [0]


def python_function(fn: Any, owner: Any = None) -> _variant.VariantValue:
    """A Godot Callable that runs `fn` (on the thread that calls it); with `owner`, the Callable
    becomes invalid when that Godot object is freed (signals then disconnect it)."""
    ffi, lib = interface.ffi, interface.lib
    _next_id[0] += 1
    cid = _next_id[0]
    _functions[cid] = fn
    info = ffi.new("GDExtensionCallableCustomInfo2*")
    lib.gdb_fill_callable_info(info, cid, owner.get_instance_id() if owner is not None else 0)
    raw = ffi.new("uint64_t[2]")
    create = ffi.cast(
        "GDExtensionInterfaceCallableCustomCreate2", lib.gdb_get_proc(b"callable_custom_create2")
    )
    create(raw, info)
    return _take_callable(raw)


def call_function(cid: int, args: Any, n: int, ret: Any) -> None:
    result = _functions[cid](*[_variant.from_variant(args[i]) for i in range(n)])
    interface.lib.gdb_vdestroy(ret)
    _variant.to_variant(ret, result)


def free_function(cid: int) -> None:
    _functions.pop(cid, None)


def function_info(cid: int, what: int, other: int) -> int:
    """For the engine's Callable: 0 hash, 1 equal to `other`, 2 ordered before `other`, 3 argument
    count (-1: not known)."""
    fn = _functions.get(cid)
    if what == 0:
        return hash(fn) & 0xFFFFFFFF
    if what == 1:
        return int(fn is not None and fn == _functions.get(other))
    if what == 2:  # consistent with equality: equal callables are not ordered
        other_fn = _functions.get(other)
        return int(fn != other_fn and (hash(fn), cid) < (hash(other_fn), other))
    return argument_count(fn)


def function_text(cid: int, valid: Any, out: Any) -> None:
    """str() of the engine's Callable: str() of the Python callable it runs (its __str__)."""
    fn = _functions.get(cid)
    if fn is None:
        valid[0] = 0
        return
    text = str(fn)
    interface.lib.gdb_value_destroy(T.STRING, out)
    _variant.new_text(out, T.STRING, text)
    valid[0] = 1


def argument_count(fn: Any) -> int:
    """Positional parameters of a Python callable (a bound method's self excluded); -1 when unknown."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return -1
    return sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def as_callable(target: Any, method: str | None = None) -> Any:
    """A Callable from (object, "method"), a bound method, any Python callable, or a Callable value.

    A bound method of a Godot object whose method is exposed becomes Callable(object, name) (so
    `is_connected`/`disconnect` match); other callables run as Python functions."""
    if isinstance(target, _variant.VariantValue):
        return target
    if method is not None:
        return object_method(target, method)
    owner = getattr(target, "__self__", None)
    godot_owner = owner if owner is not None and hasattr(owner, "_ptr") else None
    if godot_owner is not None:
        name = getattr(
            target.__func__, "_gd_expose", "" if target.__name__.startswith("_") else target.__name__
        )
        if name and godot_owner.has_method(name):
            return object_method(godot_owner, name)
    if not callable(target):
        raise TypeError(f"cannot make a Callable from {target!r}")
    return python_function(target, godot_owner)
