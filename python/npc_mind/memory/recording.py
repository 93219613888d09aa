"""The batch path of recording: rounds of `record_batch`, eviction keys, consolidation."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from npc_mind.memory.columns import (
    _selector,
    entity_hash,
)
from npc_mind.memory.curves import retrievability
from npc_mind.memory.params import EXPONENT_FLOOR
from npc_mind.memory.rules import (
    capped,
    consolidated,
    consolidation_factor,
    eviction_key,
    exponential_exponent,
    fresh_eviction_key,
    initial_stability,
    larger,
    rehearsed_stability,
    rehearses,
)
from npc_mind.memory.types import (
    EventKind,
    MemoryType,
    PoolFullError,
)

# batches recorded in rounds only after a `_refresh_only` pass that took less than half the events
# (random events rarely all refresh: the pass would cost about a round each time for nothing)
REFRESH_PASS_REST = 8


def _at(ev: np.ndarray | None, local: np.ndarray) -> np.ndarray:
    """Input positions of a round's events `local` (positions in the round; `ev` None: the round
    is the whole input)."""
    return local if ev is None else ev[local]


class Recording:
    """`record_batch` and what it decides with arrays (the rules of `npc_mind.memory.rules`).
    A part of `MemoryPool` (its state is set up in `MemoryPool.__init__`)."""

    def _key_columns(self, sel: slice | np.ndarray) -> tuple[np.ndarray, ...]:
        """The columns `_keys` reads, of rows `sel`: last, stability, salience, type, pinned."""
        return self._last[sel], self._stab[sel], self._sal[sel], self._typ[sel], self._pin[sel]

    def _keys(  # noqa: PLR0917
        self,
        cols: tuple[np.ndarray, ...],
        now: float,
        out: np.ndarray,
        rbuf: np.ndarray,
        mbuf: np.ndarray,
        any_free: bool,
        any_pin: bool,
    ) -> np.ndarray:
        """Eviction key: free slot -2, forgotten (R < threshold) -1, else w_r R + w_e E; pinned +inf.

        R here is e^max(x, -10) rather than the exactly-0 clamped value: the two differ only where
        R < e^-10 < threshold, which maps to -1 either way, so the key is the same and a pass is saved."""
        last, stab, sal, typ, pin = cols
        p = self._p
        if p.curve == "exponential":
            exponential_exponent(last, now, stab, now < self._tmax, out=rbuf)
            np.maximum(rbuf, EXPONENT_FLOOR, out=rbuf)
            r = np.exp(rbuf, out=rbuf)
        else:
            r = retrievability(last, stab, now, p, out=rbuf, mask=mbuf)
        np.less(r, p.forget_threshold, out=mbuf)
        eviction_key(r, sal, p.eviction_weight_r, p.eviction_weight_e, out=out, scratch=rbuf)  # R then unused
        np.copyto(out, -1.0, where=mbuf)
        if any_free:
            np.less(typ, 0, out=mbuf)
            np.copyto(out, -2.0, where=mbuf)
        if any_pin:
            np.copyto(out, np.inf, where=pin)
        return out

    def _batch_keys(self, u: np.ndarray, now: float) -> np.ndarray:
        """Keys of rows `u` (distinct), written into a (rows, capacity) scratch indexed by row."""
        cap = self._C
        keys = self._scratch.get("K")
        if keys is None or keys.shape[0] < self._alloc:
            keys = self._scratch["K"] = np.empty((self._alloc, cap))
        sel = _selector(u)
        m = u.shape[0]
        shape = (m, cap)
        rbuf = self._buf("KR", m * cap, np.float64).reshape(shape)
        mbuf = self._buf("KM", m * cap, bool).reshape(shape)
        any_free = bool((self._used[sel] < cap).any())
        any_pin = bool(self._pinned[sel].any())
        if isinstance(sel, slice):
            self._keys(
                self._key_columns(sel),
                now,
                keys[sel],
                rbuf,
                mbuf,
                any_free,
                any_pin,
            )
        else:
            out = self._buf("KO", m * cap, np.float64).reshape(shape)
            keys[sel] = self._keys(
                self._key_columns(sel),
                now,
                out,
                rbuf,
                mbuf,
                any_free,
                any_pin,
            )
        return keys

    def _flat_keys(self, fi: np.ndarray, now: float) -> np.ndarray:
        n = fi.shape[0]
        return self._keys(
            (self._lastf[fi], self._stabf[fi], self._salf[fi], self._typf[fi], self._pinf[fi]),
            now,
            np.empty(n),
            np.empty(n),
            np.empty(n, dtype=bool),
            True,
            True,
        )

    def _evict_slot(self, row: int, now: float) -> int:
        """The slot a new memory takes in a full row: the lowest eviction key, computed by `_keys`
        as the batch path does for a batch holding only this row."""
        return int(self._evict_keys(row, now).argmin())

    def _evict_keys(self, row: int, now: float) -> np.ndarray:
        """The eviction keys of a full row's slots (a scratch view)."""
        cap = self._C
        sel = slice(row, row + 1)
        shape = (1, cap)
        keys = self._keys(
            self._key_columns(sel),
            now,
            self._buf("KO", cap, np.float64).reshape(shape),
            self._buf("KR", cap, np.float64).reshape(shape),
            self._buf("KM", cap, bool).reshape(shape),
            False,
            bool(self._pinned.item(row)),
        )
        return keys.reshape(-1)

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
        """Perceive many events at time `now` (arrays of equal length; `memory_types` and
        `saliences` may be scalars). Events of one NPC apply in input order."""
        now = self._time(now)
        ids, rows = self._rows(npcs)
        n = rows.shape[0]
        ent = self._int64(entities, "entities")
        typ = self._types(memory_types, n)
        sal = self._saliences(saliences, n)
        if not ent.shape[0] == typ.shape[0] == sal.shape[0] == n:
            raise ValueError(
                f"record_batch needs equally long inputs, got npcs {n}, entities {ent.shape[0]}, "
                f"memory_types {typ.shape[0]}, saliences {sal.shape[0]}"
            )
        tag_sets: list[frozenset[str]] | None = None
        if tags is not None:
            if isinstance(tags, str):  # would be split into one letter per event
                raise TypeError("record_batch tags must be one tag list per event, got a string")
            if len(tags) != n:
                raise ValueError(f"tags needs one entry per event ({n}), got {len(tags)}")
            tag_sets = [self._tag_set(t) for t in tags]
            if not any(tag_sets):
                tag_sets = None
        if n and self._pinned[rows].max() >= self._C:
            self._check_pinned_full(ids, rows, ent, typ)
        self._clock = now  # the call is accepted: only now does the pool's clock move
        if n == 0:
            return
        if tag_sets is not None:
            self._ensure_tags()
        hq = entity_hash(ent)
        if self._refresh_pass_rests:
            self._refresh_pass_rests -= 1
        elif tag_sets is None and n > 1 and not bool((rows[1:] > rows[:-1]).all()):  # maybe an NPC twice
            left = self._refresh_only(rows, hq, ent, typ, now)
            if left is not None:  # the NPCs left are recorded in rounds, as before
                rows, hq, ent, typ, sal, ids = (column[left] for column in (rows, hq, ent, typ, sal, ids))
            if left is None or 2 * int(np.count_nonzero(left)) > n:  # it paid for less than half
                self._refresh_pass_rests = REFRESH_PASS_REST
        rounds, tail = self._rounds(rows, self._narrow_round) if rows.shape[0] else ([], None)
        start = len(self._ev)
        if self._events_on:
            self._ev_at = []

        def one_round(ev: np.ndarray, state: dict[str, Any]) -> None:
            self._record_round(rows[ev], hq[ev], ent[ev], typ[ev], sal[ev], ids[ev], now, tag_sets, ev, state)

        try:
            if rounds:
                state: dict[str, Any] = {"K": None, "u": rows if rounds[0] is None else rows[rounds[0]]}
                for ev in rounds:
                    if ev is None:
                        self._record_round(rows, hq, ent, typ, sal, ids, now, tag_sets, None, state)
                    else:
                        one_round(ev, state)
            if tail is not None:
                self._record_tail(tail, rows, ids, ent, typ, sal, now, tag_sets is None, one_round)
        finally:
            if self._ev_at is not None:
                self._ordered_events(start)
        self._tmax = max(self._tmax, now)

    def _refresh_only(
        self, rows: np.ndarray, hq: np.ndarray, ent: np.ndarray, typ: np.ndarray, now: float
    ) -> np.ndarray | None:
        """Record, in one pass, the events of the NPCs whose every event in the batch only refreshes
        a memory it holds (a match within the refractory period): a refresh sets the memory's last
        access to now and logs nothing, so their order cannot matter, and they touch no other NPC.
        Every other NPC's events are left for the rounds (returned as a mask over the events), in
        their order; None when no NPC was all refreshes. A crowd seeing the same people frame after
        frame records mostly refreshes: one pass instead of a round per event of an NPC."""
        m = rows.shape[0]
        ri, fi = self._entity_slots(rows, rows, hq, ent, "eq")
        same = self._typf[fi] == typ[ri]  # at most one slot an event (keys are unique per NPC)
        ri, fi = ri[same], fi[same]
        refreshes = ~rehearses(now, self._lastf[fi], self._p.rehearsal_refractory_s)
        only = np.zeros(m, dtype=bool)
        only[ri[refreshes]] = True
        if not only.any():
            return None
        mark = self._mark  # per row: does one of its events do more than refresh?
        mark[rows] = 0
        mark[rows[~only]] = 1
        only &= mark[rows] == 0
        if not only.any():
            return None
        self._accessed(fi[refreshes & only[ri]], now)
        return ~only

    def _check_pinned_full(self, ids: np.ndarray, rows: np.ndarray, ent: np.ndarray, typ: np.ndarray) -> None:
        for i in np.flatnonzero(self._pinned[rows] >= self._C).tolist():
            r = int(rows[i])
            if not ((self._ent[r] == ent[i]) & (self._typ[r] == typ[i])).any():
                raise PoolFullError(
                    f"npc {int(ids[i])}: all {self._C} working slots are pinned, no room for a new memory of "
                    f"entity {int(ent[i])} ({MemoryType(int(typ[i])).name}); unpin one or raise capacity"
                )

    def _record_round(  # noqa: PLR0917
        self,
        rr: np.ndarray,
        hq: np.ndarray,
        ent: np.ndarray,
        typ: np.ndarray,
        sal: np.ndarray,
        ids: np.ndarray,
        now: float,
        tag_sets: list[frozenset[str]] | None,
        ev: np.ndarray | None,
        state: dict[str, Any],
    ) -> None:
        p, cap = self._p, self._C
        m = rr.shape[0]
        sel = _selector(rr)
        ri, fi = self._entity_slots(sel, rr, hq, ent, "eq")
        tm = self._typf[fi] == typ[ri]
        mi = ri[tm]  # matched events (at most one slot each: keys are unique per NPC)
        mf = fi[tm]
        touched = [mf]
        new_f = cons_f = None
        # ---- rehearsal / refresh
        woke_f = woke_e = woke_k = woke_s = None
        if mi.shape[0]:
            last_old = self._lastf[mf]
            self._accessed(mf, now)
            reh = rehearses(now, last_old, p.rehearsal_refractory_s)
            if reh.any():
                hf, he = mf[reh], mi[reh]
                k = self._kf[hf] + 1
                self._kf[hf] = k
                e_new = larger(self._salf[hf], sal[he])
                self._salf[hf] = e_new
                self._stabf[hf] = rehearsed_stability(self._stabf[hf], k, e_new, p.alpha, p.max_stability)
                woke_f, woke_e, woke_k, woke_s = hf, he, k, e_new
                if self._events_on:
                    at = _at(ev, he)
                    self._emit_event(EventKind.REHEARSED, ids[he], self._entf[hf], self._typf[hf], at)
            if tag_sets is not None:
                tags = self._tags.reshape(-1)  # type: ignore[union-attr]
                for e, f in zip(mi.tolist(), mf.tolist(), strict=True):
                    t = tag_sets[e if ev is None else int(ev[e])]
                    if t:
                        tags[f] = t if tags[f] is None else tags[f] | t
        # ---- new memories
        if mi.shape[0] < m:
            if mi.shape[0]:
                un = np.ones(m, dtype=bool)
                un[mi] = False
                ue = np.flatnonzero(un)
            else:
                ue = None  # every event of the round
            keys = state["K"]
            if keys is None:
                keys = state["K"] = self._batch_keys(state["u"], now)
            if ue is None:
                slots = keys[sel].argmin(axis=1)
                nrows, ne = rr, slice(None)
            elif ue.shape[0] * 4 >= m:
                slots = keys[sel].argmin(axis=1)[ue]
                nrows, ne = rr[ue], ue
            else:
                nrows, ne = rr[ue], ue
                slots = keys[nrows].argmin(axis=1)
            nf = nrows * cap + slots
            old_typ = self._typf[nf]
            evicted = old_typ >= 0
            n_evicted = int(np.count_nonzero(evicted))
            if self._events_on and n_evicted:
                ev_ids = ids[ne][evicted]
                at = _at(ev, np.arange(m)[ne])[evicted]
                self._emit_event(EventKind.EVICTED, ev_ids, self._entf[nf][evicted], old_typ[evicted], at)
            if n_evicted < nf.shape[0]:
                self._used[nrows[~evicted]] += 1
            t_new = typ[ne]
            s_new = sal[ne]
            self._entf[nf] = ent[ne]
            self._hf[nf] = hq[ne]
            self._typf[nf] = t_new
            self._lastf[nf] = now
            self._stabf[nf] = initial_stability(self._base[t_new], s_new, p.max_stability)
            self._salf[nf] = s_new
            self._kf[nf] = 1
            self._pinf[nf] = False
            self._emitf[nf] = False
            if self._tags is not None:
                tags = self._tags.reshape(-1)
                events = range(m) if ue is None else ue.tolist()
                for e, f in zip(events, nf.tolist(), strict=True):
                    tags[f] = (
                        None if tag_sets is None else (tag_sets[e if ev is None else int(ev[e])] or None)
                    )
            if self._events_on:
                self._emit_event(EventKind.FORMED, ids[ne], ent[ne], t_new, _at(ev, np.arange(m)[ne]))
            new_f = nf
        # ---- associative consolidation of what woke with E >= threshold
        if woke_f is not None:
            tf = self._consolidate(ri, fi, rr, woke_f, woke_e, woke_k, woke_s, m, ids)
            if tf is not None:
                cons_f = tf[0]
        # ---- keep the batch's eviction keys current for the slots this round changed
        keys = state["K"]
        if keys is not None:
            # every slot this round rehearsed, refreshed or formed was accessed at `now`, so its R is
            # exactly 1 and its key is w_e E + w_r (the same bits _keys gives); pinned stays +inf
            kf = keys.reshape(-1)
            fresh = touched[0]
            if fresh.shape[0]:
                key = fresh_eviction_key(self._salf[fresh], p.eviction_weight_r, p.eviction_weight_e)
                key[self._pinf[fresh]] = np.inf
                kf[fresh] = key
            if new_f is not None:
                kf[new_f] = fresh_eviction_key(self._salf[new_f], p.eviction_weight_r, p.eviction_weight_e)
            if cons_f is not None:
                kf[cons_f] = self._flat_keys(cons_f, now)

    def _consolidate(  # noqa: PLR0917
        self,
        ri: np.ndarray,
        fi: np.ndarray,
        rr: np.ndarray,
        woke_f: np.ndarray,
        woke_e: np.ndarray,
        woke_k: np.ndarray,
        woke_s: np.ndarray,
        m: int,
        ids: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Boost the other memories of each woken memory's entity (`ri`/`fi`: this round's entity
        matches) and its linked memories. Does not chain. Returns (flat slots, events) boosted."""
        p = self._p
        strong = consolidated(p.consolidation_factor, p.consolidation_min_salience, woke_s)
        if not strong.any():
            return None
        wf, we = woke_f[strong], woke_e[strong]  # `we` ascends: events come in order
        factor = consolidation_factor(p.consolidation_factor, p.alpha, woke_k[strong], woke_s[strong])
        # only events that matched two or more memories of their entity have same-entity targets
        tf = te = tfac = np.empty(0, dtype=np.int64)
        if ri.shape[0] > 1:
            d = ri[1:] == ri[:-1]
            if d.any():
                both = np.zeros(ri.shape[0], dtype=bool)
                both[1:] = d
                both[:-1] |= d
                ri_m, fi_m = ri[both], fi[both]
                pos = np.minimum(np.searchsorted(we, ri_m), we.shape[0] - 1)
                tsel = (we[pos] == ri_m) & (fi_m != wf[pos]) & (self._typf[fi_m] >= 0)
                tf, te, tfac = fi_m[tsel], ri_m[tsel], factor[pos[tsel]]
        if self._links:
            extra_f: list[int] = []
            extra_e: list[int] = []
            for e, f in zip(we.tolist(), wf.tolist(), strict=True):
                npc = int(ids[e])
                links = self._links.get(npc)
                if not links:
                    continue
                for g in self._linked_slots(npc, int(rr[e]), int(self._entf[f]), int(self._typf[f])):
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
        self._stabf[tf] = capped(self._stabf[tf] * tfac, p.max_stability)
        return tf, te

    def _linked_slots(self, npc: int, row: int, entity: int, memory_type: int) -> list[int]:
        links = self._links.get(npc, {})
        keys = links.get((entity, memory_type), set()) | links.get((entity, -1), set())
        out: list[int] = []
        cap = self._C
        for e2, t2 in keys:
            m = (self._ent[row] == e2) & (self._typ[row] >= 0)
            if t2 >= 0:
                m &= self._typ[row] == t2
            out.extend((row * cap + np.flatnonzero(m)).tolist())
        return sorted(set(out))
