"""Where and when each NPC last perceived each entity: the facts a sense writes beside a memory.

A memory says how strongly an NPC remembers someone (R); a sighting says where that someone was
when last perceived, and when. The no-code inputs read them ("distance to the target's last known
position", "seconds since seen") and a move action walks to them. A sighting does not fade: the
memory's R decides whether the NPC still cares. Each stream keeps its most recent
`MAX_SIGHTINGS_PER_STREAM` entities; an older one is dropped when a new entity is noted.
Positions are 2 or 3 finite floats, as the sense's world has them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

MAX_SIGHTINGS_PER_STREAM = 256  # bounded: a crowd seen by one guard keeps its latest 256 entities


class Sighting(tuple[tuple[float, ...], float]):
    """(position, time seen on the server's clock)."""

    __slots__ = ()

    @property
    def position(self) -> tuple[float, ...]:
        return self[0]

    @property
    def seen_at(self) -> float:
        return self[1]


class Sightings:
    """Every stream's sightings, keyed by the stream's server handle (owned by `MindServer`)."""

    def __init__(self) -> None:
        self._by_stream: dict[int, dict[int, Sighting]] = {}

    def note(self, handle: int, entity: int, position: Sequence[float], now: float) -> None:
        """The entity was perceived at `position` at `now` (the newest sighting wins)."""
        self.note_many([(handle, entity, tuple(float(value) for value in position))], now)

    def note_many(self, rows: Iterable[tuple[int, int, tuple[float, ...]]], now: float) -> None:
        """`note` of many (stream, entity, position) rows, in order, at `now`: each position a
        tuple of floats (a sense's, read from the engine's arrays)."""
        now = float(now)
        by_stream = self._by_stream
        for handle, entity, point in rows:
            total = sum(point)  # finite when every value is (else a value, or the sum, is not)
            if len(point) not in (2, 3) or total - total != 0.0:
                _check_position(point)
            stream = by_stream.get(handle)
            if stream is None:
                stream = by_stream[handle] = {}
            stream.pop(entity, None)  # re-inserted last: dict order is recency
            stream[entity] = Sighting((point, now))
            if len(stream) > MAX_SIGHTINGS_PER_STREAM:
                del stream[next(iter(stream))]

    def get(self, handle: int, entity: int) -> Sighting | None:
        stream = self._by_stream.get(handle)
        return None if stream is None else stream.get(entity)

    def seconds_since(self, handle: int, entity: int, now: float) -> float:
        """Seconds since the entity was last perceived (inf: never, or dropped)."""
        sighting = self.get(handle, entity)
        return math.inf if sighting is None else max(0.0, now - sighting.seen_at)

    def entities(self, handle: int) -> list[int]:
        """The stream's entities with a sighting, most recent last."""
        return list(self._by_stream.get(handle, ()))

    def drop(self, handle: int) -> None:
        """The stream is gone (its node freed): its sightings go with it."""
        self._by_stream.pop(handle, None)

    def __len__(self) -> int:
        return sum(len(stream) for stream in self._by_stream.values())


def _check_position(point: tuple[float, ...]) -> None:
    """A sighting's position: 2 or 3 finite numbers (a finite one whose sum overflows passes)."""
    if len(point) not in (2, 3) or not all(math.isfinite(value) for value in point):
        raise ValueError(f"a sighting's position must be 2 or 3 finite numbers, got {point!r}")
