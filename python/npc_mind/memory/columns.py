"""The pool's columns: the declared table of per-slot and per-row columns (stored by
`npc_mind.memory.state.PoolState`) and the shared constants of the pool's modules."""

from __future__ import annotations

from typing import Any, Final, NamedTuple

import numpy as np

from npc_mind.memory.types import Awareness, MemoryType

EMPTY_ENTITY = np.iinfo(np.int64).min
_INT64 = np.dtype(np.int64)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_U64 = 2**64 - 1
MAX_CAPACITY = 65_535
#: |now| beyond this (about 31.7 billion years) is refused: it would overflow the time arithmetic.
MAX_TIME = 1e18
_EMPTY_TAGS: frozenset[str] = frozenset()
_AWARENESS = tuple(Awareness)
_MEMORY_TYPES = tuple(MemoryType)
_BATCH = object()  # a scalar path's "use the batch path"
#: A record round narrower than this many events runs its events one by one (the scalar path)
#: instead: a round costs ~30 us of numpy calls whatever its width, an event on the scalar path
#: ~2 us (its row's eviction keys kept current, as the rounds keep theirs): measured break-even 16.
_NARROW_ROUND = 16

_HASH_MULT = np.uint64(0x9E3779B97F4A7C15)
_HASH_SHIFT = np.uint64(48)


def entity_hash(entities: np.ndarray) -> np.ndarray:
    """16-bit multiplicative hash of int64 entity ids: the pool compares these 2-byte keys across
    all slots first and checks the full id only on the few candidates."""
    return ((entities.view(np.uint64) * _HASH_MULT) >> _HASH_SHIFT).astype(np.uint16)


_EMPTY_HASH = int(entity_hash(np.array([EMPTY_ENTITY], dtype=np.int64))[0])


def _hash_one(entity: int) -> int:
    """`entity_hash` of one id in plain Python (the same 16 bits)."""
    return (((entity & _U64) * 0x9E3779B97F4A7C15) & _U64) >> 48


def _selector(rows: np.ndarray, increasing: bool = False) -> slice | np.ndarray:
    """A slice when `rows` (distinct) is exactly an ascending contiguous range, so numpy reads
    views instead of gathering; otherwise the index array itself. `increasing`: already known
    to be strictly increasing."""
    n = rows.shape[0]
    if (
        n
        and int(rows[-1]) - int(rows[0]) == n - 1
        and (increasing or n < 2 or bool((rows[1:] > rows[:-1]).all()))
    ):
        return slice(int(rows[0]), int(rows[0]) + n)
    return rows


class Column(NamedTuple):
    """One column of the pool: `PoolState` field `<name>` (and, per slot, its flat view
    `<name>_flat`), its dtype, the value of an empty entry and the save file's array of it (None: not
    saved, derived on load)."""

    name: str
    dtype: Any
    empty: Any
    saved: str | None = None


#: Per-slot columns, shape (rows, capacity); each also has a flat view `<name>_flat`. A new column is
#: one line here, its two fields in `PoolState` (and, to be saved, its file dtype in persistence's
#: WORKING). The names are the ones `record` takes, kept along the path to the save file.
SLOT_COLUMNS: Final = (
    Column("entity", np.int64, EMPTY_ENTITY, "w_entity"),
    Column("entity_hash", np.uint16, _EMPTY_HASH),  # entity_hash of the id, compared first
    Column("memory_type", np.int8, -1, "w_type"),  # MemoryType, -1 = empty slot
    # seconds (empty: -inf, so R = 0); saved as the age at the save's `now`
    Column("last_access", np.float64, -np.inf, "w_age"),
    Column("stability", np.float64, 1.0, "w_stability"),  # S, seconds
    Column("salience", np.float64, 0.0, "w_salience"),  # E
    Column("recall_count", np.int64, 0, "w_recalls"),  # k
    Column("pinned", bool, False, "w_pinned"),  # never evicted or promoted
    Column("forget_reported", bool, False, "w_reported"),  # its forgetting was reported since it last woke
)
#: Bytes of columns per working slot (what a pool of rows x capacity allocates per slot).
SLOT_BYTES: Final = sum(np.dtype(c.dtype).itemsize for c in SLOT_COLUMNS)
#: Per-NPC-row columns, shape (rows,).
ROW_COLUMNS: Final = (
    Column("npc_of_row", np.int64, -1),  # NPC id of the row
    Column("used_slots", np.int64, 0),  # occupied slots
    Column("pinned_slots", np.int64, 0),  # pinned slots
    Column("longterm_count", np.int64, 0),  # long-term memories of the NPC
)
