"""Enums, the read-only `MemoryView`, batch results and the memory package's exceptions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, NamedTuple

import numpy as np

from npc_mind.threads import WrongThreadError


class MemoryType(IntEnum):
    """Kind of event; sets the base stability (see `MemoryParams.base_stability`)."""

    TRIVIA = 0  # footsteps, a passer-by
    OBSERVATION = 1  # a door opens, a resource respawns
    INTERACTION = 2  # a trade, a conversation, a quest
    HOSTILE = 3  # attacked, saw a theft
    TRAUMA = 4  # home destroyed, kin killed


class Awareness(IntEnum):
    """The source's layered response to the strongest memory of an entity."""

    NONE = 0  # forgotten or never seen
    PUZZLED = 1  # R <= awareness_search
    SEARCH = 2  # awareness_search < R <= awareness_pursue
    PURSUE = 3  # R > awareness_pursue


class Tier(IntEnum):
    WORKING = 0  # a slot of the NPC's working memory; ages in real play seconds
    LONG_TERM = 1  # consolidated by `advance_game_day`; ages in game days, takes no slot


class EventKind(IntEnum):
    """The one table of memory event codes: rows of `MemoryPool.drain_events()` (collected only
    with `MemoryPool(events=True)`), `pop_forgotten`'s rows (FORGOTTEN), and the codes of the
    server's batched read (`MindServer.drain_memory_events`, the engine's `MemoryStream.EVENT_*`)."""

    FORMED = 0  # a new working memory
    REHEARSED = 1  # a matching event past the refractory period: k + 1, S grows
    RECALLED = 2  # woken by query_strongest: k + 1
    EVICTED = 3  # dropped from a full working memory to make room
    PROMOTED = 4  # moved to the long-term tier by advance_game_day
    LONG_TERM_FORGOTTEN = 5  # a long-term memory decayed below the threshold (advance_game_day)
    FORGOTTEN = 6  # a working memory's R reached the forget threshold (pop_forgotten, at its analytic time)


@dataclass(frozen=True, slots=True)
class MemoryView:
    """A read-only snapshot of one memory. Units follow the tier: seconds for WORKING,
    game days for LONG_TERM (`stability` and `age`)."""

    npc: int
    entity: int
    memory_type: MemoryType
    retrievability: float
    stability: float
    salience: float
    recall_count: int
    tier: Tier
    slot: int  # working slot, or -1 for a long-term memory
    age: float  # time since the memory was last woken
    pinned: bool = False
    tags: frozenset[str] = frozenset()


class MemoryEvents(NamedTuple):
    """Flat event rows, in the order the pool produced them (round by round within a batch)."""

    kind: np.ndarray  # int8, EventKind
    npc: np.ndarray  # int64
    entity: np.ndarray  # int64
    memory_type: np.ndarray  # int8

    def __len__(self) -> int:
        return int(self.kind.shape[0])


class ForgottenRows(NamedTuple):
    """Working memories whose analytic forget time has passed (see `MemoryPool.pop_forgotten`)."""

    npc: np.ndarray  # int64
    entity: np.ndarray  # int64
    memory_type: np.ndarray  # int8
    forget_time: np.ndarray  # float64, the time R crossed the threshold


class QueryBatch:
    """Result of `query_strongest_batch`: one entry per query, in input order.

    `found` and `retrievability` (R at the moment of the query, before the wake; 0 when nothing
    is remembered) are arrays of length n. The other fields are snapshots taken during the call,
    stored compactly for the hits and expanded on first access (NaN / -1 where nothing was found).
    `view(i)` gives the `MemoryView` a single `query_strongest` would have returned.
    """

    __slots__ = ("_cache", "_hit", "_hit_fields", "_n", "_npcs", "_rows", "retrievability")

    def __init__(
        self,
        n: int,
        npcs: np.ndarray,
        retrievability: np.ndarray,
        hit: np.ndarray,
        hit_fields: Mapping[str, Any],  # arrays (tags: a list), or the kernel's view of its output
    ) -> None:
        self._n = n
        self._npcs = npcs
        self.retrievability = retrievability
        self._hit = hit
        self._hit_fields = hit_fields
        self._cache: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return self._n

    @property
    def found(self) -> np.ndarray:
        return self.retrievability > 0.0

    def _field(self, name: str) -> Any:
        """A compact per-hit field; "tier" and "tags" are omitted when every hit is a plain working memory."""
        f = self._hit_fields
        if name in f:
            return f[name]
        count = int(self._hit.shape[0])
        if name == "tier":
            return np.zeros(count, dtype=np.int8)
        if name == "tags":
            return [frozenset()] * count
        raise KeyError(name)

    def _expand(self, name: str, fill: float | int, dtype: type) -> np.ndarray:
        if name not in self._cache:
            out: np.ndarray = np.full(self._n, fill, dtype=dtype)
            if self._hit.shape[0]:
                out[self._hit] = self._field(name)
            self._cache[name] = out
        return self._cache[name]

    @property
    def entity(self) -> np.ndarray:
        return self._expand("entity", 0, np.int64)

    @property
    def memory_type(self) -> np.ndarray:
        return self._expand("memory_type", -1, np.int8)

    @property
    def stability(self) -> np.ndarray:
        return self._expand("stability", np.nan, np.float64)

    @property
    def salience(self) -> np.ndarray:
        return self._expand("salience", np.nan, np.float64)

    @property
    def recall_count(self) -> np.ndarray:
        return self._expand("recall_count", -1, np.int64)

    @property
    def tier(self) -> np.ndarray:
        return self._expand("tier", -1, np.int8)

    @property
    def slot(self) -> np.ndarray:
        return self._expand("slot", -1, np.int64)

    def view(self, i: int) -> MemoryView | None:
        if not -self._n <= i < self._n:
            raise IndexError(f"query index {i} out of range for {self._n} queries")
        i %= self._n
        pos = np.flatnonzero(self._hit == i)
        if pos.size == 0:
            return None
        j = int(pos[0])
        f = self._field
        return MemoryView(
            npc=int(self._npcs[i]),
            entity=int(f("entity")[j]),
            memory_type=MemoryType(int(f("memory_type")[j])),
            retrievability=float(self.retrievability[i]),
            stability=float(f("stability")[j]),
            salience=float(f("salience")[j]),
            recall_count=int(f("recall_count")[j]),
            tier=Tier(int(f("tier")[j])),
            slot=int(f("slot")[j]),
            age=0.0,
            pinned=bool(f("pinned")[j]),
            tags=f("tags")[j],
        )


class MemoryPoolError(Exception):
    """Base class of the memory package's errors."""


class UnknownNpcError(MemoryPoolError, KeyError):
    """An NPC id that was never added, or was removed (ids are never reused)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "unknown NPC"


class PoolFullError(MemoryPoolError, RuntimeError):
    """Every working slot of an NPC is pinned and a new memory has nowhere to go."""


class ConcurrentUseError(MemoryPoolError, WrongThreadError):
    """A call that would change a pool, from a thread other than the pool's owner (refused, nothing
    changed): a pool belongs to the thread that made it (or last `claim`ed it). A `WrongThreadError`,
    as the server's refusals are."""


class SaveFormatError(MemoryPoolError, ValueError):
    """A save file or exported blob that is corrupt, truncated, or from a newer npc_mind."""
