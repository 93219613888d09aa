"""The rules of the senses, without Godot: what an NPC can see and hear, and how often it records it.

The engine senses (`npc_mind_godot.senses`) read positions and cast rays; the decisions are here, so
they are tested without an engine and shared by 2D and 3D:

- **sight** (`in_view`): a target is seen when it is within `range` of the eyes and within half the
  field of view of the facing direction (a cone in 3D, a wedge in 2D), and no occluder is in between
  (the ray is the engine's part);
- **hearing** (`heard_salience`): a stimulus of salience s and radius r heard at distance d has the
  salience s x (1 - d / r) x f^h, with h occluders hit on the way and f the listener's factor per
  occluder; nothing at or beyond the radius;
- **rate** (`RateGate`): one record of a (target, rule) per `interval` seconds; **spread**
  (`phase`): each sense starts at its own point of the period, so many senses do not all query the
  physics world in the same frame.
"""

from __future__ import annotations

import math
from collections.abc import Hashable

import numpy as np

from npc_mind.memory import MemoryType

GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0  # the most even spread of successive phases over a period
MAX_RATE_KEYS = 1024  # a gate past it forgets the keys whose interval has passed


def in_view(
    eyes: np.ndarray, facing: np.ndarray, ranges: np.ndarray, cos_half: np.ndarray, targets: np.ndarray
) -> np.ndarray:
    """(senses, targets) booleans: target j within range and field of view of sense i.

    eyes, facing: (senses, dims), facing of unit length; ranges, cos_half: (senses,), cos_half the
    cosine of half the field of view (-1: all around); targets: (targets, dims). A target at the
    eyes' own position is in view."""
    offsets = targets[None, :, :] - eyes[:, None, :]
    distance2 = np.einsum("ijk,ijk->ij", offsets, offsets)
    near = distance2 <= (ranges * ranges)[:, None]
    ahead = np.einsum("ijk,ik->ij", offsets, facing)
    # dot >= cos(half) |offset|, without the square root where it cannot matter
    cos = cos_half[:, None]
    bound = cos * cos * distance2
    in_front = (cos <= 0.0) | (ahead * ahead >= bound)  # for targets ahead (dot >= 0)
    behind = (cos < 0.0) & (ahead * ahead <= bound)  # for targets behind: only a view wider than 180
    return near & np.where(ahead >= 0.0, in_front, behind)


def cos_half_fov(degrees: float) -> float:
    """The cosine of half a field of view in degrees (clamped to 0..360: 360 sees all around); 180
    degrees is exactly 0, so a target square to the side is in view."""
    cos = math.cos(math.radians(min(max(float(degrees), 0.0), 360.0)) / 2.0)
    return 0.0 if abs(cos) < 1e-12 else cos


def heard_salience(
    salience: float, distance: float, radius: float, occluder_hits: int = 0, occluder_factor: float = 1.0
) -> float:
    """The salience a listener at `distance` records of a stimulus: s x (1 - d / r) x f^h (0 at or
    beyond the radius, or for a radius of 0)."""
    if radius <= 0.0 or distance >= radius:
        return 0.0
    return float(salience) * (1.0 - distance / radius) * float(occluder_factor) ** int(occluder_hits)


def phase(index: int, period: float) -> float:
    """Seconds into the period at which the index-th sense first runs: successive senses land far
    apart (the golden-ratio sequence), so 200 senses at 10 Hz checked 30 times a second check about
    200 / 3 at a time, never 200 in one."""
    return ((index * GOLDEN) % 1.0) * period


def memory_type_of(kind: int | str) -> int:
    """A memory type from its code (0..4) or its name ("hostile", "HOSTILE"); ValueError otherwise."""
    if isinstance(kind, bool):
        raise ValueError(f"a memory type is a code 0..4 or a name, got {kind!r}")
    if isinstance(kind, int):
        if kind in MemoryType._value2member_map_:
            return int(kind)
    elif isinstance(kind, str) and kind.strip().upper() in MemoryType.__members__:
        return int(MemoryType[kind.strip().upper()])
    names = ", ".join(member.name.lower() for member in MemoryType)
    raise ValueError(f"a memory type is a code 0..4 or one of {names}; got {kind!r}")


class RateGate:
    """When each key (a target and rule) was last let through; one pass per `interval` seconds."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: dict[Hashable, float] = {}

    def passes(self, key: Hashable, now: float, interval: float) -> bool:
        """True (and remembered) when the key never passed or passed `interval` seconds ago or more."""
        last = self._last.get(key)
        if last is not None and now - last < interval:
            return False
        if last is None and len(self._last) >= MAX_RATE_KEYS:
            self._last = {k: t for k, t in self._last.items() if now - t < interval}
        self._last[key] = now
        return True

    def __len__(self) -> int:
        return len(self._last)
