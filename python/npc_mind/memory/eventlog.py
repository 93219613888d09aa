"""`EventLog`: the formed / rehearsed / recalled / evicted / promoted rows a pool collects for
`MemoryPool.drain_events()` (with `MemoryPool(events=True)`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from npc_mind.memory.types import EventKind, MemoryEvents

#: one logged entry: (kind, npcs, entities, memory types), arrays from the batch paths (kind an
#: int, or an int8 array once `order_since` has merged entries), ints from the scalar ones
Entry = tuple[Any, Any, Any, Any]


class EventLog:
    """The events collected since the last drain. The scalar paths append `(kind, npc, entity,
    memory_type)` ints to `entries` themselves (one tuple, no call); the batch paths `log` arrays."""

    __slots__ = ("enabled", "entries", "positions")

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.entries: list[Entry] = []
        #: while a `record_batch` runs with events on: the input positions of each entry's events
        self.positions: list[Any] | None = None

    def log(
        self,
        kind: EventKind,
        npcs: np.ndarray,
        entities: np.ndarray,
        memory_types: np.ndarray,
        at: np.ndarray | None = None,
    ) -> None:
        """Log events; `at`: their positions in the running `record_batch`'s input (see `order_since`)."""
        if npcs.shape[0]:
            self.entries.append(
                (
                    int(kind),
                    np.array(npcs, dtype=np.int64),
                    np.array(entities, dtype=np.int64),
                    np.array(memory_types, dtype=np.int8),
                )
            )
            if self.positions is not None:
                self.positions.append(np.asarray(at, dtype=np.int64))

    def order_since(self, start: int) -> None:
        """Put the events a `record_batch` logged since `entries[start]` in its input order, as the
        same single calls log them: rounds log each kind together (all rehearsals of a round, then
        its evictions, then its formations), the singles one event after the other. `positions`
        holds each entry's input positions; a stable sort keeps an eviction before the formation
        that caused it."""
        entries, positions = self.entries[start:], self.positions
        self.positions = None
        if len(entries) < 2 or positions is None:
            return
        kinds = np.concatenate(
            [np.full(np.size(e[1]), e[0], dtype=np.int8) for e in entries]  # ints (a single) or arrays
        )
        columns = [np.concatenate([np.atleast_1d(e[i]) for e in entries]) for i in (1, 2, 3)]
        order = np.argsort(np.concatenate([np.atleast_1d(a) for a in positions]), kind="stable")
        del self.entries[start:]
        npcs, entities, memory_types = (column[order] for column in columns)
        self.entries.append((kinds[order], npcs, entities, memory_types.astype(np.int8)))

    def drain(self) -> MemoryEvents:
        """Every event logged since the last drain, as columns, and an empty log."""
        entries, self.entries = self.entries, []
        if not entries:
            return MemoryEvents(
                np.empty(0, np.int8), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int8)
            )
        parts: list[tuple[np.ndarray, ...]] = []
        singles: list[Entry] = []
        for e in entries:
            if type(e[1]) is int:
                singles.append(e)
                continue
            if singles:
                parts.append(_single_columns(singles))
                singles = []
            kinds = e[0] if type(e[0]) is np.ndarray else np.full(e[1].shape[0], e[0], dtype=np.int8)
            parts.append((kinds, e[1], e[2], e[3]))
        if singles:
            parts.append(_single_columns(singles))
        return MemoryEvents(*(np.concatenate([part[i] for part in parts]) for i in range(4)))


def _single_columns(singles: list[Entry]) -> tuple[np.ndarray, ...]:
    """The scalar paths' int entries as columns."""
    kinds, npcs, entities, memory_types = zip(*singles, strict=True)
    return (
        np.array(kinds, dtype=np.int8),
        np.array(npcs, dtype=np.int64),
        np.array(entities, dtype=np.int64),
        np.array(memory_types, dtype=np.int8),
    )
