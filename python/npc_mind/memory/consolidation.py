"""Associative consolidation: a memory woken with E >= the consolidation threshold strengthens the
other memories of its entity and its linked memories (`MemoryPool.link`), in the batch paths of
recording and recall alike."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from npc_mind.memory.rules import capped, consolidated, consolidation_factor

if TYPE_CHECKING:
    from npc_mind.memory.state import PoolState


def consolidate(  # noqa: PLR0917
    state: PoolState,
    match_events: np.ndarray,
    match_slots: np.ndarray,
    rows: np.ndarray,
    woken_slots: np.ndarray,
    woken_events: np.ndarray,
    woken_recall_count: np.ndarray,
    woken_salience: np.ndarray,
    npcs: np.ndarray,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Boost the other memories of each woken memory's entity and its linked memories. Does not
    chain. A round's events (NPC `npcs[i]` at row `rows[i]`) matched the flat slots `match_slots`
    (`match_events`: their events, ascending, as `PoolState.entity_slots` gives them); the memories
    at `woken_slots` woke (for events `woken_events`, ascending) with the recall counts and
    saliences given. Returns (flat slots, events) boosted, or None."""
    p = state.params
    strong = consolidated(p.consolidation_factor, p.consolidation_min_salience, woken_salience)
    if not strong.any():
        return None
    wf, we = woken_slots[strong], woken_events[strong]  # `we` ascends: events come in order
    factor = consolidation_factor(
        p.consolidation_factor, p.alpha, woken_recall_count[strong], woken_salience[strong]
    )
    # only events that matched two or more memories of their entity have same-entity targets
    tf = te = tfac = np.empty(0, dtype=np.int64)
    if match_events.shape[0] > 1:
        d = match_events[1:] == match_events[:-1]
        if d.any():
            both = np.zeros(match_events.shape[0], dtype=bool)
            both[1:] = d
            both[:-1] |= d
            ri_m, fi_m = match_events[both], match_slots[both]
            pos = np.minimum(np.searchsorted(we, ri_m), we.shape[0] - 1)
            tsel = (we[pos] == ri_m) & (fi_m != wf[pos]) & (state.memory_type_flat[fi_m] >= 0)
            tf, te, tfac = fi_m[tsel], ri_m[tsel], factor[pos[tsel]]
    if state.links:
        extra_f: list[int] = []
        extra_e: list[int] = []
        for e, f in zip(we.tolist(), wf.tolist(), strict=True):
            npc = int(npcs[e])
            links = state.links.get(npc)
            if not links:
                continue
            entity, memory_type = int(state.entity_flat[f]), int(state.memory_type_flat[f])
            for g in linked_slots(state, npc, int(rows[e]), entity, memory_type):
                if g != f and not np.any(tf[te == e] == g):
                    extra_f.append(g)
                    extra_e.append(e)
        if extra_f:
            extra_e_arr = np.asarray(extra_e, dtype=np.int64)
            tf = np.concatenate([tf, np.asarray(extra_f, dtype=np.int64)])
            te = np.concatenate([te, extra_e_arr])
            tfac = np.concatenate([tfac, factor[np.searchsorted(we, extra_e_arr)]])
    if not tf.shape[0]:
        return None
    state.stability_flat[tf] = capped(state.stability_flat[tf] * tfac, p.max_stability)
    return tf, te


def linked_slots(state: PoolState, npc: int, row: int, entity: int, memory_type: int) -> list[int]:
    """The flat slots of the row's memories linked to (entity, memory type), ascending."""
    links = state.links.get(npc, {})
    keys = links.get((entity, memory_type), set()) | links.get((entity, -1), set())
    out: list[int] = []
    cap = state.capacity
    for e2, t2 in keys:
        m = (state.entity[row] == e2) & (state.memory_type[row] >= 0)
        if t2 >= 0:
            m &= state.memory_type[row] == t2
        out.extend((row * cap + np.flatnonzero(m)).tolist())
    return sorted(set(out))
