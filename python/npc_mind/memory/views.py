"""The `MemoryView`s of one NPC (`MemoryPool.memories`): read-only, never waking anything."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from npc_mind.memory.columns import _EMPTY_TAGS
from npc_mind.memory.curves import retrievability
from npc_mind.memory.types import MemoryType, MemoryView, Tier

if TYPE_CHECKING:
    from npc_mind.memory.state import PoolState


def working_views(state: PoolState, npc: int, row: int, now: float) -> list[MemoryView]:
    """The NPC's working memories (its pool row `row`) at `now`, in slot order."""
    cap = state.capacity
    slots = np.flatnonzero(state.memory_type[row] >= 0)
    fi = row * cap + slots
    r = retrievability(state.last_access_flat[fi], state.stability_flat[fi], now, state.params)
    tags = state.tags.reshape(-1)[fi].tolist() if state.tags is not None else [None] * fi.shape[0]
    return [
        MemoryView(
            npc=npc,
            entity=int(state.entity_flat[f]),
            memory_type=MemoryType(int(state.memory_type_flat[f])),
            retrievability=float(r[i]),
            stability=float(state.stability_flat[f]),
            salience=float(state.salience_flat[f]),
            recall_count=int(state.recall_count_flat[f]),
            tier=Tier.WORKING,
            slot=int(s),
            age=max(now - float(state.last_access_flat[f]), 0.0),
            pinned=bool(state.pinned_flat[f]),
            tags=tags[i] or _EMPTY_TAGS,
        )
        for i, (f, s) in enumerate(zip(fi.tolist(), slots.tolist(), strict=True))
    ]


def longterm_views(state: PoolState, npc: int) -> list[MemoryView]:
    """The NPC's long-term memories, in the tier's order."""
    rows = state.longterm.rows_for(npc)
    if not rows:
        return []
    r = state.longterm.retrievability(rows, state.params)
    c = state.longterm.cols
    return [
        MemoryView(
            npc=npc,
            entity=int(c["entity"][j]),
            memory_type=MemoryType(int(c["memory_type"][j])),
            retrievability=float(r[i]),
            stability=float(c["stability"][j]),
            salience=float(c["salience"][j]),
            recall_count=int(c["recall_count"][j]),
            tier=Tier.LONG_TERM,
            slot=-1,
            age=float(c["age"][j]),
            tags=state.longterm.tags[j],
        )
        for i, j in enumerate(rows)
    ]
