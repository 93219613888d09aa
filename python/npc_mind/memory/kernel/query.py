"""`MemoryPool`'s batched query with the compiled kernel: `Recaller.query` and `query_round`'s
arguments, results and state changes, in one kernel call (`mk_query`, memkernel_body.h).

A pool reads `NPC_MIND_KERNEL` when it first queries, and keeps that choice. What the kernel
leaves to numpy (`query_batch` and `query_round` return None): everything when
the kernel is off, the power curve, pools with links, pools (`query_batch`) or rounds
(`query_round`) where an NPC holds long-term memories (rare, and Python work either way).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from npc_mind.memory import kernel as memory_kernel
from npc_mind.memory.params import EXPONENT_FLOOR
from npc_mind.memory.types import EventKind, QueryBatch

if TYPE_CHECKING:
    from npc_mind.memory.recall import Recaller
    from npc_mind.memory.state import PoolState

_I64 = np.dtype(np.int64)
#: Candidate cells per block (a block's queries x capacity: every slot could be a candidate; only
#: the hits are written, a few per block). 256 queries a block at 64 slots: the loads the kernel
#: starts for a block's candidates have longer to arrive than with 64 (measured 10-15% less at
#: 10,000 NPCs, the same at 1,000).
_BLOCK_CELLS = 16384
_MAX_BLOCK = 256
#: ln(1 + k) is looked up below this recall count, taken from numpy's log loop at or above it.
_LN_TABLE = 4096


class PoolBinding:
    """The kernel's view of one pool (its `mk_pool`: columns, id map, rule parameters, numpy's
    loops, candidate buffers), made again when the pool reallocates its columns or ids."""

    def __init__(self, state: PoolState, kernel: memory_kernel.Kernel) -> None:
        self.kernel = kernel
        self.columns = state.entity_flat  # identities: the pool has not reallocated since
        self.ids = state.row_of_id
        ffi = kernel.ffi
        struct = ffi.new("mk_pool *")
        self._keep: list[Any] = []
        cap = state.capacity
        block = max(1, min(_MAX_BLOCK, _BLOCK_CELLS // cap))
        self._candidates = (
            np.empty(block * cap, np.int64),
            np.empty(block * cap, np.int64),
            np.empty(block * cap),
        )
        for field, ctype, column in (
            ("hash", "uint16_t[]", state.entity_hash_flat),
            ("entity", "int64_t[]", state.entity_flat),
            ("type", "int8_t[]", state.memory_type_flat),
            ("last", "double[]", state.last_access_flat),
            ("stability", "double[]", state.stability_flat),
            ("salience", "double[]", state.salience_flat),
            ("recalls", "int64_t[]", state.recall_count_flat),
            ("reported", "uint8_t[]", state.forget_reported_flat),
            ("pinned", "uint8_t[]", state.pinned_flat),
            ("row_of_id", "int64_t[]", state.row_of_id),
            ("cand_query", "int64_t[]", self._candidates[0]),
            ("cand_flat", "int64_t[]", self._candidates[1]),
            ("cand_r", "double[]", self._candidates[2]),
            ("used_slots", "int64_t[]", state.used_slots),
            ("pinned_slots", "int64_t[]", state.pinned_slots),
            ("base_stability", "double[]", state.base_stability),
        ):
            pointer = ffi.from_buffer(ctype, column)
            self._keep.append(pointer)
            setattr(struct, field, pointer)
        p = state.params
        struct.capacity = cap
        struct.block = block
        struct.threshold = p.forget_threshold
        struct.min_salience = p.consolidation_min_salience
        struct.gain = p.consolidation_factor * p.alpha
        struct.max_stability = p.max_stability
        struct.consolidate = p.consolidation_factor != 0.0
        struct.alpha = p.alpha
        struct.refractory = p.rehearsal_refractory_s
        struct.weight_r = p.eviction_weight_r
        struct.weight_e = p.eviction_weight_e
        struct.floor = EXPONENT_FLOOR
        struct.kind_rehearsed = int(EventKind.REHEARSED)
        struct.kind_evicted = int(EventKind.EVICTED)
        struct.kind_formed = int(EventKind.FORMED)
        self.log_size = 0
        kernel.take_loops(struct)
        self._ln = np.empty(_LN_TABLE)
        kernel.lib.mk_fill_ln(struct, ffi.from_buffer("double[]", self._ln), _LN_TABLE)
        struct.ln_table, struct.ln_size = ffi.from_buffer("double[]", self._ln), _LN_TABLE
        self.struct = struct
        self._answer = np.empty(0)
        self.answer_ints = self._answer.view(np.int64)  # its int64 view (row 0: the hits' queries)
        self._answer_c: Any = None
        self._answer_refs = 0
        self._ids: np.ndarray | None = None
        self._ids_c: Any = None
        self._record_ids: np.ndarray | None = None
        self._record_ids_c: Any = None
        self._forgotten: tuple[np.ndarray, np.ndarray, Any, Any] | None = None
        self.size = 0
        self.grow(256)

    def answer_block(self, m: int) -> tuple[np.ndarray, Any]:
        """The output block of a `query_batch` call of m queries (`mk_query`'s layout) and its
        pointer: the previous call's block when nothing refers to it any more (its answer, the
        `QueryBatch` viewing it, is gone: only this binding's two references and the call's are
        left), else a new one. A frame's query then writes into memory the last frame warmed."""
        out = self._answer
        if out.shape[0] == 10 * m and sys.getrefcount(out) <= self._answer_refs:
            return out, self._answer_c
        out = self._answer = np.empty(10 * m)
        self.answer_ints = out.view(np.int64)  # (a view: counted in the references below)
        self._answer_c = self.kernel.ffi.from_buffer("double[]", out)
        self._answer_refs = sys.getrefcount(out)  # the same references as the test above counts
        return out, self._answer_c

    def ids_of(self, npcs: np.ndarray) -> Any:
        """A pointer to the int64 ids of `npcs`: the last one's again when it is the same array
        (a game passing its NPC ids each frame), which this binding keeps alive."""
        if npcs is not self._ids:
            self._ids_c = self.kernel.ffi.from_buffer("int64_t[]", npcs)
            self._ids = npcs
        return self._ids_c

    def event_log(self, n: int) -> tuple[Any, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """An `mk_log` for a record of n events (two entries each at most) and its columns: kinds,
        event positions, entities, memory types."""
        if 2 * n > self.log_size:
            self.log_size = max(2 * n, 2 * self.log_size)
            size = self.log_size
            self.log_columns = (
                np.empty(size, np.int8),
                np.empty(size, np.int64),
                np.empty(size, np.int64),
                np.empty(size, np.int8),
            )
            ffi = self.kernel.ffi
            log = self.log = ffi.new("mk_log *")
            self._log_keep = [
                ffi.from_buffer(ctype, column)
                for ctype, column in zip(("int8_t[]", "int64_t[]", "int64_t[]", "int8_t[]"), self.log_columns,
                                         strict=True)
            ]  # fmt: skip
            log.kind, log.event, log.entity, log.type = self._log_keep
        return self.log, self.log_columns

    def record_ids_of(self, npcs: np.ndarray) -> Any:
        """`ids_of` for the record's calls, which keeps its own (a game passes other ids to each)."""
        if npcs is not self._record_ids:
            self._record_ids_c = self.kernel.ffi.from_buffer("int64_t[]", npcs)
            self._record_ids = npcs
        return self._record_ids_c

    def forgotten_buffers(self, cells: int) -> tuple[np.ndarray, np.ndarray, Any, Any]:
        """`mk_forgotten`'s outputs for a scan of `cells` flat slots (int64 slots, float64 times)
        and their pointers, kept from call to call and grown as the pool's rows grow."""
        if self._forgotten is None or self._forgotten[0].shape[0] < cells:
            slots, times = np.empty(max(cells, 64), np.int64), np.empty(max(cells, 64))
            buffer = self.kernel.ffi.from_buffer
            self._forgotten = (slots, times, buffer("int64_t[]", slots), buffer("double[]", times))
        return self._forgotten

    def grow(self, m: int) -> None:
        """The rows buffer, for batches of up to `m` queries."""
        if m > self.size:
            self.size = max(m, 2 * self.size)
            self.rows = np.empty(self.size, np.int64)
            self.rows_c = self.kernel.ffi.from_buffer("int64_t[]", self.rows)


def _bound(recaller: Recaller) -> PoolBinding | None:
    """The pool's binding (kept by its recaller), when the kernel runs for it and the pool has
    nothing it leaves to numpy (links, the power curve). The choice of `NPC_MIND_KERNEL` is read
    when a pool first queries, and kept (a pool runs one level all its life); the binding is made
    again when the pool reallocates its columns or ids."""
    state = recaller.state
    binding = recaller.kernel_binding
    if binding is None:  # the pool's first query
        kernel = memory_kernel.active()
        binding = recaller.kernel_binding = False if kernel is None else PoolBinding(state, kernel)
    if binding is False or state.links or not state.is_exponential:
        return None
    if binding.columns is not state.entity_flat or binding.ids is not state.row_of_id:
        binding = recaller.kernel_binding = PoolBinding(state, binding.kernel)
    return binding


def _plain_int64(values: Any) -> bool:
    return (
        type(values) is np.ndarray and values.dtype is _I64 and values.ndim == 1 and values.flags.c_contiguous
    )


def query_batch(recaller: Recaller, npcs: Any, entities: Any, now: float, wake: bool) -> QueryBatch | None:
    """`recaller.query(npcs, entities, now, wake)` (`now` already checked) in one kernel call, ids
    resolved in it; or None (numpy's path, which also raises for bad input): inputs other than
    contiguous int64 arrays of one length, an unknown id, or a waking batch whose rows do not
    strictly increase (rounds: each then comes to `query_round`). Written for a call per frame,
    whose caches the frame's other work has emptied: every Python step it can skip counts."""
    state = recaller.state
    binding = _bound(recaller)
    if (
        binding is None
        or state.longterm.size
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
    struct.next_id = state.next_id
    out, out_c = binding.answer_block(m)
    try:
        ids_c = binding.ids_of(npcs)
        entities_c = binding.kernel.ffi.from_buffer("int64_t[]", entities)
    except ValueError:  # not contiguous
        return None
    hits = binding.kernel.query(
        struct, ids_c, binding.rows_c, entities_c, m, now, now < state.latest_access, wake, out_c
    )
    if hits < 0:  # a bad id, or an NPC twice: numpy's path
        return None
    state.clock = now
    state.increasing_rows = None
    if (wake and hits and state.events.enabled) or state.tags is not None:
        be, _, fields = _finish(recaller, out, m, hits, npcs, now, wake)
    else:  # the common case, without a call
        be, fields = binding.answer_ints[:hits], KernelHits(out, m, hits)
        if wake and hits and now > state.latest_access:
            state.latest_access = now
    return QueryBatch(m, npcs, out[9 * m :], be, fields)


def query_round(  # noqa: PLR0917 (Recaller.query_round's arguments)
    recaller: Recaller, rr: np.ndarray, ent: np.ndarray, ids: np.ndarray, now: float, wake: bool
) -> tuple[np.ndarray, np.ndarray, Mapping[str, Any]] | None:
    """`recaller.query_round(rr, ent, ids, now, wake)` in one kernel call, or None: numpy's round."""
    binding = _bound(recaller)
    state = recaller.state
    if binding is None or (state.longterm.size and state.longterm_count[rr].any()):
        return None
    kernel = binding.kernel
    m = rr.shape[0]
    ffi = kernel.ffi
    rr = rr if _plain_int64(rr) else np.ascontiguousarray(rr, dtype=np.int64)
    ent = ent if _plain_int64(ent) else np.ascontiguousarray(ent, dtype=np.int64)
    out = np.empty(10 * m)
    hits = kernel.query(
        binding.struct, ffi.NULL, ffi.from_buffer("int64_t[]", rr), ffi.from_buffer("int64_t[]", ent), m, now,
        now < state.latest_access, wake, ffi.from_buffer("double[]", out),
    )  # fmt: skip
    return _finish(recaller, out, m, hits, ids, now, wake)


def strongest_rows(  # noqa: PLR0917 (MemoryPool.strongest's arguments)
    recaller: Recaller,
    rows: np.ndarray,
    entities: np.ndarray,
    masks: np.ndarray,
    floors: np.ndarray,
    now: float,
) -> tuple[np.ndarray, np.ndarray] | None:
    """`MemoryPool.strongest` of pool rows `rows` (live, checked) in one kernel call
    (`mk_strongest`): (entity, R) per row; None when the kernel does not run for the pool (numpy's
    turn, nothing done)."""
    binding = _bound(recaller)
    if binding is None:
        return None
    m = rows.shape[0]
    found_entity, found_r = np.empty(m, np.int64), np.empty(m)
    buffer = binding.kernel.ffi.from_buffer
    rows, entities, masks = (
        column if _plain_int64(column) else np.ascontiguousarray(column, dtype=np.int64)
        for column in (rows, entities, masks)
    )
    floors = np.ascontiguousarray(floors, dtype=np.float64)
    binding.kernel.strongest(
        binding.struct, buffer("int64_t[]", rows), buffer("int64_t[]", entities), buffer("int64_t[]", masks),
        buffer("double[]", floors), m, now, buffer("int64_t[]", found_entity), buffer("double[]", found_r),
    )  # fmt: skip
    return found_entity, found_r


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
    recaller: Recaller, out: np.ndarray, m: int, hits: int, ids: np.ndarray, now: float, wake: bool
) -> tuple[np.ndarray, np.ndarray, Mapping[str, Any]]:
    """A kernel call's hits (queries, R, fields), its events and tags, as `query_round` gives them."""
    state = recaller.state
    ints = out[: 2 * m].view(np.int64)
    be, br = ints[:hits], out[5 * m : 5 * m + hits]
    fields: Mapping[str, Any] = KernelHits(out, m, hits)
    if wake and hits:
        state.latest_access = max(state.latest_access, now)
        if state.events.enabled:
            bf = ints[m : m + hits]
            state.events.log(EventKind.RECALLED, ids[be], state.entity_flat[bf], state.memory_type_flat[bf])
    if state.tags is not None:
        bf = ints[m : m + hits]
        be, br, fields = recaller.finish_hits(be, bf, br, dict(fields), ids, wake, [], [], [])
    return be, br, fields
