"""The C fast paths of registered methods: arguments boxed in C and the function called with
vectorcall, and the `declare.queued`, `declare.answered` and `declare.apart` features on top.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gdbridge import _variant, adapters, declare, interface
from gdbridge.classinfo import MethodInfo
from gdbridge.types import VariantType

T = VariantType


def set_fast_path(mid: int, method: MethodInfo) -> None:
    """Register the method with the C fast path (arguments boxed in C, vectorcall); the Python
    adapters stay as the fallback (more than 7 arguments, or an untyped call relying on defaults)."""
    if len(method.args) > 7 or (method.ret is not None and method.ret.items) or method.vararg:
        return  # more than 7 arguments, a typed container result, extra arguments: the Python path
    types = [-1 if spec.is_variant else int(spec.vtype) for _, spec in method.args]
    ret = method.ret
    ret_type = -2 if ret is None else (-1 if ret.is_variant else int(ret.vtype))
    raw_write = adapters.ret_writer(method)
    ffi = interface.ffi

    def writer(address: int, value: Any, into_variant: int) -> None:
        ptr = ffi.cast("void*", address)
        if into_variant:
            interface.lib.gdb_vdestroy(ptr)
            _variant.to_variant(ptr, value)
        else:
            raw_write(ptr, value)

    keep.extend((method.func, writer))
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
    chosen = bool(getattr(method.func, "_gd_chosen", False))
    if chosen:
        _set_chosen(mid, method)
    elif mid in _chosen_mids:
        _chosen_mids.discard(mid)
        interface.lib.gdb_set_chosen_method(mid, 0)
    apart = getattr(method.func, "_gd_apart", False)
    if apart or mid in _apart_mids:
        (_apart_mids.add if apart else _apart_mids.discard)(mid)
        interface.lib.gdb_set_apart_method(mid, _apart_value(mid, method, apart))


def _apart_value(mid: int, method: MethodInfo, apart: Any) -> int:
    """The C layer's value of a `declare.apart` method: -1 (it reads no queued calls), the id of the
    queued method whose calls it reads (its own for a queued method), or 0 (not apart)."""
    if apart is False:
        return 0
    if apart is True:
        return mid if queued_of(method.func) else -1
    reads = _queued_mid_of.get(apart)
    if reads is None:  # registered after this one: linked by _set_queued
        _apart_waiting.setdefault(apart, []).append(mid)
        return -1
    return reads


def queued_of(func: Callable[..., Any]) -> bool:
    return getattr(func, "_gd_queued", None) is not None


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


def _set_chosen(mid: int, method: MethodInfo) -> None:
    """Register a `declare.chosen` method: its C table, set by Python each frame."""
    (_, spec), *more = method.args or [("", None)]
    takes_dictionary = spec is not None and not more and not spec.is_variant and spec.vtype == T.DICTIONARY
    if (
        method.is_static or method.vararg or not (takes_dictionary or not method.args)
        or method.ret is None or method.ret.vtype != T.STRING_NAME
    ):  # fmt: skip
        raise TypeError(f"chosen method {method.name}: one Dictionary parameter or none; a StringName result")
    _chosen_mids.add(mid)
    method.func._gd_chosen_id = mid  # type: ignore[attr-defined]  # for objects.choice_table
    interface.lib.gdb_set_chosen_method(mid, 1 if takes_dictionary else 2)


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
        if spec.is_variant or spec.vtype not in {T.INT, T.FLOAT, T.STRING_NAME}:
            raise TypeError(f"{label}: parameter {name} must be int, float or StringName")
        low, high = bounds.get(name, declare.INT64_RANGE)
        if spec.vtype != T.INT and name in bounds:
            raise TypeError(f"{label}: {spec.vtype.name.lower()} parameter {name} takes no bounds")
        if not declare.INT64_RANGE[0] <= low <= high <= declare.INT64_RANGE[1]:
            raise TypeError(f"{label}: bounds of {name} must be int64 values, low <= high")
        types.append(int(spec.vtype))
        lows.append(low)
        highs.append(high)
    ffi = interface.ffi
    keep.append(take)
    _queued_mids.add(mid)
    _queued_mid_of[method.func] = mid
    method.func._gd_queued_id = mid  # type: ignore[attr-defined]  # for objects.queued_names
    interface.lib.gdb_set_queued_method(
        mid, id(take), ffi.new("int[]", types or [0]), ffi.new("int64_t[]", lows or [0]),
        ffi.new("int64_t[]", highs or [0]), len(types),
    )  # fmt: skip
    answers = _answers_waiting.pop(method.func, None)
    if answers is not None:
        interface.lib.gdb_set_answered_method(answers, mid)
    for reader in _apart_waiting.pop(method.func, ()):
        interface.lib.gdb_set_apart_method(reader, mid)


keep: list[Any] = []  # functions the C fast paths hold borrowed references to
_queued_mids: set[int] = set()  # methods with a C queue (`declare.queued`)
_queued_mid_of: dict[Callable[..., Any], int] = {}  # a queued method's function -> its id
_answered_mids: set[int] = set()  # methods answered from a C table (`declare.answered`)
_answers_waiting: dict[Callable[..., Any], int] = {}  # queued function -> answered id, until registered
_apart_mids: set[int] = set()  # `declare.apart` methods
_apart_waiting: dict[Callable[..., Any], list[int]] = {}  # queued function -> apart readers, until registered
_chosen_mids: set[int] = set()  # methods answered from a C table of inputs (`declare.chosen`)
