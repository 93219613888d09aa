"""The batch path of recall: `query_strongest_batch`, `awareness_batch` and the long-term tier's part."""

from __future__ import annotations

from typing import Any

import numpy as np

from npc_mind.memory.columns import (
    _AWARENESS,
    _EMPTY_TAGS,
    _selector,
    entity_hash,
)
from npc_mind.memory.curves import retrievability
from npc_mind.memory.kernel.query import query_batch, query_round
from npc_mind.memory.rules import (
    awareness_level,
    exponential_exponent,
)
from npc_mind.memory.types import (
    Awareness,
    EventKind,
    QueryBatch,
)


class Recall:
    """Reads and waking recalls with arrays.
    A part of `MemoryPool` (its state is set up in `MemoryPool.__init__`)."""

    def query_strongest_batch(self, npcs: Any, entities: Any, now: float) -> QueryBatch:
        """`query_strongest` for many (npc, entity) pairs; pairs of one NPC apply in input order."""
        return self._query(npcs, entities, now, wake=True)

    def recall_preview(
        self, npcs: Any, entities: Any, now: float
    ) -> tuple[np.ndarray, np.ndarray, list[list]]:
        """For each pair, at `now` on the current state and without waking anything (pairs are
        independent): its `awareness_batch` level; what a waking `recall_fields` would say, as a
        kind (1: a memory recalled, 0: nothing recalled, -1: not such a plain answer, because of
        links, long-term memories or the power curve: recall then); and the recalled memory's
        columns (entity, memory type, R before the wake, S, E, recall count after the wake, last
        access; lists, meaningful where the kind is 1). For a caller that answers reads and recalls
        made later at the same `now`, the memories of that entity unchanged (or only refreshed,
        `refreshes`), and applies the wakes then."""
        batch = self._query(npcs, entities, now, wake=False)
        levels = awareness_level(batch.retrievability, *self._level_bounds)
        ids = np.ravel(np.asarray(npcs, dtype=np.int64))
        rows = self._row_of_id[ids]
        kind = batch.found.astype(np.int8)
        if not self._is_exponential:
            kind[:] = -1
        elif self._lt.size:
            kind[self._ltn[rows] > 0] = -1
        if self._links:
            kind[[i for i, npc in enumerate(ids.tolist()) if self._links.get(npc)]] = -1
        cells = rows * self._C + np.maximum(batch.slot, 0)
        columns = [
            batch.entity.tolist(), batch.memory_type.tolist(), batch.retrievability.tolist(),
            batch.stability.tolist(), batch.salience.tolist(), (batch.recall_count + 1).tolist(),
            self._lastf[cells].tolist(),
        ]  # fmt: skip
        return levels, kind, columns

    def awareness_batch(self, npcs: Any, entities: Any, now: float) -> np.ndarray:
        """`awareness` for many pairs, as an int8 array of `Awareness` values. Never wakes."""
        r = self._query(npcs, entities, now, wake=False).retrievability
        return awareness_level(r, *self._level_bounds)

    def awareness_of(self, retrievability_value: float) -> Awareness:
        """The `Awareness` level of a retrievability value under this pool's thresholds."""
        return _AWARENESS[awareness_level(float(retrievability_value), *self._level_bounds)]

    def _query(self, npcs: Any, entities: Any, now: float, wake: bool) -> QueryBatch:
        now = self._time(now)
        compiled = query_batch(self, npcs, entities, now, wake)  # the memory kernel, when it runs
        if compiled is not None:
            return compiled
        ids, rows = self._rows(npcs)
        ent = self._int64(entities, "entities")
        n = rows.shape[0]
        if ent.shape[0] != n:
            raise ValueError(f"queries need equally long inputs, got npcs {n}, entities {ent.shape[0]}")
        self._clock = now
        self._increasing = None
        rounds, tail = self._rounds(rows, self._narrow_round) if wake and n else ([None], None)
        return self._query_rounds(rows, ent, ids, now, wake, rounds, tail)

    def _query_rounds(  # noqa: PLR0917
        self,
        rows: np.ndarray,
        ent: np.ndarray,
        ids: np.ndarray,
        now: float,
        wake: bool,
        rounds: list[np.ndarray | None],
        tail: np.ndarray | None = None,
    ) -> QueryBatch:
        """Run the rounds of a query batch (`_query_round` each) and the `tail` of narrow rounds
        (`_query_tail`), and join them."""
        n = rows.shape[0]
        r_out = np.zeros(n)
        hits: list[np.ndarray] = []
        fields: list[dict[str, Any]] = []
        if n:
            for ev in rounds:
                if ev is None:
                    h, r, f = self._query_round(rows, ent, ids, now, wake)
                else:
                    h, r, f = self._query_round(rows[ev], ent[ev], ids[ev], now, wake)
                    h = ev[h]
                r_out[h] = r
                hits.append(h)
                fields.append(f)
            for h, r, f in self._query_tail(tail, rows, ent, ids, now) if tail is not None else ():
                r_out[h] = r
                hits.append(h)
                fields.append(f)
        if len(hits) == 1:
            hit, hit_fields = hits[0], fields[0]
        elif hits:
            hit = np.concatenate(hits)
            hit_fields = {}
            for name in ("entity", "memory_type", "stability", "salience", "recall_count", "slot", "pinned"):
                hit_fields[name] = np.concatenate([f[name] for f in fields])
            if any("tier" in f for f in fields):
                hit_fields["tier"] = np.concatenate(
                    [f.get("tier", np.zeros(len(f["slot"]), np.int8)) for f in fields]
                )
            if any("tags" in f for f in fields):
                hit_fields["tags"] = [
                    t for f in fields for t in f.get("tags", [_EMPTY_TAGS] * len(f["slot"]))
                ]
        else:
            hit, hit_fields = np.empty(0, dtype=np.int64), {}
        return QueryBatch(n, ids, r_out, hit, hit_fields)

    def _query_round(
        self, rr: np.ndarray, ent: np.ndarray, ids: np.ndarray, now: float, wake: bool
    ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        compiled = query_round(self, rr, ent, ids, now, wake)  # the memory kernel, when it runs
        if compiled is not None:
            return compiled
        p, cap = self._p, self._C
        m = rr.shape[0]
        sel = _selector(rr, self._increasing is rr)
        ri, fi = self._entity_slots(sel, rr, entity_hash(ent), ent, "qeq")
        # does any query see two or more memories of its entity (several types)? then pick the best
        # of each and consolidate; otherwise both steps are no-ops and skipped
        multi = ri.shape[0] > 1 and not bool((ri[1:] != ri[:-1]).all())
        if p.curve == "exponential":
            # plain e^x: it differs from the clamped R only below e^-10 < threshold, where both
            # mean "not remembered"; every R kept below is the exact clamped value
            r = exponential_exponent(self._lastf[fi], now, self._stabf[fi], now < self._tmax)
            np.exp(r, out=r)
        else:
            r = retrievability(self._lastf[fi], self._stabf[fi], now, p)
        ok = r > p.forget_threshold
        ri_ok, fi_ok, r_ok = ri[ok], fi[ok], r[ok]
        new = None
        if multi and ri_ok.shape[0] > 1:
            new = np.empty(ri_ok.shape[0], dtype=bool)
            new[0] = True
            np.not_equal(ri_ok[1:], ri_ok[:-1], out=new[1:])
        if new is not None and not new.all():
            # hits are grouped by event, slots ascending: per group keep the first maximum of R
            # (highest R, ties to the lowest slot) without sorting
            starts = np.flatnonzero(new)
            group = np.cumsum(new) - 1
            best = np.maximum.reduceat(r_ok, starts)
            cand = np.flatnonzero(r_ok == best[group])
            g = group[cand]
            keep = np.empty(cand.shape[0], dtype=bool)
            keep[0] = True
            np.not_equal(g[1:], g[:-1], out=keep[1:])
            sel_i = cand[keep]
            be, bf, br = ri_ok[sel_i], fi_ok[sel_i], r_ok[sel_i]
        else:
            be, bf, br = ri_ok, fi_ok, r_ok
        lt_e: list[int] = []
        lt_row: list[int] = []
        lt_r: list[float] = []
        if self._lt.size and self._ltn[rr].any():
            be, bf, br, lt_e, lt_row, lt_r = self._query_longterm(rr, ent, ids, be, bf, br)
        sal = self._salf[bf]
        if wake and bf.shape[0]:
            self._tmax = max(self._tmax, now)
            self._accessed(bf, now)
            k = self._kf[bf] + 1
            self._kf[bf] = k
            if multi or self._links:
                self._consolidate(ri, fi, rr, bf, be, k, sal, m, ids)
            if self._events_on:
                self._emit_event(EventKind.RECALLED, ids[be], self._entf[bf], self._typf[bf])
        else:
            k = self._kf[bf]
        fields: dict[str, Any] = {
            "entity": ent[be],
            "memory_type": self._typf[bf],
            "stability": self._stabf[bf],
            "salience": sal,
            "recall_count": k,
            "slot": bf % cap,
            "pinned": self._pinf[bf],
        }
        return self._finish_hits(be, bf, br, fields, ids, wake, lt_e, lt_row, lt_r)

    def _finish_hits(  # noqa: PLR0917
        self,
        be: np.ndarray,
        bf: np.ndarray,
        br: np.ndarray,
        fields: dict[str, Any],
        ids: np.ndarray,
        wake: bool,
        lt_e: list[int],
        lt_row: list[int],
        lt_r: list[float],
    ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """Wake the long-term winners, add tags and the long-term hits to a round's fields
        (of one query round)."""
        if wake and lt_row:
            for row in lt_row:
                self._lt.wake(row)
            if self._events_on:
                c = self._lt.cols
                self._emit_event(
                    EventKind.RECALLED,
                    ids[np.asarray(lt_e, dtype=np.int64)],
                    c["entity"][lt_row],
                    c["memory_type"][lt_row],
                )
        if self._tags is not None:
            fields["tags"] = [t or _EMPTY_TAGS for t in self._tags.reshape(-1)[bf].tolist()]
        if lt_row:
            c = self._lt.cols
            rows_lt = np.asarray(lt_row, dtype=np.int64)
            nw = be.shape[0]
            be = np.concatenate([be, np.asarray(lt_e, dtype=np.int64)])
            br = np.concatenate([br, np.asarray(lt_r)])
            lt_fields = {
                "entity": c["entity"][rows_lt],
                "memory_type": c["memory_type"][rows_lt],
                "stability": c["stability"][rows_lt],
                "salience": c["salience"][rows_lt],
                "recall_count": c["recall_count"][rows_lt],
                "slot": np.full(len(lt_row), -1),
                "pinned": np.zeros(len(lt_row), bool),
            }
            for name, arr in lt_fields.items():
                fields[name] = np.concatenate([fields[name], arr])
            fields["tier"] = np.concatenate([np.zeros(nw, np.int8), np.ones(len(lt_row), np.int8)])
            fields["tags"] = fields.get("tags", [_EMPTY_TAGS] * nw) + [self._lt.tags[i] for i in lt_row]
        return be, br, fields

    def _query_longterm(  # noqa: PLR0917
        self, rr: np.ndarray, ent: np.ndarray, ids: np.ndarray, be: np.ndarray, bf: np.ndarray, br: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int], list[int], list[float]]:
        """Let long-term memories compete: one wins only with a strictly higher R."""
        thr = self._p.forget_threshold
        best = dict(zip(be.tolist(), br.tolist(), strict=True))
        drop: list[int] = []
        lt_e: list[int] = []
        lt_row: list[int] = []
        lt_r: list[float] = []
        for e, (row, r) in self._longterm_best(rr, ent, ids).items():
            if r > thr and r > best.get(e, 0.0):
                if e in best:
                    drop.append(e)
                lt_e.append(e)
                lt_row.append(row)
                lt_r.append(r)
        if drop:
            keep = ~np.isin(be, drop)
            be, bf, br = be[keep], bf[keep], br[keep]
        return be, bf, br, lt_e, lt_row, lt_r

    def _longterm_best(
        self, rr: np.ndarray, ent: np.ndarray, ids: np.ndarray
    ) -> dict[int, tuple[int, float]]:
        """For each query whose NPC holds long-term memories of its entity: (row, R) of the
        strongest (the first of equal ones), in query order."""
        out: dict[int, tuple[int, float]] = {}
        for e in np.flatnonzero(self._ltn[rr] > 0).tolist():
            cands = self._lt.lookup(int(ids[e]), int(ent[e]))
            if not cands:
                continue
            rs = self._lt.retrievability(cands, self._p)
            j = int(np.argmax(rs))
            out[e] = (cands[j], float(rs[j]))
        return out
