"""Memory streams behind the server: one `MemoryPool` per distinct profile (capacity + params), one
pool NPC per stream. Signals come from the pools' own batched bookkeeping once a frame: formed,
rehearsed and evicted from `drain_events`, forgotten from `pop_forgotten` (each memory exactly once,
at its analytic forget time, however often the frame runs).

The per-node calls (`MemoryBank.write`, `aware`, `recall`: a MemoryStream's `record_event`,
`awareness_of`, `query_strongest`) do not each run the pool's scalar path: the bank's frame cache
(`npc_mind.server.frame_cache`) queues the writes and answers reads and recalls from one table the
step computes in one batch, exact by construction (proven against the immediate path by
`tests/test_server_deferred.py`). Every other call that reads or changes memories applies the
whole queue first, and one that changes many streams or frees one also drops the table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from npc_mind.memory import MAX_CAPACITY, Awareness, MemoryParams, MemoryPool, MemoryView
from npc_mind.memory.checks import checked_memory_types, checked_saliences, int64_array
from npc_mind.memory.types import EventKind
from npc_mind.server.events import EventQueue
from npc_mind.server.frame_cache import FrameCache, native_memory_dict
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
    # --- the per-node path: its frame cache (module docstring); per_frame off: every call at once
    now: Callable[[], float] = lambda: 0.0  # the server clock's
    per_frame: bool = True
    cache: FrameCache = field(init=False)

    def __post_init__(self) -> None:
        self.entries = Registry("memory stream", self.counter)
        self.cache = FrameCache(self)

    # The per-node calls are the frame cache's own (one Python frame each: `MindServer.record`
    # and the nodes call them directly).
    @property
    def write(self) -> Callable[[int, int, int, float], None]:
        return self.cache.write

    @property
    def write_many(self) -> Callable[[Sequence[tuple[int, int, int, float]]], None]:
        return self.cache.write_many

    @property
    def aware(self) -> Callable[[int, int], int]:
        return self.cache.aware

    @property
    def recall(self) -> Callable[[int, int], dict[str, Any]]:
        return self.cache.recall

    def flush(self) -> None:
        """Apply the queued writes (a caller reading the pools directly)."""
        self.cache.flush()

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
        self.cache.replaced(int(handle))
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
        self.cache.forget(int(handle))  # no read of a freed stream may answer from the table
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
        self.cache.replaced(int(handle))
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
        handles = int64_array(handles if np.ndim(handles) == 1 else np.ravel(handles), "handles")
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
        self.cache.drop_tables()  # many streams change
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
        return self._awareness_of_groups(self._group(handles), entities, now, np.int32)

    @staticmethod
    def _awareness_of_groups(
        groups: list[tuple[PoolSlot, np.ndarray, np.ndarray]], entities: np.ndarray, now: float, dtype: Any
    ) -> np.ndarray:
        """The awareness level of each pair, in one batch per pool (`groups`: `_group` of the pairs'
        handles, made by the caller, who may keep it); 0 for a pair of no live stream."""
        if len(groups) == 1 and groups[0][1].size == entities.size:  # one pool, every pair: input order
            slot, _, npcs = groups[0]
            return slot.pool.awareness_batch(npcs, entities, now).astype(dtype, copy=False)
        out = np.zeros(entities.size, dtype=dtype)
        for slot, positions, npcs in groups:
            out[positions] = slot.pool.awareness_batch(npcs, entities[positions], now)
        return out

    def query_strongest_batch(
        self, handles: npt.ArrayLike, entities: npt.ArrayLike, now: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """(R before the wake, memory type or -1) per query; each hit wakes its memory."""
        handles, entities = self._pairs("query_strongest_batch", handles, entities)
        self.flush()
        self.cache.drop_tables()  # the wakes change many streams
        strength = np.zeros(entities.size, dtype=np.float32)
        kinds = np.full(entities.size, -1, dtype=np.int32)
        for slot, positions, npcs in self._group(handles):
            result = slot.pool.query_strongest_batch(npcs, entities[positions], now)
            found = np.asarray(result.found, dtype=bool)
            strength[positions] = np.where(found, result.retrievability, 0.0)
            kinds[positions] = np.where(found, result.memory_type, -1)
        return strength, kinds

    def claim(self, thread: int | None = None) -> None:
        """Make the calling thread (or `thread`) every pool's owner (`MemoryPool.claim`): the thread
        that runs the step's rest (`MindServer.begin_step`), then the server's own again."""
        for slot in self.pools.values():
            slot.pool.claim(thread)

    # --- once a frame --------------------------------------------------------------------------
    def fold(self) -> None:
        """Apply the frame's queued writes, before the clock moves (at the `now` they were made).
        The frame's per-node state goes with them, not stream by stream: the step that follows
        rebuilds it, and until then every read is answered from the rows."""
        self.cache.fold()

    def step(self, now: float) -> None:
        """Log every pool's events (formed / rehearsed / evicted as they happened, then forgotten) for
        the batched read, queue them as signals for every stream that has signals on, and compute
        the frame's awareness table at `now`."""
        self.flush()
        self._events(now)
        self.cache.publish_table(now)

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
