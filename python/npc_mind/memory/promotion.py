"""The game-day step (`MemoryPool.advance_game_day`, the source's dual-track time): the long-term
tier ages by game days and drops what it forgot, then the remembered, unpinned working memories
that are stable or recalled enough move into it, freeing their slots."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from npc_mind.memory.checks import checked_time
from npc_mind.memory.columns import _EMPTY_TAGS
from npc_mind.memory.curves import retrievability
from npc_mind.memory.params import DAY_SECONDS
from npc_mind.memory.types import EventKind

if TYPE_CHECKING:
    from npc_mind.memory.state import PoolState


def advance_game_day(state: PoolState, days: float, now: float | None) -> None:
    """Age the long-term tier by `days`, then promote into it (see `MemoryPool.advance_game_day`)."""
    if (
        isinstance(days, bool)
        or not isinstance(days, int | float | np.integer | np.floating)
        or not math.isfinite(float(days))
        or float(days) < 0.0
    ):
        raise ValueError(f"days must be a finite number >= 0, got {days!r}")
    now = state.clock if now is None else checked_time(now)
    p = state.params
    gone = state.longterm.decay(float(days), p)
    if gone.shape[0]:
        c = state.longterm.cols
        gone_npcs = c["npc"][gone].copy()
        if state.events.enabled:
            state.events.log(
                EventKind.LONG_TERM_FORGOTTEN, gone_npcs, c["entity"][gone], c["memory_type"][gone]
            )
        keep = np.ones(state.longterm.size, dtype=bool)
        keep[gone] = False
        state.longterm.keep(keep)
        np.subtract.at(state.longterm_count, state.row_of_id[gone_npcs], 1)
    n, cap = state.npc_count, state.capacity
    if not n:
        return
    r = retrievability(state.last_access[:n], state.stability[:n], now, p)
    cand = (
        (state.memory_type[:n] >= 0)
        & ~state.pinned[:n]
        & (r > p.forget_threshold)
        & (
            (state.stability[:n] >= p.longterm_min_stability)
            | (state.recall_count[:n] >= p.longterm_min_recalls)
        )
    )
    fi = np.flatnonzero(cand)
    if not fi.shape[0]:
        return
    tags = state.tags.reshape(-1) if state.tags is not None else None
    rows = fi // cap
    for f, row in zip(fi.tolist(), rows.tolist(), strict=True):
        npc = int(state.npc_of_row[row])
        before = state.longterm.count_for(npc)
        s_days = max(
            p.longterm_min_days, p.longterm_stability_gain * float(state.stability_flat[f]) / DAY_SECONDS
        )
        state.longterm.add(
            npc,
            int(state.entity_flat[f]),
            int(state.memory_type_flat[f]),
            float(state.salience_flat[f]),
            int(state.recall_count_flat[f]),
            s_days,
            (tags[f] if tags is not None else None) or _EMPTY_TAGS,
        )
        state.longterm_count[row] += state.longterm.count_for(npc) - before
    if state.events.enabled:
        state.events.log(
            EventKind.PROMOTED, state.npc_of_row[rows], state.entity_flat[fi], state.memory_type_flat[fi]
        )
    np.subtract.at(state.used_slots, rows, 1)
    state.clear_slots(fi)
