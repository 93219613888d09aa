"""`MemoryPool`'s batched query with the compiled kernel: `Recall._query` and `_query_round`'s
arguments, results and state changes, in two kernel calls around numpy's exp (memkernel_body.h).

What the kernel leaves to numpy (`query_batch` and `query_round` return None): everything when
the kernel is off, pools with links, rounds where an NPC holds long-term memories (rare, and
Python work either way).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from npc_mind.memory import kernel as memory_kernel
from npc_mind.memory.curves import retrievability
from npc_mind.memory.rules import log1p_counts
from npc_mind.memory.types import EventKind, QueryBatch

_I64 = np.dtype(np.int64)
#: At most one memory per (entity, type) in a row: a query has at most this many candidates.
_CANDIDATES_PER_QUERY = 5


class PoolBinding:
    """The kernel's view of one pool's columns (rebuilt when the pool reallocates them) and the
    reusable candidate buffers."""

    def __init__(self, pool: Any, kernel: memory_kernel.Kernel) -> None:
        self.kernel = kernel
        self.columns = pool._entf  # identity: the pool has not reallocated since
        self.ids = pool._row_of_id
        ffi = kernel.ffi
        struct = ffi.new("mk_pool *")
        self._keep = []
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
        ):
            pointer = ffi.from_buffer(ctype, column)
            self._keep.append(pointer)
            setattr(struct, field, pointer)
        p = pool._p
        struct.capacity = pool._C
        self._keep.append(ffi.from_buffer("int64_t[]", pool._row_of_id))
        struct.row_of_id = self._keep[-1]
        struct.threshold = p.forget_threshold
        struct.min_salience = p.consolidation_min_salience
        struct.gain = p.consolidation_factor * p.alpha
        struct.max_stability = p.max_stability
        struct.consolidate = p.consolidation_factor != 0.0
        self.struct = struct
        self.exponential = p.curve == "exponential"
        self.ln_table(4096)
        self.size = 0
        self.grow(256)

    def ln_table(self, size: int) -> None:
        """ln(1 + k) for k < size (at least), as `rules.log1p_count` computes it."""
        table = log1p_counts(max(4096, 1 << max(size - 1, 1).bit_length()))
        self._ln = (table, self.kernel.ffi.from_buffer("double[]", table))
        self.struct.ln_table, self.struct.ln_size = self._ln[1], table.shape[0]

    def grow(self, m: int) -> None:
        """Candidate buffers for rounds of up to `m` queries."""
        if m <= self.size:
            return
        ffi = self.kernel.ffi
        self.size = size = max(m, 2 * self.size)
        self.room = room = _CANDIDATES_PER_QUERY * size
        self.cand_query, self.cand_flat = np.empty(room, np.int64), np.empty(room, np.int64)
        self.cand_x, self.best = np.empty(room), np.empty(size, np.int64)
        self.rows = np.empty(size, np.int64)
        self.rows_c = ffi.from_buffer("int64_t[]", self.rows)
        self.pointers = tuple(
            ffi.from_buffer(ctype, array)
            for ctype, array in (
                ("int64_t[]", self.cand_query),
                ("int64_t[]", self.cand_flat),
                ("double[]", self.cand_x),
                ("int64_t[]", self.best),
            )
        )


def _binding(pool: Any, kernel: memory_kernel.Kernel) -> PoolBinding:
    binding: PoolBinding | None = pool.__dict__.get("_kernel_binding")
    if (
        binding is None
        or binding.kernel is not kernel
        or binding.columns is not pool._entf
        or binding.ids is not pool._row_of_id
    ):
        binding = pool.__dict__["_kernel_binding"] = PoolBinding(pool, kernel)
    return binding


def _plain_int64(values: Any) -> bool:
    return (
        type(values) is np.ndarray and values.dtype is _I64 and values.ndim == 1 and values.flags.c_contiguous
    )


def _int64_buffer(ffi: Any, values: np.ndarray) -> tuple[np.ndarray, Any]:
    if not _plain_int64(values):
        values = np.ascontiguousarray(values, dtype=np.int64)
    return values, ffi.from_buffer("int64_t[]", values)


def _usable(pool: Any) -> memory_kernel.Kernel | None:
    """The kernel, when it runs and the pool has nothing it leaves to numpy (links, long-term)."""
    kernel = memory_kernel.active()
    return None if kernel is None or pool._links or pool._lt.size else kernel


def query_batch(pool: Any, npcs: Any, entities: Any, now: float, wake: bool) -> QueryBatch | None:
    """`pool._query(npcs, entities, now, wake)` (`now` already checked) with the kernel in one
    round, ids resolved in the kernel; or None (numpy's path, which also raises for bad input):
    inputs other than int64 arrays of one length, an unknown id, or a waking batch whose rows do
    not strictly increase (rounds: each then comes to `query_round`)."""
    kernel = _usable(pool)
    if kernel is None or not (_plain_int64(npcs) and _plain_int64(entities)):
        return None
    m = npcs.shape[0]
    if not m or entities.shape[0] != m:
        return None
    binding = _binding(pool, kernel)
    binding.grow(m)
    struct = binding.struct
    struct.next_id = pool._next_id
    ffi = kernel.ffi
    ids_c, ent_c = ffi.from_buffer("int64_t[]", npcs), ffi.from_buffer("int64_t[]", entities)
    count = kernel.match(
        struct, ids_c, binding.rows_c, ent_c, m, now, binding.exponential, now < pool._tmax, wake,
        *binding.pointers[:3], binding.room,
    )  # fmt: skip
    if count < 0:  # a bad id, an NPC twice, or too many candidates: numpy's path
        return None
    pool._clock = now
    pool._increasing = None
    be, _, fields, r_all = _select(pool, kernel, binding, binding.rows_c, ent_c, npcs, m, count, now, wake)
    return QueryBatch(m, npcs, r_all, be, fields)  # type: ignore[arg-type]


def query_round(  # noqa: PLR0917 (Recall._query_round's arguments)
    pool: Any, rr: np.ndarray, ent: np.ndarray, ids: np.ndarray, now: float, wake: bool
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]] | None:
    """`pool._query_round(rr, ent, ids, now, wake)` with the kernel, or None: numpy's round
    (also when an NPC of the round holds long-term memories)."""
    kernel = memory_kernel.active()
    if kernel is None or pool._links or (pool._lt.size and pool._ltn[rr].any()):
        return None
    binding = _binding(pool, kernel)
    m = rr.shape[0]
    binding.grow(m)
    ffi = kernel.ffi
    rr, rows_c = _int64_buffer(ffi, rr)
    ent, ent_c = _int64_buffer(ffi, ent)
    count = kernel.match(
        binding.struct, ffi.NULL, rows_c, ent_c, m, now, binding.exponential, now < pool._tmax, wake,
        *binding.pointers[:3], binding.room,
    )  # fmt: skip
    if count < 0:  # more candidates than a pool can hold: never expected, numpy copes
        return None
    be, br, fields, _ = _select(pool, kernel, binding, rows_c, ent_c, ids, m, count, now, wake)
    return be, br, fields  # type: ignore[return-value]


class KernelHits(Mapping[str, np.ndarray]):
    """The per-hit fields of one kernel call, sliced from its output block (memkernel_body.h's
    layout: rows of `room` cells) when first asked for: a caller that reads only R pays nothing."""

    _ROWS: ClassVar[dict[str, tuple[int, Any]]] = {
        "entity": (2, np.int64), "recall_count": (3, np.int64), "slot": (4, np.int64),
        "stability": (6, None), "salience": (7, None), "memory_type": (8, np.int8), "pinned": (8, np.bool_),
    }  # fmt: skip
    __slots__ = ("_cache", "_hits", "_out", "_room")

    def __init__(self, out: np.ndarray, room: int, hits: int) -> None:
        self._out, self._room, self._hits = out, room, hits
        self._cache: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        got = self._cache.get(name)
        if got is None:
            row, dtype = self._ROWS[name]  # KeyError for any other name, as a dict
            room, hits = self._room, self._hits
            cells = self._out[row * room : (row + 1) * room]
            if name == "memory_type":
                got = cells.view(np.int8)[:hits]
            elif name == "pinned":
                got = cells.view(np.bool_)[room : room + hits]
            else:
                got = (cells.view(dtype) if dtype else cells)[:hits]
            self._cache[name] = got
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._ROWS)

    def __len__(self) -> int:
        return len(self._ROWS)


def _select(  # noqa: PLR0917
    pool: Any,
    kernel: memory_kernel.Kernel,
    binding: PoolBinding,
    rows_c: Any,
    ent_c: Any,
    ids: np.ndarray,
    m: int,
    count: int,
    now: float,
    wake: bool,
) -> tuple[np.ndarray, np.ndarray, Mapping[str, Any], np.ndarray]:
    """R of the `count` candidates `match` found, then `select`: (hit queries, their R, their
    fields, R of every query)."""
    ffi = kernel.ffi
    cq_c, cf_c, cx_c, best_c = binding.pointers
    if binding.exponential:
        # plain e^x, as the numpy round takes it (see Recall._query_round)
        np.exp(binding.cand_x[:count], out=binding.cand_x[:count])
        r_c = cx_c
    else:
        flat = binding.cand_flat[:count]
        r_c = ffi.from_buffer("double[]", retrievability(pool._lastf[flat], pool._stabf[flat], now, pool._p))
    room = max(1, min(m, count))  # at most one hit per query, and per candidate
    out = np.empty(9 * room + m)  # the answer keeps it: a new block each call
    out_c = ffi.from_buffer("double[]", out)
    struct = binding.struct
    hits = kernel.select(struct, rows_c, ent_c, m, count, cq_c, cf_c, r_c, now, wake, best_c, out_c, room)
    if hits < 0:  # a recall count past the ln table: grow it, nothing was written
        binding.ln_table(-hits)
        hits = kernel.select(struct, rows_c, ent_c, m, count, cq_c, cf_c, r_c, now, wake, best_c, out_c, room)
    ints = out[: 2 * room].view(np.int64)
    be, br = ints[:hits], out[5 * room : 5 * room + hits]
    fields: Mapping[str, Any] = KernelHits(out, room, hits)
    if wake and hits:
        pool._tmax = max(pool._tmax, now)
        if pool._events_on:
            bf = ints[room : room + hits]
            pool._emit_event(EventKind.RECALLED, ids[be], pool._entf[bf], pool._typf[bf])
    if pool._tags is not None:
        be, br, fields = pool._finish_hits(
            be, ints[room : room + hits], br, dict(fields), ids, wake, [], [], []
        )
    return be, br, fields, out[9 * room :]
