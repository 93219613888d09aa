"""`PoolState`: everything a `MemoryPool` holds, in one typed object with full names.

The pool's collaborators (`ScalarPaths`, `Recorder`, `Recaller`, the eviction keys, the rounds,
consolidation, persistence through the pool's state methods) each receive this one object and read
or change its fields; none keeps state of its own, so what the pool is at any moment is exactly
these fields. The columns follow `columns.SLOT_COLUMNS` / `ROW_COLUMNS` (one field per column,
plus `<name>_flat` for the per-slot ones); its methods are the storage operations (growth, moving a
row, clearing slots, scratch buffers) and the checks of NPC ids, which need the id table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from npc_mind.memory.checks import int64_array
from npc_mind.memory.columns import _NARROW_ROUND, ROW_COLUMNS, SLOT_COLUMNS
from npc_mind.memory.eventlog import EventLog
from npc_mind.memory.longterm import LongTermStore
from npc_mind.memory.params import MemoryParams
from npc_mind.memory.rules import awareness_level
from npc_mind.memory.types import UnknownNpcError


@dataclass(slots=True, eq=False)
class PoolState:
    """The columns, counters and caches of one `MemoryPool` (see the module docstring).

    Working memories: one row per live NPC (rows 0..npc_count-1, `allocated_rows` allocated),
    `capacity` slots per row. An empty slot holds last access -inf and stability 1, so every curve
    gives it R = 0 without a validity mask."""

    params: MemoryParams
    capacity: int
    events: EventLog
    npc_count: int = 0
    allocated_rows: int = 0
    #: the id the next `add_npc` returns (ids are never reused)
    next_id: int = 0
    #: NPC id -> its row (-1: removed), grown by doubling
    row_of_id: np.ndarray = field(default_factory=lambda: np.full(16, -1, dtype=np.int64))
    #: the `now` of the latest call (the default time of `save` and `export_npc`)
    clock: float = 0.0
    #: the latest last-access time ever written: now >= it means no clamping is needed
    latest_access: float = -np.inf
    #: npc -> (entity, type or -1) -> the (entity, type or -1) keys linked to it
    links: dict[int, dict[tuple[int, int], set[tuple[int, int]]]] = field(default_factory=dict)
    longterm: LongTermStore = field(default_factory=LongTermStore)
    #: per-slot tag sets (object array of frozenset or None), made on the first tagged memory
    tags: np.ndarray | None = None
    #: reusable buffers by name (`scratch_buffer`), and "K": a batch's eviction keys by row
    scratch: dict[str, np.ndarray] = field(default_factory=dict)
    #: the last rows `split_rounds` found strictly increasing (a query round then reads slices)
    increasing_rows: np.ndarray | None = None
    #: batches left before `Recorder`'s refresh-only pass is tried again
    refresh_pass_rests: int = 0
    #: rounds narrower than this run their events one by one on the scalar paths (a test sets 0
    #: to make every round vectorised)
    narrow_round: int = _NARROW_ROUND
    # derived from `params` (set in __post_init__)
    base_stability: np.ndarray = field(init=False)  # per MemoryType, seconds
    forget_factor: float = field(init=False)
    #: the thresholds of `awareness_level` (forget, search, pursue)
    level_bounds: tuple[float, float, float] = field(init=False)
    level_at_one: int = field(init=False)  # the level of a memory accessed now (R = 1)
    is_exponential: bool = field(init=False)
    query_exponents: np.ndarray = field(init=False)  # the scalar query's candidate exponents, then R
    row_mark: np.ndarray = field(init=False)  # per row: scratch marks of the rounds
    # per-slot columns (SLOT_COLUMNS), shape (allocated_rows, capacity), and their flat views
    entity: np.ndarray = field(init=False)
    entity_hash: np.ndarray = field(init=False)
    memory_type: np.ndarray = field(init=False)
    last_access: np.ndarray = field(init=False)
    stability: np.ndarray = field(init=False)
    salience: np.ndarray = field(init=False)
    recall_count: np.ndarray = field(init=False)
    pinned: np.ndarray = field(init=False)
    forget_reported: np.ndarray = field(init=False)
    entity_flat: np.ndarray = field(init=False)
    entity_hash_flat: np.ndarray = field(init=False)
    memory_type_flat: np.ndarray = field(init=False)
    last_access_flat: np.ndarray = field(init=False)
    stability_flat: np.ndarray = field(init=False)
    salience_flat: np.ndarray = field(init=False)
    recall_count_flat: np.ndarray = field(init=False)
    pinned_flat: np.ndarray = field(init=False)
    forget_reported_flat: np.ndarray = field(init=False)
    # per-row columns (ROW_COLUMNS), shape (allocated_rows,)
    npc_of_row: np.ndarray = field(init=False)
    used_slots: np.ndarray = field(init=False)
    pinned_slots: np.ndarray = field(init=False)
    longterm_count: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        p = self.params
        self.base_stability = np.asarray(p.base_stability, dtype=np.float64)
        self.forget_factor = p.forget_factor
        self.level_bounds = (p.forget_threshold, p.awareness_search, p.awareness_pursue)
        self.level_at_one = int(awareness_level(1.0, *self.level_bounds))
        self.is_exponential = p.curve == "exponential"
        self.query_exponents = np.empty(self.capacity)

    # ---------------------------------------------------------------------------------------------
    # storage
    def grow(self, rows: int) -> None:
        """Allocate `rows` rows of every column, keeping the live rows' values."""
        cap, old, n = self.capacity, self.allocated_rows, self.npc_count
        for columns, shape in ((SLOT_COLUMNS, (rows, cap)), (ROW_COLUMNS, (rows,))):
            for col in columns:
                arr = np.full(shape, col.empty, dtype=col.dtype)
                if old:
                    arr[:n] = getattr(self, col.name)[:n]
                setattr(self, col.name, arr)
        if self.tags is not None:
            tags = np.full((rows, cap), None, dtype=object)
            tags[:n] = self.tags[:n]
            self.tags = tags
        self.row_mark = np.zeros(rows, dtype=np.int64)
        self.scratch.pop("K", None)
        self.allocated_rows = rows
        for col in SLOT_COLUMNS:
            setattr(self, f"{col.name}_flat", getattr(self, col.name).reshape(-1))

    def move_row(self, src: int, dst: int) -> None:
        """Copy row `src` of every column (and its tags) into row `dst`."""
        for col in (*SLOT_COLUMNS, *ROW_COLUMNS):
            arr = getattr(self, col.name)
            arr[dst] = arr[src]
        if self.tags is not None:
            self.tags[dst] = self.tags[src]

    def clear_slots(self, flat_slots: np.ndarray) -> None:
        """Empty the working slots at `flat_slots` (every column back to its empty value)."""
        for col in SLOT_COLUMNS:
            getattr(self, f"{col.name}_flat")[flat_slots] = col.empty
        if self.tags is not None:
            self.tags.reshape(-1)[flat_slots] = None

    def ensure_tags(self) -> np.ndarray:
        """The per-slot tag column, made on first use."""
        if self.tags is None:
            self.tags = np.full((self.allocated_rows, self.capacity), None, dtype=object)
        return self.tags

    def scratch_buffer(self, name: str, size: int, dtype: Any) -> np.ndarray:
        """A reusable buffer of at least `size` entries (its first `size`), kept by `name`."""
        buf = self.scratch.get(name)
        if buf is None or buf.shape[0] < size:
            buf = np.empty(max(size, 1024), dtype=dtype)
            self.scratch[name] = buf
        return buf[:size]

    def mark_accessed(self, flat_slots: Any, now: float) -> None:
        """Memories at `flat_slots` (an index, or an array of them) were accessed at `now`: a
        refresh, a rehearsal, a wake. Their forgetting is reported again when it comes."""
        self.last_access_flat[flat_slots] = now
        self.forget_reported_flat[flat_slots] = False

    def entity_slots(
        self,
        selection: slice | np.ndarray,
        rows: np.ndarray,
        hashes: np.ndarray,
        entities: np.ndarray,
        buffer: str,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The working slots holding each event's entity (any type): (event positions, flat slots),
        by event. Event i looks in row `rows[i]` (`selection`: the same rows, or their `_selector`
        slice); `hashes`: `entity_hash(entities)`, compared across the rows first, then the full id
        of each candidate. `buffer`: the scratch buffer's name (one per caller that may nest)."""
        cap = self.capacity
        eq = self.scratch_buffer(buffer, rows.shape[0] * cap, bool).reshape(rows.shape[0], cap)
        np.equal(self.entity_hash[selection], hashes[:, None], out=eq)
        nz = np.flatnonzero(eq)
        events = nz // cap
        if isinstance(selection, slice):
            flat = nz + selection.start * cap
        else:
            flat = rows[events] * cap + (nz - events * cap)
        same = self.entity_flat[flat] == entities[events]
        if not same.all():
            events, flat = events[same], flat[same]
        return events, flat

    # ---------------------------------------------------------------------------------------------
    # NPC ids
    def row_of(self, npc: Any) -> int:
        """The row of NPC id `npc`; a clear error for a non-integer, never added or removed id."""
        if isinstance(npc, bool) or not isinstance(npc, int | np.integer):
            raise TypeError(f"npc id must be an integer, got {npc!r}")
        npc = int(npc)
        if not 0 <= npc < self.next_id:
            raise UnknownNpcError(f"unknown npc id {npc}: it was never added to this pool")
        row = int(self.row_of_id[npc])
        if row < 0:
            raise UnknownNpcError(f"npc id {npc} was removed from this pool")
        return row

    def rows_of(self, npcs: Any) -> tuple[np.ndarray, np.ndarray]:
        """(ids, rows) of many NPC ids, checked as `row_of` checks one."""
        ids = int64_array(npcs, "npc ids")
        if ids.shape[0]:
            lo, hi = int(ids.min()), int(ids.max())
            if lo < 0 or hi >= self.next_id:
                bad = lo if lo < 0 else hi
                raise UnknownNpcError(f"unknown npc id {bad}: it was never added to this pool")
            rows = self.row_of_id[ids]
            if int(rows.min()) < 0:
                bad = int(ids[np.argmin(rows)])
                raise UnknownNpcError(f"npc id {bad} was removed from this pool")
        else:
            rows = ids
        return ids, rows
