"""Handles: one integer per registered front end (a MemoryStream, UtilitySelector or AsyncLLMDecision).

A handle is a slot and that slot's generation: `generation << SLOT_BITS | slot`. A freed slot is
reused under the next generation, so the tables indexed by slot are sized to the most handles live
at once, not to every handle ever issued (a game that spawns and frees NPCs for hours stays the same
size). A slot freed in a frame is reused only after that frame's update, so a stale id (an NPC freed
this frame, its id still in the game's packed array) never reaches the node spawned in the same
frame; and as a stale id's slot holds another generation, it is skipped in later frames too, until
that slot's generation wraps (2,048 reuses of that one slot, each at least a frame apart and behind
every other free slot). Handles fit a PackedInt32Array (the batched calls' ids): 0 < handle < 2**31.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

T = TypeVar("T")


class UnknownHandleError(KeyError):
    """A handle that was never registered, or was already removed."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown handle"


SLOT_BITS = 20  # at most 2**20 - 1 handles live at once (slot 0 is never issued: handle 0 is "none")
SLOT_MASK = (1 << SLOT_BITS) - 1
GENERATIONS = 1 << (31 - SLOT_BITS)  # the generation wraps here, so a handle stays below 2**31


def slot_of(handle: int) -> int:
    return handle & SLOT_MASK


def handle_array(handles: Any) -> np.ndarray:
    """Handles as a one-dimensional int64 array: the same array when it is one (so that the groups
    `HandleTable.groups` keeps for a read-only array are found again)."""
    found = np.asarray(handles, dtype=np.int64)
    return found if found.ndim == 1 else found.ravel()


class TooManyHandlesError(RuntimeError):
    """More front ends live at once than a handle can number (2**20 - 1)."""


@dataclass
class HandleCounter:
    """Shared by all registries of one server so handles are unique across kinds (and a slot is
    used by one kind at a time: every kind's table is sized to the live handles of all kinds)."""

    next_slot: int = 1
    generation: list[int] = field(default_factory=lambda: [0])  # per slot, of its current handle
    free: deque[int] = field(default_factory=deque)  # freed slots, the longest-freed reused first
    freed: list[int] = field(default_factory=list)  # freed since the last update: not reused yet

    def take(self) -> int:
        if self.free:
            slot = self.free.popleft()
        else:
            slot = self.next_slot
            if slot > SLOT_MASK:
                raise TooManyHandlesError(f"{SLOT_MASK} handles are live; free some before adding more")
            self.next_slot += 1
            self.generation.append(0)
        return self.generation[slot] << SLOT_BITS | slot

    def release(self, handle: int) -> None:
        """`handle` is freed: after the next `settle`, a `take` reuses its slot under the next generation."""
        slot = slot_of(handle)
        self.generation[slot] = (self.generation[slot] + 1) % GENERATIONS
        self.freed.append(slot)

    def settle(self) -> None:
        """The frame's update is done: the slots freed before it may be reused."""
        if self.freed:
            self.free.extend(self.freed)
            self.freed.clear()


@dataclass
class Registry(Generic[T]):
    kind: str
    counter: HandleCounter
    entries: dict[int, T] = field(default_factory=dict)

    def add(self, entry: T) -> int:
        handle = self.counter.take()
        self.entries[handle] = entry
        return handle

    def get(self, handle: int) -> T:
        try:
            return self.entries[int(handle)]
        except KeyError:
            message = f"no {self.kind} with handle {handle} (never added, or removed)"
            raise UnknownHandleError(message) from None

    def pop(self, handle: int) -> T:
        entry = self.get(handle)
        del self.entries[int(handle)]
        self.counter.release(int(handle))
        return entry

    def __contains__(self, handle: object) -> bool:
        return handle in self.entries

    def __len__(self) -> int:
        return len(self.entries)


_KEPT_GROUPS = 32  # read-only arrays whose groups a table keeps (all let go when more come)


def _grown(array: np.ndarray, size: int, fill: int) -> np.ndarray:
    return np.concatenate([array, np.full(size - array.size, fill, dtype=array.dtype)])


@dataclass
class HandleTable:
    """handle -> (owner index, row) as numpy arrays indexed by the handle's slot, so batched calls
    map thousands of handles at once instead of one dictionary lookup per row. Each slot keeps the
    handle that holds it: a stale handle (its slot freed, maybe reused) finds another value there."""

    kind: str
    handle: np.ndarray = field(default_factory=lambda: np.zeros(64, dtype=np.int64))  # 0: free
    owner: np.ndarray = field(default_factory=lambda: np.full(64, -1, dtype=np.int64))
    row: np.ndarray = field(default_factory=lambda: np.full(64, -1, dtype=np.int64))
    skipped: int = 0  # batched rows left out for a stale or unknown handle, ever
    version: int = 0  # counts sets and clears: `groups` and `live` of the same handles hold until it moves
    # the groups of read-only handle arrays (a caller's per-frame plan), by id: (handles, version,
    # groups, rows skipped), while the version holds
    _kept: dict[int, tuple[np.ndarray, int, list[tuple[int, np.ndarray, np.ndarray]], int]] = field(
        default_factory=dict, repr=False
    )

    def set(self, handle: int, owner: int, row: int) -> None:
        slot = slot_of(handle)
        if slot >= self.owner.size:
            size = max(slot + 1, 2 * self.owner.size)
            self.handle = _grown(self.handle, size, 0)
            self.owner = _grown(self.owner, size, -1)
            self.row = _grown(self.row, size, -1)
        self.handle[slot] = handle
        self.owner[slot] = owner
        self.row[slot] = row
        self.version += 1

    def clear(self, handle: int) -> None:
        slot = slot_of(handle)
        if slot < self.handle.size and self.handle[slot] == handle:
            self.handle[slot] = 0
            self.owner[slot] = -1
            self.row[slot] = -1
            self.version += 1

    def _owners(self, handles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(slot, owner or -1) of each handle."""
        # A negative or too large handle lands on a slot holding another value (or none), as does a
        # slot past the table's end clamped to its last one: only a live handle finds itself.
        slots = np.minimum(handles & SLOT_MASK, self.owner.size - 1)
        return slots, np.where(self.handle[slots] == handles, self.owner[slots], -1)

    def live(self, handles: np.ndarray) -> np.ndarray:
        """Which handles (int64) are held now, as `groups` finds them (nothing is counted)."""
        return self._owners(handles)[1] >= 0

    def groups(self, handles: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(owner, positions into `handles`, rows) per distinct owner, input order kept within each.

        A stale or unknown handle (an NPC freed this frame whose id is still in the game's array) is
        left out, never fails the others' rows: batched writes skip its row, batched reads answer
        for it as for an NPC that knows nothing. Such rows are counted in `skipped`.

        A read-only array's groups are kept while the table's version holds: a plan that passes the
        same array each frame pays for them once (they are read-only too).
        """
        kept = self._kept.get(id(handles))
        if kept is not None and kept[0] is handles and kept[1] == self.version:
            self.skipped += kept[3]
            return kept[2]
        slots, owners = self._owners(handles)
        skipped = 0
        if owners.size and owners[0] >= 0 and (owners == owners[0]).all():  # the common case
            found = [(int(owners[0]), np.arange(owners.size), self.row[slots])]
        else:
            known = owners >= 0
            skipped = int(owners.size - np.count_nonzero(known))
            found = []
            for owner in np.unique(owners[known]).tolist():
                positions = np.flatnonzero(owners == owner)
                found.append((owner, positions, self.row[slots[positions]]))
        self.skipped += skipped
        if not handles.flags.writeable:
            if len(self._kept) >= _KEPT_GROUPS:
                self._kept.clear()
            for _, positions, rows in found:
                positions.flags.writeable = rows.flags.writeable = False
            self._kept[id(handles)] = (handles, self.version, found, skipped)
        return found
