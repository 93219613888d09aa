"""Handles: one integer per registered front end (a MemoryStream, UtilitySelector or AsyncLLMDecision).

Handles are never reused, so a late event for a freed node can never reach a new one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

T = TypeVar("T")


class UnknownHandleError(KeyError):
    """A handle that was never registered, or was already removed."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown handle"


class WrongThreadError(RuntimeError):
    """A server call from a thread other than the one that owns the server (nothing was changed)."""


@dataclass
class HandleCounter:
    """Shared by all registries of one server so handles are unique across kinds."""

    next_handle: int = 1

    def take(self) -> int:
        handle = self.next_handle
        self.next_handle += 1
        return handle


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
        return entry

    def __contains__(self, handle: object) -> bool:
        return handle in self.entries

    def __len__(self) -> int:
        return len(self.entries)


@dataclass
class HandleTable:
    """handle -> (owner index, row) as numpy arrays, so batched calls map thousands of handles at once
    instead of one dictionary lookup per row."""

    kind: str
    owner: np.ndarray = field(default_factory=lambda: np.full(64, -1, dtype=np.int64))
    row: np.ndarray = field(default_factory=lambda: np.full(64, -1, dtype=np.int64))
    skipped: int = 0  # batched rows left out for a stale or unknown handle, ever

    def set(self, handle: int, owner: int, row: int) -> None:
        if handle >= self.owner.size:
            size = max(handle + 1, 2 * self.owner.size)
            self.owner = np.concatenate([self.owner, np.full(size - self.owner.size, -1, dtype=np.int64)])
            self.row = np.concatenate([self.row, np.full(size - self.row.size, -1, dtype=np.int64)])
        self.owner[handle] = owner
        self.row[handle] = row

    def clear(self, handle: int) -> None:
        self.owner[handle] = -1
        self.row[handle] = -1

    def groups(self, handles: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(owner, positions into `handles`, rows) per distinct owner, input order kept within each.

        A stale or unknown handle (an NPC freed this frame whose id is still in the game's array) is
        left out, never fails the others' rows: batched writes skip its row, batched reads answer
        for it as for an NPC that knows nothing. Such rows are counted in `skipped`.
        """
        inside = (handles >= 0) & (handles < self.owner.size)
        owners = np.full(handles.shape, -1, dtype=np.int64)
        owners[inside] = self.owner[handles[inside]]
        if owners.size and owners[0] >= 0 and (owners == owners[0]).all():  # the common case
            return [(int(owners[0]), np.arange(owners.size), self.row[handles])]
        known = owners >= 0
        self.skipped += int(owners.size - np.count_nonzero(known))
        found = []
        for owner in np.unique(owners[known]).tolist():
            positions = np.flatnonzero(owners == owner)
            found.append((owner, positions, self.row[handles[positions]]))
        return found
