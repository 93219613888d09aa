"""`MemoryPool`: the working memories of every NPC as structure-of-arrays numpy columns.

Layout: one row per live NPC, `capacity` slots per row, columns of shape (rows, capacity):
entity (int64), memory type (int8, -1 = empty slot), last access (float64 seconds), stability
(float64), salience (float64), recall count (int64), pinned, forget-reported. An empty slot holds
last access = -inf and stability = 1, so every curve gives it R = 0 without a validity mask.

Every operation is a batch: a single call is a batch of one, and a batch is processed in rounds
holding at most one event per NPC (in input order per NPC), each round vectorised across NPCs.
NPCs never share memories, so this gives bit-for-bit what the same single calls in order give.

A single `record`, `awareness` or `query_strongest` with plain Python numbers skips the rounds: a
scalar path works on the NPC's row with floats, calling the same rule functions the batch calls with
arrays (`npc_mind.memory.rules`, bit-for-bit by construction; R from numpy's exp wherever its bits
matter), so it gives the batch's bits at a few microseconds instead of dozens of numpy calls.
Whatever it does not handle (links, tags, long-term memories, the power curve for reads, numpy
inputs, bad input) goes through the batch.

Composition: everything the pool holds is one `PoolState` (`state`: the columns by `columns`'
table, counters, the event log, the long-term tier). The pool is the public face; the work is done
by collaborators that each receive that state: `ScalarPaths` (`fastpaths`: single calls on one
row), `Recorder` (`recording`: `record_batch` in rounds) and `Recaller` (`recall`: the query
batches), which call the module functions of `rounds` (batches into rounds), `eviction` (eviction
keys), `consolidation` and `checks` (input checking); `rules` holds each formula once and
`persistence` the save format (through the pool's state methods); `views` and `promotion` the
views of an NPC and the game-day step. No module imports this one. This file is the public face,
each public call with its documentation and checks, which is why it is longer than 600 lines.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from threading import get_ident as thread_id
from typing import Any, TypeVar, cast

import numpy as np

from npc_mind.memory import persistence, promotion, retrieval
from npc_mind.memory.checks import checked_time, int64_array, tag_set
from npc_mind.memory.columns import (
    _AWARENESS,
    _BATCH,
    EMPTY_ENTITY,
    MAX_CAPACITY,
    MAX_TIME,
    SLOT_COLUMNS,
    entity_hash,
)
from npc_mind.memory.curves import retrievability
from npc_mind.memory.eventlog import EventLog
from npc_mind.memory.fastpaths import RecallFields, Room, ScalarPaths
from npc_mind.memory.kernel.forgetting import forgotten_cells
from npc_mind.memory.kernel.query import strongest_rows
from npc_mind.memory.longterm import LongTermStore
from npc_mind.memory.params import MemoryParams
from npc_mind.memory.recall import Recaller
from npc_mind.memory.recording import Recorder
from npc_mind.memory.state import PoolState
from npc_mind.memory.types import (
    Awareness,
    ConcurrentUseError,
    ForgottenRows,
    MemoryEvents,
    MemoryType,
    MemoryView,
    QueryBatch,
)
from npc_mind.memory.views import longterm_views, working_views

__all__ = ["EMPTY_ENTITY", "MAX_CAPACITY", "MAX_TIME", "MemoryPool", "entity_hash"]

_Method = TypeVar("_Method", bound=Callable[..., Any])


def _one_thread(method: _Method) -> _Method:
    """Refuse the call from any thread but the pool's owner (one comparison of thread ids)."""

    @functools.wraps(method)
    def guarded(self: MemoryPool, *args: Any, **kwargs: Any) -> Any:
        if thread_id() != self._owner:
            self._refuse_thread(method.__name__)
        return method(self, *args, **kwargs)

    return cast(_Method, guarded)


class MemoryPool:
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
        self._owner = thread_id()  # the one thread whose calls may change the pool (see `_one_thread`)
        #: everything the pool holds (its collaborators read and change it; read it, never write it)
        self.state = PoolState(params, int(capacity), EventLog(bool(events)))
        self.state.grow(max(1, int(reserve_npcs)))
        self._scalar = ScalarPaths(self.state)
        self._recaller = Recaller(self.state, self._scalar)
        self._recorder = Recorder(self.state, self._scalar, self._recaller)
        self.writes_plainly = self._scalar.writes_plainly
        self.room = self._scalar.room
        self.refresh = self._scalar.refresh

    # ---------------------------------------------------------------------------------------------
    # the calls of the game loop: a single call tries the scalar path, else a batch of one
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
            and self._scalar.record_one(npc, entity, int(memory_type), float(salience), now)
        ):
            return
        self._recorder.record_batch(
            np.array([npc]) if not isinstance(npc, np.ndarray) else npc,
            np.array([entity]) if not isinstance(entity, np.ndarray) else entity,
            np.array([memory_type]) if not isinstance(memory_type, np.ndarray) else memory_type,
            np.array([salience]) if not isinstance(salience, np.ndarray) else salience,
            now,
            tags=None if tags is None else [tags],
        )

    def query_strongest(self, npc: int, entity: int, now: float) -> MemoryView | None:
        """The NPC's strongest memory of `entity` if its R is above the forget threshold, else None.
        The recall wakes it (last access = now, k + 1, S unchanged); R is reported as it was before
        the wake. Only this and `query_strongest_batch` change state among the read calls."""
        if thread_id() != self._owner:
            self._refuse_thread("query_strongest")
        if type(now) is float and type(npc) is int and type(entity) is int:
            found = self._scalar.query_one(npc, entity, now)
            if found is not _BATCH:
                return found  # type: ignore[return-value]  # not _BATCH here: a MemoryView or None (no cast: a call)
        return self._recaller.query_strongest_batch(np.array([npc]), np.array([entity]), now).view(0)

    def recall_fields(self, npc: int, entity: int, now: float) -> RecallFields | None:
        """`query_strongest` as the view's fields in `MemoryView`'s order (None: nothing recalled),
        for a caller that only reads them: the single-call path then builds no view (a frozen
        dataclass of 12 fields costs about 1.3 us to make)."""
        if thread_id() != self._owner:
            self._refuse_thread("recall_fields")
        if type(now) is float and type(npc) is int and type(entity) is int:
            found = self._scalar.query_fields(npc, entity, now)
            if found is not _BATCH:
                return found  # type: ignore[return-value]  # not _BATCH here: the fields or None (no cast: a call)
        view = self._recaller.query_strongest_batch(np.array([npc]), np.array([entity]), now).view(0)
        if view is None:
            return None
        return cast(RecallFields, tuple(getattr(view, name) for name in MemoryView.__slots__))

    def awareness(self, npc: int, entity: int, now: float) -> Awareness:
        """The layered response to the strongest memory of `entity`. Never wakes anything."""
        if type(now) is float and type(npc) is int and type(entity) is int:
            level = self._scalar.awareness_one(npc, entity, now)
            if level >= 0:
                return _AWARENESS[level]
        return Awareness(int(self.awareness_batch(np.array([npc]), np.array([entity]), now)[0]))

    @_one_thread
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
        self._recorder.record_batch(npcs, entities, memory_types, saliences, now, tags=tags)

    @_one_thread
    def query_strongest_batch(self, npcs: Any, entities: Any, now: float) -> QueryBatch:
        """`query_strongest` for many (npc, entity) pairs; pairs of one NPC apply in input order."""
        # Recaller.query_strongest_batch's call, one Python frame less (a call per frame)
        return self._recaller.query(npcs, entities, now, True)

    @_one_thread
    def awareness_batch(self, npcs: Any, entities: Any, now: float) -> np.ndarray:
        """`awareness` for many pairs, as an int8 array of `Awareness` values. Never wakes."""
        return self._recaller.awareness_batch(npcs, entities, now)

    def awareness_of(self, retrievability_value: float) -> Awareness:
        """The `Awareness` level of a retrievability value under this pool's thresholds."""
        return self._recaller.awareness_of(retrievability_value)

    @_one_thread
    def strongest(
        self, npcs: Any, entities: Any, type_masks: Any, floors: Any, now: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per query (an NPC id; an entity, or 0 for anyone; a memory type mask, bit t set: type t
        counts, 0: every type; an R floor): (entity, R) of the NPC's strongest working memory that
        passes, R above the floor and above the forget threshold (the first slot among equals);
        (0, 0.0) where none does. Only looks: nothing wakes, long-term memories never count."""
        state = self.state
        now = checked_time(now)
        _, rows = state.rows_of(npcs)
        wanted = int64_array(entities, "entities")
        masks = int64_array(type_masks, "type masks")
        floor = np.asarray(floors, dtype=np.float64)
        if not rows.size == wanted.size == masks.size == floor.size:
            raise ValueError(
                f"strongest: {rows.size} npcs, {wanted.size} entities, {masks.size} masks and "
                f"{floor.size} floors must all match"
            )
        state.clock = now
        compiled = strongest_rows(self._recaller, rows, wanted, masks, floor, now)
        if compiled is not None:
            return compiled
        best_entity, best_r = np.zeros(rows.size, dtype=np.int64), np.zeros(rows.size)
        local, _, flat = self.occupied_slots(rows)
        if not local.size:
            return best_entity, best_r
        r = self.retrievability_of(flat, now)
        kinds = state.memory_type_flat[flat].astype(np.int64)
        entity = state.entity_flat[flat]
        keep = (masks[local] == 0) | ((masks[local] >> kinds) & 1).astype(bool)
        keep &= (wanted[local] == 0) | (entity == wanted[local])
        keep &= (r > floor[local]) & (r > state.params.forget_threshold)
        at, r, entity = local[keep], r[keep], entity[keep]
        if at.size:
            order = np.lexsort((-r, at))  # by query, strongest first (the first slot among equals)
            first = order[np.r_[True, at[order][1:] != at[order][:-1]]]
            best_entity[at[first]] = entity[first]
            best_r[at[first]] = r[first]
        return best_entity, best_r

    # ---------------------------------------------------------------------------------------------
    # for a caller that defers writes and answers reads ahead (the server's frame cache): see
    # `ScalarPaths` and `Recaller.recall_preview` for what each promises. The three it asks once per
    # queued call are the scalar paths' own bound methods (set in __init__), so each is one Python
    # call; a method here that delegated would add a call to each (12-15% of theirs, measured).
    writes_plainly: Callable[[int], bool]
    room: Room
    refresh: Callable[[int, int, int, float], bool]

    def recall_preview(
        self, npcs: Any, entities: Any, now: float
    ) -> tuple[np.ndarray, np.ndarray, list[list]]:
        return self._recaller.recall_preview(npcs, entities, now)

    def written_level(self, row: int | None = None) -> int:
        return self._scalar.written_level(row)

    def pending_limits(
        self, npcs: np.ndarray, last_access: list[float], now: float
    ) -> tuple[list[int], list[int]]:
        return self._scalar.pending_limits(npcs, last_access, now)

    # ---------------------------------------------------------------------------------------------
    # properties
    @property
    def capacity(self) -> int:
        return self.state.capacity

    @property
    def params(self) -> MemoryParams:
        return self.state.params

    @property
    def npc_count(self) -> int:
        return self.state.npc_count

    @property
    def clock(self) -> float:
        """The `now` of the latest call (the default time of `save` and `export_npc`)."""
        return self.state.clock

    def claim(self, thread: int | None = None) -> None:
        """Make the calling thread (or the thread of id `thread`) the pool's owner, the only one whose
        calls may change it (hand a pool made or loaded on another thread to the game loop's, once
        that thread is done with it)."""
        self._owner = thread_id() if thread is None else thread

    def _refuse_thread(self, call: str) -> None:
        raise ConcurrentUseError(
            f"MemoryPool.{call}() called from another thread: a pool belongs to the thread that made "
            "it (hand it over with claim() once that thread is done with it)"
        )

    def npc_ids(self) -> np.ndarray:
        """Live NPC ids in row order: row i of `retrievability_all` / `forget_times` is `npc_ids()[i]`."""
        state = self.state
        return state.npc_of_row[: state.npc_count].copy()

    def has_npc(self, npc: int) -> bool:
        state = self.state
        return 0 <= npc < state.next_id and state.row_of_id[npc] >= 0

    def memory_count(self, npc: int | None = None) -> int:
        """Working memories held (of one NPC, or of all), not counting the long-term tier."""
        state = self.state
        if npc is None:
            return int(state.used_slots[: state.npc_count].sum())
        return int(state.used_slots[state.row_of(npc)])

    def longterm_count(self, npc: int | None = None) -> int:
        state = self.state
        if npc is None:
            return state.longterm.size
        state.row_of(npc)
        return state.longterm.count_for(int(npc))

    # ---------------------------------------------------------------------------------------------
    # NPCs
    @_one_thread
    def add_npc(self) -> int:
        """A new NPC with an empty memory; returns its id (ids are never reused)."""
        state = self.state
        if state.npc_count == state.allocated_rows:
            state.grow(2 * state.allocated_rows)
        npc = state.next_id
        if npc >= state.row_of_id.shape[0]:
            grown = np.full(2 * state.row_of_id.shape[0], -1, dtype=np.int64)
            grown[:npc] = state.row_of_id
            state.row_of_id = grown
        row = state.npc_count
        state.row_of_id[npc] = row
        state.npc_of_row[row] = npc
        state.next_id += 1
        state.npc_count += 1
        return npc

    @_one_thread
    def add_npcs(self, count: int) -> np.ndarray:
        """`count` new NPCs at once; returns their ids."""
        return np.array([self.add_npc() for _ in range(int(count))], dtype=np.int64)

    @_one_thread
    def remove_npc(self, npc: int) -> None:
        """Drop an NPC and all its memories (working, long-term, links). Its id is never reused."""
        state = self.state
        row = state.row_of(npc)
        npc = int(npc)
        last = state.npc_count - 1
        if row != last:  # move the last row into the hole
            state.move_row(last, row)
            state.row_of_id[state.npc_of_row[row]] = row
        state.clear_slots(np.arange(last * state.capacity, (last + 1) * state.capacity))
        state.npc_of_row[last] = -1
        state.used_slots[last] = state.pinned_slots[last] = state.longterm_count[last] = 0
        state.row_of_id[npc] = -1
        state.npc_count -= 1
        state.links.pop(npc, None)
        state.longterm.remove_npc(npc)

    # ---------------------------------------------------------------------------------------------
    # rounds: at most one event per NPC each, in per-NPC input order

    # ---------------------------------------------------------------------------------------------
    # recording

    # ---------------------------------------------------------------------------------------------
    # read-only views (never wake)
    def retrievability_all(self, now: float, out: np.ndarray | None = None) -> np.ndarray:
        """R of every working slot, shape (npc_count, capacity), rows as `npc_ids()`; 0 for empty slots."""
        state = self.state
        now = checked_time(now)
        n, cap = state.npc_count, state.capacity
        if out is None:
            out = np.empty((n, cap))
        elif out.shape != (n, cap) or out.dtype != np.float64:
            raise ValueError(f"out must be a float64 array of shape {(n, cap)}, got {out.dtype} {out.shape}")
        state.clock = now
        return retrievability(
            state.last_access[:n],
            state.stability[:n],
            now,
            state.params,
            out=out,
            mask=state.scratch_buffer("allmask", n * cap, bool).reshape(n, cap),
        )

    def retrievability_of(self, flat: np.ndarray, now: float) -> np.ndarray:
        """R of the working slots at `flat` (indices into the `<column>_flat` arrays, as
        `occupied_slots` gives them): the bits `retrievability_all` gives those slots."""
        state = self.state
        now = checked_time(now)
        state.clock = now
        return retrievability(state.last_access_flat[flat], state.stability_flat[flat], now, state.params)

    def forget_times(self) -> np.ndarray:
        """Analytic time at which each working memory's R reaches the forget threshold, shape
        (npc_count, capacity); +inf for empty slots. Valid until the memory is next woken."""
        state = self.state
        n = state.npc_count
        out = state.stability[:n] * state.forget_factor
        out += state.last_access[:n]
        out[state.memory_type[:n] < 0] = np.inf
        return out

    @_one_thread
    def pop_forgotten(self, now: float) -> ForgottenRows:
        """Working memories whose forget time has passed and were not reported since they were last
        woken or formed: each forgetting is reported exactly once, whatever the call rate."""
        state = self.state
        now = checked_time(now)
        n = state.npc_count
        found = forgotten_cells(self._recaller, n, now)  # the memory kernel's scan, when it runs
        if found is None:
            # the slots that hold a memory not yet reported, then the forget time (`forget_times`'
            # product and sum) of those only: most slots of a crowd's rows are empty
            unreported = state.memory_type[:n] >= 0
            unreported &= ~state.forget_reported[:n]
            cells = np.flatnonzero(unreported)
            due = state.stability_flat[cells] * state.forget_factor
            due += state.last_access_flat[cells]
            hit = due <= now
            fi, due = cells[hit], due[hit]
            state.forget_reported_flat[fi] = True
        else:
            fi, due = found
        state.clock = now
        return ForgottenRows(
            state.npc_of_row[fi // state.capacity],
            state.entity_flat[fi],
            state.memory_type_flat[fi],
            due,
        )

    @_one_thread
    def drain_events(self) -> MemoryEvents:
        """The events collected since the last drain (needs `MemoryPool(events=True)`)."""
        return self.state.events.drain()

    def memories(self, npc: int, now: float) -> list[MemoryView]:
        """Every memory the NPC holds (working slots in slot order, then long-term), forgotten ones
        included (R = 0). Never wakes."""
        state = self.state
        row = state.row_of(npc)
        now = checked_time(now)
        state.clock = now
        return working_views(self.state, int(npc), row, now) + longterm_views(self.state, int(npc))

    def top_k(
        self, npc: int, now: float, k: int = 5, tags: Collection[str] | None = None
    ) -> list[MemoryView]:
        """The k memories to put in an LLM prompt, best first: score = R^w_r x E^w_i x relevance^w_t
        (relevance from shared tags when `tags` is given). Forgotten memories never appear. Never wakes."""
        state = self.state
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
            raise ValueError(f"k must be a non-negative integer, got {k!r}")
        query = None if tags is None else tag_set(tags)
        return retrieval.top_k(self.memories(npc, now), int(k), query, state.params)

    # ---------------------------------------------------------------------------------------------
    # links and pins
    @_one_thread
    def link(
        self, npc: int, entity_a: int, entity_b: int, type_a: int | None = None, type_b: int | None = None
    ) -> None:
        """Tie memories of one NPC together: waking a memory of (entity_a, type_a) with E >= the
        consolidation threshold also consolidates the (entity_b, type_b) memories, and vice versa.
        A type of None means any type of that entity. Links survive eviction and are saved."""
        state = self.state
        state.row_of(npc)
        a = (int(int64_array(entity_a, "entity")[0]), -1 if type_a is None else int(MemoryType(type_a)))
        b = (int(int64_array(entity_b, "entity")[0]), -1 if type_b is None else int(MemoryType(type_b)))
        if a == b:
            raise ValueError("a memory cannot be linked to itself")
        links = state.links.setdefault(int(npc), {})
        links.setdefault(a, set()).add(b)
        links.setdefault(b, set()).add(a)

    @_one_thread
    def unlink(
        self, npc: int, entity_a: int, entity_b: int, type_a: int | None = None, type_b: int | None = None
    ) -> None:
        state = self.state
        state.row_of(npc)
        a = (int(entity_a), -1 if type_a is None else int(MemoryType(type_a)))
        b = (int(entity_b), -1 if type_b is None else int(MemoryType(type_b)))
        links = state.links.get(int(npc), {})
        links.get(a, set()).discard(b)
        links.get(b, set()).discard(a)

    def links(self, npc: int) -> list[tuple[int, int | None, int, int | None]]:
        """(entity_a, type_a, entity_b, type_b) for each link of the NPC, each once."""
        state = self.state
        state.row_of(npc)
        out = set()
        for a, bs in state.links.get(int(npc), {}).items():
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
        state = self.state
        row = state.row_of(npc)
        e = int(int64_array(entity, "entity")[0])
        t = int(MemoryType(memory_type))
        slots = np.flatnonzero((state.entity[row] == e) & (state.memory_type[row] == t))
        if not slots.shape[0]:
            raise KeyError(f"npc {int(npc)} has no working memory of entity {e} ({MemoryType(t).name})")
        s = int(slots[0])
        if bool(state.pinned[row, s]) != bool(pinned):
            state.pinned[row, s] = bool(pinned)
            state.pinned_slots[row] += 1 if pinned else -1

    # ---------------------------------------------------------------------------------------------
    # long-term tier
    @_one_thread
    def advance_game_day(self, days: float = 1.0, now: float | None = None) -> None:
        """Game-clock step (the source's dual-track time): first age the long-term tier by `days`
        and drop what it forgot, then move every remembered, unpinned working memory whose S reaches
        `longterm_min_stability` or whose k reaches `longterm_min_recalls` to the long-term tier,
        freeing its slot. `now` (default: the latest call's) decides "remembered" (R > threshold)."""
        promotion.advance_game_day(self.state, days, now)

    # ---------------------------------------------------------------------------------------------
    # state, for the save format (persistence reads and restores a pool through these only)
    @property
    def next_id(self) -> int:
        """The id the next `add_npc` returns (ids are never reused)."""
        return self.state.next_id

    @property
    def longterm(self) -> LongTermStore:
        """The long-term tier (read it; restore through `restore_longterm`)."""
        return self.state.longterm

    def working_state(
        self, rows: Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], list[frozenset[str] | None]]:
        """The occupied working slots of pool rows `rows` (row i of the result is `rows[local]`):
        (local, slot, {column name: values} of `SLOT_COLUMNS`, tags or None per slot)."""
        state = self.state
        local, slot, fi = self.occupied_slots(rows)
        values = {col.name: getattr(state, f"{col.name}_flat")[fi] for col in SLOT_COLUMNS}
        tags = [None] * fi.shape[0] if state.tags is None else state.tags.reshape(-1)[fi].tolist()
        return local, slot, values, tags

    def occupied_slots(self, rows: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The occupied working slots of pool rows `rows`: (local, slot, flat), row i of the result
        being `rows[local]`, flat its index into the `<column>_flat` arrays."""
        state = self.state
        rows_arr = np.asarray(rows, dtype=np.int64)
        # flat positions, then (row, slot): a 2-D np.nonzero costs four times as much
        local, slot = np.divmod(np.flatnonzero(state.memory_type[rows_arr] >= 0), state.capacity)
        return local, slot, rows_arr[local] * state.capacity + slot

    def entities(self) -> np.ndarray:
        """The distinct entity ids of every memory held (working and long-term), sorted."""
        state = self.state
        n = state.npc_count
        working = state.entity[:n][state.memory_type[:n] >= 0]
        return np.unique(np.concatenate((working, state.longterm.cols["entity"][: state.longterm.size])))

    def row_of(self, npc: int) -> int:
        """The pool row holding `npc` (rows are as `npc_ids()`; they move when NPCs are removed)."""
        state = self.state
        return state.row_of(npc)

    def restore_ids(self, npc_ids: Sequence[int], next_id: int, now: float) -> None:
        """Make a fresh pool's rows hold NPCs `npc_ids` (row i: npc_ids[i]), next id `next_id`."""
        state = self.state
        n = len(npc_ids)
        state.row_of_id = np.full(max(16, next_id), -1, dtype=np.int64)
        state.row_of_id[np.asarray(npc_ids, dtype=np.int64)] = np.arange(n)
        state.npc_of_row[:n] = npc_ids
        state.npc_count = n
        state.next_id = next_id
        state.clock = now

    def restore_working(
        self,
        rows: np.ndarray,
        slots: np.ndarray,
        values: dict[str, np.ndarray],
        tags: dict[int, frozenset[str]],
    ) -> None:
        """Write saved working memories into empty slots: memory i at (rows[i], slots[i]) with
        values[column][i] for each saved column (the entity hash is derived); tags: i -> tag set."""
        state = self.state
        fi = rows * state.capacity + slots
        for col in SLOT_COLUMNS:
            if col.name in values:
                getattr(state, f"{col.name}_flat")[fi] = values[col.name]
        state.entity_hash_flat[fi] = entity_hash(values["entity"])
        if fi.shape[0]:
            state.latest_access = max(state.latest_access, float(state.last_access_flat[fi].max()))
        np.add.at(state.used_slots, rows, 1)
        np.add.at(state.pinned_slots, rows[values["pinned"]], 1)
        if tags:
            flat = state.ensure_tags().reshape(-1)
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
        state = self.state
        row = state.longterm.add(npc, entity, memory_type, salience, recall_count, stability_days, tags)
        state.longterm.cols["age"][row] = age_days
        state.longterm_count[state.row_of_id[npc]] += 1

    @_one_thread
    def clear_npc(self, npc: int) -> None:
        """Forget everything of `npc` (working, long-term, links); the NPC stays."""
        state = self.state
        row = state.row_of(npc)
        state.clear_slots(np.arange(row * state.capacity, (row + 1) * state.capacity))
        state.used_slots[row] = state.pinned_slots[row] = state.longterm_count[row] = 0
        state.links.pop(npc, None)
        state.longterm.remove_npc(npc)

    # ---------------------------------------------------------------------------------------------
    # persistence
    def save(self, path: str | Path, now: float | None = None) -> None:
        """Write the whole pool (params, NPC ids, memories as ages, links, long-term tier).
        `now` (default: the latest call's) turns last-access times into ages."""
        state = self.state
        now = state.clock if now is None else checked_time(now)
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
        now = checked_time(now)
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise persistence.SaveFormatError(f"cannot read save file {path}: {exc}") from exc
        return persistence.load_pool(cls, data, now, events=events, max_bytes=max_bytes)

    @_one_thread
    def export_npc(self, npc: int, now: float | None = None) -> bytes:
        """One NPC's memories (working as ages, long-term, links) as bytes, for per-node game saves."""
        state = self.state
        row = state.row_of(npc)
        now = state.clock if now is None else checked_time(now)
        return persistence.dump_npc(self, int(npc), row, now)

    @_one_thread
    def import_npc(self, npc: int, data: bytes, now: float) -> None:
        """Replace the NPC's memories with `export_npc` bytes, resumed at `now`. The pool's own
        params apply. On any error the pool is left untouched."""
        state = self.state
        state.row_of(npc)  # an unknown NPC raises before the data is read
        now = checked_time(now)
        persistence.load_npc(self, int(npc), data, now)
        state.clock = now
