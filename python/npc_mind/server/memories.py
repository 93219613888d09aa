"""Memory streams behind the server: one `MemoryPool` per distinct profile (capacity + params), one
pool NPC per stream. Signals come from the pools' own batched bookkeeping once a frame: formed,
rehearsed and evicted from `drain_events`, forgotten from `pop_forgotten` (each memory exactly once,
at its analytic forget time, however often the frame runs).

The per-node calls (`MemoryBank.write`, `aware`, `recall`: a MemoryStream's `record_event`,
`awareness_of`, `query_strongest`) do not each run the pool's scalar path. Writes are queued and
folded into one `record_batch` when the frame steps, before the clock moves (the same `now`, the
same state and events as the calls at once: the batch-equals-singles contract, events in input
order). Reads and recalls are answered from one table the step computes in one batch for the pairs
read or recalled in the frame before (`MemoryBank.table_rows`: the awareness level, the recall's
answer without the wake, and what queued writes may do before the answer changes). Exact by
construction, and proven against the immediate path by `tests/test_server_deferred.py`:
- a write is queued only when it cannot fail and reaches no other entity (`writes_plainly`, valid
  arguments); anything else runs at once, after every queued write (call order is kept);
- a read of a stream with queued writes knows what they can change (`awareness_with_pending`):
  the entity written has R = 1, any other only by eviction, so a row that could overflow applies
  its writes first (and every write queued before them);
- a stream whose state changed this frame (writes, a recall's wake) is never read from the table;
  every other call that reads or changes memories applies the whole queue first, and one that
  changes many streams or frees one also drops the table.
In the engine, MemoryStream's calls mostly do not reach the bank one by one: the binding queues
`record_event` in C and hands the rows over in one piece (`take_writes`), and answers
`awareness_of` from the table the bank publishes each frame (`FrameAnswers`) by the same rules,
for the streams the bank has not changed otherwise since.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from npc_mind.memory import MAX_CAPACITY, Awareness, MemoryParams, MemoryPool, MemoryType, MemoryView
from npc_mind.memory.checks import checked_memory_types, checked_saliences, int64_array
from npc_mind.memory.columns import _INT64_MAX, _INT64_MIN, MAX_TIME
from npc_mind.memory.fastpaths import APPLY_FIRST
from npc_mind.memory.types import EventKind
from npc_mind.server.events import EventQueue
from npc_mind.server.registry import HandleCounter, HandleTable, Registry

MEMORY_FORMED = "memory_formed"
MEMORY_REHEARSED = "memory_rehearsed"
MEMORY_EVICTED = "memory_evicted"
MEMORY_FORGOTTEN = "memory_forgotten"
# Event codes of the batched read (`MemoryBank.drain_log`), the MemoryStream EVENT_* constants:
# the core's own `EventKind` codes (one table), for the four events that are signals.
EVENT_FORMED = int(EventKind.FORMED)
EVENT_REHEARSED = int(EventKind.REHEARSED)
EVENT_FORGOTTEN = int(EventKind.FORGOTTEN)
EVENT_EVICTED = int(EventKind.EVICTED)
# drain_events kind -> its code when it is a signal, else -1 (recalls and long-term rows are not)
_CODE_OF_KIND = np.full(max(int(kind) for kind in EventKind) + 1, -1, dtype=np.int32)
for _code in (EVENT_FORMED, EVENT_REHEARSED, EVENT_EVICTED):
    _CODE_OF_KIND[_code] = _code
_SIGNAL_OF_CODE = {
    EVENT_FORMED: MEMORY_FORMED,
    EVENT_REHEARSED: MEMORY_REHEARSED,
    EVENT_FORGOTTEN: MEMORY_FORGOTTEN,
    EVENT_EVICTED: MEMORY_EVICTED,
}
# pairs the frame's awareness table holds at most (the pairs read in the frame before)
MAX_TABLE_PAIRS = 1 << 16
# a flush of fewer queued writes runs them one by one on the scalar path (the batch's numpy calls
# cost more for a handful); both give the same bits and events
SCALAR_FLUSH = 16
# the memory type of a queued wake (a recall answered from the frame's table; writes have 0..4)
WAKE = -1
# the arguments `write` queues (anything else runs at once, for its error): an entity id in these
# bounds (inclusive), a memory type in these, a finite salience
QUEUED_ENTITY = (_INT64_MIN + 1, _INT64_MAX)
QUEUED_TYPE = (0, len(MemoryType) - 1)
# a queued write as a numpy record: the fold converts the queue's tuples in one call
_QUEUE_ROW = np.dtype(
    [("handle", np.int64), ("entity", np.int64), ("memory_type", np.int8), ("salience", np.float64)]
)
# `take_writes`'s raw rows: the binding's queued record_event calls, 8 bytes a number
_RAW_ROW = np.dtype(
    [("handle", np.int64), ("entity", np.int64), ("memory_type", np.int64), ("salience", np.float64)]
)
# a row of the frame's table (`MemoryBank.table_rows`): (awareness level, recall answer, room)
TableRow = tuple[int, tuple | bool | None, int]
VIEW_FIELDS = ("entity_id", "memory_type", "retrievability", "stability", "salience", "recall_count")


@dataclass(frozen=True)
class MemoryProfileSpec:
    """What a `MemoryProfile` resource holds: streams with equal specs share one pool."""

    capacity: int = 64
    params: MemoryParams = field(default_factory=MemoryParams)

    def __post_init__(self) -> None:
        # a spec is valid once made: a pool is never half-built from it
        capacity = self.capacity
        integer = not isinstance(capacity, bool) and isinstance(capacity, int | np.integer)
        if not integer or not 1 <= capacity <= MAX_CAPACITY:  # never coerced: 1.5 is not 1
            bounds = f"[1, {MAX_CAPACITY}]"
            raise ValueError(f"memory profile capacity must be an integer in {bounds}, got {capacity!r}")
        object.__setattr__(self, "capacity", int(capacity))
        if not isinstance(self.params, MemoryParams):
            raise TypeError(f"memory profile params must be MemoryParams, got {type(self.params).__name__}")

    @classmethod
    def of(cls, profile: MemoryProfileSpec | Mapping[str, Any] | None) -> MemoryProfileSpec:
        """A spec from a spec, a `from_dict` mapping, or None (the defaults)."""
        if profile is None:
            return cls()
        if isinstance(profile, MemoryProfileSpec):
            return profile
        if not isinstance(profile, Mapping):
            kind = type(profile).__name__
            raise TypeError(f"a memory profile must be a MemoryProfileSpec or a mapping, got {kind}")
        return cls.from_dict(profile)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryProfileSpec:
        """`capacity` plus any `MemoryParams` field by name; the rest keep their defaults."""
        data = dict(data)
        capacity = data.pop("capacity", 64)
        return cls(capacity, MemoryParams.from_dict(data))


def _checked_spec(spec: Any) -> MemoryProfileSpec:
    if not isinstance(spec, MemoryProfileSpec):
        raise TypeError(f"a memory profile must be a MemoryProfileSpec, got {type(spec).__name__}")
    return spec


def view_to_dict(view: MemoryView) -> dict[str, Any]:
    v = view
    return memory_dict(v.entity, v.memory_type, v.retrievability, v.stability, v.salience, v.recall_count)


def memory_dict(  # noqa: PLR0917 - a MemoryView's fields, in its order
    entity: int, memory_type: int, retrievability: float, stability: float, salience: float, recall_count: int
) -> dict[str, Any]:
    """The Dictionary the nodes hand GDScript for one memory."""
    return native_memory_dict(
        int(entity),
        int(memory_type),
        float(retrievability),
        float(stability),
        float(salience),
        int(recall_count),
    )


def native_memory_dict(  # noqa: PLR0917 - a MemoryView's fields, in its order
    entity: int, memory_type: int, retrievability: float, stability: float, salience: float, recall_count: int
) -> dict[str, Any]:
    """`memory_dict` of values that are already Python ints and floats (the recall table's)."""
    return {
        "entity_id": entity,
        "memory_type": memory_type,
        "retrievability": retrievability,
        "stability": stability,
        "salience": salience,
        "recall_count": recall_count,
    }


@dataclass
class PoolSlot:
    index: int
    spec: MemoryProfileSpec
    pool: MemoryPool
    handle_of_npc: dict[int, int] = field(default_factory=dict)
    # the same map as an array indexed by pool NPC id (0: no stream), for the batched event rows
    handle_array: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def map_npc(self, npc: int, handle: int) -> None:
        if npc >= self.handle_array.size:
            grown = np.zeros(max(2 * self.handle_array.size, npc + 1, 16), dtype=np.int64)
            grown[: self.handle_array.size] = self.handle_array
            self.handle_array = grown
        self.handle_array[npc] = handle


@dataclass
class StreamEntry:
    slot: PoolSlot
    npc: int


@dataclass
class MemoryLog:
    """Every stream's memory events of the last batched update as parallel arrays (code, handle,
    entity, memory type), in the order the signals would come: the batched read for crowds."""

    code: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    handle: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    entity: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    memory_type: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))

    def __len__(self) -> int:
        return int(self.code.size)

    def without(self, handle: int) -> MemoryLog:
        keep = self.handle != handle
        return MemoryLog(self.code[keep], self.handle[keep], self.entity[keep], self.memory_type[keep])


class FrameAnswers:
    """Where the bank also publishes each frame's awareness table, for a reader that answers
    `aware` without calling the bank (the engine binding answers MemoryStream.awareness_of in C
    from it: npc_mind_godot.memory_nodes). Its answers must be the bank's: per pair the table's
    level; per stream how many writes (queued by that reader's own path, `take_writes` with raw
    rows) the levels survive (`room`) and the level of an entity one of them wrote (`written`, or
    APPLY_FIRST: ask the bank). The bank closes a stream it changes any other way, and clears all
    when the table no longer holds. The default publishes nowhere."""

    wanted = False  # publish is called (the default's is not: its streams' rooms cost a batch)

    def publish(
        self,
        pairs: list[tuple[int, int]],
        levels: list[int],
        streams: list[int],
        rooms: list[int],
        written: list[int],
    ) -> None:
        """The frame's table: per pair (stream, entity) its level; per stream whose writes the
        reader may queue, its room and written level."""

    def close(self, handle: int) -> None:
        """The stream changed other than by the reader's queued writes: the bank answers it."""

    def clear(self) -> None:
        """The table no longer holds: the bank answers every read."""

    def asked(self) -> list[tuple[int, int]]:
        """The pairs the reader answered from the table since the last call (for the next table)."""
        return []


@dataclass
class MemoryBank:
    counter: HandleCounter
    events: EventQueue
    pools: dict[MemoryProfileSpec, PoolSlot] = field(default_factory=dict)
    entries: Registry[StreamEntry] = field(init=False)
    table: HandleTable = field(default_factory=lambda: HandleTable("memory stream"))
    # indexed by PoolSlot.index (the HandleTable's owner); None: a dropped pool's index, reused
    slots: list[PoolSlot | None] = field(default_factory=list)
    free_slots: list[int] = field(default_factory=list)
    # handle -> (pool, pool NPC id): the Dictionary path's one lookup per call
    targets: dict[int, tuple[MemoryPool, int]] = field(default_factory=dict)
    # streams whose events go only to the batched read, not to per-node signals
    quiet: set[int] = field(default_factory=set)
    log: MemoryLog = field(default_factory=MemoryLog)
    # (pool, old pool NPC id) of streams moved to another profile since the last step: the old
    # pool's undrained events of that NPC still reach the stream, then the mapping is cleared
    moved: list[tuple[PoolSlot, int]] = field(default_factory=list)
    # --- the per-node path (module docstring); per_frame off: every call at once, no table
    now: Callable[[], float] = lambda: 0.0  # the server clock's
    per_frame: bool = True
    # queued writes (handle, entity, type, salience) and wakes (handle, entity, WAKE, 0.0) in call
    # order; queue[:done] already applied
    queue: list[tuple[int, int, int, float]] = field(default_factory=list)
    done: int = 0
    # (queue position, count, bytes) of queued writes also held as `_RAW_ROW` records (`take_writes`)
    raw_rows: list[tuple[int, int, bytes]] = field(default_factory=list)
    # streams with a queued wake -> its queue position: a write of the stream applies it first, so
    # that in the queue not yet applied a stream's writes all come before its wakes
    woken: dict[int, int] = field(default_factory=dict)
    # streams with writes this frame or changed since the step -> queue positions of their writes
    # this frame (cleared when the whole queue is applied); a stream is read from the table only
    # when it is not here, or when its writes are all queued (none applied) and cannot change the
    # answer
    touched: dict[int, list[int]] = field(default_factory=dict)
    # queue[:indexed] have their positions in `touched`; the rest are indexed by `_index` when a
    # call reads `touched` (a frame whose reads the binding answers never pays for it)
    indexed: int = 0
    # streams changed since the step by other than their queued writes (a wake, a write at once,
    # a load): the writes are covered by their positions, which stay until the whole queue is
    # applied (the stream is then read from its row)
    changed: set[int] = field(default_factory=set)
    plain: set[int] = field(default_factory=set)  # streams whose writes may be queued
    # the frame's table: (stream, entity) -> (awareness level, recall answer, room) at the step's
    # now, for the pairs read or recalled in the frame before (recall answers only after a frame
    # that recalled: a game that only reads pays for the levels only). The answer is
    # (entity, type, R before the wake, S, E, k after the wake, how many writes of it only refresh
    # it), None (nothing recalled) or False (recall at once: links, long-term memories, the power
    # curve); room: how many writes the stream takes before one could evict (`pending_limits`)
    table_rows: dict[tuple[int, int], TableRow] = field(default_factory=dict)
    asked: list[tuple[int, int]] = field(default_factory=list)  # pairs read this frame
    answers: FrameAnswers = field(default_factory=FrameAnswers)  # the table, published
    recall_asked: list[tuple[int, int]] = field(default_factory=list)  # pairs recalled this frame

    def __post_init__(self) -> None:
        self.entries = Registry("memory stream", self.counter)

    def _slot(self, spec: MemoryProfileSpec) -> PoolSlot:
        """The pool of `spec`, made on first use (an invalid spec raises before anything is kept)."""
        slot = self.pools.get(spec)
        if slot is None:
            slot = self._keep(spec, MemoryPool(spec.capacity, spec.params, events=True))
        return slot

    def _keep(self, spec: MemoryProfileSpec, pool: MemoryPool) -> PoolSlot:
        index = self.free_slots.pop() if self.free_slots else len(self.slots)
        slot = self.pools[spec] = PoolSlot(index, spec, pool)
        if index == len(self.slots):
            self.slots.append(slot)
        else:
            self.slots[index] = slot
        return slot

    def _drop_empty_pools(self) -> None:
        """Pools whose last stream left (freed, or moved to another profile: every edit of a profile
        makes a new one) go once their events are read, so a frame costs nothing for them."""
        for spec in [spec for spec, slot in self.pools.items() if not slot.handle_of_npc]:
            slot = self.pools.pop(spec)
            self.slots[slot.index] = None
            self.free_slots.append(slot.index)

    def _bind(self, handle: int, slot: PoolSlot, npc: int) -> None:
        slot.handle_of_npc[npc] = handle
        slot.map_npc(npc, handle)
        self.table.set(handle, slot.index, npc)
        self.targets[handle] = (slot.pool, npc)

    def add(self, spec: MemoryProfileSpec) -> int:
        slot = self._slot(_checked_spec(spec))
        npc = slot.pool.add_npc()
        handle = self.entries.add(StreamEntry(slot, npc))
        self._bind(handle, slot, npc)
        return handle

    def set_profile(self, handle: int, spec: MemoryProfileSpec, now: float) -> None:
        """Move a stream's memories (working, long-term, links, tags) to the pool of `spec`,
        keeping its handle. Transactional: the new profile is validated and the memories are
        written into the new pool before the old ones are released, so a rejected change (invalid
        spec, a capacity too small for the memories held) raises and leaves the stream as it was."""
        entry = self.entries.get(handle)
        spec = _checked_spec(spec)
        if spec == entry.slot.spec:
            return
        self._changed(int(handle))
        held = entry.slot.pool.memory_count(entry.npc)
        if held > spec.capacity:
            raise ValueError(
                f"memory stream {handle} holds {held} working memories; a profile of capacity "
                f"{spec.capacity} cannot hold them (the stream keeps its profile)"
            )
        data = entry.slot.pool.export_npc(entry.npc, now)
        known = spec in self.pools
        pool = self.pools[spec].pool if known else MemoryPool(spec.capacity, spec.params, events=True)
        npc = pool.add_npc()
        try:
            pool.import_npc(npc, data, now)
        except BaseException:
            pool.remove_npc(npc)
            raise
        # the memories are in the new pool: from here nothing can fail
        slot = self.pools[spec] if known else self._keep(spec, pool)
        old = entry.slot
        old.pool.remove_npc(entry.npc)
        del old.handle_of_npc[entry.npc]
        self.moved.append((old, entry.npc))
        entry.slot, entry.npc = slot, npc
        self._bind(int(handle), slot, npc)

    def remove(self, handle: int) -> None:
        self.flush()
        entry = self.entries.pop(handle)
        self.touched.pop(int(handle), None)
        self.changed.discard(int(handle))
        self.plain.discard(int(handle))
        self._drop_tables()  # no read of a freed stream may answer from the table
        self.targets.pop(int(handle), None)
        self.table.clear(handle)
        entry.slot.pool.remove_npc(entry.npc)
        del entry.slot.handle_of_npc[entry.npc]
        entry.slot.map_npc(entry.npc, 0)
        for old, npc in self.moved:
            if old.handle_array[npc] == int(handle):
                old.map_npc(npc, 0)
        self.events.discard(handle)
        self.quiet.discard(int(handle))
        if len(self.log):
            self.log = self.log.without(int(handle))

    def set_signals(self, handle: int, enabled: bool) -> None:
        """Whether the stream's events become per-node signals; they are in the batched read either way."""
        self.entries.get(handle)  # raises for an unknown handle
        if enabled:
            self.quiet.discard(int(handle))
        else:
            self.quiet.add(int(handle))

    def drain_log(self) -> MemoryLog:
        """The last batched update's memory events (each handed over once: a second read is empty)."""
        log, self.log = self.log, MemoryLog()
        return log

    def _at(self, handle: int) -> tuple[MemoryPool, int]:
        if type(handle) is int:
            target = self.targets.get(handle)
            if target is not None:
                return target
        elif not isinstance(handle, np.integer):  # a float 1.0 would find handle 1 in the dict
            raise TypeError(f"a memory stream handle must be an integer, got {type(handle).__name__}")
        entry = self.entries.get(handle)  # raises UnknownHandleError
        return entry.slot.pool, entry.npc

    # --- the per-node path ---------------------------------------------------------------------
    # One Python frame each in the common cases (a MemoryStream method calls these directly): the
    # queue, the positions and the table are read inline, and only the pool's row is asked.
    def write(self, handle: int, entity: int, memory_type: int, salience: float) -> None:
        """`record` at the clock's now: queued when it cannot fail (see the module docstring)."""
        if (
            type(handle) is int
            and handle in self.plain
            and type(entity) is int
            and type(memory_type) is int
            and type(salience) is float
            and QUEUED_TYPE[0] <= memory_type <= QUEUED_TYPE[1]
            and QUEUED_ENTITY[0] <= entity <= QUEUED_ENTITY[1]
            and salience - salience == 0.0  # finite
        ):
            self.answers.close(handle)  # a write the reader did not see queued
            self.take_writes(((handle, entity, memory_type, salience),))
            return
        self._write_at_once(handle, entity, memory_type, salience)

    def take_writes(self, rows: Sequence[tuple[int, int, int, float]], raw: bytes | None = None) -> None:
        """Queue writes (handle, entity, type, salience) that `write` would queue (a stream in
        `plain`, valid arguments), in call order: `write`'s queue, and the rows the engine binding
        queued for MemoryStream.record_event while their stream was in `plain`. `raw`: the same
        rows as `_RAW_ROW` records, which the fold then reads instead of converting the tuples."""
        queue = self.queue  # flush empties it in place
        if not self.woken:  # the common case: appended whole (positions indexed by `_index`)
            if raw is not None:
                self.raw_rows.append((len(queue), len(rows), raw))
            queue.extend(rows)
            return
        self._index()
        touched = self.touched
        for row in rows:
            handle = row[0]
            woken = self.woken  # flush may make a new one
            if woken and handle in woken:
                self.flush(woken[handle])  # the stream's queued wake goes first
            touched.setdefault(handle, []).append(len(queue))  # the write's position
            queue.append(row)
        self.indexed = len(queue)

    def _index(self) -> None:
        """Put the positions of the queued items not yet indexed into `touched`, in queue order."""
        queue, touched = self.queue, self.touched
        for position in range(self.indexed, len(queue)):
            touched.setdefault(queue[position][0], []).append(position)
        self.indexed = len(queue)

    def _write_at_once(self, handle: int, entity: int, memory_type: int, salience: float) -> None:
        """A write not queued: a stream not yet known to write plainly (checked, then queued), or a
        call the queue does not take (bad arguments get today's errors), after the queued ones."""
        target = self.targets.get(handle) if type(handle) is int else None
        if self.per_frame and target is not None and handle not in self.plain and self._open:
            pool, npc = target
            if pool.writes_plainly(npc):
                self.plain.add(handle)
                self.write(handle, entity, memory_type, salience)
                return
        self.flush()
        self.record(handle, entity, memory_type, salience, self.now())
        self._touch(handle)

    def aware(self, handle: int, entity: int) -> int:
        """`awareness` at the clock's now. A stream unchanged since the step answers from the
        frame's table (the pair read in the frame before); one with queued writes (or wakes) this
        frame asks what they can change (`awareness_with_pending`): an entity written has R = 1, any
        other is as the row is, unless a write could evict (then they are applied first)."""
        plain = type(handle) is int and type(entity) is int  # 7.0 == 7: an odd id is never matched
        if self.indexed != len(self.queue):
            self._index()
        positions = self.touched.get(handle) if type(handle) is int else None
        if positions:  # queued writes (or wakes) of this stream this frame
            if plain:
                queue = self.queue
                written = False
                for position in positions:  # a loop, not any(generator): once per call
                    if queue[position][1] == entity:
                        written = True
                        break
                pool, npc = self.targets[handle]
                level = pool.awareness_with_pending(npc, len(positions), written)
                if level >= 0:
                    return level  # (not for the table: a pair read after its write needs none)
                if level == APPLY_FIRST:
                    self.flush(positions[-1])
                elif handle not in self.changed:  # READ_ROW, the row as the step left it
                    positions = None  # so the table may answer
            else:  # its error, or its answer, from the row with the writes applied
                self.flush(positions[-1])
        if plain and positions is None:
            key = (handle, entity)
            row = self.table_rows.get(key)
            if row is not None:
                self.asked.append(key)
                return row[0]
        level = self.awareness(handle, entity, self.now())
        if self.per_frame and plain and _INT64_MIN <= entity <= _INT64_MAX:
            self.asked.append((handle, entity))  # for the next frame's table
        return level

    def recall(self, handle: int, entity: int) -> dict[str, Any]:
        """`query_strongest` at the clock's now. From the frame's table when the pair was read or
        recalled in the frame before and the stream's memories of the entity are as the step left
        them (see below): the answer is the table's, and the wake is queued (applied in the fold,
        after the stream's writes queued before it, by the pools' recall rules). Else after this
        stream's queued writes of the entity (`_apply_for`), at once; that wake changes the stream,
        so it leaves the tables for the frame.

        The table's answer holds when, since the step, the stream's only changes are its queued
        writes (and wakes), none can evict, and those of `entity` are all refreshes of the memory
        the table names (`MemoryPool.pending_limits`, computed at the step's now, which is still
        the clock's): that memory's R is then e^0 = 1, the largest there is, and it was already the
        first of the strongest."""
        if self.indexed != len(self.queue):
            self._index()
        if type(handle) is int and type(entity) is int:
            key = (handle, entity)
            row = self.table_rows.get(key)
            answer = False if row is None else row[1]  # False: the table does not answer the pair
            positions = self.touched.get(handle) if answer is not False else None
            written = 0
            if positions:
                # (positions only when the table answers: `row` is then a row)
                if handle in self.changed or len(positions) > row[2]:  # type: ignore[index]  # changed, or a write could evict
                    answer = False
                else:
                    queue = self.queue
                    for position in positions:
                        item = queue[position]
                        if item[1] == entity:
                            # a wake, another type, or more writes than only refresh the memory
                            written += 1
                            # (answer: None or the recalled memory's columns, a tuple, here)
                            if answer is None or item[2] != answer[1] or written > answer[6]:  # type: ignore[index]  # a tuple or None here, never a bool
                                answer = False
                                break
            elif positions is not None:  # changed since the step, its queue applied
                answer = False
            if answer is not False:
                self.recall_asked.append(key)
                if answer is None:
                    return {}
                queue = self.queue
                self.answers.close(handle)
                self.woken[handle] = len(queue)  # a wake cannot evict; it changes only this entity
                self.touched.setdefault(handle, []).append(len(queue))
                queue.append((handle, entity, WAKE, 0.0))
                self.indexed = len(queue)
                entity_id, memory_type, r, stability, salience, recalls, _ = answer  # type: ignore[misc]  # a tuple here
                r = 1.0 if written else r
                return native_memory_dict(entity_id, memory_type, r, stability, salience, recalls)
        positions = self.touched.get(handle) if type(handle) is int else None
        if positions and (type(entity) is not int or not self._apply_for(handle, entity, positions)):
            self.flush(positions[-1])
        found = self.query_strongest(handle, entity, self.now())
        self._touch(handle)
        if self.per_frame and type(entity) is int and _INT64_MIN < entity <= _INT64_MAX:
            self.recall_asked.append((int(handle), entity))  # for the next frame's table
        return found

    def _apply_for(self, handle: int, entity: int, positions: list[int]) -> bool:
        """Before a recall of `entity`: apply this stream's queued writes of it now, ahead of the
        queue, when that is exact. None of the queued writes can evict (used + queued <= capacity),
        so those of other entities commute with the recall (they touch other memories only); a
        write that only refreshes a memory (`MemoryPool.refresh`) logs no event that could come
        out of order, and applied again in its turn it changes nothing (its memory's last access
        is already now). False at the first write of the entity that is not such a refresh: the
        caller then applies the queue in order."""
        pool, npc = self.targets[handle]
        if pool.awareness_with_pending(npc, len(positions), False) == APPLY_FIRST:
            return False
        queue, done = self.queue, self.done
        now = self.now()
        for position in positions:
            if position >= done:
                _, written, memory_type, _ = queue[position]
                if written == entity and (
                    memory_type == WAKE or not pool.refresh(npc, entity, memory_type, now)
                ):
                    return False
        return True

    def _touch(self, handle: int) -> None:
        """The stream changed this frame: its reads no longer come from the table."""
        if self.per_frame:
            self.touched.setdefault(int(handle), [])
            self.changed.add(int(handle))
            self.answers.close(int(handle))

    def _changed(self, handle: int) -> None:
        """Before a stream's memories are replaced or moved: apply the queue; the stream is read
        from its row until the next step and checked again before its writes are queued."""
        self.flush()
        self._touch(handle)
        self.plain.discard(handle)

    def flush(self, through: int | None = None) -> None:
        """Apply the queued writes in call order: all of them, or those up to queue position
        `through`."""
        queue = self.queue
        self._index()  # (the streams whose writes it applies are marked changed below)
        self._apply(len(queue) if through is None else through + 1)
        if self.done == len(queue) and queue:
            self._clear_queue()
            changed = self.changed
            for handle, positions in self.touched.items():
                if positions:  # applied: a write queued later must not hide them
                    changed.add(handle)
                    self.answers.close(handle)
                    positions.clear()

    def _apply(self, end: int) -> None:
        """Apply the queue's items from `done` up to `end` (exclusive), in call order."""
        if end <= self.done:
            return
        begin = self.done
        part = self.queue[begin:end]
        self.done = end
        now = self.now()
        wakes = [item for item in part if item[2] == WAKE] if self.woken else []
        if wakes:  # a stream's writes come before its wakes (`write`): writes first is their order
            part = [item for item in part if item[2] != WAKE]
            self.woken = {handle: at for handle, at in self.woken.items() if at >= end}
        if len(part) < SCALAR_FLUSH:
            targets = self.targets
            for handle, entity, memory_type, salience in part:
                pool, npc = targets[handle]
                pool.record(npc, entity, memory_type, salience, now)
        else:
            rows = self._raw_part(begin, end, len(part))
            if rows is None:
                rows = np.array(part, dtype=_QUEUE_ROW)  # the four columns in one conversion
            self._record_batch(rows["handle"], rows["entity"], rows["memory_type"], rows["salience"], now)
        if wakes:
            self._wake(wakes, now)

    def _raw_part(self, begin: int, end: int, writes: int) -> np.ndarray | None:
        """The writes of queue[begin:end] as records, from `raw_rows`, when they hold them all (the
        raw pieces inside the range, in queue order, are then exactly those writes); else None."""
        pieces = [raw for start, count, raw in self.raw_rows if start >= begin and start + count <= end]
        if sum(len(raw) for raw in pieces) != writes * _RAW_ROW.itemsize:
            return None
        return np.frombuffer(b"".join(pieces), dtype=_RAW_ROW)

    def _clear_queue(self) -> None:
        self.queue.clear()
        self.done = 0
        self.indexed = 0
        self.woken.clear()
        self.raw_rows.clear()

    def _wake(self, wakes: list[tuple[int, int, int, float]], now: float) -> None:
        """Apply queued wakes (recalls answered from the table) with the pools' recall rules."""
        targets = self.targets
        if len(wakes) < SCALAR_FLUSH:
            for handle, entity, _, _ in wakes:
                pool, npc = targets[handle]
                pool.recall_fields(npc, entity, now)
            return
        handles = np.array([item[0] for item in wakes], dtype=np.int64)
        entities = np.array([item[1] for item in wakes], dtype=np.int64)
        for slot, positions, npcs in self._group(handles):
            slot.pool.query_strongest_batch(npcs, entities[positions], now)

    @property
    def _open(self) -> bool:
        """Writes may be queued only at a time the pools accept (their refusal comes at the call)."""
        return -MAX_TIME <= self.now() <= MAX_TIME

    def pool_of(self, handle: int) -> tuple[MemoryPool, int]:
        """(pool, pool NPC id) of a stream, its queued writes applied: for a caller reading the pool."""
        self.flush()
        return self._at(handle)

    # --- the Dictionary path -------------------------------------------------------------------
    # Values go to the pool as given: it refuses a String or float id, type or salience with a
    # TypeError instead of reading "12" as 12 or 1.5 as 1.
    def record(self, handle: int, entity: int, memory_type: int, salience: float, now: float) -> None:
        pool, npc = self._at(handle)
        pool.record(npc, entity, memory_type, salience, now)

    def query_strongest(self, handle: int, entity: int, now: float) -> dict[str, Any]:
        """A recall: wakes the memory. Empty when forgotten or never formed."""
        pool, npc = self._at(handle)
        fields = pool.recall_fields(npc, entity, now)  # no MemoryView made on the single-call path
        return {} if fields is None else memory_dict(*fields[1:7])

    def awareness(self, handle: int, entity: int, now: float) -> int:
        pool, npc = self._at(handle)
        return int(pool.awareness(npc, entity, now))

    def memories(self, handle: int, now: float) -> list[dict[str, Any]]:
        """The memories still remembered (R above the forget threshold), strongest first; never wakes."""
        self.flush()
        pool, npc = self._at(handle)
        threshold = pool.params.forget_threshold
        views = [view for view in pool.memories(npc, now) if view.retrievability > threshold]
        views.sort(key=lambda view: -view.retrievability)
        return [view_to_dict(view) for view in views]

    def top_k(self, handle: int, k: int, now: float) -> list[MemoryView]:
        self.flush()
        pool, npc = self._at(handle)
        return pool.top_k(npc, now, k)

    def save(self, handle: int, now: float) -> bytes:
        self.flush()
        pool, npc = self._at(handle)
        return pool.export_npc(npc, now)

    def load(self, handle: int, data: bytes, now: float) -> None:
        pool, npc = self._at(handle)
        self._changed(int(handle))
        pool.import_npc(npc, bytes(data), now)

    # --- the batched path ----------------------------------------------------------------------
    def _group(self, handles: np.ndarray) -> list[tuple[PoolSlot, np.ndarray, np.ndarray]]:
        """(pool, positions into the input, pool NPC ids) per pool, in input order within each pool."""
        slots = self.slots
        return [(slots[owner], positions, npcs) for owner, positions, npcs in self.table.groups(handles)]  # type: ignore[misc]  # groups() yields (owner, positions, npcs) triples

    @staticmethod
    def _pairs(call: str, handles: npt.ArrayLike, entities: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Handles and entities as int64 arrays of one length; a clear error otherwise (a float or
        String array is refused, never truncated or parsed; unequal lengths never pair wrong rows)."""
        handles = int64_array(np.ravel(handles), "handles")
        entities = int64_array(np.ravel(entities), "entities")
        if handles.size != entities.size:
            raise ValueError(f"{call}: {handles.size} handles and {entities.size} entities must match")
        return handles, entities

    def record_batch(
        self,
        handles: npt.ArrayLike,
        entities: npt.ArrayLike,
        memory_types: npt.ArrayLike,
        saliences: npt.ArrayLike,
        now: float,
    ) -> None:
        handles, entities = self._pairs("record_batch", handles, entities)
        count = handles.size
        memory_types = np.ravel(memory_types)
        saliences = np.ravel(saliences)
        if not memory_types.size == saliences.size == count:
            raise ValueError(
                f"record_batch: {count} handles, {entities.size} entities, "
                f"{memory_types.size} types and {saliences.size} saliences must all match"
            )
        if not count:
            return
        # checked for every row before any pool changes (the pools would check their own rows only)
        memory_types = checked_memory_types(memory_types, count)
        saliences = checked_saliences(saliences, count)
        self.flush()
        self._drop_tables()  # many streams change
        self._record_batch(handles, entities, memory_types, saliences, now)

    def _record_batch(
        self,
        handles: np.ndarray,
        entities: np.ndarray,
        memory_types: np.ndarray,
        saliences: np.ndarray,
        now: float,
    ) -> None:
        for slot, positions, npcs in self._group(handles):
            slot.pool.record_batch(
                npcs, entities[positions], memory_types[positions], saliences[positions], now
            )

    def awareness_batch(self, handles: npt.ArrayLike, entities: npt.ArrayLike, now: float) -> np.ndarray:
        handles, entities = self._pairs("awareness_batch", handles, entities)
        self.flush()
        out = np.zeros(entities.size, dtype=np.int32)
        for slot, positions, npcs in self._group(handles):
            out[positions] = slot.pool.awareness_batch(npcs, entities[positions], now)
        return out

    def query_strongest_batch(
        self, handles: npt.ArrayLike, entities: npt.ArrayLike, now: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """(R before the wake, memory type or -1) per query; each hit wakes its memory."""
        handles, entities = self._pairs("query_strongest_batch", handles, entities)
        self.flush()
        self._drop_tables()  # the wakes change many streams
        strength = np.zeros(entities.size, dtype=np.float32)
        kinds = np.full(entities.size, -1, dtype=np.int32)
        for slot, positions, npcs in self._group(handles):
            result = slot.pool.query_strongest_batch(npcs, entities[positions], now)
            found = np.asarray(result.found, dtype=bool)
            strength[positions] = np.where(found, result.retrievability, 0.0)
            kinds[positions] = np.where(found, result.memory_type, -1)
        return strength, kinds

    # --- once a frame --------------------------------------------------------------------------
    def fold(self) -> None:
        """Apply the frame's queued writes, before the clock moves (at the `now` they were made).
        The frame's per-node state goes with them, not stream by stream: the step that follows
        rebuilds it, and until then every read is answered from the rows."""
        self._apply(len(self.queue))
        self._clear_queue()
        self._new_frame()

    def step(self, now: float) -> None:
        """Log every pool's events (formed / rehearsed / evicted as they happened, then forgotten) for
        the batched read, queue them as signals for every stream that has signals on, and compute
        the frame's awareness table at `now`."""
        self.flush()
        self._events(now)
        self._awareness_table(now)

    def _awareness_table(self, now: float) -> None:
        """The awareness of the pairs read in the frame before, at the new `now`, in one batch."""
        self._new_frame()
        if not self._open:
            self.plain.clear()  # writes at a time the pools refuse go at once, for their error
        asked, self.asked = self.asked + self.answers.asked(), []
        recalled, self.recall_asked = self.recall_asked, []
        targets = self.targets
        pairs = [pair for pair in dict.fromkeys(asked + recalled) if pair[0] in targets][:MAX_TABLE_PAIRS]
        if pairs:
            self.table_rows = self._table(pairs, bool(recalled), now)
        self._publish()

    def _table(
        self, pairs: list[tuple[int, int]], recalled: bool, now: float
    ) -> dict[tuple[int, int], TableRow]:
        """The table's rows of `pairs` at `now`: levels, and recall answers after a frame that recalled."""
        handles = np.array([pair[0] for pair in pairs], np.int64)
        entities = np.array([pair[1] for pair in pairs], np.int64)
        groups = self._group(handles)
        rows: dict[tuple[int, int], TableRow] = {}
        for slot, positions, npcs in groups:
            keys = pairs if len(groups) == 1 else [pairs[position] for position in positions.tolist()]
            if not recalled:  # a frame with no recall: the levels only (a first recall goes at once)
                level = slot.pool.awareness_batch(npcs, entities[positions], now)
                levels = zip(level.tolist(), repeat(False), repeat(0), strict=False)
                rows.update(zip(keys, levels, strict=True))
                continue
            level, kind, columns = slot.pool.recall_preview(npcs, entities[positions], now)
            room, limit = slot.pool.pending_limits(npcs, columns[6], now)
            answers = [
                answer if found == 1 else (None if found == 0 else False)
                for found, answer in zip(kind.tolist(), zip(*columns[:6], limit, strict=True), strict=True)
            ]
            rows.update(zip(keys, zip(level.tolist(), answers, room, strict=True), strict=True))
        return rows

    def _publish(self) -> None:
        """The frame's table for `answers`, with each stream whose writes may be queued: its room
        and the level of an entity it writes."""
        if not self.answers.wanted:
            return
        streams: list[int] = []
        rooms: list[int] = []
        written: list[int] = []
        if self.plain:
            handles = np.fromiter(self.plain, np.int64, len(self.plain))
            for slot, positions, npcs in self._group(handles):
                streams += handles[positions].tolist()
                rooms += slot.pool.room(npcs).tolist()
                written += [slot.pool.written_level()] * len(npcs)
        rows = self.table_rows
        self.answers.publish(list(rows), [row[0] for row in rows.values()], streams, rooms, written)

    def _new_frame(self) -> None:
        """No stream has changed since the frame's step, and no table answers yet."""
        self.touched.clear()
        self.changed.clear()
        self._drop_tables()

    def _drop_tables(self) -> None:
        """The frame's tables no longer hold (many streams changed, or one was freed)."""
        self.table_rows = {}
        self.answers.clear()

    def _events(self, now: float) -> None:
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        for slot in self.pools.values():
            drained = slot.pool.drain_events()
            if drained.kind.size:  # most frames of a crowd only refresh: nothing to map
                codes = _CODE_OF_KIND[np.asarray(drained.kind, dtype=np.int64)]
                parts.append(self._rows(slot, codes, drained.npc, drained.entity, drained.memory_type))
            forgotten = slot.pool.pop_forgotten(now)
            if forgotten.forget_time.size:
                order = np.argsort(forgotten.forget_time, kind="stable")
                codes = np.full(order.size, EVENT_FORGOTTEN, dtype=np.int32)
                npcs, entities = np.asarray(forgotten.npc)[order], np.asarray(forgotten.entity)[order]
                types = np.asarray(forgotten.memory_type)[order]
                parts.append(self._rows(slot, codes, npcs, entities, types))
        for old, npc in self.moved:  # their last events are in the rows above
            old.map_npc(npc, 0)
        self.moved.clear()
        self._drop_empty_pools()
        if not parts:
            self.log = MemoryLog()
            return
        log = MemoryLog(*(np.concatenate(columns) for columns in zip(*parts, strict=True)))
        self.log = log
        loud = np.ones(len(log), dtype=bool)
        if self.quiet:
            loud = ~np.isin(log.handle, np.fromiter(self.quiet, dtype=np.int64, count=len(self.quiet)))
        push = self.events.push
        for code, handle, entity, memory_type in zip(
            log.code[loud].tolist(), log.handle[loud].tolist(), log.entity[loud].tolist(),
            log.memory_type[loud].tolist(), strict=True,
        ):  # fmt: skip
            push(handle, _SIGNAL_OF_CODE[code], entity, memory_type)

    @staticmethod
    def _rows(
        slot: PoolSlot,
        codes: np.ndarray,
        npcs: npt.ArrayLike,
        entities: npt.ArrayLike,
        memory_types: npt.ArrayLike,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The rows with a signal and a live stream, as (code, handle, entity, memory type) arrays."""
        npcs = np.asarray(npcs, dtype=np.int64)
        known = (npcs >= 0) & (npcs < slot.handle_array.size)
        handles = np.zeros(npcs.size, dtype=np.int64)
        handles[known] = slot.handle_array[npcs[known]]
        keep = (codes >= 0) & (handles != 0)
        return (
            codes[keep].astype(np.int32),
            handles[keep],
            np.asarray(entities, dtype=np.int64)[keep],
            np.asarray(memory_types, dtype=np.int32)[keep],
        )

    def stats(self, now: float) -> dict[str, float]:
        self.flush()
        pools = [slot.pool for slot in self.pools.values()]
        return {
            "pools": float(len(pools)),
            "streams": float(len(self.entries)),
            "memories": float(sum(pool.memory_count() for pool in pools)),
        }


AWARENESS_NAMES = {int(level): level.name.lower() for level in Awareness}
