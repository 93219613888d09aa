"""Eviction keys: which working slot a new memory takes when its NPC's row is full (the lowest
key), computed with arrays for the batch path and for the scalar path's row alike."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from npc_mind.memory.columns import _selector
from npc_mind.memory.curves import retrievability
from npc_mind.memory.params import EXPONENT_FLOOR
from npc_mind.memory.rules import eviction_key, exponential_exponent

if TYPE_CHECKING:
    from npc_mind.memory.state import PoolState

#: the columns `keys` reads: last access, stability, salience, memory type, pinned
KeyColumns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def key_columns(state: PoolState, selection: slice | np.ndarray) -> KeyColumns:
    """The columns `keys` reads, of rows `selection`."""
    return (
        state.last_access[selection],
        state.stability[selection],
        state.salience[selection],
        state.memory_type[selection],
        state.pinned[selection],
    )


def keys(  # noqa: PLR0917
    state: PoolState,
    columns: KeyColumns,
    now: float,
    out: np.ndarray,
    r_buffer: np.ndarray,
    mask_buffer: np.ndarray,
    any_free: bool,
    any_pinned: bool,
) -> np.ndarray:
    """Eviction key: free slot -2, forgotten (R < threshold) -1, else w_r R + w_e E; pinned +inf.

    R here is e^max(x, -10) rather than the exactly-0 clamped value: the two differ only where
    R < e^-10 < threshold, which maps to -1 either way, so the key is the same and a pass is saved."""
    last_access, stability, salience, memory_type, pinned = columns
    p = state.params
    if p.curve == "exponential":
        exponential_exponent(last_access, now, stability, now < state.latest_access, out=r_buffer)
        np.maximum(r_buffer, EXPONENT_FLOOR, out=r_buffer)
        r = np.exp(r_buffer, out=r_buffer)
    else:
        r = retrievability(last_access, stability, now, p, out=r_buffer, mask=mask_buffer)
    np.less(r, p.forget_threshold, out=mask_buffer)
    # R is unused after this: its buffer is the key's scratch
    eviction_key(r, salience, p.eviction_weight_r, p.eviction_weight_e, out=out, scratch=r_buffer)
    np.copyto(out, -1.0, where=mask_buffer)
    if any_free:
        np.less(memory_type, 0, out=mask_buffer)
        np.copyto(out, -2.0, where=mask_buffer)
    if any_pinned:
        np.copyto(out, np.inf, where=pinned)
    return out


def batch_keys(state: PoolState, rows: np.ndarray, now: float) -> np.ndarray:
    """Keys of rows `rows` (distinct), written into a (rows, capacity) scratch indexed by row."""
    cap = state.capacity
    by_row = state.scratch.get("K")
    if by_row is None or by_row.shape[0] < state.allocated_rows:
        by_row = state.scratch["K"] = np.empty((state.allocated_rows, cap))
    selection = _selector(rows)
    m = rows.shape[0]
    shape = (m, cap)
    r_buffer = state.scratch_buffer("KR", m * cap, np.float64).reshape(shape)
    mask_buffer = state.scratch_buffer("KM", m * cap, bool).reshape(shape)
    any_free = bool((state.used_slots[selection] < cap).any())
    any_pinned = bool(state.pinned_slots[selection].any())
    columns = key_columns(state, selection)
    if isinstance(selection, slice):
        keys(state, columns, now, by_row[selection], r_buffer, mask_buffer, any_free, any_pinned)
    else:
        out = state.scratch_buffer("KO", m * cap, np.float64).reshape(shape)
        by_row[selection] = keys(state, columns, now, out, r_buffer, mask_buffer, any_free, any_pinned)
    return by_row


def flat_keys(state: PoolState, flat_slots: np.ndarray, now: float) -> np.ndarray:
    """Keys of the slots at `flat_slots`."""
    n = flat_slots.shape[0]
    columns = (
        state.last_access_flat[flat_slots],
        state.stability_flat[flat_slots],
        state.salience_flat[flat_slots],
        state.memory_type_flat[flat_slots],
        state.pinned_flat[flat_slots],
    )
    return keys(state, columns, now, np.empty(n), np.empty(n), np.empty(n, dtype=bool), True, True)


def full_row_keys(state: PoolState, row: int, now: float) -> np.ndarray:
    """The eviction keys of a full row's slots (a scratch view), as `keys` computes them for a
    batch holding only this row."""
    cap = state.capacity
    shape = (1, cap)
    out = keys(
        state,
        key_columns(state, slice(row, row + 1)),
        now,
        state.scratch_buffer("KO", cap, np.float64).reshape(shape),
        state.scratch_buffer("KR", cap, np.float64).reshape(shape),
        state.scratch_buffer("KM", cap, bool).reshape(shape),
        False,
        bool(state.pinned_slots.item(row)),
    )
    return out.reshape(-1)


def evicted_slot(state: PoolState, row: int, now: float) -> int:
    """The slot a new memory takes in a full row: the lowest eviction key."""
    return int(full_row_keys(state, row, now).argmin())
