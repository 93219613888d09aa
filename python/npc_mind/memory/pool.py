"""`MemoryPool`: the working memories of every NPC as structure-of-arrays numpy columns.

Layout: one row per live NPC, `capacity` slots per row, columns of shape (rows, capacity):
entity (int64), type (int8, -1 = empty slot), last access (float64 seconds), stability (float64),
salience (float64), recall count (int64), pinned, forget-reported. An empty slot holds
last = -inf and stability = 1, so every curve gives it R = 0 without a validity mask.

Every operation is a batch: a single call is a batch of one, and a batch is processed in rounds
holding at most one event per NPC (in input order per NPC), each round vectorised across NPCs.
NPCs never share memories, so this gives bit-for-bit what the same single calls in order give.

A single `record`, `awareness` or `query_strongest` with plain Python numbers skips the rounds: a
scalar path works on the NPC's row with floats, calling the same rule functions the batch calls with
arrays (`npc_mind.memory.rules`, bit-for-bit by construction; R from numpy's exp wherever its bits
matter), so it gives the batch's bits at a few microseconds instead of dozens of numpy calls.
Whatever it does not handle (links, tags, long-term memories, the power curve for reads, numpy
inputs, bad input) goes through the batch.

Modules by responsibility (each a part of `MemoryPool`, none importing this one): `columns` (the
declared column table and its storage), `checks` (input checking), `rounds` (batches into rounds),
`recording` and `recall` (the batch paths), `fastpaths` (single calls on one row), `rules` (each
formula once), `persistence` (the save format, through `MemoryPool`'s state methods).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from threading import get_ident as thread_id
from typing import Any

import numpy as np

from npc_mind.memory import persistence, retrieval
from npc_mind.memory.checks import InputChecks
from npc_mind.memory.columns import (
    _EMPTY_TAGS,
    EMPTY_ENTITY,
    MAX_CAPACITY,
    MAX_TIME,
    SLOT_COLUMNS,
    ColumnStore,
    entity_hash,
)
from npc_mind.memory.curves import retrievability
from npc_mind.memory.fastpaths import FastPaths
from npc_mind.memory.longterm import LongTermStore
from npc_mind.memory.params import DAY_SECONDS, MemoryParams
from npc_mind.memory.recall import Recall
from npc_mind.memory.recording import Recording
from npc_mind.memory.rounds import Rounds
from npc_mind.memory.rules import awareness_level
from npc_mind.memory.types import (
    ConcurrentUseError,
    EventKind,
    ForgottenRows,
    MemoryEvents,
    MemoryType,
    MemoryView,
    Tier,
)

__all__ = ["EMPTY_ENTITY", "MAX_CAPACITY", "MAX_TIME", "MemoryPool", "entity_hash"]


def _one_thread(method: Callable[..., Any]) -> Callable[..., Any]:
    """Refuse the call from any thread but the pool's owner (one comparison of thread ids)."""

    @functools.wraps(method)
    def guarded(self: MemoryPool, *args: Any, **kwargs: Any) -> Any:
        if thread_id() != self._owner:
            self._refuse_thread(method.__name__)
        return method(self, *args, **kwargs)

    return guarded


class MemoryPool(FastPaths, Recording, Recall, Rounds, InputChecks, ColumnStore):
    """The working (and long-term) memories of many NPCs. See the package docstring and docs/memory.md.

    `capacity` (1..65535, default 64) is the hard bound of working slots per NPC. `params` holds
    every other tunable (`MemoryParams`). With `events=True` the pool collects formed / rehearsed /
    recalled / evicted / promoted rows for `drain_events()`.

    Threads: a pool belongs to the thread that made it, as a `MindServer` does (calls from two
    threads at once would corrupt its slot bookkeeping: `record` from two threads drifted the slot
    counter). Every call that changes it (`record`, `query_strongest`, `recall_fields`, the
    `*_batch` calls, adding and removing NPCs, links, pins, events, day advance, export and import)
    from another thread raises `ConcurrentUseError` (a `npc_mind.threads.WrongThreadError`) before
    touching anything: one comparison of thread ids. `claim()` hands the pool to the calling thread
    (a pool made or loaded on a loading thread, then played on the game loop's). The other reads
    (`awareness` of one NPC, `memories`, `save`...) are not checked: they are safe only while the
    owner is not changing the pool.
    """

    def __init__(
        self,
        capacity: int = 64,
        params: MemoryParams | None = None,
        *,
        events: bool = False,
        reserve_npcs: int = 16,
    ) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int | np.integer):
            raise TypeError(f"capacity must be an integer, got {capacity!r}")
        if not 1 <= int(capacity) <= MAX_CAPACITY:
            raise ValueError(f"capacity must be in [1, {MAX_CAPACITY}], got {capacity}")
        if params is None:
            params = MemoryParams()
        if not isinstance(params, MemoryParams):
            raise TypeError(f"params must be a MemoryParams, got {type(params).__name__}")
        self._p = params
        self._C = int(capacity)
        self._owner = thread_id()  # the one thread whose calls may change the pool (see `_one_thread`)
        self._events_on = bool(events)
        self._n = 0
        self._alloc = 0
        self._next_id = 0
        self._row_of_id = np.full(16, -1, dtype=np.int64)
        self._clock = 0.0
        self._tmax = -np.inf  # latest last-access time ever written: now >= it means no clamping needed
        self._links: dict[int, dict[tuple[int, int], set[tuple[int, int]]]] = {}
        self._lt = LongTermStore()
        self._tags: np.ndarray | None = None
        # (kind, npcs, entities, types): arrays from the batch paths, ints from the scalar ones
        self._ev: list[tuple[int, Any, Any, Any]] = []
        self._ev_at: list[Any] | None = None  # input positions of a running record_batch's events
        self._scratch: dict[str, np.ndarray] = {}
        self._increasing: np.ndarray | None = None  # the last rows _rounds found strictly increasing
        self._refresh_pass_rests = 0  # batches left before `_refresh_only` is tried again
        self._base = np.asarray(params.base_stability, dtype=np.float64)
        self._forget_factor = params.forget_factor
        # the thresholds of `awareness_level` (forget, search, pursue)
        self._level_bounds = (params.forget_threshold, params.awareness_search, params.awareness_pursue)
        self._level_at_one = int(awareness_level(1.0, *self._level_bounds))  # a memory accessed now
        self._is_exponential = params.curve == "exponential"
        self._q1x = np.empty(self._C)  # the scalar query's candidate exponents, then R
        self._alloc_rows(max(1, int(reserve_npcs)))

    record_batch = _one_thread(Recording.record_batch)
    query_strongest_batch = _one_thread(Recall.query_strongest_batch)
    awareness_batch = _one_thread(Recall.awareness_batch)

    # ---------------------------------------------------------------------------------------------
    # properties
    @property
    def capacity(self) -> int:
        return self._C

    @property
    def params(self) -> MemoryParams:
        return self._p

    @property
    def npc_count(self) -> int:
        return self._n

    @property
    def clock(self) -> float:
        """The `now` of the latest call (the default time of `save` and `export_npc`)."""
        return self._clock

    def claim(self) -> None:
        """Make the calling thread the pool's owner, the only one whose calls may change it (hand a
        pool made or loaded on another thread to the game loop's, once that thread is done with it)."""
        self._owner = thread_id()

    def _refuse_thread(self, call: str) -> None:
        raise ConcurrentUseError(
            f"MemoryPool.{call}() called from another thread: a pool belongs to the thread that made "
            "it (hand it over with claim() once that thread is done with it)"
        )

    def npc_ids(self) -> np.ndarray:
        """Live NPC ids in row order: row i of `retrievability_all` / `forget_times` is `npc_ids()[i]`."""
        return self._row_npc[: self._n].copy()

    def has_npc(self, npc: int) -> bool:
        return 0 <= npc < self._next_id and self._row_of_id[npc] >= 0

    def memory_count(self, npc: int | None = None) -> int:
        """Working memories held (of one NPC, or of all), not counting the long-term tier."""
        if npc is None:
            return int(self._used[: self._n].sum())
        return int(self._used[self._row(npc)])

    def longterm_count(self, npc: int | None = None) -> int:
        if npc is None:
            return self._lt.size
        self._row(npc)
        return self._lt.count_for(int(npc))

    # ---------------------------------------------------------------------------------------------
    # NPCs
    @_one_thread
    def add_npc(self) -> int:
        """A new NPC with an empty memory; returns its id (ids are never reused)."""
        if self._n == self._alloc:
            self._alloc_rows(2 * self._alloc)
        npc = self._next_id
        if npc >= self._row_of_id.shape[0]:
            grown = np.full(2 * self._row_of_id.shape[0], -1, dtype=np.int64)
            grown[:npc] = self._row_of_id
            self._row_of_id = grown
        row = self._n
        self._row_of_id[npc] = row
        self._row_npc[row] = npc
        self._next_id += 1
        self._n += 1
        return npc

    @_one_thread
    def add_npcs(self, count: int) -> np.ndarray:
        """`count` new NPCs at once; returns their ids."""
        return np.array([self.add_npc() for _ in range(int(count))], dtype=np.int64)

    @_one_thread
    def remove_npc(self, npc: int) -> None:
        """Drop an NPC and all its memories (working, long-term, links). Its id is never reused."""
        row = self._row(npc)
        npc = int(npc)
        last = self._n - 1
        if row != last:  # move the last row into the hole
            self._move_row(last, row)
            self._row_of_id[self._row_npc[row]] = row
        self._clear_flat(np.arange(last * self._C, (last + 1) * self._C))
        self._row_npc[last] = -1
        self._used[last] = self._pinned[last] = self._ltn[last] = 0
        self._row_of_id[npc] = -1
        self._n -= 1
        self._links.pop(npc, None)
        self._lt.remove_npc(npc)

    # ---------------------------------------------------------------------------------------------
    # rounds: at most one event per NPC each, in per-NPC input order

    # ---------------------------------------------------------------------------------------------
    # recording

    # ---------------------------------------------------------------------------------------------
    # read-only views (never wake)
    def retrievability_all(self, now: float, out: np.ndarray | None = None) -> np.ndarray:
        """R of every working slot, shape (npc_count, capacity), rows as `npc_ids()`; 0 for empty slots."""
        now = self._time(now)
        n, cap = self._n, self._C
        if out is None:
            out = np.empty((n, cap))
        elif out.shape != (n, cap) or out.dtype != np.float64:
            raise ValueError(f"out must be a float64 array of shape {(n, cap)}, got {out.dtype} {out.shape}")
        self._clock = now
        return retrievability(
            self._last[:n],
            self._stab[:n],
            now,
            self._p,
            out=out,
            mask=self._buf("allmask", n * cap, bool).reshape(n, cap),
        )

    def forget_times(self) -> np.ndarray:
        """Analytic time at which each working memory's R reaches the forget threshold, shape
        (npc_count, capacity); +inf for empty slots. Valid until the memory is next woken."""
        n = self._n
        out = self._stab[:n] * self._forget_factor
        out += self._last[:n]
        out[self._typ[:n] < 0] = np.inf
        return out

    @_one_thread
    def pop_forgotten(self, now: float) -> ForgottenRows:
        """Working memories whose forget time has passed and were not reported since they were last
        woken or formed: each forgetting is reported exactly once, whatever the call rate."""
        now = self._time(now)
        n = self._n
        due = self._stab[:n] * self._forget_factor
        due += self._last[:n]
        hit = (due <= now) & (self._typ[:n] >= 0) & ~self._emit[:n]
        fi = np.flatnonzero(hit)
        self._emitf[fi] = True
        self._clock = now
        return ForgottenRows(
            self._row_npc[fi // self._C], self._entf[fi], self._typf[fi], due.reshape(-1)[fi]
        )

    @_one_thread
    def drain_events(self) -> MemoryEvents:
        """The events collected since the last drain (needs `MemoryPool(events=True)`)."""
        ev, self._ev = self._ev, []
        if not ev:
            return MemoryEvents(
                np.empty(0, np.int8), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int8)
            )
        parts: list[tuple[np.ndarray, ...]] = []
        singles: list[tuple[int, int, int, int]] = []
        for e in ev:
            if type(e[1]) is int:
                singles.append(e)
                continue
            if singles:
                parts.append(self._event_columns(singles))
                singles = []
            kinds = e[0] if type(e[0]) is np.ndarray else np.full(e[1].shape[0], e[0], dtype=np.int8)
            parts.append((kinds, e[1], e[2], e[3]))
        if singles:
            parts.append(self._event_columns(singles))
        return MemoryEvents(*(np.concatenate([part[i] for part in parts]) for i in range(4)))

    @staticmethod
    def _event_columns(singles: list[tuple[int, int, int, int]]) -> tuple[np.ndarray, ...]:
        kinds, npcs, ents, typs = zip(*singles, strict=True)
        return (
            np.array(kinds, dtype=np.int8),
            np.array(npcs, dtype=np.int64),
            np.array(ents, dtype=np.int64),
            np.array(typs, dtype=np.int8),
        )

    def _working_views(self, npc: int, row: int, now: float) -> list[MemoryView]:
        cap = self._C
        slots = np.flatnonzero(self._typ[row] >= 0)
        fi = row * cap + slots
        r = retrievability(self._lastf[fi], self._stabf[fi], now, self._p)
        tags = self._tags.reshape(-1)[fi].tolist() if self._tags is not None else [None] * fi.shape[0]
        return [
            MemoryView(
                npc=npc,
                entity=int(self._entf[f]),
                memory_type=MemoryType(int(self._typf[f])),
                retrievability=float(r[i]),
                stability=float(self._stabf[f]),
                salience=float(self._salf[f]),
                recall_count=int(self._kf[f]),
                tier=Tier.WORKING,
                slot=int(s),
                age=max(now - float(self._lastf[f]), 0.0),
                pinned=bool(self._pinf[f]),
                tags=tags[i] or _EMPTY_TAGS,
            )
            for i, (f, s) in enumerate(zip(fi.tolist(), slots.tolist(), strict=True))
        ]

    def _longterm_views(self, npc: int) -> list[MemoryView]:
        rows = self._lt.rows_for(npc)
        if not rows:
            return []
        r = self._lt.retrievability(rows, self._p)
        c = self._lt.cols
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
                tags=self._lt.tags[j],
            )
            for i, j in enumerate(rows)
        ]

    def memories(self, npc: int, now: float) -> list[MemoryView]:
        """Every memory the NPC holds (working slots in slot order, then long-term), forgotten ones
        included (R = 0). Never wakes."""
        row = self._row(npc)
        now = self._time(now)
        self._clock = now
        return self._working_views(int(npc), row, now) + self._longterm_views(int(npc))

    def top_k(
        self, npc: int, now: float, k: int = 5, tags: Collection[str] | None = None
    ) -> list[MemoryView]:
        """The k memories to put in an LLM prompt, best first: score = R^w_r x E^w_i x relevance^w_t
        (relevance from shared tags when `tags` is given). Forgotten memories never appear. Never wakes."""
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
            raise ValueError(f"k must be a non-negative integer, got {k!r}")
        query = None if tags is None else self._tag_set(tags)
        return retrieval.top_k(self.memories(npc, now), int(k), query, self._p)

    # ---------------------------------------------------------------------------------------------
    # links and pins
    @_one_thread
    def link(
        self, npc: int, entity_a: int, entity_b: int, type_a: int | None = None, type_b: int | None = None
    ) -> None:
        """Tie memories of one NPC together: waking a memory of (entity_a, type_a) with E >= the
        consolidation threshold also consolidates the (entity_b, type_b) memories, and vice versa.
        A type of None means any type of that entity. Links survive eviction and are saved."""
        self._row(npc)
        a = (int(self._int64(entity_a, "entity")[0]), -1 if type_a is None else int(MemoryType(type_a)))
        b = (int(self._int64(entity_b, "entity")[0]), -1 if type_b is None else int(MemoryType(type_b)))
        if a == b:
            raise ValueError("a memory cannot be linked to itself")
        links = self._links.setdefault(int(npc), {})
        links.setdefault(a, set()).add(b)
        links.setdefault(b, set()).add(a)

    @_one_thread
    def unlink(
        self, npc: int, entity_a: int, entity_b: int, type_a: int | None = None, type_b: int | None = None
    ) -> None:
        self._row(npc)
        a = (int(entity_a), -1 if type_a is None else int(MemoryType(type_a)))
        b = (int(entity_b), -1 if type_b is None else int(MemoryType(type_b)))
        links = self._links.get(int(npc), {})
        links.get(a, set()).discard(b)
        links.get(b, set()).discard(a)

    def links(self, npc: int) -> list[tuple[int, int | None, int, int | None]]:
        """(entity_a, type_a, entity_b, type_b) for each link of the NPC, each once."""
        self._row(npc)
        out = set()
        for a, bs in self._links.get(int(npc), {}).items():
            for b in bs:
                x, y = min(a, b), max(a, b)
                out.add((x[0], None if x[1] < 0 else x[1], y[0], None if y[1] < 0 else y[1]))
        return sorted(
            out, key=lambda t: (t[0], -1 if t[1] is None else t[1], t[2], -1 if t[3] is None else t[3])
        )

    @_one_thread
    def pin(self, npc: int, entity: int, memory_type: int, pinned: bool = True) -> None:
        """Pin (or unpin) the NPC's working memory of (entity, type): a pinned memory is never
        evicted (it still fades) and is never moved to the long-term tier."""
        row = self._row(npc)
        e = int(self._int64(entity, "entity")[0])
        t = int(MemoryType(memory_type))
        slots = np.flatnonzero((self._ent[row] == e) & (self._typ[row] == t))
        if not slots.shape[0]:
            raise KeyError(f"npc {int(npc)} has no working memory of entity {e} ({MemoryType(t).name})")
        s = int(slots[0])
        if bool(self._pin[row, s]) != bool(pinned):
            self._pin[row, s] = bool(pinned)
            self._pinned[row] += 1 if pinned else -1

    # ---------------------------------------------------------------------------------------------
    # long-term tier
    @_one_thread
    def advance_game_day(self, days: float = 1.0, now: float | None = None) -> None:
        """Game-clock step (the source's dual-track time): first age the long-term tier by `days`
        and drop what it forgot, then move every remembered, unpinned working memory whose S reaches
        `longterm_min_stability` or whose k reaches `longterm_min_recalls` to the long-term tier,
        freeing its slot. `now` (default: the latest call's) decides "remembered" (R > threshold)."""
        if (
            isinstance(days, bool)
            or not isinstance(days, int | float | np.integer | np.floating)
            or not math.isfinite(float(days))
            or float(days) < 0.0
        ):
            raise ValueError(f"days must be a finite number >= 0, got {days!r}")
        now = self._clock if now is None else self._time(now)
        p = self._p
        gone = self._lt.decay(float(days), p)
        if gone.shape[0]:
            c = self._lt.cols
            gone_npcs = c["npc"][gone].copy()
            if self._events_on:
                self._emit_event(
                    EventKind.LONG_TERM_FORGOTTEN, gone_npcs, c["entity"][gone], c["memory_type"][gone]
                )
            keep = np.ones(self._lt.size, dtype=bool)
            keep[gone] = False
            self._lt.keep(keep)
            np.subtract.at(self._ltn, self._row_of_id[gone_npcs], 1)
        n, cap = self._n, self._C
        if not n:
            return
        r = retrievability(self._last[:n], self._stab[:n], now, p)
        cand = (
            (self._typ[:n] >= 0)
            & ~self._pin[:n]
            & (r > p.forget_threshold)
            & ((self._stab[:n] >= p.longterm_min_stability) | (self._k[:n] >= p.longterm_min_recalls))
        )
        fi = np.flatnonzero(cand)
        if not fi.shape[0]:
            return
        tags = self._tags.reshape(-1) if self._tags is not None else None
        rows = fi // cap
        for f, row in zip(fi.tolist(), rows.tolist(), strict=True):
            npc = int(self._row_npc[row])
            before = self._lt.count_for(npc)
            s_days = max(p.longterm_min_days, p.longterm_stability_gain * float(self._stabf[f]) / DAY_SECONDS)
            self._lt.add(
                npc,
                int(self._entf[f]),
                int(self._typf[f]),
                float(self._salf[f]),
                int(self._kf[f]),
                s_days,
                (tags[f] if tags is not None else None) or _EMPTY_TAGS,
            )
            self._ltn[row] += self._lt.count_for(npc) - before
        if self._events_on:
            self._emit_event(EventKind.PROMOTED, self._row_npc[rows], self._entf[fi], self._typf[fi])
        np.subtract.at(self._used, rows, 1)
        self._clear_flat(fi)

    # ---------------------------------------------------------------------------------------------
    # state, for the save format (persistence reads and restores a pool through these only)
    @property
    def next_id(self) -> int:
        """The id the next `add_npc` returns (ids are never reused)."""
        return self._next_id

    @property
    def longterm(self) -> LongTermStore:
        """The long-term tier (read it; restore through `restore_longterm`)."""
        return self._lt

    def working_state(
        self, rows: Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], list[frozenset[str] | None]]:
        """The occupied working slots of pool rows `rows` (row i of the result is `rows[local]`):
        (local, slot, {column name: values} of `SLOT_COLUMNS`, tags or None per slot)."""
        rows_arr = np.asarray(rows, dtype=np.int64)
        local, slot = np.nonzero(self._typ[rows_arr] >= 0)
        fi = rows_arr[local] * self._C + slot
        values = {col.name: getattr(self, f"_{col.name}f")[fi] for col in SLOT_COLUMNS}
        tags = [None] * fi.shape[0] if self._tags is None else self._tags.reshape(-1)[fi].tolist()
        return local, slot, values, tags

    def entities(self) -> np.ndarray:
        """The distinct entity ids of every memory held (working and long-term), sorted."""
        n = self._n
        working = self._ent[:n][self._typ[:n] >= 0]
        return np.unique(np.concatenate((working, self._lt.cols["entity"][: self._lt.size])))

    def row_of(self, npc: int) -> int:
        """The pool row holding `npc` (rows are as `npc_ids()`; they move when NPCs are removed)."""
        return self._row(npc)

    def restore_ids(self, npc_ids: Sequence[int], next_id: int, now: float) -> None:
        """Make a fresh pool's rows hold NPCs `npc_ids` (row i: npc_ids[i]), next id `next_id`."""
        n = len(npc_ids)
        self._row_of_id = np.full(max(16, next_id), -1, dtype=np.int64)
        self._row_of_id[np.asarray(npc_ids, dtype=np.int64)] = np.arange(n)
        self._row_npc[:n] = npc_ids
        self._n = n
        self._next_id = next_id
        self._clock = now

    def restore_working(
        self,
        rows: np.ndarray,
        slots: np.ndarray,
        values: dict[str, np.ndarray],
        tags: dict[int, frozenset[str]],
    ) -> None:
        """Write saved working memories into empty slots: memory i at (rows[i], slots[i]) with
        values[column][i] for each saved column (the entity hash is derived); tags: i -> tag set."""
        fi = rows * self._C + slots
        for col in SLOT_COLUMNS:
            if col.name in values:
                getattr(self, f"_{col.name}f")[fi] = values[col.name]
        self._hf[fi] = entity_hash(values["ent"])
        if fi.shape[0]:
            self._tmax = max(self._tmax, float(self._lastf[fi].max()))
        np.add.at(self._used, rows, 1)
        np.add.at(self._pinned, rows[values["pin"]], 1)
        if tags:
            flat = self._ensure_tags().reshape(-1)
            for i, t in tags.items():
                flat[fi[i]] = t

    def restore_longterm(  # noqa: PLR0917
        self,
        npc: int,
        entity: int,
        memory_type: int,
        salience: float,
        recall_count: int,
        stability_days: float,
        age_days: float,
        tags: frozenset[str],
    ) -> None:
        """Add one saved long-term memory of `npc` (age in game days)."""
        row = self._lt.add(npc, entity, memory_type, salience, recall_count, stability_days, tags)
        self._lt.cols["age"][row] = age_days
        self._ltn[self._row_of_id[npc]] += 1

    @_one_thread
    def clear_npc(self, npc: int) -> None:
        """Forget everything of `npc` (working, long-term, links); the NPC stays."""
        row = self._row(npc)
        self._clear_flat(np.arange(row * self._C, (row + 1) * self._C))
        self._used[row] = self._pinned[row] = self._ltn[row] = 0
        self._links.pop(npc, None)
        self._lt.remove_npc(npc)

    # ---------------------------------------------------------------------------------------------
    # persistence
    def save(self, path: str | Path, now: float | None = None) -> None:
        """Write the whole pool (params, NPC ids, memories as ages, links, long-term tier).
        `now` (default: the latest call's) turns last-access times into ages."""
        now = self._clock if now is None else self._time(now)
        persistence.write_atomic(Path(path), persistence.dump_pool(self, now))

    @classmethod
    def load(
        cls,
        path: str | Path,
        now: float,
        *,
        events: bool = False,
        max_bytes: int = persistence.MAX_LOAD_BYTES,
    ) -> MemoryPool:
        """A pool read from `save`'s file, resumed at time `now` of the new session's clock.
        `max_bytes` bounds what the file may make it allocate (its NPC rows x capacity, the id
        table): a file asking for more raises `SaveFormatError` before anything is allocated."""
        now = cls._time(now)
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise persistence.SaveFormatError(f"cannot read save file {path}: {exc}") from exc
        return persistence.load_pool(cls, data, now, events=events, max_bytes=max_bytes)

    @_one_thread
    def export_npc(self, npc: int, now: float | None = None) -> bytes:
        """One NPC's memories (working as ages, long-term, links) as bytes, for per-node game saves."""
        row = self._row(npc)
        now = self._clock if now is None else self._time(now)
        return persistence.dump_npc(self, int(npc), row, now)

    @_one_thread
    def import_npc(self, npc: int, data: bytes, now: float) -> None:
        """Replace the NPC's memories with `export_npc` bytes, resumed at `now`. The pool's own
        params apply. On any error the pool is left untouched."""
        self._row(npc)  # an unknown NPC raises before the data is read
        now = self._time(now)
        persistence.load_npc(self, int(npc), data, now)
        self._clock = now
