"""`MemoryPool.record_batch` with the compiled kernel: checked events, one kernel call
(`mk_record`, memkernel_body.h), each NPC's events applied in input order as the numpy rounds apply
them (tests/test_memory_kernel.py compares the two, bit for bit, at every level).

What it leaves to numpy (`record_batch` returns False): everything when the kernel is off for the
pool (`query._bound`: links, the power curve) and tags (given, or held by the pool). A pool that
logs events gets the kernel's log (rehearsals, evictions, formations in input order: what the
rounds log, put in input order by `EventLog.order_since`), as one entry."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from npc_mind.memory.kernel.query import _bound, _plain_int64

if TYPE_CHECKING:
    from npc_mind.memory.recall import Recaller

_I8 = np.dtype(np.int8)
_F64 = np.dtype(np.float64)


def record_batch(  # noqa: PLR0917 (the checked columns of Recorder.record_batch)
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
    state = recaller.state
    if state.tags is not None:
        return False
    binding = _bound(recaller)
    if binding is None:
        return False
    kernel = binding.kernel
    buffer = kernel.ffi.from_buffer
    rows = rows if _plain_int64(rows) else np.ascontiguousarray(rows, dtype=np.int64)
    entities = entities if _plain_int64(entities) else np.ascontiguousarray(entities, dtype=np.int64)
    if memory_types.dtype is not _I8 or not memory_types.flags.c_contiguous:
        memory_types = np.ascontiguousarray(memory_types, dtype=np.int8)
    if saliences.dtype is not _F64 or not saliences.flags.c_contiguous:
        saliences = np.ascontiguousarray(saliences, dtype=np.float64)
    n = rows.shape[0]
    log, columns = binding.event_log(n) if state.events.enabled else (kernel.ffi.NULL, None)
    logged = kernel.record(
        binding.struct, buffer("int64_t[]", rows), buffer("int64_t[]", entities),
        buffer("int8_t[]", memory_types), buffer("double[]", saliences), n, now,
        now < state.latest_access, log,
    )  # fmt: skip
    state.latest_access = max(state.latest_access, now)
    if logged and columns is not None:
        kinds, events, logged_entities, logged_types = (column[:logged] for column in columns)
        state.events.entries.append((kinds.copy(), npcs[events], logged_entities.copy(), logged_types.copy()))
    return True
