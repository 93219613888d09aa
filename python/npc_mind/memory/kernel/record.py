"""`MemoryPool.record_batch` with the compiled kernel: one kernel call (`mk_record`,
memkernel_body.h) that applies each NPC's events in input order as the numpy rounds apply them
(tests/test_memory_kernel.py compares the two, bit for bit, at every level).

Two entries: `record_plain` takes the caller's arrays as they come (contiguous int64 ids and
entities, int8 memory types, float64 saliences: what a game loop passes every frame) and checks
them in the kernel, which refuses before writing anything when a check fails (numpy's checks then
run and raise); `record_checked` takes the columns numpy's checks made of any other input.

What it leaves to numpy (both return False, nothing done): everything when the kernel is off for
the pool (`query._bound`: links, the power curve) and tags (given, or held by the pool). A pool
that logs events gets the kernel's log (rehearsals, evictions, formations in input order: what the
rounds log, put in input order by `EventLog.order_since`), as one entry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from npc_mind.memory.kernel.query import PoolBinding, _bound, _plain_int64

if TYPE_CHECKING:
    from npc_mind.memory.recall import Recaller

_I64 = np.dtype(np.int64)
_I8 = np.dtype(np.int8)
_F64 = np.dtype(np.float64)


def record_plain(  # noqa: PLR0917 (record_batch's arguments)
    recaller: Recaller, npcs: Any, entities: Any, memory_types: Any, saliences: Any, now: float
) -> bool:
    """`record_batch(npcs, entities, memory_types, saliences, now)` (`now` checked, no tags) in one
    kernel call that also resolves and checks the ids, types and saliences; False (nothing done):
    inputs of other types, or a check failed (numpy's path then raises), or numpy's turn."""
    if (
        type(npcs) is not np.ndarray
        or type(entities) is not np.ndarray
        or type(memory_types) is not np.ndarray
        or type(saliences) is not np.ndarray
        or npcs.dtype is not _I64
        or entities.dtype is not _I64
        or memory_types.dtype is not _I8
        or saliences.dtype is not _F64
        or npcs.ndim != 1
        or not npcs.shape == entities.shape == memory_types.shape == saliences.shape
        or not npcs.shape[0]
    ):
        return False
    binding = _usable(recaller)
    if binding is None:
        return False
    m = npcs.shape[0]
    if m > binding.size:
        binding.grow(m)
    buffer = binding.kernel.ffi.from_buffer
    try:
        arrays = (
            binding.record_ids_of(npcs), buffer("int64_t[]", entities), buffer("int8_t[]", memory_types),
            buffer("double[]", saliences),
        )  # fmt: skip
    except ValueError:  # not contiguous
        return False
    return _record(recaller, binding, npcs, binding.rows_c, arrays, m, now)


def record_checked(  # noqa: PLR0917 (the checked columns of Recorder.record_batch)
    recaller: Recaller,
    npcs: np.ndarray,
    rows: np.ndarray,
    entities: np.ndarray,
    memory_types: np.ndarray,
    saliences: np.ndarray,
    now: float,
) -> bool:
    """Record checked events (NPC ids and their rows, int64 entities, int8 memory types, float64
    saliences in [0, 1], of one length, `now` checked, the pool's clock set) in one kernel call;
    False when the kernel leaves the batch to numpy (nothing was done)."""
    binding = _usable(recaller)
    if binding is None:
        return False
    buffer = binding.kernel.ffi.from_buffer
    rows = rows if _plain_int64(rows) else np.ascontiguousarray(rows, dtype=np.int64)
    entities = entities if _plain_int64(entities) else np.ascontiguousarray(entities, dtype=np.int64)
    memory_types = np.ascontiguousarray(memory_types, dtype=np.int8)
    saliences = np.ascontiguousarray(saliences, dtype=np.float64)
    arrays = (
        binding.kernel.ffi.NULL, buffer("int64_t[]", entities), buffer("int8_t[]", memory_types),
        buffer("double[]", saliences),
    )  # fmt: skip
    return _record(recaller, binding, npcs, buffer("int64_t[]", rows), arrays, rows.shape[0], now)


def _usable(recaller: Recaller) -> PoolBinding | None:
    """The pool's binding when the kernel records its batches (no tags held, and `_bound`)."""
    return None if recaller.state.tags is not None else _bound(recaller)


def _record(  # noqa: PLR0917
    recaller: Recaller,
    binding: PoolBinding,
    npcs: np.ndarray,
    rows_c: Any,
    arrays: tuple[Any, Any, Any, Any],
    n: int,
    now: float,
) -> bool:
    """The kernel call (`arrays`: ids or NULL, entities, types, saliences), then the clock, the
    latest access and the event log."""
    state = recaller.state
    kernel = binding.kernel
    log, columns = binding.event_log(n) if state.events.enabled else (kernel.ffi.NULL, None)
    ids_c, entities_c, types_c, saliences_c = arrays
    logged = kernel.record(
        binding.struct,
        ids_c,
        rows_c,
        entities_c,
        types_c,
        saliences_c,
        n,
        now,
        now < state.latest_access,
        log,
    )
    if logged < 0:  # a check failed: numpy's path raises (or decides)
        return False
    state.clock = now
    state.latest_access = max(state.latest_access, now)
    if logged and columns is not None:
        kinds, events, logged_entities, logged_types = (column[:logged] for column in columns)
        state.events.entries.append((kinds.copy(), npcs[events], logged_entities.copy(), logged_types.copy()))
    return True
