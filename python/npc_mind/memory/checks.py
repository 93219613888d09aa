"""Input checking for `MemoryPool`: every call's arguments are checked (and never coerced)
before anything changes. Pure functions of their arguments; the checks of NPC ids, which need the
pool's id table, are `PoolState.row_of` / `rows_of`."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from npc_mind.memory.columns import _EMPTY_TAGS, MAX_TIME


def int64_array(values: Any, what: str) -> np.ndarray:
    try:
        arr = np.asarray(values)
    except OverflowError as exc:
        raise ValueError(f"{what} must fit in 64 bits: {exc}") from None
    kind = arr.dtype.kind
    if arr.size == 0 and arr.ndim == 1:  # [] reads as float64: no values, nothing to refuse
        return np.empty(0, dtype=np.int64)
    if kind == "O":  # Python ints too big for one numpy dtype, or mixed types
        values = arr.reshape(-1).tolist()
        integer = (int, np.integer)
        bad = next((v for v in values if isinstance(v, bool) or not isinstance(v, integer)), None)
        if bad is not None:  # never coerced: "12" or 1.5 is not the id 12 or 1
            raise TypeError(f"{what} must be integers, got {type(bad).__name__} {bad!r:.40}")
        try:
            arr = np.array([int(v) for v in values], dtype=np.int64).reshape(arr.shape)
        except OverflowError as exc:
            raise ValueError(f"{what} must be 64-bit integers: {exc}") from None
    elif kind == "u":
        arr = arr.view(np.int64) if arr.dtype.itemsize == 8 else arr.astype(np.int64)
    elif kind == "i":
        if arr.dtype != np.int64:
            arr = arr.astype(np.int64)
    else:
        raise TypeError(f"{what} must be integers, got {arr.dtype} values")
    if arr.ndim > 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {arr.shape}")
    return arr if arr.ndim == 1 else arr.reshape(-1)  # (the array itself: a caller may keep it)


def checked_time(now: Any) -> float:
    if type(now) is float and -MAX_TIME <= now <= MAX_TIME:  # the common case, first (NaN fails it)
        return now
    if isinstance(now, bool) or not isinstance(now, int | float | np.integer | np.floating):
        raise TypeError(f"now must be a number of seconds, got {now!r}")
    t = float(now)
    if not math.isfinite(t):
        raise ValueError(f"now must be a finite number of seconds, got {t}")
    if abs(t) > MAX_TIME:
        raise ValueError(f"now = {t} is out of range (|now| <= {MAX_TIME:g} s)")
    return t


def checked_memory_types(values: Any, n: int) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"memory types must be integers (MemoryType), got {arr.dtype} values")
    if arr.ndim == 0:
        arr = np.full(n, arr, dtype=arr.dtype)
    if arr.shape[0] and (int(arr.min()) < 0 or int(arr.max()) > 4):
        bad = next(int(v) for v in arr.reshape(-1) if not 0 <= int(v) <= 4)
        raise ValueError(f"unknown memory type {bad}: use MemoryType (0..4)")
    return arr.astype(np.int8, copy=False).reshape(-1)


def checked_saliences(values: Any, n: int) -> np.ndarray:
    arr = np.asarray(values)  # no dtype: a string "0.5" must not become 0.5
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"saliences must be numbers, got {arr.dtype} values")
    arr = arr.astype(np.float64, copy=False)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if not np.isfinite(arr).all():
        bad = arr[~np.isfinite(arr)][0]
        raise ValueError(f"salience must be a finite number, got {bad}")
    return np.clip(arr.reshape(-1), 0.0, 1.0)


def tag_set(tags: Iterable[str] | None) -> frozenset[str]:
    if tags is None:
        return _EMPTY_TAGS
    if isinstance(tags, str):
        return frozenset((tags,))
    out = frozenset(tags)
    for t in out:
        if not isinstance(t, str):
            raise TypeError(f"tags must be strings, got {t!r}")
    return out
