"""The memory bank's frame cache: the per-node calls (`MemoryStream.record_event`, `awareness_of`,
`query_strongest`: `FrameCache.write`, `aware`, `recall`) without running a pool per call.

It owns three things, and nothing else changes them:
- the queue: writes queued in call order (and the wakes of recalls answered from the table),
  folded into one `record_batch` per pool when the frame steps, before the clock moves (the same
  `now`, state and events as the calls at once: the batch-equals-singles contract). A write is
  queued only when it cannot fail and reaches no other entity (`MemoryPool.writes_plainly`, valid
  arguments: the stream is then in `plain`); anything else runs at once, after every queued write.
  The engine binding queues `record_event` in C for the streams in `plain` and hands the rows over
  as bytes only (`take_raw`);
- each stream's pending state this frame: the queue positions of its writes and wakes
  (`touched`), whether it changed another way since the step (`changed`), its queued wake
  (`woken`);
- the table the step publishes: per pair read or recalled in the frame before, its awareness
  level, its recall answer and its stream's room (`table_rows`; after a frame with no recall, int64
  columns until a Python read asks a row: `LevelRows`), also handed, as columns, to a reader that
  answers reads without Python (`FrameAnswers`: the binding answers `awareness_of` in C from it).

One rule says when a row of that table, or of the pool, answers a read exactly: `answerable`.
Every read path asks it (`aware`, `recall`, `_apply_for`), and the binding applies the same rule
as data: the published room of a stream is how many of its queued writes the answers survive (each
queued write spends one; then the stream is the bank's to answer). Proven against the immediate
path by `tests/test_server_deferred.py` and, through the engine, by
`tests/test_addon_memory_differential.py`.
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from npc_mind.memory import MemoryType
from npc_mind.memory.columns import _INT64_MAX, _INT64_MIN, MAX_TIME

if TYPE_CHECKING:
    from npc_mind.server.memories import MemoryBank

# pairs the frame's awareness table holds at most (the pairs read in the frame before, those
# answered as written included)
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
# `take_raw`'s rows: the binding's queued record_event calls, 8 bytes a number in native order
_RAW_ROW = np.dtype(
    [("handle", np.int64), ("entity", np.int64), ("memory_type", np.int64), ("salience", np.float64)]
)
_RAW = struct.Struct("=qqqd")  # one `_RAW_ROW` as Python numbers
# a queued write (handle, entity, type, salience) or wake (handle, entity, WAKE, 0.0)
Queued = tuple[int, int, int, float]
# a row of the frame's table's recall answer: the memory's fields (see `FrameCache.table_rows`),
# None (nothing recalled) or False (recall at once)
TableAnswer = tuple[Any, ...] | Literal[False] | None
# a row of the frame's table: (awareness level, recall answer, room)
TableRow = tuple[int, TableAnswer, int]
_NO_PAIRS = np.zeros((0, 2), dtype=np.int64)
_NO_PAIRS.flags.writeable = False
_NO_IDS = _NO_PAIRS[:, 0]


def answerable(queued: int, room: int) -> bool:
    """Whether a stream's answers stay exact while `queued` of its writes (and wakes) wait, given
    its `room`: how many writes it takes before one could evict (capacity - working memories, at
    the step for the published table, now for a pool row).

    The invariant: between the step and the fold, a stream that changed only by its queued writes
    (plain: none refused, none reaching another entity) keeps every memory's answer but those of
    the entities written, as long as none of them can evict (queued <= room). An entity written at
    the clock's `now` has R = e^0 = 1 (`MemoryPool.written_level`); any other reads as the row or
    the table says. Past the room, the writes are applied first and the pool answers."""
    return queued <= room


def native_memory_dict(  # noqa: PLR0917 - a MemoryView's fields, in its order
    entity: int, memory_type: int, retrievability: float, stability: float, salience: float, recall_count: int
) -> dict[str, Any]:
    """The Dictionary the nodes hand GDScript for one memory, of values that are already Python
    ints and floats (the recall table's)."""
    return {
        "entity_id": entity,
        "memory_type": memory_type,
        "retrievability": retrievability,
        "stability": stability,
        "salience": salience,
        "recall_count": recall_count,
    }


class FrameAnswers:
    """Where the cache also publishes each frame's awareness table, for a reader that answers
    `aware` without calling it (the engine binding answers MemoryStream.awareness_of in C from it:
    npc_mind_godot.memory_nodes). Its answers must be the cache's: per pair the table's level; per
    stream its room (`answerable`: how many writes queued by that reader's own path, `take_raw`,
    the levels survive) and the level of an entity one of them wrote (`written`, or APPLY_FIRST:
    ask the cache). The cache closes a stream it changes any other way, and clears all when the
    table no longer holds. The default publishes nowhere."""

    wanted = False  # publish is called (the default's is not: its streams' rooms cost a batch)

    def publish(  # noqa: PLR0917 - the table's columns
        self,
        pair_streams: np.ndarray,
        pair_entities: np.ndarray,
        levels: np.ndarray,
        streams: np.ndarray,
        rooms: np.ndarray,
        written: np.ndarray,
    ) -> None:
        """The frame's table as integer arrays: per pair (stream, entity) its level; per stream
        whose writes the reader may queue, its room and written level."""

    def close(self, handle: int) -> None:
        """The stream changed other than by the reader's queued writes: the cache answers it."""

    def clear(self) -> None:
        """The table no longer holds: the cache answers every read."""

    def asked_pairs(self) -> np.ndarray:
        """The pairs the reader answered from the table since the last call (for the next table), as
        an int64 array of shape (pairs, 2), (stream, entity) per row, in call order."""
        return _NO_PAIRS


def _queues(plain: set[int], handle: Any, entity: Any, memory_type: Any, salience: Any) -> bool:
    """Whether `FrameCache.write` queues this write: a stream in `plain` and arguments that cannot
    fail (anything else runs at once, for its error)."""
    return (
        type(handle) is int
        and handle in plain
        and type(entity) is int
        and type(memory_type) is int
        and type(salience) is float
        and QUEUED_TYPE[0] <= memory_type <= QUEUED_TYPE[1]
        and QUEUED_ENTITY[0] <= entity <= QUEUED_ENTITY[1]
        and salience - salience == 0.0  # finite
    )


class FrameCache:
    """The queue, the streams' pending state and the published table of one `MemoryBank` (see
    the module docstring). The bank applies writes, answers from the pools and computes the
    batched reads; the cache decides when."""

    def __init__(self, bank: MemoryBank) -> None:
        self.bank = bank
        self.targets = bank.targets  # handle -> (pool, pool NPC id); the bank's, shared
        # queued writes (handle, entity, type, salience) and wakes (handle, entity, WAKE, 0.0) in
        # call order; queue[:done] already applied. None: a row the binding handed over as bytes
        # (`raw_rows`), read when a read needs it (`_item`)
        self.queue: list[Queued | None] = []
        self.done = 0
        # (queue position, count, bytes) of queued writes also held as `_RAW_ROW` records
        self.raw_rows: list[tuple[int, int, bytes]] = []
        # streams with a queued wake -> its queue position: a write of the stream applies it
        # first, so that in the queue not yet applied a stream's writes all come before its wakes
        self.woken: dict[int, int] = {}
        # streams with writes this frame or changed since the step -> queue positions of their
        # writes this frame (cleared when the whole queue is applied); a stream is read from the
        # table only when it is not here, or when its writes are all queued (none applied) and
        # cannot change the answer
        self.touched: dict[int, list[int]] = {}
        # queue[:indexed] have their positions in `touched`; the rest are indexed by `_index`
        # when a call reads `touched` (a frame whose reads the binding answers never pays for it)
        self.indexed = 0
        # streams changed since the step by other than their queued writes (a wake, a write at
        # once, a load): the writes are covered by their positions, which stay until the whole
        # queue is applied (the stream is then read from its row)
        self.changed: set[int] = set()
        self.plain: set[int] = set()  # streams whose writes may be queued
        self.plain_changes = 0  # counts every change of `plain` (made here only)
        # the frame's table: (stream, entity) -> (awareness level, recall answer, room) at the
        # step's now, for the pairs read or recalled in the frame before (recall answers only
        # after a frame that recalled: a game that only reads pays for the levels only). The
        # answer is (entity, type, R before the wake, S, E, k after the wake, how many writes of
        # it only refresh it), None (nothing recalled) or False (recall at once: links,
        # long-term memories, the power curve); room: how many writes the stream takes before one
        # could evict (`MemoryPool.pending_limits`)
        self.table_rows: dict[tuple[int, int], TableRow] | LevelRows = {}
        self.asked: list[tuple[int, int]] = []  # pairs read this frame
        self.answers: FrameAnswers = FrameAnswers()  # the table, published
        self.recall_asked: list[tuple[int, int]] = []  # pairs recalled this frame
        # the frame before's columns, reused while their inputs repeat (the same handle table):
        # (table version, the reader's asked pairs, streams, entities, pool groups) of its table,
        # and (plain, plain_changes, table version, streams, pool groups) of its streams in `plain`
        self._asked_before: tuple[int, np.ndarray, np.ndarray, np.ndarray, list[Any]] | None = None
        self._plain_before: tuple[int, int, int, np.ndarray, list[Any]] | None = None

    # --- the per-node path ---------------------------------------------------------------------
    # One Python frame each in the common cases (a MemoryStream method calls these directly): the
    # queue, the positions and the table are read inline, and only the pool's row is asked.
    def write(self, handle: int, entity: int, memory_type: int, salience: float) -> None:
        """`record` at the clock's now: queued when it cannot fail (see the module docstring)."""
        if _queues(self.plain, handle, entity, memory_type, salience):
            self.answers.close(handle)  # a write the reader did not see queued
            self.take_writes(((handle, entity, memory_type, salience),))
            return
        self._write_at_once(handle, entity, memory_type, salience)

    def write_many(self, rows: Sequence[Queued]) -> None:
        """`write` of every row (handle, entity, type, salience), in order, the rows it queues
        taken a run at a time (the senses' records of a frame)."""
        run: list[Queued] = []
        close = self.answers.close
        for row in rows:
            if _queues(self.plain, *row):
                close(row[0])  # a write the reader did not see queued
                run.append(row)
                continue
            if run:
                self.take_writes(run)
                run = []
            self._write_at_once(*row)
        if run:
            self.take_writes(run)

    def take_writes(self, rows: Sequence[Queued]) -> None:
        """Queue writes (handle, entity, type, salience) that `write` would queue (a stream in
        `plain`, valid arguments), in call order."""
        if not self.woken:  # the common case: appended whole (positions indexed by `_index`)
            self.queue.extend(rows)
            return
        self._take_one_by_one(rows)

    def take_raw(self, raw: bytes) -> None:
        """`take_writes` of the rows the engine binding queued for MemoryStream.record_event while
        their stream was in `plain`, as `_RAW_ROW` records: kept as bytes, which the fold reads
        as they are; a read that needs a row unpacks that row only (`_item`)."""
        queue = self.queue
        if not self.woken:
            count = len(raw) // _RAW_ROW.itemsize
            self.raw_rows.append((len(queue), count, raw))
            queue.extend(repeat(None, count))
            return
        self._take_one_by_one(list(_RAW.iter_unpack(raw)))

    def _take_one_by_one(self, rows: Sequence[Queued]) -> None:
        """Queue writes while a wake waits: a stream's queued wake is applied before its writes."""
        self._index()
        queue, touched = self.queue, self.touched  # flush empties the queue in place
        for row in rows:
            handle = row[0]
            woken = self.woken  # flush may make a new one
            if woken and handle in woken:
                self.flush(woken[handle])  # the stream's queued wake goes first
            touched.setdefault(handle, []).append(len(queue))  # the write's position
            queue.append(row)
        self.indexed = len(queue)

    def _item(self, position: int) -> Queued:
        """The queued item at `position`, unpacked (and kept) when the binding handed it as bytes."""
        item = self.queue[position]
        if item is None:
            at = bisect.bisect_right(self.raw_rows, (position, _INT64_MAX)) - 1
            start, _, raw = self.raw_rows[at]
            item = self.queue[position] = _RAW.unpack_from(raw, (position - start) * _RAW.size)
        return item

    def _index(self) -> None:
        """Put the positions of the queued items not yet indexed into `touched`, in queue order."""
        queue, touched = self.queue, self.touched
        position, end = self.indexed, len(queue)
        if not self.raw_rows:  # Python's own writes only: every item is a tuple
            for at in range(position, end):
                touched.setdefault(queue[at][0], []).append(at)  # type: ignore[index]  # no raw rows: no None
            self.indexed = end
            return
        while position < end:
            item = queue[position]
            if item is not None:
                touched.setdefault(item[0], []).append(position)
                position += 1
                continue
            # rows handed over as bytes: their handles read as one column, the rows stay packed
            at = bisect.bisect_right(self.raw_rows, (position, _INT64_MAX)) - 1
            start, count, raw = self.raw_rows[at]
            handles = np.frombuffer(raw, np.int64)[4 * (position - start) :: 4].tolist()
            for offset, handle in enumerate(handles, position):
                touched.setdefault(handle, []).append(offset)
            position = start + count
        self.indexed = end

    def _write_at_once(self, handle: int, entity: int, memory_type: int, salience: float) -> None:
        """A write not queued: a stream not yet known to write plainly (checked, then queued), or a
        call the queue does not take (bad arguments get today's errors), after the queued ones."""
        plainly = self.bank.per_frame and type(handle) is int and handle not in self.plain
        if plainly and self._may_queue(handle):
            self.write(handle, entity, memory_type, salience)
            return
        self.flush()
        self.bank.record(handle, entity, memory_type, salience, self.bank.now())
        self.touch(handle)

    def join(self, handle: int) -> None:
        """A new stream: its writes are queued from its first on, when it writes plainly already
        (else its first write checks again). Joined at its first write, that write ran at once:
        from the engine, one main-thread entry into Python per stream, each making the next frame
        run Python there, not on the update thread (`NpcMindServer._frame_apart`)."""
        if self.bank.per_frame and handle not in self.plain:
            self._may_queue(handle)

    def _may_queue(self, handle: int) -> bool:
        """Check once whether a stream not in `plain` writes plainly now (`MemoryPool.writes_plainly`)
        and put it there if so: its writes are then queued, and the reader that answers reads
        without Python answers it too (it publishes the streams in `plain` only). A stream that is
        only read joins at its first read, as one that writes does at its first write."""
        target = self.targets.get(handle)
        if target is None or not self._open or not target[0].writes_plainly(target[1]):
            return False
        self.plain.add(handle)
        self.plain_changes += 1
        return True

    def aware(self, handle: int, entity: int) -> int:
        """`awareness` at the clock's now. A stream unchanged since the step answers from the
        frame's table (the pair read in the frame before); one with queued writes (or wakes) this
        frame asks `answerable`: an entity written has R = 1, any other is as the row is, unless a
        write could evict (then they are applied first)."""
        plain = type(handle) is int and type(entity) is int  # 7.0 == 7: an odd id is never matched
        if self.indexed != len(self.queue):
            self._index()
        positions = self.touched.get(handle) if type(handle) is int else None
        if positions:  # queued writes (or wakes) of this stream this frame
            if plain:
                queue = self.queue
                written = False
                for position in positions:  # a loop, not any(generator): once per call
                    item = queue[position]
                    if (item if item is not None else self._item(position))[1] == entity:
                        written = True
                        break
                pool, npc = self.targets[handle]
                if not answerable(len(positions), pool.room(npc)):
                    self.flush(positions[-1])
                elif written:
                    level = pool.written_level()
                    if level >= 0:
                        # for the next table too: the next frame may read the pair with no write
                        self.asked.append((handle, entity))
                        return level
                    self.flush(positions[-1])
                elif handle not in self.changed:  # the row as the step left it
                    positions = None  # so the table may answer
            else:  # its error, or its answer, from the row with the writes applied
                self.flush(positions[-1])
        if plain and positions is None:
            key = (handle, entity)
            row = self.table_rows.get(key)
            if row is not None:
                self.asked.append(key)
                if handle not in self.plain:
                    self._may_queue(handle)
                return row[0]
        level = self.bank.awareness(handle, entity, self.bank.now())
        if self.bank.per_frame and plain and _INT64_MIN <= entity <= _INT64_MAX:
            self.asked.append((handle, entity))  # for the next frame's table
            if handle not in self.plain:
                self._may_queue(handle)
        return level

    def recall(self, handle: int, entity: int) -> dict[str, Any]:
        """`query_strongest` at the clock's now. From the frame's table when the pair was read or
        recalled in the frame before and the stream's memories of the entity are as the step left
        them (see below): the answer is the table's, and the wake is queued (applied in the fold,
        after the stream's writes queued before it, by the pools' recall rules). Else after this
        stream's queued writes of the entity (`_apply_for`), at once; that wake changes the stream,
        so it leaves the tables for the frame.

        The table's answer holds when, since the step, the stream's only changes are its queued
        writes (and wakes), they are `answerable` (none can evict), and those of `entity` are all
        refreshes of the memory the table names (`MemoryPool.pending_limits`, computed at the
        step's now, which is still the clock's): that memory's R is then e^0 = 1, the largest
        there is, and it was already the first of the strongest."""
        if self.indexed != len(self.queue):
            self._index()
        if type(handle) is int and type(entity) is int:
            key = (handle, entity)
            row = self.table_rows.get(key)
            # False: the table does not answer the pair
            answer: TableAnswer = False if row is None else row[1]
            positions = self.touched.get(handle) if answer is not False else None
            written = 0
            if positions:  # the table answers the pair: row is not None, answer a tuple or None
                # (until the loop below sets it False and stops)
                if handle in self.changed or not answerable(len(positions), row[2]):  # type: ignore[index]  # row is set (above)
                    answer = False
                else:
                    queue = self.queue
                    for position in positions:
                        item = queue[position]
                        if item is None:
                            item = self._item(position)
                        if item[1] == entity:
                            # a wake, another type, or more writes than only refresh the memory
                            written += 1
                            if answer is None or item[2] != answer[1] or written > answer[6]:  # type: ignore[index]  # a tuple here
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
                entity_id, memory_type, r, stability, salience, recalls, _ = answer
                r = 1.0 if written else r
                return native_memory_dict(entity_id, memory_type, r, stability, salience, recalls)
        positions = self.touched.get(handle) if type(handle) is int else None
        if positions and (type(entity) is not int or not self._apply_for(handle, entity, positions)):
            self.flush(positions[-1])
        found = self.bank.query_strongest(handle, entity, self.bank.now())
        self.touch(handle)
        if self.bank.per_frame and type(entity) is int and _INT64_MIN < entity <= _INT64_MAX:
            self.recall_asked.append((int(handle), entity))  # for the next frame's table
        return found

    def _apply_for(self, handle: int, entity: int, positions: list[int]) -> bool:
        """Before a recall of `entity`: apply this stream's queued writes of it now, ahead of the
        queue, when that is exact. When the queued writes are `answerable` (none can evict), those
        of other entities commute with the recall (they touch other memories only); a write that
        only refreshes a memory (`MemoryPool.refresh`) logs no event that could come out of order,
        and applied again in its turn it changes nothing (its memory's last access is already
        now). False at the first write of the entity that is not such a refresh: the caller then
        applies the queue in order."""
        pool, npc = self.targets[handle]
        if not answerable(len(positions), pool.room(npc)):
            return False
        done = self.done
        now = self.bank.now()
        for position in positions:
            if position >= done:
                _, written, memory_type, _ = self._item(position)
                if written == entity and (
                    memory_type == WAKE or not pool.refresh(npc, entity, memory_type, now)
                ):
                    return False
        return True

    def touch(self, handle: int) -> None:
        """The stream changed this frame: its reads no longer come from the table."""
        if self.bank.per_frame:
            self.touched.setdefault(int(handle), [])
            self.changed.add(int(handle))
            self.answers.close(int(handle))

    def replaced(self, handle: int) -> None:
        """Before a stream's memories are replaced or moved: apply the queue; the stream is read
        from its row until the next step and checked again before its writes are queued."""
        self.flush()
        self.touch(handle)
        self.plain.discard(handle)
        self.plain_changes += 1

    def forget(self, handle: int) -> None:
        """The stream is freed (its queue applied first by the caller): no read of it may answer
        from the table."""
        self.touched.pop(handle, None)
        self.changed.discard(handle)
        self.plain.discard(handle)
        self.plain_changes += 1
        self.drop_tables()

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

    def fold(self) -> None:
        """Apply the frame's queued writes, before the clock moves (at the `now` they were made).
        The frame's per-node state goes with them, not stream by stream: the step that follows
        rebuilds it, and until then every read is answered from the rows."""
        self._apply(len(self.queue))
        self._clear_queue()
        self._new_frame()

    def _apply(self, end: int) -> None:
        """Apply the queue's items from `done` up to `end` (exclusive), in call order."""
        if end <= self.done:
            return
        begin = self.done
        part = self.queue[begin:end]
        if self.raw_rows and (self.woken or end - begin < SCALAR_FLUSH) and None in part:
            part = [self._item(position) for position in range(begin, end)]  # each item is read
        self.done = end
        now = self.bank.now()
        # unpacked above when a wake waits or the part is short: a None (a row still as bytes) is
        # left only in a batch with no wake, which reads it as such below
        items: list[Queued] = part  # type: ignore[assignment]  # the checker cannot follow that
        wakes = [item for item in items if item[2] == WAKE] if self.woken else []
        if wakes:  # a stream's writes come before its wakes (`write`): writes first is their order
            items = [item for item in items if item[2] != WAKE]
            self.woken = {handle: at for handle, at in self.woken.items() if at >= end}
        if len(items) < SCALAR_FLUSH:
            targets = self.targets
            for handle, entity, memory_type, salience in items:
                pool, npc = targets[handle]
                pool.record(npc, entity, memory_type, salience, now)
        else:
            rows = self._raw_part(begin, items)
            if rows is None:
                items = [item if item is not None else self._item(at) for at, item in enumerate(items, begin)]
                rows = np.array(items, dtype=_QUEUE_ROW)  # the four columns in one conversion
            # the memory types as the pools' int8 (queued in 0..4): the kernel then records the
            # batch as it comes, with no second pass of checks
            memory_types = rows["memory_type"].astype(np.int8, copy=False)
            self.bank._record_batch(rows["handle"], rows["entity"], memory_types, rows["salience"], now)
        if wakes:
            self._wake(wakes, now)

    def _raw_part(self, begin: int, items: Sequence[Queued | None]) -> np.ndarray | None:
        """The writes `items` (queue[begin:begin + len(items)], no wake) as records: the binding's
        bytes (`raw_rows`) as they are, with the items held as tuples (written through Python, or
        unpacked by a read) in their places; None when a row's bytes lie partly outside them."""
        end = begin + len(items)
        pieces = [
            (start - begin, count, raw)
            for start, count, raw in self.raw_rows
            if begin <= start and start + count <= end
        ]
        if sum(count for _, count, _ in pieces) != items.count(None):
            return None
        if len(pieces) == 1 and pieces[0][1] == len(items):
            return np.frombuffer(pieces[0][2], dtype=_RAW_ROW)
        rows = np.empty(len(items), dtype=_RAW_ROW)
        for at, count, raw in pieces:
            rows[at : at + count] = np.frombuffer(raw, dtype=_RAW_ROW)
        held = [at for at, item in enumerate(items) if item is not None]
        if held:
            rows[held] = np.array([items[at] for at in held], dtype=_RAW_ROW)
        return rows

    def _clear_queue(self) -> None:
        self.queue.clear()
        self.done = 0
        self.indexed = 0
        self.woken.clear()
        self.raw_rows.clear()

    def _wake(self, wakes: list[Queued], now: float) -> None:
        """Apply queued wakes (recalls answered from the table) with the pools' recall rules."""
        targets = self.targets
        if len(wakes) < SCALAR_FLUSH:
            for handle, entity, _, _ in wakes:
                pool, npc = targets[handle]
                pool.recall_fields(npc, entity, now)
            return
        handles = np.array([item[0] for item in wakes], dtype=np.int64)
        entities = np.array([item[1] for item in wakes], dtype=np.int64)
        for slot, positions, npcs in self.bank._group(handles):
            slot.pool.query_strongest_batch(npcs, entities[positions], now)

    @property
    def _open(self) -> bool:
        """Writes may be queued only at a time the pools accept (their refusal comes at the call)."""
        return -MAX_TIME <= self.bank.now() <= MAX_TIME

    # --- once a frame --------------------------------------------------------------------------
    def publish_table(self, now: float) -> None:
        """The awareness of the pairs read in the frame before, at the new `now`, in one batch."""
        self._new_frame()
        if not self._open:
            self.plain.clear()  # writes at a time the pools refuse go at once, for their error
            self.plain_changes += 1
        asked, self.asked = self.asked, []
        recalled, self.recall_asked = self.recall_asked, []
        answered = self.answers.asked_pairs()
        if recalled:  # the recall answers too: per pair in Python
            answered_pairs: list[tuple[int, int]] = list(map(tuple, answered.tolist()))
            targets = self.targets
            pairs = [pair for pair in dict.fromkeys(asked + answered_pairs + recalled) if pair[0] in targets]
            pairs = pairs[:MAX_TABLE_PAIRS]
            rows = self._table(pairs, now) if pairs else {}
            if rows:
                self.table_rows = rows
            levels = np.array([row[0] for row in rows.values()], dtype=np.int64)
            self._publish(*_pair_columns(list(rows)), levels)
            return
        # a frame with no recall: the levels only (a first recall goes at once), as arrays
        streams, entities, groups = self._asked_groups(asked, answered)
        levels = self._levels(streams, entities, groups, now)
        if streams.size:
            self.table_rows = LevelRows(self, streams, entities, levels)
        self._publish(streams, entities, levels)

    def _asked_columns(
        self, asked: list[tuple[int, int]], answered: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The pairs asked (Python's reads, then the reader's) as (streams, entities) int64
        columns: each pair once, at its first read, of live streams only, at most MAX_TABLE_PAIRS."""
        if asked:
            answered = np.concatenate([np.array(asked, dtype=np.int64).reshape(-1, 2), answered])
        streams, entities = answered[:, 0], answered[:, 1]
        if streams.size > 1:
            # the first read of each pair, in read order (a stable sort keeps equal pairs in order)
            order = np.lexsort((entities, streams))
            sorted_streams, sorted_entities = streams[order], entities[order]
            first = np.empty(order.size, dtype=bool)
            first[0] = True
            np.not_equal(sorted_streams[1:], sorted_streams[:-1], out=first[1:])
            first[1:] |= sorted_entities[1:] != sorted_entities[:-1]
            if not first.all():
                kept = np.sort(order[first])
                streams, entities = streams[kept], entities[kept]
        live = self.bank.table.live(streams)
        if not live.all():
            streams, entities = streams[live], entities[live]
        # contiguous (a column of the pairs is a strided view): the memory kernel reads them as they are
        streams, entities = streams[:MAX_TABLE_PAIRS], entities[:MAX_TABLE_PAIRS]
        return np.ascontiguousarray(streams), np.ascontiguousarray(entities)

    def _asked_groups(
        self, asked: list[tuple[int, int]], answered: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, list[Any]]:
        """`_asked_columns` and the streams' pool groups; the frame before's when the reader asked
        the same pairs, Python none, and no stream was added, freed or moved since (the table's
        version): they are made of nothing else."""
        version = self.bank.table.version
        before = self._asked_before
        if not asked and before is not None and before[0] == version and np.array_equal(before[1], answered):
            return before[2], before[3], before[4]
        streams, entities = self._asked_columns(asked, answered)
        groups = self.bank._group(streams) if streams.size else []
        kept = answered if not answered.flags.writeable else answered.copy()
        self._asked_before = None if asked else (version, kept, streams, entities, groups)
        return streams, entities, groups

    def _levels(self, streams: np.ndarray, entities: np.ndarray, groups: list[Any], now: float) -> np.ndarray:
        """The awareness level (int64) of each pair of live streams at `now`, in one batch per pool
        (`groups`: the streams' `MemoryBank._group`)."""
        if not streams.size:
            return _NO_IDS
        return self.bank._awareness_of_groups(groups, entities, now, np.int64)

    def _table(self, pairs: list[tuple[int, int]], now: float) -> dict[tuple[int, int], TableRow]:
        """The table's rows of `pairs` at `now` after a frame that recalled: levels and recall answers."""
        handles = np.array([pair[0] for pair in pairs], np.int64)
        entities = np.array([pair[1] for pair in pairs], np.int64)
        groups = self.bank._group(handles)
        rows: dict[tuple[int, int], TableRow] = {}
        for slot, positions, npcs in groups:
            keys = pairs if len(groups) == 1 else [pairs[position] for position in positions.tolist()]
            level, kind, columns = slot.pool.recall_preview(npcs, entities[positions], now)
            room, limit = slot.pool.pending_limits(npcs, columns[6], now)
            answers: list[TableAnswer] = [
                answer if found == 1 else (None if found == 0 else False)
                for found, answer in zip(kind.tolist(), zip(*columns[:6], limit, strict=True), strict=True)
            ]
            rows.update(zip(keys, zip(level.tolist(), answers, room, strict=True), strict=True))
        return rows

    def _publish(self, pair_streams: np.ndarray, pair_entities: np.ndarray, levels: np.ndarray) -> None:
        """The frame's table for `answers`, with each stream whose writes may be queued: its room
        (the `answerable` rule as data) and the level of an entity it writes."""
        if not self.answers.wanted:
            return
        streams, rooms, written = _NO_IDS, _NO_IDS, _NO_IDS
        if self.plain:
            handles, groups = self._plain_groups()
            parts = [
                (handles[positions], pool.room(npcs), np.full(npcs.size, pool.written_level(), np.int64))
                for pool, positions, npcs in ((slot.pool, *group) for slot, *group in groups)
            ]  # fmt: skip
            if len(parts) == 1:
                streams, rooms, written = parts[0]
            elif parts:
                streams, rooms, written = (np.concatenate(column) for column in zip(*parts, strict=True))
        self.answers.publish(pair_streams, pair_entities, levels, streams, rooms, written)

    def _plain_groups(self) -> tuple[np.ndarray, list[Any]]:
        """The streams in `plain` (int64) and their pool groups; the frame before's while neither
        `plain` nor the handle table changed."""
        key = (id(self.plain), self.plain_changes, self.bank.table.version)
        before = self._plain_before
        if before is not None and before[:3] == key:
            return before[3], before[4]
        handles = np.fromiter(self.plain, np.int64, len(self.plain))
        groups = self.bank._group(handles)
        self._plain_before = (*key, handles, groups)
        return handles, groups

    def _new_frame(self) -> None:
        """No stream has changed since the frame's step, and no table answers yet."""
        self.touched.clear()
        self.changed.clear()
        self.drop_tables()

    def drop_tables(self) -> None:
        """The frame's tables no longer hold (many streams changed, or one was freed)."""
        self.table_rows = {}
        self.answers.clear()


def _pair_columns(pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(stream, entity) pairs as two int64 columns."""
    if not pairs:
        return _NO_IDS, _NO_IDS
    columns = np.array(pairs, dtype=np.int64)
    return columns[:, 0], columns[:, 1]


class LevelRows:
    """The frame's table of a frame with no recall, as the step computed it (int64 columns of
    streams, entities and levels) until a Python read asks it for a row: it then becomes the
    cache's `table_rows` dict (level, no recall answer, room 0), once. The reader that answers
    reads without Python is handed the columns as they are, so a frame whose reads it answers
    makes no Python object per pair."""

    __slots__ = ("cache", "entities", "levels", "streams")

    def __init__(
        self, cache: FrameCache, streams: np.ndarray, entities: np.ndarray, levels: np.ndarray
    ) -> None:
        self.cache, self.streams, self.entities, self.levels = cache, streams, entities, levels

    def get(self, key: tuple[int, int]) -> TableRow | None:
        keys = zip(self.streams.tolist(), self.entities.tolist(), strict=True)
        no_answer: TableAnswer = False
        rows: dict[tuple[int, int], TableRow] = dict(
            zip(keys, zip(self.levels.tolist(), repeat(no_answer), repeat(0)), strict=True)
        )
        if self.cache.table_rows is self:
            self.cache.table_rows = rows
        return rows.get(key)
