"""The single-call fast paths: `record`, `query_strongest` and `awareness` with plain Python numbers
work on one NPC's row with floats, calling the same rule functions the batch calls with arrays, so
they give the batch's bits; whatever they do not handle goes through the batch path."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from threading import get_ident as thread_id
from typing import Any

import numpy as np

from npc_mind.memory.columns import (
    _AWARENESS,
    _BATCH,
    _EMPTY_TAGS,
    _INT64_MAX,
    _INT64_MIN,
    _MEMORY_TYPES,
    MAX_TIME,
    _hash_one,
)
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
from npc_mind.memory.types import (
    Awareness,
    EventKind,
    MemoryType,
    MemoryView,
    Tier,
)

APPLY_FIRST = -2  # `written_level`'s answer when it does not fix the level


class FastPaths:
    """Single calls on one row, and the per-event tails of narrow rounds.
    A part of `MemoryPool` (its state is set up in `MemoryPool.__init__`)."""

    def record(
        self,
        npc: int,
        entity: int,
        memory_type: int,
        salience: float,
        now: float,
        *,
        tags: Iterable[str] | None = None,
    ) -> None:
        """Perceive one event: rehearse the matching memory (same entity and type, whatever its R)
        or form a new one, evicting when the NPC's working memory is full. A batch of one: the
        common case (plain Python numbers, no tags, no links) runs a scalar path with the batch's
        arithmetic; anything else (and every bad input, for its error) goes through `record_batch`."""
        if thread_id() != self._owner:
            self._refuse_thread("record")
        if (
            tags is None
            and type(now) is float
            and type(npc) is int
            and type(entity) is int
            and (type(memory_type) is int or type(memory_type) is MemoryType)  # MemoryType.HOSTILE too
            and (type(salience) is float or type(salience) is int)
            and self._record_one(npc, entity, int(memory_type), float(salience), now)
        ):
            return
        self.record_batch(
            np.array([npc]) if not isinstance(npc, np.ndarray) else npc,
            np.array([entity]) if not isinstance(entity, np.ndarray) else entity,
            np.array([memory_type]) if not isinstance(memory_type, np.ndarray) else memory_type,
            np.array([salience]) if not isinstance(salience, np.ndarray) else salience,
            now,
            tags=None if tags is None else [tags],
        )

    def _record_one(  # noqa: PLR0917
        self,
        npc: int,
        entity: int,
        memory_type: int,
        salience: float,
        now: float,
        keys: dict[int, np.ndarray] | None = None,
    ) -> bool:
        """`record_batch` of one well-formed event, on the row's values in plain Python: the same
        IEEE operations in the same order (ln(1 + k) from numpy's table, eviction keys by `_keys`),
        so the same bits. False (nothing changed) when it does not apply: bad input, an NPC with
        links or a row of pinned memories, the empty-slot id; those go through the batch path.

        `keys`: row -> eviction keys at `now`, kept current across a run of calls at one `now`
        (as a batch's rounds keep theirs), so a row's keys are computed once, not per eviction."""
        if not (
            -MAX_TIME <= now <= MAX_TIME
            and 0 <= npc < self._next_id
            and _INT64_MIN < entity <= _INT64_MAX
            and 0 <= memory_type <= 4
            and salience - salience == 0.0  # finite
        ):
            return False
        row = self._row_of_id.item(npc)
        cap = self._C
        if row < 0 or self._links.get(npc) or self._pinned.item(row) >= cap:
            return False
        salience = clip_salience(salience)
        p = self._p
        self._clock = now
        base = row * cap
        match, same = self._slots_of(row, entity, memory_type)
        if match >= 0:
            f = base + match
            lastf = self._lastf
            last_old = lastf.item(f)
            lastf[f] = now
            self._emitf[f] = False
            if rehearses(now, last_old, p.rehearsal_refractory_s):
                k = self._kf.item(f) + 1
                self._kf[f] = k
                e_new = larger(self._salf.item(f), salience)
                self._salf[f] = e_new
                self._stabf[f] = rehearsed_stability(self._stabf.item(f), k, e_new, p.alpha, p.max_stability)
                if self._events_on:
                    self._ev.append((int(EventKind.REHEARSED), npc, entity, memory_type))
                if same and consolidated(p.consolidation_factor, p.consolidation_min_salience, e_new):
                    factor = consolidation_factor(p.consolidation_factor, p.alpha, k, e_new)
                    stabf = self._stabf
                    for g in same:
                        stabf[base + g] = capped(stabf.item(base + g) * factor, p.max_stability)
                    if keys is not None:
                        keys.pop(row, None)  # other slots' S changed: their keys are stale
            if keys is not None and row in keys:
                # accessed at `now`: R is exactly 1, the key w_e E + w_r (as `_keys` gives it)
                keys[row][match] = (
                    math.inf
                    if self._pinf.item(f)
                    else fresh_eviction_key(self._salf.item(f), p.eviction_weight_r, p.eviction_weight_e)
                )
        else:
            if self._used.item(row) < cap:
                slot = self._typ[row].tobytes().find(b"\xff")  # the lowest free slot (key -2)
                self._used[row] += 1
            else:
                if keys is None:
                    slot = self._evict_slot(row, now)
                else:
                    row_keys = keys.get(row)
                    if row_keys is None:
                        row_keys = keys[row] = self._evict_keys(row, now).copy()
                    slot = int(row_keys.argmin())
                f = base + slot
                if self._events_on:
                    self._ev.append((int(EventKind.EVICTED), npc, self._entf.item(f), self._typf.item(f)))
            f = base + slot
            self._entf[f] = entity
            self._hf[f] = _hash_one(entity)
            self._typf[f] = memory_type
            self._lastf[f] = now
            self._stabf[f] = initial_stability(self._base.item(memory_type), salience, p.max_stability)
            self._salf[f] = salience
            self._kf[f] = 1
            self._pinf[f] = False
            self._emitf[f] = False
            if self._tags is not None:
                self._tags.reshape(-1)[f] = None
            if self._events_on:
                self._ev.append((int(EventKind.FORMED), npc, entity, memory_type))
            if keys is not None and row in keys:
                keys[row][slot] = fresh_eviction_key(salience, p.eviction_weight_r, p.eviction_weight_e)
        self._tmax = max(self._tmax, now)
        return True

    def writes_plainly(self, npc: int) -> bool:
        """Whether a valid `record` of this NPC can neither be refused (a row full of pinned
        memories) nor reach another entity's memories (links). A caller may then defer such
        writes and fold them into one `record_batch` at the same `now` (the same state and
        events as the calls at once, the batch-equals-singles contract), and know that until
        then no other entity's awareness depends on them but through eviction."""
        row = self._row_of_id.item(npc) if type(npc) is int and 0 <= npc < self._next_id else -1
        return row >= 0 and not self._links.get(npc) and self._pinned.item(row) < self._C

    def written_level(self, row: int | None = None) -> int:
        """The awareness of an entity the NPC at `row` (None: any NPC of the pool) wrote at the
        current `now`: its memory was accessed at `now`, so R = e^0 = 1 exactly, the largest there
        is; APPLY_FIRST where that does not fix the level (the power curve's own computation, or
        long-term memories, which a read also weighs)."""
        if not self._is_exponential or (self._lt.size and (row is None or self._ltn.item(row))):
            return APPLY_FIRST
        return self._level_at_one

    def room(self, npcs: np.ndarray | int) -> np.ndarray | int:
        """How many writes each NPC takes before one could evict: capacity - working memories (an
        int for one NPC id, for a caller asking per call)."""
        if type(npcs) is int:
            return self._C - self._used.item(self._row_of_id.item(npcs))
        return self._C - self._used[self._row_of_id[np.asarray(npcs, dtype=np.int64)]]

    def refresh(self, npc: int, entity: int, memory_type: int, now: float) -> bool:
        """A `record` (plain: `writes_plainly`) of a memory the NPC holds, within its refractory
        period: it only refreshes it (last access = now), as `_record_one` does, with no event and
        no other memory touched. False, changing nothing, for any other write (a new memory, a
        rehearsal). For a caller that applies one deferred write before others of the NPC."""
        row = self._row_of_id.item(npc)
        match, _ = self._slots_of(row, entity, memory_type)
        if match < 0:
            return False
        f = row * self._C + match
        if rehearses(now, self._lastf.item(f), self._p.rehearsal_refractory_s):
            return False
        self._clock = now
        self._accessed(f, now)
        self._tmax = max(self._tmax, now)
        return True

    def pending_limits(self, npcs: np.ndarray, last: list[float], now: float) -> tuple[list[int], list[int]]:
        """For a caller answering reads and recalls from a `recall_preview` made at `now` while
        deferred writes of the NPCs (`writes_plainly`, all at `now`) queue up, per pair: how many
        writes the NPC takes before one could evict (capacity - used), and how many writes at `now`
        of the recalled memory (last accessed at `last`) each only refresh it, as `record` does,
        with no event and no other memory touched (the refractory predicate says no rehearsal for
        the first, and for the ones after it, accessed at `now`): 0, 1, or more than any queue."""
        room = self.room(npcs)
        refractory = self._p.rehearsal_refractory_s
        again = 1 if rehearses(now, now, refractory) else _INT64_MAX
        limit = np.where(rehearses(now, np.asarray(last, dtype=np.float64), refractory), 0, again)
        return room.tolist(), limit.tolist()

    def _slots_of(self, row: int, entity: int, memory_type: int) -> tuple[int, list[int]]:
        """The slot of the row's memory of (entity, type) (-1: none) and the row's other memories
        of the entity: one bytes search for the 16-bit hash over the row's hashes (as the batch
        path compares hashes first), then the full id of each candidate."""
        hashes = self._h[row].tobytes()
        key = _hash_one(entity).to_bytes(2, "little")
        base = row * self._C
        entf, typf = self._entf, self._typf
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

    def _record_tail(  # noqa: PLR0917
        self,
        tail: np.ndarray,
        rows: np.ndarray,
        ids: np.ndarray,
        ent: np.ndarray,
        typ: np.ndarray,
        sal: np.ndarray,
        now: float,
        scalar: bool,
        one_round: Callable[[np.ndarray, dict[str, Any]], None],
    ) -> None:
        """The events of narrow rounds, one at a time in input order (NPCs never share memories, so
        only each NPC's own order matters): the scalar path where it applies (`scalar`: no tags),
        else `one_round` of that event alone."""
        keys: dict[int, np.ndarray] = {}  # eviction keys of the rows seen, kept current
        for i, npc, entity, memory_type, salience in zip(
            tail.tolist(), ids[tail].tolist(), ent[tail].tolist(), typ[tail].tolist(), sal[tail].tolist(),
            strict=True,
        ):  # fmt: skip
            logged = len(self._ev)
            if scalar and self._record_one(npc, entity, memory_type, salience, now, keys):
                if self._ev_at is not None and len(self._ev) > logged:
                    self._ev_at.extend([i] * (len(self._ev) - logged))
                continue
            one = np.array([i])
            keys.pop(int(rows[i]), None)
            one_round(one, {"K": None, "u": rows[one]})

    def query_strongest(self, npc: int, entity: int, now: float) -> MemoryView | None:
        """The NPC's strongest memory of `entity` if its R is above the forget threshold, else None.
        The recall wakes it (last access = now, k + 1, S unchanged); R is reported as it was before
        the wake. Only this and `query_strongest_batch` change state among the read calls."""
        if thread_id() != self._owner:
            self._refuse_thread("query_strongest")
        if type(now) is float and type(npc) is int and type(entity) is int:
            found = self._query_one(npc, entity, now)
            if found is not _BATCH:
                return found  # type: ignore[return-value]
        return self.query_strongest_batch(np.array([npc]), np.array([entity]), now).view(0)

    def recall_fields(self, npc: int, entity: int, now: float) -> tuple | None:
        """`query_strongest` as the view's fields in `MemoryView`'s order (None: nothing recalled),
        for a caller that only reads them: the single-call path then builds no view (a frozen
        dataclass of 12 fields costs about 1.3 us to make)."""
        if thread_id() != self._owner:
            self._refuse_thread("recall_fields")
        if type(now) is float and type(npc) is int and type(entity) is int:
            found = self._query_fields(npc, entity, now)
            if found is not _BATCH:
                return found  # type: ignore[return-value]
        view = self.query_strongest_batch(np.array([npc]), np.array([entity]), now).view(0)
        return None if view is None else tuple(getattr(view, name) for name in MemoryView.__slots__)

    def _query_one(self, npc: int, entity: int, now: float) -> MemoryView | object | None:
        """`_query_fields` as a `MemoryView` (or None / `_BATCH`)."""
        found = self._query_fields(npc, entity, now)
        return found if found is None or found is _BATCH else MemoryView(*found)  # type: ignore[misc]

    def _query_fields(self, npc: int, entity: int, now: float) -> tuple | object | None:
        """`query_strongest_batch` of one query on the row's values in plain Python, as the view's
        fields, or `_BATCH` when it does not apply (bad input, the power curve, links, long-term
        memories). The candidates' R come from one numpy exp, so they have the batch path's bits."""
        if not (
            -MAX_TIME <= now <= MAX_TIME
            and 0 <= npc < self._next_id
            and _INT64_MIN < entity <= _INT64_MAX
            and self._is_exponential
        ):
            return _BATCH
        row = self._row_of_id.item(npc)
        if row < 0 or self._links.get(npc) or (self._lt.size and self._ltn.item(row)):
            return _BATCH
        self._clock = now
        _, slots = self._slots_of(row, entity, -1)
        if not slots:
            return None
        base = row * self._C
        lastf, stabf = self._lastf, self._stabf
        clamp = now < self._tmax
        x = self._q1x[: len(slots)]
        for i, slot in enumerate(slots):
            x[i] = exponential_exponent(lastf.item(base + slot), now, stabf.item(base + slot), clamp)
        # one memory accessed at `now` (the usual recall of someone just seen): e^0 is 1 exactly
        rs = [1.0] if len(slots) == 1 and x.item(0) == 0.0 else np.exp(x, out=x).tolist()
        best_r = max(rs)  # ties: the lowest slot (slots ascend)
        p = self._p
        if not best_r > p.forget_threshold:
            return None
        best = slots[rs.index(best_r)]
        f = base + best
        k = self._kf.item(f) + 1
        sal = self._salf.item(f)
        self._tmax = max(self._tmax, now)
        lastf[f] = now
        self._kf[f] = k
        self._emitf[f] = False
        if len(slots) > 1 and consolidated(p.consolidation_factor, p.consolidation_min_salience, sal):
            factor = consolidation_factor(p.consolidation_factor, p.alpha, k, sal)
            for g in slots:
                if g != best:
                    stabf[base + g] = capped(stabf.item(base + g) * factor, p.max_stability)
        memory_type = self._typf.item(f)
        if self._events_on:
            self._ev.append((int(EventKind.RECALLED), npc, entity, memory_type))
        tags = self._tags.reshape(-1)[f] if self._tags is not None else None
        return (  # MemoryView's fields: npc, entity, type, R, S, E, k, tier, slot, age, pinned, tags
            npc,
            entity,
            _MEMORY_TYPES[memory_type],
            best_r,
            stabf.item(f),
            sal,
            k,
            Tier.WORKING,
            best,
            0.0,
            self._pinf.item(f),
            tags or _EMPTY_TAGS,
        )

    def awareness(self, npc: int, entity: int, now: float) -> Awareness:
        """The layered response to the strongest memory of `entity`. Never wakes anything."""
        if type(now) is float and type(npc) is int and type(entity) is int:
            level = self._awareness_one(npc, entity, now)
            if level >= 0:
                return _AWARENESS[level]
        return Awareness(int(self.awareness_batch(np.array([npc]), np.array([entity]), now)[0]))

    def _awareness_one(self, npc: int, entity: int, now: float) -> int:
        """`awareness_batch` of one query in plain Python, or -1 when it does not apply (bad input,
        the power curve, long-term memories: the batch path decides those). R = e^x with x as the
        batch path computes it; `math.exp` decides the level unless R lies within a relative 1e-12
        of a threshold, where numpy's exp (the batch path's bits) decides."""
        if not (
            -MAX_TIME <= now <= MAX_TIME
            and 0 <= npc < self._next_id
            and _INT64_MIN < entity <= _INT64_MAX
            and self._is_exponential
        ):
            return -1
        row = self._row_of_id.item(npc)
        if row < 0 or (self._lt.size and self._ltn.item(row)):
            return -1
        self._clock = now
        match, same = self._slots_of(row, entity, -1)
        if match < 0 and not same:
            return 0
        base = row * self._C
        lastf, stabf = self._lastf, self._stabf
        clamp = now < self._tmax
        best = -math.inf
        for slot in same:
            x = exponential_exponent(lastf.item(base + slot), now, stabf.item(base + slot), clamp)
            best = max(best, x)
        r = math.exp(best)
        bounds = self._level_bounds
        for b in bounds:  # a loop, not any(generator): this runs once per awareness_of call
            if abs(r - b) <= 1e-12 * b:
                r = float(np.exp(np.array([best]))[0])
                break
        return awareness_level(r, *bounds)

    def _query_tail(
        self, tail: np.ndarray, rows: np.ndarray, ent: np.ndarray, ids: np.ndarray, now: float
    ) -> list[tuple[np.ndarray, np.ndarray, dict[str, Any]]]:
        """The waking queries of narrow rounds, one at a time in input order (as `_record_tail`):
        the scalar path where it applies, else a round of one. (hits, R, fields) parts."""
        parts: list[tuple[np.ndarray, np.ndarray, dict[str, Any]]] = []
        found: list[tuple[int, MemoryView]] = []
        for i, npc, entity in zip(tail.tolist(), ids[tail].tolist(), ent[tail].tolist(), strict=True):
            view = self._query_one(npc, entity, now)
            if view is _BATCH:
                one = np.array([i])
                h, r, f = self._query_round(rows[one], ent[one], ids[one], now, True)
                parts.append((one[h], r, f))
            elif view is not None:
                found.append((i, view))  # type: ignore[arg-type]
        if found:
            views = [view for _, view in found]
            fields: dict[str, Any] = {
                "entity": np.array([v.entity for v in views], dtype=np.int64),
                "memory_type": np.array([v.memory_type for v in views], dtype=np.int8),
                "stability": np.array([v.stability for v in views]),
                "salience": np.array([v.salience for v in views]),
                "recall_count": np.array([v.recall_count for v in views], dtype=np.int64),
                "slot": np.array([v.slot for v in views], dtype=np.int64),
                "pinned": np.array([v.pinned for v in views], dtype=bool),
            }
            if self._tags is not None:
                fields["tags"] = [v.tags for v in views]
            hit = np.array([i for i, _ in found], dtype=np.int64)
            parts.append((hit, np.array([v.retrievability for v in views]), fields))
        return parts
