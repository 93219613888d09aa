"""Handles: one integer per registered front end (a MemoryStream, UtilitySelector or AsyncLLMDecision).

Handles are never reused, so a late event for a freed node can never reach a new one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownHandleError(KeyError):
    """A handle that was never registered, or was already removed."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown handle"


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
