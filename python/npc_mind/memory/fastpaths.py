"""`ScalarPaths`: single calls with plain Python numbers on one NPC's row with floats, calling the
same rule functions the batch calls with arrays, so they give the batch's bits; whatever they do not
handle they decline (`False` / `_BATCH` / -1) and the pool takes the batch path. Also the reads a
caller deferring writes asks (`writes_plainly`, `awareness_with_pending`, ...)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Protocol, overload

import numpy as np

from npc_mind.memory.columns import (
    _BATCH,
    _EMPTY_TAGS,
    _INT64_MAX,
    _INT64_MIN,
    _MEMORY_TYPES,
    MAX_TIME,
    _hash_one,
)
from npc_mind.memory.eviction import evicted_slot, full_row_keys
from npc_mind.memory.rules import (
    awareness_level,
    capped,
    clip_salience,
    consolidated,
    consolidation_factor,
    exponential_exponent,
    fresh_eviction_key,
    initial_stability,
    larger,
    rehearsed_stability,
    rehearses,
)
from npc_mind.memory.types import EventKind, MemoryType, MemoryView, Tier

if TYPE_CHECKING:
    from npc_mind.memory.state import PoolState

APPLY_FIRST = -2  # `written_level`'s answer when it does not fix the level
#: `query_fields`' answer: MemoryView's fields in order (npc, entity, type, R, S, E, k, tier, slot,
#: age, pinned, tags)
RecallFields = tuple[int, int, MemoryType, float, float, float, int, Tier, int, float, bool, frozenset[str]]


class Room(Protocol):
    """`ScalarPaths.room`'s type, for a caller holding it bound: an int for one NPC id, an array
    for many."""

    @overload
    def __call__(self, npcs: int) -> int: ...
    @overload
    def __call__(self, npcs: np.ndarray) -> np.ndarray: ...


class ScalarPaths:
    """Single calls on one row of `state`, with the batch path's bits."""

    def __init__(self, state: PoolState) -> None:
        self.state = state

    def record_one(  # noqa: PLR0917
        self,
        npc: int,
        entity: int,
        memory_type: int,
        salience: float,
        now: float,
        keys: dict[int, np.ndarray] | None = None,
    ) -> bool:
        """`record_batch` of one well-formed event, on the row's values in plain Python: the same
        IEEE operations in the same order (ln(1 + k) from numpy's table, eviction keys by `eviction.keys`),
        so the same bits. False (nothing changed) when it does not apply: bad input, an NPC with
        links or a row of pinned memories, the empty-slot id; those go through the batch path.

        `keys`: row -> eviction keys at `now`, kept current across a run of calls at one `now`
        (as a batch's rounds keep theirs), so a row's keys are computed once, not per eviction."""
        state = self.state
        if not (
            -MAX_TIME <= now <= MAX_TIME
            and 0 <= npc < state.next_id
            and _INT64_MIN < entity <= _INT64_MAX
            and 0 <= memory_type <= 4
            and salience - salience == 0.0  # finite
        ):
            return False
        row = state.row_of_id.item(npc)
        cap = state.capacity
        if row < 0 or state.links.get(npc) or state.pinned_slots.item(row) >= cap:
            return False
        salience = clip_salience(salience)
        p = state.params
        state.clock = now
        base = row * cap
        match, same = self.slots_of(row, entity, memory_type)
        if match >= 0:
            f = base + match
            last_access = state.last_access_flat
            last_access_before = last_access.item(f)
            last_access[f] = now
            state.forget_reported_flat[f] = False
            if rehearses(now, last_access_before, p.rehearsal_refractory_s):
                stability = state.stability_flat
                recall_count = state.recall_count_flat.item(f) + 1
                state.recall_count_flat[f] = recall_count
                rehearsed_salience = larger(state.salience_flat.item(f), salience)
                state.salience_flat[f] = rehearsed_salience
                stability[f] = rehearsed_stability(
                    stability.item(f), recall_count, rehearsed_salience, p.alpha, p.max_stability
                )
                if state.events.enabled:
                    state.events.entries.append((int(EventKind.REHEARSED), npc, entity, memory_type))
                if same and consolidated(
                    p.consolidation_factor, p.consolidation_min_salience, rehearsed_salience
                ):
                    factor = consolidation_factor(
                        p.consolidation_factor, p.alpha, recall_count, rehearsed_salience
                    )
                    for g in same:
                        stability[base + g] = capped(stability.item(base + g) * factor, p.max_stability)
                    if keys is not None:
                        keys.pop(row, None)  # other slots' S changed: their keys are stale
            if keys is not None and row in keys:
                # accessed at `now`: R is exactly 1, the key w_e E + w_r (as `eviction.keys` gives it)
                keys[row][match] = (
                    math.inf
                    if state.pinned_flat.item(f)
                    else fresh_eviction_key(
                        state.salience_flat.item(f), p.eviction_weight_r, p.eviction_weight_e
                    )
                )
        else:
            if state.used_slots.item(row) < cap:
                slot = state.memory_type[row].tobytes().find(b"\xff")  # the lowest free slot (key -2)
                state.used_slots[row] += 1
            else:
                if keys is None:
                    slot = evicted_slot(state, row, now)
                else:
                    row_keys = keys.get(row)
                    if row_keys is None:
                        row_keys = keys[row] = full_row_keys(state, row, now).copy()
                    slot = int(row_keys.argmin())
                f = base + slot
                if state.events.enabled:
                    evicted = (state.entity_flat.item(f), state.memory_type_flat.item(f))
                    state.events.entries.append((int(EventKind.EVICTED), npc, *evicted))
            f = base + slot
            state.entity_flat[f] = entity
            state.entity_hash_flat[f] = _hash_one(entity)
            state.memory_type_flat[f] = memory_type
            state.last_access_flat[f] = now
            state.stability_flat[f] = initial_stability(
                state.base_stability.item(memory_type), salience, p.max_stability
            )
            state.salience_flat[f] = salience
            state.recall_count_flat[f] = 1
            state.pinned_flat[f] = False
            state.forget_reported_flat[f] = False
            if state.tags is not None:
                state.tags.reshape(-1)[f] = None
            if state.events.enabled:
                state.events.entries.append((int(EventKind.FORMED), npc, entity, memory_type))
            if keys is not None and row in keys:
                keys[row][slot] = fresh_eviction_key(salience, p.eviction_weight_r, p.eviction_weight_e)
        state.latest_access = max(state.latest_access, now)
        return True

    def slots_of(self, row: int, entity: int, memory_type: int) -> tuple[int, list[int]]:
        """The slot of the row's memory of (entity, type) (-1: none) and the row's other memories
        of the entity: one bytes search for the 16-bit hash over the row's hashes (as the batch
        path compares hashes first), then the full id of each candidate."""
        state = self.state
        hashes = state.entity_hash[row].tobytes()
        key = _hash_one(entity).to_bytes(2, "little")
        base = row * state.capacity
        entf, typf = state.entity_flat, state.memory_type_flat
        match = -1
        same: list[int] = []
        at = hashes.find(key)
        while at >= 0:
            if at & 1:  # straddles two slots
                at = hashes.find(key, at + 1)
                continue
            slot = at >> 1
            if entf.item(base + slot) == entity:
                t = typf.item(base + slot)
                if t == memory_type:
                    match = slot
                elif t >= 0:
                    same.append(slot)
            at = hashes.find(key, at + 2)
        return match, same

    def query_one(self, npc: int, entity: int, now: float) -> MemoryView | object | None:
        """`query_fields` as a `MemoryView` (or None / `_BATCH`)."""
        found = self.query_fields(npc, entity, now)
        return found if found is None or found is _BATCH else MemoryView(*found)  # type: ignore[misc]  # the fields tuple here

    def query_fields(self, npc: int, entity: int, now: float) -> tuple | object | None:
        """`query_strongest_batch` of one query on the row's values in plain Python, as the view's
        fields, or `_BATCH` when it does not apply (bad input, the power curve, links, long-term
        memories). The candidates' R come from one numpy exp, so they have the batch path's bits."""
        state = self.state
        if not (
            -MAX_TIME <= now <= MAX_TIME
            and 0 <= npc < state.next_id
            and _INT64_MIN < entity <= _INT64_MAX
            and state.is_exponential
        ):
            return _BATCH
        row = state.row_of_id.item(npc)
        if row < 0 or state.links.get(npc) or (state.longterm.size and state.longterm_count.item(row)):
            return _BATCH
        state.clock = now
        _, slots = self.slots_of(row, entity, -1)
        if not slots:
            return None
        base = row * state.capacity
        last_access, stability = state.last_access_flat, state.stability_flat
        clamp = now < state.latest_access
        x = state.query_exponents[: len(slots)]
        for i, slot in enumerate(slots):
            f = base + slot
            x[i] = exponential_exponent(last_access.item(f), now, stability.item(f), clamp)
        # one memory accessed at `now` (the usual recall of someone just seen): e^0 is 1 exactly
        rs = [1.0] if len(slots) == 1 and x.item(0) == 0.0 else np.exp(x, out=x).tolist()
        best_r = max(rs)  # ties: the lowest slot (slots ascend)
        p = state.params
        if not best_r > p.forget_threshold:
            return None
        best = slots[rs.index(best_r)]
        f = base + best
        recall_count = state.recall_count_flat.item(f) + 1
        salience = state.salience_flat.item(f)
        state.latest_access = max(state.latest_access, now)
        last_access[f] = now
        state.recall_count_flat[f] = recall_count
        state.forget_reported_flat[f] = False
        if len(slots) > 1 and consolidated(p.consolidation_factor, p.consolidation_min_salience, salience):
            factor = consolidation_factor(p.consolidation_factor, p.alpha, recall_count, salience)
            for g in slots:
                if g != best:
                    stability[base + g] = capped(stability.item(base + g) * factor, p.max_stability)
        memory_type = state.memory_type_flat.item(f)
        if state.events.enabled:
            state.events.entries.append((int(EventKind.RECALLED), npc, entity, memory_type))
        tags = state.tags.reshape(-1)[f] if state.tags is not None else None
        return (  # MemoryView's fields: npc, entity, type, R, S, E, k, tier, slot, age, pinned, tags
            npc,
            entity,
            _MEMORY_TYPES[memory_type],
            best_r,
            stability.item(f),
            salience,
            recall_count,
            Tier.WORKING,
            best,
            0.0,
            state.pinned_flat.item(f),
            tags or _EMPTY_TAGS,
        )

    def awareness_one(self, npc: int, entity: int, now: float) -> int:
        """`awareness_batch` of one query in plain Python, or -1 when it does not apply (bad input,
        the power curve, long-term memories: the batch path decides those). R = e^x with x as the
        batch path computes it; `math.exp` decides the level unless R lies within a relative 1e-12
        of a threshold, where numpy's exp (the batch path's bits) decides."""
        state = self.state
        if not (
            -MAX_TIME <= now <= MAX_TIME
            and 0 <= npc < state.next_id
            and _INT64_MIN < entity <= _INT64_MAX
            and state.is_exponential
        ):
            return -1
        row = state.row_of_id.item(npc)
        if row < 0 or (state.longterm.size and state.longterm_count.item(row)):
            return -1
        state.clock = now
        match, same = self.slots_of(row, entity, -1)
        if match < 0 and not same:
            return 0
        base = row * state.capacity
        last_access, stability = state.last_access_flat, state.stability_flat
        clamp = now < state.latest_access
        best = -math.inf
        for slot in same:
            x = exponential_exponent(last_access.item(base + slot), now, stability.item(base + slot), clamp)
            best = max(best, x)
        r = math.exp(best)
        bounds = state.level_bounds
        for b in bounds:  # a loop, not any(generator): this runs once per awareness_of call
            if abs(r - b) <= 1e-12 * b:
                r = float(np.exp(np.array([best]))[0])
                break
        return awareness_level(r, *bounds)

    # -----------------------------------------------------------------------------------------
    # what a caller deferring writes (the server's frame cache) asks
    def writes_plainly(self, npc: int) -> bool:
        """Whether a valid `record` of this NPC can neither be refused (a row full of pinned
        memories) nor reach another entity's memories (links). A caller may then defer such
        writes and fold them into one `record_batch` at the same `now` (the same state and
        events as the calls at once, the batch-equals-singles contract), and know that until
        then no other entity's awareness depends on them but through eviction."""
        state = self.state
        row = state.row_of_id.item(npc) if type(npc) is int and 0 <= npc < state.next_id else -1
        return row >= 0 and not state.links.get(npc) and state.pinned_slots.item(row) < state.capacity

    def written_level(self, row: int | None = None) -> int:
        """The awareness of an entity the NPC at `row` (None: any NPC of the pool) wrote at the
        current `now`: its memory was accessed at `now`, so R = e^0 = 1 exactly, the largest there
        is; APPLY_FIRST where that does not fix the level (the power curve's own computation, or
        long-term memories, which a read also weighs)."""
        state = self.state
        if not state.is_exponential or (
            state.longterm.size and (row is None or state.longterm_count.item(row))
        ):
            return APPLY_FIRST
        return state.level_at_one

    @overload
    def room(self, npcs: int) -> int: ...
    @overload
    def room(self, npcs: np.ndarray) -> np.ndarray: ...
    def room(self, npcs: np.ndarray | int) -> np.ndarray | int:
        """How many writes each NPC takes before one could evict: capacity - working memories (an
        int for one NPC id, for a caller asking per call)."""
        state = self.state
        if type(npcs) is int:
            return state.capacity - state.used_slots.item(state.row_of_id.item(npcs))
        return state.capacity - state.used_slots[state.row_of_id[np.asarray(npcs, dtype=np.int64)]]

    def refresh(self, npc: int, entity: int, memory_type: int, now: float) -> bool:
        """A `record` (plain: `writes_plainly`) of a memory the NPC holds, within its refractory
        period: it only refreshes it (last access = now), as `record_one` does, with no event and
        no other memory touched. False, changing nothing, for any other write (a new memory, a
        rehearsal). For a caller that applies one deferred write before others of the NPC."""
        state = self.state
        row = state.row_of_id.item(npc)
        match, _ = self.slots_of(row, entity, memory_type)
        if match < 0:
            return False
        f = row * state.capacity + match
        if rehearses(now, state.last_access_flat.item(f), state.params.rehearsal_refractory_s):
            return False
        state.clock = now
        state.mark_accessed(f, now)
        state.latest_access = max(state.latest_access, now)
        return True

    def pending_limits(
        self, npcs: np.ndarray, last_access: list[float], now: float
    ) -> tuple[list[int], list[int]]:
        """For a caller answering reads and recalls from a `recall_preview` made at `now` while
        deferred writes of the NPCs (`writes_plainly`, all at `now`) queue up, per pair: how many
        writes the NPC takes before one could evict (capacity - used), and how many writes at `now`
        of the recalled memory (last accessed at `last_access`) each only refresh it, as `record` does,
        with no event and no other memory touched (the refractory predicate says no rehearsal for
        the first, and for the ones after it, accessed at `now`): 0, 1, or more than any queue."""
        state = self.state
        room = self.room(npcs)
        refractory = state.params.rehearsal_refractory_s
        again = 1 if rehearses(now, now, refractory) else _INT64_MAX
        limit = np.where(rehearses(now, np.asarray(last_access, dtype=np.float64), refractory), 0, again)
        return room.tolist(), limit.tolist()
