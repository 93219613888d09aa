"""Signals the server owes to its front ends, queued during the batched update and drained once a frame.

The server never calls back into an engine: it only queues `ServerEvent`s, and the front end (the Godot
singleton, or a plain Python game loop) turns each into a signal on the node that owns `handle`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class ServerEvent(NamedTuple):
    """One signal owed to the node `handle` (a tuple: a crowd's refused asks make hundreds a frame)."""

    handle: int
    signal: str
    args: tuple[Any, ...] = ()


@dataclass
class EventQueue:
    """Events in the order they happened; one drain per frame hands them all over."""

    _events: list[ServerEvent] = field(default_factory=list)

    def push(self, handle: int, signal: str, *args: Any) -> None:
        self._events.append(ServerEvent(handle, signal, args))

    def extend(self, events: list[ServerEvent]) -> None:
        """Events made in one pass (a frame's refused asks), in their order."""
        self._events.extend(events)

    def drain(self) -> list[ServerEvent]:
        events, self._events = self._events, []
        return events

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator[ServerEvent]:
        return iter(self._events)

    def discard(self, handle: int) -> None:
        """A freed node gets no more signals."""
        self._events = [event for event in self._events if event.handle != handle]
