"""`Recorder`: the batch path of recording: `record_batch` in rounds of at most one event per NPC,
each round vectorised across NPCs with the rules of `npc_mind.memory.rules`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from npc_mind.memory.checks import (
    checked_memory_types,
    checked_saliences,
    checked_time,
    int64_array,
    tag_set,
)
from npc_mind.memory.columns import _selector, entity_hash
from npc_mind.memory.consolidation import consolidate
from npc_mind.memory.eviction import batch_keys, flat_keys
from npc_mind.memory.kernel.record import record_checked, record_plain
from npc_mind.memory.rounds import split_rounds
from npc_mind.memory.rules import (
    fresh_eviction_key,
    initial_stability,
    larger,
    rehearsed_stability,
    rehearses,
)
from npc_mind.memory.types import EventKind, MemoryType, PoolFullError

if TYPE_CHECKING:
    from npc_mind.memory.fastpaths import ScalarPaths
    from npc_mind.memory.recall import Recaller
    from npc_mind.memory.state import PoolState

# batches recorded in rounds only after a `refresh_only` pass that took less than half the events
# (random events rarely all refresh: the pass would cost about a round each time for nothing)
REFRESH_PASS_REST = 8


def _at(ev: np.ndarray | None, local: np.ndarray) -> np.ndarray:
    """Input positions of a round's events `local` (positions in the round; `ev` None: the round
    is the whole input)."""
    return local if ev is None else ev[local]


@dataclass(slots=True)
class RoundKeys:
    """The eviction keys a batch's rounds share: computed at the first eviction for `rows` (the
    first round's rows, which hold every NPC of the batch), then kept current round by round."""

    rows: np.ndarray
    keys: np.ndarray | None = None  # by row, as `eviction.batch_keys` writes them


class Recorder:
    """`record_batch` on `state`; narrow rounds' events go one by one to `scalar.record_one`; the
    compiled kernel records the plain batches, with the pool's kernel binding (its `recaller`'s)."""

    def __init__(self, state: PoolState, scalar: ScalarPaths, recaller: Recaller) -> None:
        self.state = state
        self.scalar = scalar
        self.recaller = recaller

    def record_batch(
        self,
        npcs: Any,
        entities: Any,
        memory_types: Any,
        saliences: Any,
        now: float,
        *,
        tags: Sequence[Iterable[str] | None] | None = None,
    ) -> None:
        """`MemoryPool.record_batch`: every argument checked before anything changes, then the
        refresh-only pass, the rounds and the tail of narrow rounds."""
        state = self.state
        now = checked_time(now)
        if tags is None and record_plain(self.recaller, npcs, entities, memory_types, saliences, now):
            return  # the memory kernel, when it runs, on a game loop's arrays
        npcs, rows = state.rows_of(npcs)
        n = rows.shape[0]
        entities = int64_array(entities, "entities")
        memory_types = checked_memory_types(memory_types, n)
        saliences = checked_saliences(saliences, n)
        if not entities.shape[0] == memory_types.shape[0] == saliences.shape[0] == n:
            raise ValueError(
                f"record_batch needs equally long inputs, got npcs {n}, entities {entities.shape[0]}, "
                f"memory_types {memory_types.shape[0]}, saliences {saliences.shape[0]}"
            )
        tag_sets: list[frozenset[str]] | None = None
        if tags is not None:
            if isinstance(tags, str):  # would be split into one letter per event
                raise TypeError("record_batch tags must be one tag list per event, got a string")
            if len(tags) != n:
                raise ValueError(f"tags needs one entry per event ({n}), got {len(tags)}")
            tag_sets = [tag_set(t) for t in tags]
            if not any(tag_sets):
                tag_sets = None
        if n and state.pinned_slots[rows].max() >= state.capacity:
            self.check_pinned_full(npcs, rows, entities, memory_types)
        state.clock = now  # the call is accepted: only now does the pool's clock move
        if n == 0:
            return
        if tag_sets is None and record_checked(
            self.recaller, npcs, rows, entities, memory_types, saliences, now
        ):
            return  # the memory kernel, when it runs
        if tag_sets is not None:
            state.ensure_tags()
        hashes = entity_hash(entities)
        if state.refresh_pass_rests:
            state.refresh_pass_rests -= 1
        elif tag_sets is None and n > 1 and not bool((rows[1:] > rows[:-1]).all()):  # maybe an NPC twice
            left = self.refresh_only(rows, hashes, entities, memory_types, now)
            if left is not None:  # the NPCs left are recorded in rounds, as before
                rows, hashes, entities, memory_types, saliences, npcs = (
                    column[left] for column in (rows, hashes, entities, memory_types, saliences, npcs)
                )
            if left is None or 2 * int(np.count_nonzero(left)) > n:  # it paid for less than half
                state.refresh_pass_rests = REFRESH_PASS_REST
        rounds, tail = split_rounds(state, rows, state.narrow_round) if rows.shape[0] else ([], None)
        start = len(state.events.entries)
        if state.events.enabled:
            state.events.positions = []

        def one_round(ev: np.ndarray, keys: RoundKeys) -> None:
            self.record_round(
                rows[ev],
                hashes[ev],
                entities[ev],
                memory_types[ev],
                saliences[ev],
                npcs[ev],
                now,
                tag_sets,
                ev,
                keys,
            )

        try:
            if rounds:
                keys = RoundKeys(rows if rounds[0] is None else rows[rounds[0]])
                for ev in rounds:
                    if ev is None:
                        self.record_round(
                            rows, hashes, entities, memory_types, saliences, npcs, now, tag_sets, None, keys
                        )
                    else:
                        one_round(ev, keys)
            if tail is not None:
                self.record_tail(
                    tail, rows, npcs, entities, memory_types, saliences, now, tag_sets is None, one_round
                )
        finally:
            if state.events.positions is not None:
                state.events.order_since(start)
        state.latest_access = max(state.latest_access, now)

    def refresh_only(
        self, rows: np.ndarray, hashes: np.ndarray, entities: np.ndarray, memory_types: np.ndarray, now: float
    ) -> np.ndarray | None:
        """Record, in one pass, the events of the NPCs whose every event in the batch only refreshes
        a memory it holds (a match within the refractory period): a refresh sets the memory's last
        access to now and logs nothing, so their order cannot matter, and they touch no other NPC.
        Every other NPC's events are left for the rounds (returned as a mask over the events), in
        their order; None when no NPC was all refreshes. A crowd seeing the same people frame after
        frame records mostly refreshes: one pass instead of a round per event of an NPC."""
        state = self.state
        m = rows.shape[0]
        match_events, match_slots = state.entity_slots(rows, rows, hashes, entities, "eq")
        same = (
            state.memory_type_flat[match_slots] == memory_types[match_events]
        )  # at most one slot an event (keys are unique per NPC)
        match_events, match_slots = match_events[same], match_slots[same]
        refreshes = ~rehearses(now, state.last_access_flat[match_slots], state.params.rehearsal_refractory_s)
        only = np.zeros(m, dtype=bool)
        only[match_events[refreshes]] = True
        if not only.any():
            return None
        mark = state.row_mark  # per row: does one of its events do more than refresh?
        mark[rows] = 0
        mark[rows[~only]] = 1
        only &= mark[rows] == 0
        if not only.any():
            return None
        state.mark_accessed(match_slots[refreshes & only[match_events]], now)
        return ~only

    def check_pinned_full(
        self, npcs: np.ndarray, rows: np.ndarray, entities: np.ndarray, memory_types: np.ndarray
    ) -> None:
        state = self.state
        for i in np.flatnonzero(state.pinned_slots[rows] >= state.capacity).tolist():
            r = int(rows[i])
            if not ((state.entity[r] == entities[i]) & (state.memory_type[r] == memory_types[i])).any():
                memory_type = MemoryType(int(memory_types[i])).name
                raise PoolFullError(
                    f"npc {int(npcs[i])}: all {state.capacity} working slots are pinned, no room for a new "
                    f"memory of entity {int(entities[i])} ({memory_type}); unpin one or raise capacity"
                )

    def record_round(  # noqa: PLR0917
        self,
        rows: np.ndarray,
        hashes: np.ndarray,
        entities: np.ndarray,
        memory_types: np.ndarray,
        saliences: np.ndarray,
        npcs: np.ndarray,
        now: float,
        tag_sets: list[frozenset[str]] | None,
        ev: np.ndarray | None,
        round_keys: RoundKeys,
    ) -> None:
        """One round (at most one event per NPC, NPC `npcs[i]` at row `rows[i]`): rehearse or
        refresh the matched memories, form the new ones (evicting by `round_keys`), consolidate."""
        state = self.state
        p, cap = state.params, state.capacity
        m = rows.shape[0]
        selection = _selector(rows)
        match_events, match_slots = state.entity_slots(selection, rows, hashes, entities, "eq")
        same_type = state.memory_type_flat[match_slots] == memory_types[match_events]
        matched_events = match_events[
            same_type
        ]  # matched events (at most one slot each: keys are unique per NPC)
        matched_slots = match_slots[same_type]
        touched = [matched_slots]
        formed_slots = consolidated_slots = None
        # ---- rehearsal / refresh
        # (flat slots, events, recall counts, saliences) of the memories a rehearsal woke
        woken: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        if matched_events.shape[0]:
            last_access_before = state.last_access_flat[matched_slots]
            state.mark_accessed(matched_slots, now)
            rehearsal = rehearses(now, last_access_before, p.rehearsal_refractory_s)
            if rehearsal.any():
                rehearsed_slots, rehearsed_events = matched_slots[rehearsal], matched_events[rehearsal]
                recall_count = state.recall_count_flat[rehearsed_slots] + 1
                state.recall_count_flat[rehearsed_slots] = recall_count
                rehearsed_salience = larger(state.salience_flat[rehearsed_slots], saliences[rehearsed_events])
                state.salience_flat[rehearsed_slots] = rehearsed_salience
                state.stability_flat[rehearsed_slots] = rehearsed_stability(
                    state.stability_flat[rehearsed_slots],
                    recall_count,
                    rehearsed_salience,
                    p.alpha,
                    p.max_stability,
                )
                woken = (rehearsed_slots, rehearsed_events, recall_count, rehearsed_salience)
                if state.events.enabled:
                    at = _at(ev, rehearsed_events)
                    state.events.log(
                        EventKind.REHEARSED,
                        npcs[rehearsed_events],
                        state.entity_flat[rehearsed_slots],
                        state.memory_type_flat[rehearsed_slots],
                        at,
                    )
            if tag_sets is not None:
                tags = state.ensure_tags().reshape(-1)  # made by record_batch for tag_sets
                for e, f in zip(matched_events.tolist(), matched_slots.tolist(), strict=True):
                    t = tag_sets[e if ev is None else int(ev[e])]
                    if t:
                        tags[f] = t if tags[f] is None else tags[f] | t
        # ---- new memories
        if matched_events.shape[0] < m:
            if matched_events.shape[0]:
                is_unmatched = np.ones(m, dtype=bool)
                is_unmatched[matched_events] = False
                unmatched = np.flatnonzero(is_unmatched)
            else:
                unmatched = None  # every event of the round
            keys = round_keys.keys
            if keys is None:
                keys = round_keys.keys = batch_keys(state, round_keys.rows, now)
            new_events: slice | np.ndarray  # the new memories' events: all of the round, or these
            if unmatched is None:
                slots = keys[selection].argmin(axis=1)
                nrows, new_events = rows, slice(None)
            elif unmatched.shape[0] * 4 >= m:
                slots = keys[selection].argmin(axis=1)[unmatched]
                nrows, new_events = rows[unmatched], unmatched
            else:
                nrows, new_events = rows[unmatched], unmatched
                slots = keys[nrows].argmin(axis=1)
            new_slots = nrows * cap + slots
            evicted_memory_types = state.memory_type_flat[new_slots]
            evicted = evicted_memory_types >= 0
            n_evicted = int(np.count_nonzero(evicted))
            if state.events.enabled and n_evicted:
                evicted_npcs = npcs[new_events][evicted]
                at = _at(ev, np.arange(m)[new_events])[evicted]
                state.events.log(
                    EventKind.EVICTED,
                    evicted_npcs,
                    state.entity_flat[new_slots][evicted],
                    evicted_memory_types[evicted],
                    at,
                )
            if n_evicted < new_slots.shape[0]:
                state.used_slots[nrows[~evicted]] += 1
            new_memory_types = memory_types[new_events]
            new_saliences = saliences[new_events]
            state.entity_flat[new_slots] = entities[new_events]
            state.entity_hash_flat[new_slots] = hashes[new_events]
            state.memory_type_flat[new_slots] = new_memory_types
            state.last_access_flat[new_slots] = now
            state.stability_flat[new_slots] = initial_stability(
                state.base_stability[new_memory_types], new_saliences, p.max_stability
            )
            state.salience_flat[new_slots] = new_saliences
            state.recall_count_flat[new_slots] = 1
            state.pinned_flat[new_slots] = False
            state.forget_reported_flat[new_slots] = False
            if state.tags is not None:
                tags = state.tags.reshape(-1)
                events = range(m) if unmatched is None else unmatched.tolist()
                for e, f in zip(events, new_slots.tolist(), strict=True):
                    tags[f] = (
                        None if tag_sets is None else (tag_sets[e if ev is None else int(ev[e])] or None)
                    )
            if state.events.enabled:
                state.events.log(
                    EventKind.FORMED,
                    npcs[new_events],
                    entities[new_events],
                    new_memory_types,
                    _at(ev, np.arange(m)[new_events]),
                )
            formed_slots = new_slots
        # ---- associative consolidation of what woke with E >= threshold
        if woken is not None:
            tf = consolidate(state, match_events, match_slots, rows, *woken, npcs)
            if tf is not None:
                consolidated_slots = tf[0]
        # ---- keep the batch's eviction keys current for the slots this round changed
        keys = round_keys.keys
        if keys is not None:
            # every slot this round rehearsed, refreshed or formed was accessed at `now`, so its R is
            # exactly 1 and its key is w_e E + w_r (the same bits `eviction.keys` gives); pinned stays +inf
            keys_flat = keys.reshape(-1)
            fresh = touched[0]
            if fresh.shape[0]:
                key = fresh_eviction_key(state.salience_flat[fresh], p.eviction_weight_r, p.eviction_weight_e)
                key[state.pinned_flat[fresh]] = np.inf
                keys_flat[fresh] = key
            if formed_slots is not None:
                keys_flat[formed_slots] = fresh_eviction_key(
                    state.salience_flat[formed_slots], p.eviction_weight_r, p.eviction_weight_e
                )
            if consolidated_slots is not None:
                keys_flat[consolidated_slots] = flat_keys(state, consolidated_slots, now)

    def record_tail(  # noqa: PLR0917
        self,
        tail: np.ndarray,
        rows: np.ndarray,
        npcs: np.ndarray,
        entities: np.ndarray,
        memory_types: np.ndarray,
        saliences: np.ndarray,
        now: float,
        scalar: bool,
        one_round: Callable[[np.ndarray, RoundKeys], None],
    ) -> None:
        """The events of narrow rounds, one at a time in input order (NPCs never share memories, so
        only each NPC's own order matters): the scalar path where it applies (`scalar`: no tags),
        else `one_round` of that event alone."""
        state = self.state
        keys: dict[int, np.ndarray] = {}  # eviction keys of the rows seen, kept current
        for i, npc, entity, memory_type, salience in zip(
            tail.tolist(),
            npcs[tail].tolist(),
            entities[tail].tolist(),
            memory_types[tail].tolist(),
            saliences[tail].tolist(),
            strict=True,
        ):
            logged = len(state.events.entries)
            if scalar and self.scalar.record_one(npc, entity, memory_type, salience, now, keys):
                if state.events.positions is not None and len(state.events.entries) > logged:
                    state.events.positions.extend([i] * (len(state.events.entries) - logged))
                continue
            one = np.array([i])
            keys.pop(int(rows[i]), None)
            one_round(one, RoundKeys(rows[one]))
