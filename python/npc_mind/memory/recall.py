"""`Recaller`: the batch path of recall: `query_strongest_batch`, `awareness_batch`, the preview a
caller answering reads ahead asks, and the long-term tier's part in a query."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from npc_mind.memory.checks import checked_time, int64_array
from npc_mind.memory.columns import _AWARENESS, _BATCH, _EMPTY_TAGS, _selector, entity_hash
from npc_mind.memory.consolidation import consolidate
from npc_mind.memory.curves import retrievability
from npc_mind.memory.kernel.query import query_batch, query_round
from npc_mind.memory.rounds import split_rounds
from npc_mind.memory.rules import awareness_level, exponential_exponent
from npc_mind.memory.types import Awareness, EventKind, MemoryView, QueryBatch

if TYPE_CHECKING:
    from npc_mind.memory.fastpaths import ScalarPaths
    from npc_mind.memory.kernel.query import PoolBinding
    from npc_mind.memory.state import PoolState


class Recaller:
    """Reads and waking recalls of `state` with arrays; narrow rounds' queries go one by one to
    `scalar.query_one`."""

    def __init__(self, state: PoolState, scalar: ScalarPaths) -> None:
        self.state = state
        self.scalar = scalar
        #: the compiled kernel's view of the pool (`kernel.query`): None before the first query,
        #: False when the kernel does not run
        self.kernel_binding: PoolBinding | Literal[False] | None = None

    def query_strongest_batch(self, npcs: Any, entities: Any, now: float) -> QueryBatch:
        """`query_strongest` for many (npc, entity) pairs; pairs of one NPC apply in input order."""
        return self.query(npcs, entities, now, wake=True)

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
        state = self.state
        batch = self.query(npcs, entities, now, wake=False)
        levels = awareness_level(batch.retrievability, *state.level_bounds)
        npcs = np.ravel(np.asarray(npcs, dtype=np.int64))
        rows = state.row_of_id[npcs]
        kind = batch.found.astype(np.int8)
        if not state.is_exponential:
            kind[:] = -1
        elif state.longterm.size:
            kind[state.longterm_count[rows] > 0] = -1
        if state.links:
            kind[[i for i, npc in enumerate(npcs.tolist()) if state.links.get(npc)]] = -1
        cells = rows * state.capacity + np.maximum(batch.slot, 0)
        columns = [
            batch.entity.tolist(), batch.memory_type.tolist(), batch.retrievability.tolist(),
            batch.stability.tolist(), batch.salience.tolist(), (batch.recall_count + 1).tolist(),
            state.last_access_flat[cells].tolist(),
        ]  # fmt: skip
        return levels, kind, columns

    def awareness_batch(self, npcs: Any, entities: Any, now: float) -> np.ndarray:
        """`awareness` for many pairs, as an int8 array of `Awareness` values. Never wakes."""
        state = self.state
        r = self.query(npcs, entities, now, wake=False).retrievability
        return awareness_level(r, *state.level_bounds)

    def awareness_of(self, retrievability_value: float) -> Awareness:
        """The `Awareness` level of a retrievability value under this pool's thresholds."""
        state = self.state
        return _AWARENESS[awareness_level(float(retrievability_value), *state.level_bounds)]

    def query(self, npcs: Any, entities: Any, now: float, wake: bool) -> QueryBatch:
        state = self.state
        now = checked_time(now)
        compiled = query_batch(self, npcs, entities, now, wake)  # the memory kernel, when it runs
        if compiled is not None:
            return compiled
        npcs, rows = state.rows_of(npcs)
        entities = int64_array(entities, "entities")
        n = rows.shape[0]
        if entities.shape[0] != n:
            raise ValueError(f"queries need equally long inputs, got npcs {n}, entities {entities.shape[0]}")
        state.clock = now
        state.increasing_rows = None
        rounds: list[np.ndarray | None] = [None]  # one round of every query: nothing wakes
        tail = None
        if wake and n:
            rounds, tail = split_rounds(state, rows, state.narrow_round)
        return self.query_rounds(rows, entities, npcs, now, wake, rounds, tail)

    def query_rounds(  # noqa: PLR0917
        self,
        rows: np.ndarray,
        entities: np.ndarray,
        npcs: np.ndarray,
        now: float,
        wake: bool,
        rounds: list[np.ndarray | None],
        tail: np.ndarray | None = None,
    ) -> QueryBatch:
        """Run the rounds of a query batch (`query_round` each) and the `tail` of narrow rounds
        (`query_tail`), and join them."""
        n = rows.shape[0]
        r_out = np.zeros(n)
        hits: list[np.ndarray] = []
        fields: list[Mapping[str, Any]] = []
        if n:
            for ev in rounds:
                if ev is None:
                    h, r, f = self.query_round(rows, entities, npcs, now, wake)
                else:
                    h, r, f = self.query_round(rows[ev], entities[ev], npcs[ev], now, wake)
                    h = ev[h]
                r_out[h] = r
                hits.append(h)
                fields.append(f)
            for h, r, f in self.query_tail(tail, rows, entities, npcs, now) if tail is not None else ():
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
        return QueryBatch(n, npcs, r_out, hit, hit_fields)

    def query_round(
        self, rows: np.ndarray, entities: np.ndarray, npcs: np.ndarray, now: float, wake: bool
    ) -> tuple[np.ndarray, np.ndarray, Mapping[str, Any]]:
        compiled = query_round(self, rows, entities, npcs, now, wake)  # the memory kernel, when it runs
        if compiled is not None:
            return compiled
        state = self.state
        p, cap = state.params, state.capacity
        selection = _selector(rows, state.increasing_rows is rows)
        match_events, match_slots = state.entity_slots(
            selection, rows, entity_hash(entities), entities, "qeq"
        )
        # does any query see two or more memories of its entity (several types)? then pick the best
        # of each and consolidate; otherwise both steps are no-ops and skipped
        multi = match_events.shape[0] > 1 and not bool((match_events[1:] != match_events[:-1]).all())
        if p.curve == "exponential":
            # plain e^x: it differs from the clamped R only below e^-10 < threshold, where both
            # mean "not remembered"; every R kept below is the exact clamped value
            r = exponential_exponent(
                state.last_access_flat[match_slots],
                now,
                state.stability_flat[match_slots],
                now < state.latest_access,
            )
            np.exp(r, out=r)
        else:
            r = retrievability(state.last_access_flat[match_slots], state.stability_flat[match_slots], now, p)
        ok = r > p.forget_threshold
        kept_events, kept_slots, kept_r = match_events[ok], match_slots[ok], r[ok]
        new = None
        if multi and kept_events.shape[0] > 1:
            new = np.empty(kept_events.shape[0], dtype=bool)
            new[0] = True
            np.not_equal(kept_events[1:], kept_events[:-1], out=new[1:])
        if new is not None and not new.all():
            # hits are grouped by event, slots ascending: per group keep the first maximum of R
            # (highest R, ties to the lowest slot) without sorting
            starts = np.flatnonzero(new)
            group = np.cumsum(new) - 1
            best = np.maximum.reduceat(kept_r, starts)
            cand = np.flatnonzero(kept_r == best[group])
            g = group[cand]
            keep = np.empty(cand.shape[0], dtype=bool)
            keep[0] = True
            np.not_equal(g[1:], g[:-1], out=keep[1:])
            firsts = cand[keep]
            best_events, best_slots, best_r = kept_events[firsts], kept_slots[firsts], kept_r[firsts]
        else:
            best_events, best_slots, best_r = kept_events, kept_slots, kept_r
        lt_e: list[int] = []
        lt_row: list[int] = []
        lt_r: list[float] = []
        if state.longterm.size and state.longterm_count[rows].any():
            best_events, best_slots, best_r, lt_e, lt_row, lt_r = self.query_longterm(
                rows, entities, npcs, best_events, best_slots, best_r
            )
        salience = state.salience_flat[best_slots]
        if wake and best_slots.shape[0]:
            state.latest_access = max(state.latest_access, now)
            state.mark_accessed(best_slots, now)
            recall_count = state.recall_count_flat[best_slots] + 1
            state.recall_count_flat[best_slots] = recall_count
            if multi or state.links:
                consolidate(
                    state,
                    match_events,
                    match_slots,
                    rows,
                    best_slots,
                    best_events,
                    recall_count,
                    salience,
                    npcs,
                )
            if state.events.enabled:
                state.events.log(
                    EventKind.RECALLED,
                    npcs[best_events],
                    state.entity_flat[best_slots],
                    state.memory_type_flat[best_slots],
                )
        else:
            recall_count = state.recall_count_flat[best_slots]
        fields: dict[str, Any] = {
            "entity": entities[best_events],
            "memory_type": state.memory_type_flat[best_slots],
            "stability": state.stability_flat[best_slots],
            "salience": salience,
            "recall_count": recall_count,
            "slot": best_slots % cap,
            "pinned": state.pinned_flat[best_slots],
        }
        return self.finish_hits(best_events, best_slots, best_r, fields, npcs, wake, lt_e, lt_row, lt_r)

    def finish_hits(  # noqa: PLR0917
        self,
        best_events: np.ndarray,
        best_slots: np.ndarray,
        best_r: np.ndarray,
        fields: dict[str, Any],
        npcs: np.ndarray,
        wake: bool,
        lt_e: list[int],
        lt_row: list[int],
        lt_r: list[float],
    ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """Wake the long-term winners, add tags and the long-term hits to a round's fields
        (of one query round)."""
        state = self.state
        if wake and lt_row:
            for row in lt_row:
                state.longterm.wake(row)
            if state.events.enabled:
                c = state.longterm.cols
                state.events.log(
                    EventKind.RECALLED,
                    npcs[np.asarray(lt_e, dtype=np.int64)],
                    c["entity"][lt_row],
                    c["memory_type"][lt_row],
                )
        if state.tags is not None:
            fields["tags"] = [t or _EMPTY_TAGS for t in state.tags.reshape(-1)[best_slots].tolist()]
        if lt_row:
            c = state.longterm.cols
            rows_lt = np.asarray(lt_row, dtype=np.int64)
            nw = best_events.shape[0]
            best_events = np.concatenate([best_events, np.asarray(lt_e, dtype=np.int64)])
            best_r = np.concatenate([best_r, np.asarray(lt_r)])
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
            fields["tags"] = fields.get("tags", [_EMPTY_TAGS] * nw) + [state.longterm.tags[i] for i in lt_row]
        return best_events, best_r, fields

    def query_longterm(  # noqa: PLR0917
        self,
        rows: np.ndarray,
        entities: np.ndarray,
        npcs: np.ndarray,
        best_events: np.ndarray,
        best_slots: np.ndarray,
        best_r: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int], list[int], list[float]]:
        """Let long-term memories compete: one wins only with a strictly higher R."""
        state = self.state
        thr = state.params.forget_threshold
        best = dict(zip(best_events.tolist(), best_r.tolist(), strict=True))
        drop: list[int] = []
        lt_e: list[int] = []
        lt_row: list[int] = []
        lt_r: list[float] = []
        for e, (row, r) in self.longterm_best(rows, entities, npcs).items():
            if r > thr and r > best.get(e, 0.0):
                if e in best:
                    drop.append(e)
                lt_e.append(e)
                lt_row.append(row)
                lt_r.append(r)
        if drop:
            keep = ~np.isin(best_events, drop)
            best_events, best_slots, best_r = best_events[keep], best_slots[keep], best_r[keep]
        return best_events, best_slots, best_r, lt_e, lt_row, lt_r

    def longterm_best(
        self, rows: np.ndarray, entities: np.ndarray, npcs: np.ndarray
    ) -> dict[int, tuple[int, float]]:
        """For each query whose NPC holds long-term memories of its entity: (row, R) of the
        strongest (the first of equal ones), in query order."""
        state = self.state
        out: dict[int, tuple[int, float]] = {}
        for e in np.flatnonzero(state.longterm_count[rows] > 0).tolist():
            cands = state.longterm.lookup(int(npcs[e]), int(entities[e]))
            if not cands:
                continue
            rs = state.longterm.retrievability(cands, state.params)
            j = int(np.argmax(rs))
            out[e] = (cands[j], float(rs[j]))
        return out

    def query_tail(
        self, tail: np.ndarray, rows: np.ndarray, entities: np.ndarray, npcs: np.ndarray, now: float
    ) -> list[tuple[np.ndarray, np.ndarray, Mapping[str, Any]]]:
        """The waking queries of narrow rounds, one at a time in input order (as `_record_tail`):
        the scalar path where it applies, else a round of one. (hits, R, fields) parts."""
        state = self.state
        parts: list[tuple[np.ndarray, np.ndarray, Mapping[str, Any]]] = []
        found: list[tuple[int, MemoryView]] = []
        for i, npc, entity in zip(tail.tolist(), npcs[tail].tolist(), entities[tail].tolist(), strict=True):
            view = self.scalar.query_one(npc, entity, now)
            if view is _BATCH:
                one = np.array([i])
                h, r, f = self.query_round(rows[one], entities[one], npcs[one], now, True)
                parts.append((one[h], r, f))
            elif view is not None:
                found.append((i, view))  # type: ignore[arg-type]  # neither None nor _BATCH here: a MemoryView
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
            if state.tags is not None:
                fields["tags"] = [v.tags for v in views]
            hit = np.array([i for i, _ in found], dtype=np.int64)
            parts.append((hit, np.array([v.retrievability for v in views]), fields))
        return parts
