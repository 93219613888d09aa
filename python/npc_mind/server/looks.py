"""Look-only reads over many memory streams in one call: what a selector's target and its sourced
inputs need each frame. Nothing here wakes a memory (only a recall does).

`strongest` answers, per stream, "the strongest working memory of these types (of this entity, if
one is given) above this R floor": its entity and R. A memory type mask is a bit field over
`MemoryType` values (bit t set: type t counts; 0: every type). Long-term memories (game-day
units) never count here: a target is someone the NPC remembers now.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from npc_mind.memory.rules import awareness_level
from npc_mind.server.registry import handle_array

NO_ENTITY = 0  # "no target": engine instance ids, the entities the senses record, are never 0


def strongest(
    bank: Any,
    handles: npt.ArrayLike,
    *,
    entities: npt.ArrayLike,
    type_masks: npt.ArrayLike,
    floors: npt.ArrayLike,
    now: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: (entity, R, awareness level) of the stream's strongest working memory whose type is
    in the row's mask, of the row's entity (NO_ENTITY: of anyone), with R above the row's floor and
    above the pool's forget threshold. (NO_ENTITY, 0, 0) where none is, or for a stale handle."""
    handles = handle_array(handles)
    wanted = np.asarray(entities, dtype=np.int64).ravel()
    masks = np.asarray(type_masks, dtype=np.int64).ravel()
    floor = np.asarray(floors, dtype=np.float64).ravel()
    best_entity = np.full(handles.size, NO_ENTITY, dtype=np.int64)
    best_r = np.zeros(handles.size)
    levels = np.zeros(handles.size, dtype=np.int8)
    if not handles.size:
        return best_entity, best_r, levels
    bank.flush()  # queued writes first: a look answers what was recorded before it
    groups = bank._group(handles)
    if len(groups) == 1 and groups[0][1].size == handles.size:  # one pool, every row: input order
        pool = groups[0][0].pool
        entity, r = pool.strongest(groups[0][2], wanted, masks, floor, now)
        return entity, r, awareness_level(r, *pool.state.level_bounds)
    for slot, positions, npcs in groups:
        pool = slot.pool
        entity, r = pool.strongest(npcs, wanted[positions], masks[positions], floor[positions], now)
        best_entity[positions] = entity
        best_r[positions] = r
        levels[positions] = awareness_level(r, *pool.state.level_bounds)  # (0 where none: R 0)
    return best_entity, best_r, levels


def type_mask(memory_types: Any) -> int:
    """A mask from memory type values (an empty sequence: 0, every type)."""
    mask = 0
    for memory_type in memory_types:
        mask |= 1 << int(memory_type)
    return mask
