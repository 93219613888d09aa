"""`MemoryPool`'s batched query with the compiled kernel: `Recall._query` and `_query_round`'s
arguments, results and state changes, in one kernel call (`mk_query`, memkernel_body.h).

A pool reads `NPC_MIND_KERNEL` when it first queries, and keeps that choice. What the kernel
leaves to numpy (`query_batch` and `query_round` return None): everything when
the kernel is off, the power curve, pools with links, pools (`query_batch`) or rounds
(`query_round`) where an NPC holds long-term memories (rare, and Python work either way).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from npc_mind.memory import kernel as memory_kernel
from npc_mind.memory.types import EventKind, QueryBatch

_I64 = np.dtype(np.int64)
#: Candidate cells per block (a block's queries x capacity: every slot could be a candidate).
_BLOCK_CELLS = 4096
_MAX_BLOCK = 64
#: ln(1 + k) is looked up below this recall count, taken from numpy's log loop at or above it.
_LN_TABLE = 4096


class PoolBinding:
    """The kernel's view of one pool (its `mk_pool`: columns, id map, rule parameters, numpy's
    loops, candidate buffers), made again when the pool reallocates its columns or ids."""

    def __init__(self, pool: Any, kernel: memory_kernel.Kernel) -> None:
        self.kernel = kernel
        self.columns = pool._entf  # identities: the pool has not reallocated since
        self.ids = pool._row_of_id
        ffi = kernel.ffi
        struct = ffi.new("mk_pool *")
        self._keep: list[Any] = []
        cap = pool._C
        block = max(1, min(_MAX_BLOCK, _BLOCK_CELLS // cap))
        self._candidates = (
            np.empty(block * cap, np.int64),
            np.empty(block * cap, np.int64),
            np.empty(block * cap),
        )
        for field, ctype, column in (
            ("hash", "uint16_t[]", pool._hf),
            ("entity", "int64_t[]", pool._entf),
            ("type", "int8_t[]", pool._typf),
            ("last", "double[]", pool._lastf),
            ("stability", "double[]", pool._stabf),
            ("salience", "double[]", pool._salf),
            ("recalls", "int64_t[]", pool._kf),
            ("reported", "uint8_t[]", pool._emitf),
            ("pinned", "uint8_t[]", pool._pinf),
            ("row_of_id", "int64_t[]", pool._row_of_id),
            ("cand_query", "int64_t[]", self._candidates[0]),
            ("cand_flat", "int64_t[]", self._candidates[1]),
            ("cand_r", "double[]", self._candidates[2]),
        ):
            pointer = ffi.from_buffer(ctype, column)
            self._keep.append(pointer)
            setattr(struct, field, pointer)
        p = pool._p
        struct.capacity = cap
        struct.block = block
        struct.threshold = p.forget_threshold
        struct.min_salience = p.consolidation_min_salience
        struct.gain = p.consolidation_factor * p.alpha
        struct.max_stability = p.max_stability
        struct.consolidate = p.consolidation_factor != 0.0
        kernel.take_loops(struct)
        self._ln = np.empty(_LN_TABLE)
        kernel.lib.mk_fill_ln(struct, ffi.from_buffer("double[]", self._ln), _LN_TABLE)
        struct.ln_table, struct.ln_size = ffi.from_buffer("double[]", self._ln), _LN_TABLE
        self.struct = struct
        self.size = 0
        self.grow(256)

    def grow(self, m: int) -> None:
        """The rows buffer, for batches of up to `m` queries."""
        if m > self.size:
            self.size = max(m, 2 * self.size)
            self.rows = np.empty(self.size, np.int64)
            self.rows_c = self.kernel.ffi.from_buffer("int64_t[]", self.rows)


def _bound(pool: Any) -> PoolBinding | None:
    """The pool's binding, when the kernel runs for it and the pool has nothing it leaves to numpy
    (links, the power curve). The choice of `NPC_MIND_KERNEL` is read when a pool first queries,
    and kept (a pool runs one level all its life); the binding is made again when the pool
    reallocates its columns or ids."""
    binding = pool.__dict__.get("_kernel_binding")
    if binding is None:  # the pool's first query
        kernel = memory_kernel.active()
        binding = pool.__dict__["_kernel_binding"] = False if kernel is None else PoolBinding(pool, kernel)
    if binding is False or pool._links or not pool._is_exponential:
        return None
    if binding.columns is not pool._entf or binding.ids is not pool._row_of_id:
        binding = pool.__dict__["_kernel_binding"] = PoolBinding(pool, binding.kernel)
    return binding


def _plain_int64(values: Any) -> bool:
    return (
        type(values) is np.ndarray and values.dtype is _I64 and values.ndim == 1 and values.flags.c_contiguous
    )


def query_batch(pool: Any, npcs: Any, entities: Any, now: float, wake: bool) -> QueryBatch | None:
    """`pool._query(npcs, entities, now, wake)` (`now` already checked) in one kernel call, ids
    resolved in it; or None (numpy's path, which also raises for bad input): inputs other than
    contiguous int64 arrays of one length, an unknown id, or a waking batch whose rows do not
    strictly increase (rounds: each then comes to `query_round`). Written for a call per frame:
    every step it can skip counts."""
    binding = _bound(pool)
    if (
        binding is None
        or pool._lt.size
        or type(npcs) is not np.ndarray
        or type(entities) is not np.ndarray
        or npcs.dtype is not _I64
        or entities.dtype is not _I64
        or npcs.ndim != 1
        or npcs.shape != entities.shape
    ):
        return None
    m = npcs.shape[0]
    if not m:
        return None
    if m > binding.size:
        binding.grow(m)
    struct = binding.struct
    struct.next_id = pool._next_id
    buffer = binding.kernel.ffi.from_buffer
    out = np.empty(10 * m)  # the answer keeps it: a new block each call
    try:
        ids_c, entities_c = buffer("int64_t[]", npcs), buffer("int64_t[]", entities)
    except ValueError:  # not contiguous
        return None
    hits = binding.kernel.query(
        struct, ids_c, binding.rows_c, entities_c, m, now, now < pool._tmax, wake, buffer("double[]", out)
    )
    if hits < 0:  # a bad id, or an NPC twice: numpy's path
        return None
    pool._clock = now
    pool._increasing = None
    if (wake and hits and pool._events_on) or pool._tags is not None:
        be, _, fields = _finish(pool, out, m, hits, npcs, now, wake)
    else:  # the common case, without a call
        be, fields = out[:hits].view(np.int64), KernelHits(out, m, hits)
        if wake and hits and now > pool._tmax:
            pool._tmax = now
    return QueryBatch(m, npcs, out[9 * m :], be, fields)  # type: ignore[arg-type]


def query_round(  # noqa: PLR0917 (Recall._query_round's arguments)
    pool: Any, rr: np.ndarray, ent: np.ndarray, ids: np.ndarray, now: float, wake: bool
) -> tuple[np.ndarray, np.ndarray, Mapping[str, Any]] | None:
    """`pool._query_round(rr, ent, ids, now, wake)` in one kernel call, or None: numpy's round."""
    binding = _bound(pool)
    if binding is None or (pool._lt.size and pool._ltn[rr].any()):
        return None
    kernel = binding.kernel
    m = rr.shape[0]
    ffi = kernel.ffi
    rr = rr if _plain_int64(rr) else np.ascontiguousarray(rr, dtype=np.int64)
    ent = ent if _plain_int64(ent) else np.ascontiguousarray(ent, dtype=np.int64)
    out = np.empty(10 * m)
    hits = kernel.query(
        binding.struct, ffi.NULL, ffi.from_buffer("int64_t[]", rr), ffi.from_buffer("int64_t[]", ent), m, now,
        now < pool._tmax, wake, ffi.from_buffer("double[]", out),
    )  # fmt: skip
    return _finish(pool, out, m, hits, ids, now, wake)


class KernelHits(Mapping[str, np.ndarray]):
    """The per-hit fields of one kernel call, sliced from its output block (memkernel_body.h's
    layout: rows of m cells) when first asked for: a caller that reads only R pays nothing."""

    _ROWS: ClassVar[dict[str, tuple[int, Any]]] = {
        "entity": (2, np.int64), "recall_count": (3, np.int64), "slot": (4, np.int64),
        "stability": (6, None), "salience": (7, None), "memory_type": (8, np.int8), "pinned": (8, np.bool_),
    }  # fmt: skip
    __slots__ = ("_cache", "_hits", "_m", "_out")

    def __init__(self, out: np.ndarray, m: int, hits: int) -> None:
        self._out, self._m, self._hits = out, m, hits
        self._cache: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        got = self._cache.get(name)
        if got is None:
            row, dtype = self._ROWS[name]  # KeyError for any other name, as a dict
            m, hits = self._m, self._hits
            cells = self._out[row * m : (row + 1) * m]
            if name == "pinned":
                got = cells.view(np.bool_)[m : m + hits]
            else:
                got = (cells.view(dtype) if dtype else cells)[:hits]
            self._cache[name] = got
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._ROWS)

    def __len__(self) -> int:
        return len(self._ROWS)


def _finish(  # noqa: PLR0917
    pool: Any, out: np.ndarray, m: int, hits: int, ids: np.ndarray, now: float, wake: bool
) -> tuple[np.ndarray, np.ndarray, Mapping[str, Any]]:
    """A kernel call's hits (queries, R, fields), its events and tags, as `_query_round` gives them."""
    ints = out[: 2 * m].view(np.int64)
    be, br = ints[:hits], out[5 * m : 5 * m + hits]
    fields: Mapping[str, Any] = KernelHits(out, m, hits)
    if wake and hits:
        pool._tmax = max(pool._tmax, now)
        if pool._events_on:
            bf = ints[m : m + hits]
            pool._emit_event(EventKind.RECALLED, ids[be], pool._entf[bf], pool._typf[bf])
    if pool._tags is not None:
        bf = ints[m : m + hits]
        be, br, fields = pool._finish_hits(be, bf, br, dict(fields), ids, wake, [], [], [])
    return be, br, fields
