"""Working memory that forgets like a person, for every NPC at once.

R = e^(-t/S) (or the FSRS-6 power law), stability from event type and emotional salience, growth by
rehearsal with a refractory period, recall that wakes, associative consolidation, a hard capacity
with value-based eviction, layered awareness, a long-term tier on the game-day clock, top-k
retrieval for LLM prompts, and versioned save files. All NPCs live in one `MemoryPool` of flat
numpy columns; every call is a batch (a single call is a batch of one).

    from npc_mind.memory import MemoryPool, MemoryType, Awareness
    pool = MemoryPool()
    guard = pool.add_npc()
    pool.record(guard, thief_id, MemoryType.HOSTILE, 0.9, now=0.0)
    pool.awareness(guard, thief_id, now=90.0)   # Awareness.PURSUE (R about 0.90)
"""

from npc_mind.memory.curves import curve_points
from npc_mind.memory.params import DAY_SECONDS, EXPONENT_FLOOR, FSRS6_DECAY, MemoryParams
from npc_mind.memory.pool import MAX_CAPACITY, MemoryPool
from npc_mind.memory.types import (
    Awareness,
    ConcurrentUseError,
    EventKind,
    ForgottenRows,
    MemoryEvents,
    MemoryPoolError,
    MemoryType,
    MemoryView,
    PoolFullError,
    QueryBatch,
    SaveFormatError,
    Tier,
    UnknownNpcError,
)

__all__ = [
    "DAY_SECONDS",
    "EXPONENT_FLOOR",
    "FSRS6_DECAY",
    "MAX_CAPACITY",
    "Awareness",
    "ConcurrentUseError",
    "EventKind",
    "ForgottenRows",
    "MemoryEvents",
    "MemoryParams",
    "MemoryPool",
    "MemoryPoolError",
    "MemoryType",
    "MemoryView",
    "PoolFullError",
    "QueryBatch",
    "SaveFormatError",
    "Tier",
    "UnknownNpcError",
    "curve_points",
]
