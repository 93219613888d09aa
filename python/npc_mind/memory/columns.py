"""The pool's columns: the declared table of per-slot and per-row columns, their storage (growth,
flat views, clearing) and the shared constants of the pool's modules."""

from __future__ import annotations

from typing import Any, NamedTuple

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
    """One column of the pool: attribute `_<name>`, its dtype, the value of an empty entry and the
    save file's array of it (None: not saved, derived on load)."""

    name: str
    dtype: Any
    empty: Any
    saved: str | None = None


#: Per-slot columns, shape (rows, capacity); each also has a flat view `_<name>f`. A new column is
#: one line here (and, to be saved, its file dtype in persistence's WORKING).
SLOT_COLUMNS = (
    Column("ent", np.int64, EMPTY_ENTITY, "w_entity"),  # entity id
    Column("h", np.uint16, _EMPTY_HASH),  # entity_hash of the id, compared first
    Column("typ", np.int8, -1, "w_type"),  # MemoryType, -1 = empty slot
    Column("last", np.float64, -np.inf, "w_age"),  # last access, s (empty: -inf, so R = 0); saved as age
    Column("stab", np.float64, 1.0, "w_stability"),  # stability S, seconds
    Column("sal", np.float64, 0.0, "w_salience"),  # salience E
    Column("k", np.int64, 0, "w_recalls"),  # recall count
    Column("pin", bool, False, "w_pinned"),  # pinned: never evicted or promoted
    Column("emit", bool, False, "w_reported"),  # its forgetting was reported since it last woke
)
#: Bytes of columns per working slot (what a pool of rows x capacity allocates per slot).
SLOT_BYTES = sum(np.dtype(c.dtype).itemsize for c in SLOT_COLUMNS)
#: Per-NPC-row columns, shape (rows,).
ROW_COLUMNS = (
    Column("row_npc", np.int64, -1),  # NPC id of the row
    Column("used", np.int64, 0),  # occupied slots
    Column("pinned", np.int64, 0),  # pinned slots
    Column("ltn", np.int64, 0),  # long-term memories of the NPC
)


class ColumnStore:
    """Storage of `MemoryPool`'s columns, driven by `SLOT_COLUMNS` and `ROW_COLUMNS`.
    A part of `MemoryPool` (its state is set up in `MemoryPool.__init__`)."""

    def _alloc_rows(self, rows: int) -> None:
        cap, old, n = self._C, self._alloc, self._n
        for col in SLOT_COLUMNS:
            arr = np.full((rows, cap), col.empty, dtype=col.dtype)
            if old:
                arr[:n] = getattr(self, "_" + col.name)[:n]
            setattr(self, "_" + col.name, arr)
        if self._tags is not None:
            tags = np.full((rows, cap), None, dtype=object)
            tags[:n] = self._tags[:n]
            self._tags = tags
        for col in ROW_COLUMNS:
            arr = np.full(rows, col.empty, dtype=col.dtype)
            if old:
                arr[:n] = getattr(self, "_" + col.name)[:n]
            setattr(self, "_" + col.name, arr)
        self._mark = np.zeros(rows, dtype=np.int64)
        self._scratch.pop("K", None)
        self._alloc = rows
        self._flat()

    def _flat(self) -> None:
        for col in SLOT_COLUMNS:
            setattr(self, f"_{col.name}f", getattr(self, "_" + col.name).reshape(-1))

    def _move_row(self, src: int, dst: int) -> None:
        """Copy row `src` of every column (and its tags) into row `dst`."""
        for col in (*SLOT_COLUMNS, *ROW_COLUMNS):
            arr = getattr(self, "_" + col.name)
            arr[dst] = arr[src]
        if self._tags is not None:
            self._tags[dst] = self._tags[src]

    def _buf(self, name: str, size: int, dtype: Any) -> np.ndarray:
        buf = self._scratch.get(name)
        if buf is None or buf.shape[0] < size:
            buf = np.empty(max(size, 1024), dtype=dtype)
            self._scratch[name] = buf
        return buf[:size]

    def _entity_slots(
        self, sel: slice | np.ndarray, rows: np.ndarray, hashes: np.ndarray, ent: np.ndarray, buffer: str
    ) -> tuple[np.ndarray, np.ndarray]:
        """The working slots holding each event's entity (any type): (event positions, flat slots),
        by event. Event i looks in row `rows[i]` (`sel`: the same rows, or their `_selector` slice);
        `hashes`: `entity_hash(ent)`, compared across the rows first, then the full id of each
        candidate. `buffer`: the scratch buffer's name (one per caller that may nest)."""
        cap = self._C
        eq = self._buf(buffer, rows.shape[0] * cap, bool).reshape(rows.shape[0], cap)
        np.equal(self._h[sel], hashes[:, None], out=eq)
        nz = np.flatnonzero(eq)
        ri = nz // cap
        fi = nz + sel.start * cap if isinstance(sel, slice) else rows[ri] * cap + (nz - ri * cap)
        same = self._entf[fi] == ent[ri]
        if not same.all():
            ri, fi = ri[same], fi[same]
        return ri, fi

    def _accessed(self, fi: Any, now: float) -> None:
        """Memories at flat slots `fi` (an index, or an array of them) were accessed at `now`: a
        refresh, a rehearsal, a wake. Their forgetting is reported again when it comes."""
        self._lastf[fi] = now
        self._emitf[fi] = False

    def _clear_flat(self, fi: np.ndarray) -> None:
        for col in SLOT_COLUMNS:
            getattr(self, f"_{col.name}f")[fi] = col.empty
        if self._tags is not None:
            self._tags.reshape(-1)[fi] = None

    def _ensure_tags(self) -> np.ndarray:
        if self._tags is None:
            self._tags = np.full((self._alloc, self._C), None, dtype=object)
        return self._tags
