"""`MemoryPool.pop_forgotten`'s scan in one kernel call (`mk_forgotten`, memkernel_body.h): the
same cells in the same order, the same forget times (S x factor, then + last access, as numpy
rounds them) and the same reported flags as the numpy scan (tests/test_memory_kernel.py compares
the two at every level, the pools' whole state included)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from npc_mind.memory.kernel.query import _bound

if TYPE_CHECKING:
    from npc_mind.memory.recall import Recaller


def forgotten_cells(recaller: Recaller, rows: int, now: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(flat slots, forget times) of the working memories in the pool's first `rows` rows that
    are not reported and whose forget time is at or before `now` (checked), marked reported; None
    when the kernel does not run for the pool (numpy's turn, nothing done)."""
    binding = _bound(recaller)
    if binding is None:
        return None
    state = recaller.state
    cells, due, cells_c, due_c = binding.forgotten_buffers(rows * state.capacity)
    count = binding.kernel.forgotten(binding.struct, rows, state.forget_factor, now, cells_c, due_c)
    return cells[:count].copy(), due[:count].copy()
