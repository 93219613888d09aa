"""`MemoryPool`: the working memories of every NPC as structure-of-arrays numpy columns.

Layout: one row per live NPC, `capacity` slots per row, columns of shape (rows, capacity):
entity (int64), type (int8, -1 = empty slot), last access (float64 seconds), stability (float64),
salience (float64), recall count (int64), pinned, forget-reported. An empty slot holds
last = -inf and stability = 1, so every curve gives it R = 0 without a validity mask.

Every operation is a batch: a single call is a batch of one, and a batch is processed in rounds
holding at most one event per NPC (in input order per NPC), each round vectorised across NPCs.
NPCs never share memories, so this gives bit-for-bit what the same single calls in order give.

A single `record`, `awareness` or `query_strongest` with plain Python numbers skips the rounds: a
scalar path works on the NPC's row with the same IEEE operations in the same order (ln(1 + k) from
a numpy-made table, R from numpy's exp wherever its bits matter), so it gives the batch's bits at a
few microseconds instead of dozens of numpy calls. Whatever it does not handle (links, tags,
long-term memories, the power curve for reads, numpy inputs, bad input) goes through the batch.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from npc_mind.memory import persistence, retrieval
from npc_mind.memory.curves import retrievability
from npc_mind.memory.longterm import LongTermStore
from npc_mind.memory.params import DAY_SECONDS, EXPONENT_FLOOR, MemoryParams
from npc_mind.memory.types import (
    Awareness,
    ConcurrentUseError,
    EventKind,
    ForgottenRows,
    MemoryEvents,
    MemoryType,
    MemoryView,
    PoolFullError,
    QueryBatch,
    Tier,
    UnknownNpcError,
)

EMPTY_ENTITY = np.iinfo(np.int64).min
_INT64 = np.dtype(np.int64)
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
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_U64 = 2**64 - 1


def _hash_one(entity: int) -> int:
    """`entity_hash` of one id in plain Python (the same 16 bits)."""
    return (((entity & _U64) * 0x9E3779B97F4A7C15) & _U64) >> 48


# ln(1 + k) for k = 0, 1, ... as Python floats, computed by numpy's log so the scalar paths'
# rehearsal and consolidation factors have the bits the batch path's np.log gives; grown on demand
# up to _LN1P_TABLE entries (a recall count can reach millions: beyond, one numpy log per call).
_ln1p_k: list[float] = []
_LN1P_TABLE = 1 << 16


def _ln1p(k: int) -> float:
    if k >= len(_ln1p_k):
        if k >= _LN1P_TABLE:
            return float(np.log(np.array([1.0 + k]))[0])
        size = max(4096, 1 << k.bit_length())
        _ln1p_k[:] = np.log(1.0 + np.arange(size, dtype=np.int64)).tolist()
    return _ln1p_k[k]


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


def _one_thread(method: Callable[..., Any]) -> Callable[..., Any]:
    """Refuse the call while another thread is inside the pool (the same thread may nest calls)."""

    @functools.wraps(method)
    def guarded(self: MemoryPool, *args: Any, **kwargs: Any) -> Any:
        if not self._inside.acquire(blocking=False):
            raise ConcurrentUseError(
                f"MemoryPool.{method.__name__}() while another thread is inside this pool: "
                "a pool is used by one thread at a time"
            )
        try:
            return method(self, *args, **kwargs)
        finally:
            self._inside.release()

    return guarded


class MemoryPool:
    """The working (and long-term) memories of many NPCs. See the package docstring and README.

    `capacity` (1..65535, default 64) is the hard bound of working slots per NPC. `params` holds
    every other tunable (`MemoryParams`). With `events=True` the pool collects formed / rehearsed /
    recalled / evicted / promoted rows for `drain_events()`.

    Threads: a pool is used by one thread at a time (calls from two threads at once would corrupt
    its slot bookkeeping). Its batched and structural methods (adding and removing NPCs, the
    `*_batch` calls, events, day advance, export and import) refuse a second thread while another
    is inside with `ConcurrentUseError`, at ~0.2 us a call; the per-NPC calls (`record`,
    `query_strongest`, `awareness`) are not checked, to stay cheap. npc_mind's server owns its pools
    on the game loop's thread and refuses calls from other threads (`npc_mind.server.WrongThreadError`).
    """

    def __init__(
        self,
        capacity: int = 64,
        params: MemoryParams | None = None,
        *,
        events: bool = False,
        reserve_npcs: int = 16,
    ) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int | np.integer):
            raise TypeError(f"capacity must be an integer, got {capacity!r}")
        if not 1 <= int(capacity) <= MAX_CAPACITY:
            raise ValueError(f"capacity must be in [1, {MAX_CAPACITY}], got {capacity}")
        if params is None:
            params = MemoryParams()
        if not isinstance(params, MemoryParams):
            raise TypeError(f"params must be a MemoryParams, got {type(params).__name__}")
        self._p = params
        self._C = int(capacity)
        self._inside = threading.RLock()  # held by the thread inside a guarded call (see `_one_thread`)
        self._events_on = bool(events)
        self._n = 0
        self._alloc = 0
        self._next_id = 0
        self._row_of_id = np.full(16, -1, dtype=np.int64)
        self._clock = 0.0
        self._tmax = -np.inf  # latest last-access time ever written: now >= it means no clamping needed
        self._links: dict[int, dict[tuple[int, int], set[tuple[int, int]]]] = {}
        self._lt = LongTermStore()
        self._tags: np.ndarray | None = None
        # (kind, npcs, entities, types): arrays from the batch paths, ints from the scalar ones
        self._ev: list[tuple[int, Any, Any, Any]] = []
        self._scratch: dict[str, np.ndarray] = {}
        self._increasing: np.ndarray | None = None  # the last rows _rounds found strictly increasing
        self._base = np.asarray(params.base_stability, dtype=np.float64)
        self._forget_factor = params.forget_factor
        # awareness = how many of these R is strictly above (a forget threshold above the search
        # one never decides anything: R above it is above the search threshold too)
        forget = min(params.forget_threshold, params.awareness_search)
        self._levels = np.array([forget, params.awareness_search, params.awareness_pursue])
        # the scalar awareness path: the forget threshold, then the levels R must be strictly above
        self._level_bounds = (params.forget_threshold, *self._levels.tolist())
        self._is_exponential = params.curve == "exponential"
        self._q1x = np.empty(self._C)  # the scalar query's candidate exponents, then R
        self._alloc_rows(max(1, int(reserve_npcs)))

    # ---------------------------------------------------------------------------------------------
    # storage
    def _alloc_rows(self, rows: int) -> None:
        cap, old, n = self._C, self._alloc, self._n

        def grow2(name: str, dtype: Any, fill: Any) -> np.ndarray:
            arr = np.full((rows, cap), fill, dtype=dtype)
            if old:
                arr[:n] = getattr(self, name)[:n]
            return arr

        def grow1(name: str, dtype: Any, fill: Any) -> np.ndarray:
            arr = np.full(rows, fill, dtype=dtype)
            if old:
                arr[:n] = getattr(self, name)[:n]
            return arr

        self._ent = grow2("_ent", np.int64, EMPTY_ENTITY)
        self._h = grow2("_h", np.uint16, _EMPTY_HASH)
        self._typ = grow2("_typ", np.int8, -1)
        self._last = grow2("_last", np.float64, -np.inf)
        self._stab = grow2("_stab", np.float64, 1.0)
        self._sal = grow2("_sal", np.float64, 0.0)
        self._k = grow2("_k", np.int64, 0)
        self._pin = grow2("_pin", bool, False)
        self._emit = grow2("_emit", bool, False)
        if self._tags is not None:
            tags = np.full((rows, cap), None, dtype=object)
            tags[:n] = self._tags[:n]
            self._tags = tags
        self._row_npc = grow1("_row_npc", np.int64, -1)
        self._used = grow1("_used", np.int64, 0)
        self._pinned = grow1("_pinned", np.int64, 0)
        self._ltn = grow1("_ltn", np.int64, 0)
        self._mark = np.zeros(rows, dtype=np.int64)
        self._scratch.pop("K", None)
        self._alloc = rows
        self._flat()

    def _flat(self) -> None:
        self._entf = self._ent.reshape(-1)
        self._hf = self._h.reshape(-1)
        self._typf = self._typ.reshape(-1)
        self._lastf = self._last.reshape(-1)
        self._stabf = self._stab.reshape(-1)
        self._salf = self._sal.reshape(-1)
        self._kf = self._k.reshape(-1)
        self._pinf = self._pin.reshape(-1)
        self._emitf = self._emit.reshape(-1)

    def _buf(self, name: str, size: int, dtype: Any) -> np.ndarray:
        buf = self._scratch.get(name)
        if buf is None or buf.shape[0] < size:
            buf = np.empty(max(size, 1024), dtype=dtype)
            self._scratch[name] = buf
        return buf[:size]

    def _clear_flat(self, fi: np.ndarray) -> None:
        self._entf[fi] = EMPTY_ENTITY
        self._hf[fi] = _EMPTY_HASH
        self._typf[fi] = -1
        self._lastf[fi] = -np.inf
        self._stabf[fi] = 1.0
        self._salf[fi] = 0.0
        self._kf[fi] = 0
        self._pinf[fi] = False
        self._emitf[fi] = False
        if self._tags is not None:
            self._tags.reshape(-1)[fi] = None

    def _ensure_tags(self) -> np.ndarray:
        if self._tags is None:
            self._tags = np.full((self._alloc, self._C), None, dtype=object)
        return self._tags

    # ---------------------------------------------------------------------------------------------
    # properties
    @property
    def capacity(self) -> int:
        return self._C

    @property
    def params(self) -> MemoryParams:
        return self._p

    @property
    def npc_count(self) -> int:
        return self._n

    @property
    def clock(self) -> float:
        """The `now` of the latest call (the default time of `save` and `export_npc`)."""
        return self._clock

    def npc_ids(self) -> np.ndarray:
        """Live NPC ids in row order: row i of `retrievability_all` / `forget_times` is `npc_ids()[i]`."""
        return self._row_npc[: self._n].copy()

    def has_npc(self, npc: int) -> bool:
        return 0 <= npc < self._next_id and self._row_of_id[npc] >= 0

    def memory_count(self, npc: int | None = None) -> int:
        """Working memories held (of one NPC, or of all), not counting the long-term tier."""
        if npc is None:
            return int(self._used[: self._n].sum())
        return int(self._used[self._row(npc)])

    def longterm_count(self, npc: int | None = None) -> int:
        if npc is None:
            return self._lt.size
        self._row(npc)
        return self._lt.count_for(int(npc))

    # ---------------------------------------------------------------------------------------------
    # NPCs
    @_one_thread
    def add_npc(self) -> int:
        """A new NPC with an empty memory; returns its id (ids are never reused)."""
        if self._n == self._alloc:
            self._alloc_rows(2 * self._alloc)
        npc = self._next_id
        if npc >= self._row_of_id.shape[0]:
            grown = np.full(2 * self._row_of_id.shape[0], -1, dtype=np.int64)
            grown[:npc] = self._row_of_id
            self._row_of_id = grown
        row = self._n
        self._row_of_id[npc] = row
        self._row_npc[row] = npc
        self._next_id += 1
        self._n += 1
        return npc

    @_one_thread
    def add_npcs(self, count: int) -> np.ndarray:
        """`count` new NPCs at once; returns their ids."""
        return np.array([self.add_npc() for _ in range(int(count))], dtype=np.int64)

    @_one_thread
    def remove_npc(self, npc: int) -> None:
        """Drop an NPC and all its memories (working, long-term, links). Its id is never reused."""
        row = self._row(npc)
        npc = int(npc)
        last = self._n - 1
        if row != last:  # move the last row into the hole
            for name in ("_ent", "_h", "_typ", "_last", "_stab", "_sal", "_k", "_pin", "_emit"):
                arr = getattr(self, name)
                arr[row] = arr[last]
            if self._tags is not None:
                self._tags[row] = self._tags[last]
            for name in ("_row_npc", "_used", "_pinned", "_ltn"):
                arr = getattr(self, name)
                arr[row] = arr[last]
            self._row_of_id[self._row_npc[row]] = row
        self._clear_flat(np.arange(last * self._C, (last + 1) * self._C))
        self._row_npc[last] = -1
        self._used[last] = self._pinned[last] = self._ltn[last] = 0
        self._row_of_id[npc] = -1
        self._n -= 1
        self._links.pop(npc, None)
        self._lt.remove_npc(npc)

    # ---------------------------------------------------------------------------------------------
    # input checking (everything is checked before anything changes)
    def _row(self, npc: Any) -> int:
        if isinstance(npc, bool) or not isinstance(npc, int | np.integer):
            raise TypeError(f"npc id must be an integer, got {npc!r}")
        npc = int(npc)
        if not 0 <= npc < self._next_id:
            raise UnknownNpcError(f"unknown npc id {npc}: it was never added to this pool")
        row = int(self._row_of_id[npc])
        if row < 0:
            raise UnknownNpcError(f"npc id {npc} was removed from this pool")
        return row

    def _rows(self, npcs: Any) -> tuple[np.ndarray, np.ndarray]:
        ids = self._int64(npcs, "npc ids")
        if ids.shape[0]:
            lo, hi = int(ids.min()), int(ids.max())
            if lo < 0 or hi >= self._next_id:
                bad = lo if lo < 0 else hi
                raise UnknownNpcError(f"unknown npc id {bad}: it was never added to this pool")
            rows = self._row_of_id[ids]
            if int(rows.min()) < 0:
                bad = int(ids[np.argmin(rows)])
                raise UnknownNpcError(f"npc id {bad} was removed from this pool")
        else:
            rows = ids
        return ids, rows

    @staticmethod
    def _int64(values: Any, what: str) -> np.ndarray:
        try:
            arr = np.asarray(values)
        except OverflowError as exc:
            raise ValueError(f"{what} must fit in 64 bits: {exc}") from None
        kind = arr.dtype.kind
        if arr.size == 0 and arr.ndim == 1:  # [] reads as float64: no values, nothing to refuse
            return np.empty(0, dtype=np.int64)
        if kind == "O":  # Python ints too big for one numpy dtype, or mixed types
            values = arr.reshape(-1).tolist()
            integer = (int, np.integer)
            bad = next((v for v in values if isinstance(v, bool) or not isinstance(v, integer)), None)
            if bad is not None:  # never coerced: "12" or 1.5 is not the id 12 or 1
                raise TypeError(f"{what} must be integers, got {type(bad).__name__} {bad!r:.40}")
            try:
                arr = np.array([int(v) for v in values], dtype=np.int64).reshape(arr.shape)
            except OverflowError as exc:
                raise ValueError(f"{what} must be 64-bit integers: {exc}") from None
        elif kind == "u":
            arr = arr.view(np.int64) if arr.dtype.itemsize == 8 else arr.astype(np.int64)
        elif kind == "i":
            if arr.dtype != np.int64:
                arr = arr.astype(np.int64)
        else:
            raise TypeError(f"{what} must be integers, got {arr.dtype} values")
        if arr.ndim > 1:
            raise ValueError(f"{what} must be one-dimensional, got shape {arr.shape}")
        return arr.reshape(-1)

    @staticmethod
    def _time(now: Any) -> float:
        if isinstance(now, bool) or not isinstance(now, int | float | np.integer | np.floating):
            raise TypeError(f"now must be a number of seconds, got {now!r}")
        t = float(now)
        if not math.isfinite(t):
            raise ValueError(f"now must be a finite number of seconds, got {t}")
        if abs(t) > MAX_TIME:
            raise ValueError(f"now = {t} is out of range (|now| <= {MAX_TIME:g} s)")
        return t

    @staticmethod
    def _types(values: Any, n: int) -> np.ndarray:
        arr = np.asarray(values)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"memory types must be integers (MemoryType), got {arr.dtype} values")
        if arr.ndim == 0:
            arr = np.full(n, arr, dtype=arr.dtype)
        if arr.shape[0] and (int(arr.min()) < 0 or int(arr.max()) > 4):
            bad = next(int(v) for v in arr.reshape(-1) if not 0 <= int(v) <= 4)
            raise ValueError(f"unknown memory type {bad}: use MemoryType (0..4)")
        return arr.astype(np.int8, copy=False).reshape(-1)

    @staticmethod
    def _saliences(values: Any, n: int) -> np.ndarray:
        arr = np.asarray(values)  # no dtype: a string "0.5" must not become 0.5
        if arr.dtype.kind not in "fiu":
            raise TypeError(f"saliences must be numbers, got {arr.dtype} values")
        arr = arr.astype(np.float64, copy=False)
        if arr.ndim == 0:
            arr = np.full(n, float(arr))
        if not np.isfinite(arr).all():
            bad = arr[~np.isfinite(arr)][0]
            raise ValueError(f"salience must be a finite number, got {bad}")
        return np.clip(arr.reshape(-1), 0.0, 1.0)

    @staticmethod
    def _tag_set(tags: Iterable[str] | None) -> frozenset[str]:
        if tags is None:
            return _EMPTY_TAGS
        if isinstance(tags, str):
            return frozenset((tags,))
        out = frozenset(tags)
        for t in out:
            if not isinstance(t, str):
                raise TypeError(f"tags must be strings, got {t!r}")
        return out

    # ---------------------------------------------------------------------------------------------
    # rounds: at most one event per NPC each, in per-NPC input order
    def _rounds(
        self, rows: np.ndarray, min_width: int = 0
    ) -> tuple[list[np.ndarray | None], np.ndarray | None]:
        """Split events into rounds holding at most one event per NPC, keeping each NPC's events in
        input order: round j holds every NPC's j-th event, in input order. A round is an index array
        into the events, or None for "all events" (no NPC twice, the common case).

        Returns (rounds, tail): rounds narrower than `min_width` events (they cost a round's numpy
        calls for a handful of events: one NPC's 20,000 events would be 20,000 rounds) are left
        to the caller's per-event path as `tail`, the indices of their events in input order (None:
        no tail). Events are grouped by NPC once (no sort when they already come grouped, as a game
        loop gives each NPC's perceptions together), and round j + 1 is made only from the NPCs
        that had more than j + 1 events, so the cost is linear in events whatever their distribution."""
        n = rows.shape[0]
        if n < 2 or bool((rows[1:] > rows[:-1]).all()):
            self._increasing = rows
            return [None], None
        order: np.ndarray | None = None  # None: already grouped by NPC (rows non-decreasing)
        if not bool((rows[1:] >= rows[:-1]).all()):
            mark = self._mark
            ar = np.arange(n)
            mark[rows] = n
            np.minimum.at(mark, rows, ar)
            if (mark[rows] == ar).all():  # no NPC twice
                return [None], None
            # a stable sort groups each NPC's events in input order (radix on 16-bit rows)
            keys = rows.astype(np.uint16) if self._alloc <= 1 << 16 else rows
            order = np.argsort(keys, kind="stable")
        grouped = rows if order is None else rows[order]
        starts = np.flatnonzero(np.concatenate(([True], grouped[1:] != grouped[:-1])))
        sizes = np.diff(np.append(starts, n))
        rounds: list[np.ndarray | None] = []
        j = 0
        while starts.shape[0] >= max(min_width, 1):
            members = starts + j  # each live NPC's j-th event, in grouped positions (ascending)
            rounds.append(members if order is None else np.sort(order[members]))
            j += 1
            more = sizes > j
            if not more.all():
                starts, sizes = starts[more], sizes[more]
        if not starts.shape[0]:
            return rounds, None
        counts = sizes - j  # the rest of each remaining NPC's events: positions starts + j ...
        total = int(counts.sum())
        firsts = np.cumsum(counts) - counts
        rest = np.repeat(starts + j - firsts, counts) + np.arange(total)
        return rounds, (rest if order is None else np.sort(order[rest]))

    # ---------------------------------------------------------------------------------------------
    # eviction key: free slot -2, forgotten (R < threshold) -1, else w_r R + w_e E; pinned +inf
    def _keys(  # noqa: PLR0917
        self,
        last: np.ndarray,
        stab: np.ndarray,
        sal: np.ndarray,
        typ: np.ndarray,
        pin: np.ndarray,
        now: float,
        out: np.ndarray,
        rbuf: np.ndarray,
        mbuf: np.ndarray,
        any_free: bool,
        any_pin: bool,
    ) -> np.ndarray:
        """Eviction key: free slot -2, forgotten (R < threshold) -1, else w_r R + w_e E; pinned +inf.

        R here is e^max(x, -10) rather than the exactly-0 clamped value: the two differ only where
        R < e^-10 < threshold, which maps to -1 either way, so the key is the same and a pass is saved."""
        p = self._p
        if p.curve == "exponential":
            np.subtract(last, now, out=rbuf)
            if now < self._tmax:
                np.minimum(rbuf, 0.0, out=rbuf)
            np.divide(rbuf, stab, out=rbuf)
            np.maximum(rbuf, EXPONENT_FLOOR, out=rbuf)
            r = np.exp(rbuf, out=rbuf)
        else:
            r = retrievability(last, stab, now, p, out=rbuf, mask=mbuf)
        np.less(r, p.forget_threshold, out=mbuf)
        np.multiply(r, p.eviction_weight_r, out=out)
        np.multiply(sal, p.eviction_weight_e, out=rbuf)  # R is no longer needed
        np.add(out, rbuf, out=out)
        np.copyto(out, -1.0, where=mbuf)
        if any_free:
            np.less(typ, 0, out=mbuf)
            np.copyto(out, -2.0, where=mbuf)
        if any_pin:
            np.copyto(out, np.inf, where=pin)
        return out

    def _batch_keys(self, u: np.ndarray, now: float) -> np.ndarray:
        """Keys of rows `u` (distinct), written into a (rows, capacity) scratch indexed by row."""
        cap = self._C
        keys = self._scratch.get("K")
        if keys is None or keys.shape[0] < self._alloc:
            keys = self._scratch["K"] = np.empty((self._alloc, cap))
        sel = _selector(u)
        m = u.shape[0]
        shape = (m, cap)
        rbuf = self._buf("KR", m * cap, np.float64).reshape(shape)
        mbuf = self._buf("KM", m * cap, bool).reshape(shape)
        any_free = bool((self._used[sel] < cap).any())
        any_pin = bool(self._pinned[sel].any())
        if isinstance(sel, slice):
            self._keys(
                self._last[sel],
                self._stab[sel],
                self._sal[sel],
                self._typ[sel],
                self._pin[sel],
                now,
                keys[sel],
                rbuf,
                mbuf,
                any_free,
                any_pin,
            )
        else:
            out = self._buf("KO", m * cap, np.float64).reshape(shape)
            keys[sel] = self._keys(
                self._last[sel],
                self._stab[sel],
                self._sal[sel],
                self._typ[sel],
                self._pin[sel],
                now,
                out,
                rbuf,
                mbuf,
                any_free,
                any_pin,
            )
        return keys

    def _flat_keys(self, fi: np.ndarray, now: float) -> np.ndarray:
        n = fi.shape[0]
        return self._keys(
            self._lastf[fi],
            self._stabf[fi],
            self._salf[fi],
            self._typf[fi],
            self._pinf[fi],
            now,
            np.empty(n),
            np.empty(n),
            np.empty(n, dtype=bool),
            True,
            True,
        )

    # ---------------------------------------------------------------------------------------------
    # recording
    def record(
        self,
        npc: int,
        entity: int,
        memory_type: int,
        salience: float,
        now: float,
        *,
        tags: Iterable[str] | None = None,
    ) -> None:
        """Perceive one event: rehearse the matching memory (same entity and type, whatever its R)
        or form a new one, evicting when the NPC's working memory is full. A batch of one: the
        common case (plain Python numbers, no tags, no links) runs a scalar path with the batch's
        arithmetic; anything else (and every bad input, for its error) goes through `record_batch`."""
        if (
            tags is None
            and type(now) is float
            and type(npc) is int
            and type(entity) is int
            and (type(memory_type) is int or type(memory_type) is MemoryType)  # MemoryType.HOSTILE too
            and (type(salience) is float or type(salience) is int)
            and self._record_one(npc, entity, int(memory_type), float(salience), now)
        ):
            return
        self.record_batch(
            np.array([npc]) if not isinstance(npc, np.ndarray) else npc,
            np.array([entity]) if not isinstance(entity, np.ndarray) else entity,
            np.array([memory_type]) if not isinstance(memory_type, np.ndarray) else memory_type,
            np.array([salience]) if not isinstance(salience, np.ndarray) else salience,
            now,
            tags=None if tags is None else [tags],
        )

    def _record_one(  # noqa: PLR0917
        self,
        npc: int,
        entity: int,
        memory_type: int,
        salience: float,
        now: float,
        keys: dict[int, np.ndarray] | None = None,
    ) -> bool:
        """`record_batch` of one well-formed event, on the row's values in plain Python: the same
        IEEE operations in the same order (ln(1 + k) from numpy's table, eviction keys by `_keys`),
        so the same bits. False (nothing changed) when it does not apply: bad input, an NPC with
        links or a row of pinned memories, the empty-slot id; those go through the batch path.

        `keys`: row -> eviction keys at `now`, kept current across a run of calls at one `now`
        (as a batch's rounds keep theirs), so a row's keys are computed once, not per eviction."""
        if not (
            -MAX_TIME <= now <= MAX_TIME
            and 0 <= npc < self._next_id
            and _INT64_MIN < entity <= _INT64_MAX
            and 0 <= memory_type <= 4
            and salience - salience == 0.0  # finite
        ):
            return False
        row = self._row_of_id.item(npc)
        cap = self._C
        if row < 0 or self._links.get(npc) or self._pinned.item(row) >= cap:
            return False
        if not 0.0 <= salience <= 1.0:  # np.clip's result (it keeps -0.0 as well)
            salience = 0.0 if salience < 0.0 else 1.0
        p = self._p
        self._clock = now
        base = row * cap
        match, same = self._slots_of(row, entity, memory_type)
        if match >= 0:
            f = base + match
            lastf = self._lastf
            last_old = lastf.item(f)
            lastf[f] = now
            self._emitf[f] = False
            if now - last_old >= p.rehearsal_refractory_s:
                k = self._kf.item(f) + 1
                self._kf[f] = k
                e_old = self._salf.item(f)
                e_new = e_old if e_old > salience else salience  # np.maximum(old, new)
                self._salf[f] = e_new
                s_new = self._stabf.item(f) * (1.0 + p.alpha * _ln1p(k) * e_new)
                self._stabf[f] = s_new if s_new < p.max_stability else p.max_stability
                if self._events_on:
                    self._ev.append((int(EventKind.REHEARSED), npc, entity, memory_type))
                if same and e_new >= p.consolidation_min_salience and p.consolidation_factor != 0.0:
                    factor = 1.0 + (p.consolidation_factor * p.alpha) * _ln1p(k) * e_new
                    stabf = self._stabf
                    for g in same:
                        s_g = stabf.item(base + g) * factor
                        stabf[base + g] = s_g if s_g < p.max_stability else p.max_stability
                    if keys is not None:
                        keys.pop(row, None)  # other slots' S changed: their keys are stale
            if keys is not None and row in keys:
                # accessed at `now`: R is exactly 1, the key w_e E + w_r (as `_keys` gives it)
                keys[row][match] = (
                    math.inf
                    if self._pinf.item(f)
                    else self._salf.item(f) * p.eviction_weight_e + p.eviction_weight_r
                )
        else:
            if self._used.item(row) < cap:
                slot = self._typ[row].tobytes().find(b"\xff")  # the lowest free slot (key -2)
                self._used[row] += 1
            else:
                if keys is None:
                    slot = self._evict_slot(row, now)
                else:
                    row_keys = keys.get(row)
                    if row_keys is None:
                        row_keys = keys[row] = self._evict_keys(row, now).copy()
                    slot = int(row_keys.argmin())
                f = base + slot
                if self._events_on:
                    self._ev.append((int(EventKind.EVICTED), npc, self._entf.item(f), self._typf.item(f)))
            f = base + slot
            self._entf[f] = entity
            self._hf[f] = _hash_one(entity)
            self._typf[f] = memory_type
            self._lastf[f] = now
            s0 = self._base.item(memory_type) * (0.5 + salience)
            self._stabf[f] = s0 if s0 < p.max_stability else p.max_stability
            self._salf[f] = salience
            self._kf[f] = 1
            self._pinf[f] = False
            self._emitf[f] = False
            if self._tags is not None:
                self._tags.reshape(-1)[f] = None
            if self._events_on:
                self._ev.append((int(EventKind.FORMED), npc, entity, memory_type))
            if keys is not None and row in keys:
                keys[row][slot] = salience * p.eviction_weight_e + p.eviction_weight_r
        self._tmax = max(self._tmax, now)
        return True

    def _slots_of(self, row: int, entity: int, memory_type: int) -> tuple[int, list[int]]:
        """The slot of the row's memory of (entity, type) (-1: none) and the row's other memories
        of the entity: one bytes search for the 16-bit hash over the row's hashes (as the batch
        path compares hashes first), then the full id of each candidate."""
        hashes = self._h[row].tobytes()
        key = _hash_one(entity).to_bytes(2, "little")
        base = row * self._C
        entf, typf = self._entf, self._typf
        match = -1
        same: list[int] = []
        at = hashes.find(key)
        while at >= 0:
            if at & 1:  # straddles two slots
                at = hashes.find(key, at + 1)
                continue
            slot = at >> 1
            if entf.item(base + slot) == entity:
                t = typf.item(base + slot)
                if t == memory_type:
                    match = slot
                elif t >= 0:
                    same.append(slot)
            at = hashes.find(key, at + 2)
        return match, same

    def _evict_slot(self, row: int, now: float) -> int:
        """The slot a new memory takes in a full row: the lowest eviction key, computed by `_keys`
        as the batch path does for a batch holding only this row."""
        return int(self._evict_keys(row, now).argmin())

    def _evict_keys(self, row: int, now: float) -> np.ndarray:
        """The eviction keys of a full row's slots (a scratch view)."""
        cap = self._C
        sel = slice(row, row + 1)
        shape = (1, cap)
        keys = self._keys(
            self._last[sel],
            self._stab[sel],
            self._sal[sel],
            self._typ[sel],
            self._pin[sel],
            now,
            self._buf("KO", cap, np.float64).reshape(shape),
            self._buf("KR", cap, np.float64).reshape(shape),
            self._buf("KM", cap, bool).reshape(shape),
            False,
            bool(self._pinned.item(row)),
        )
        return keys.reshape(-1)

    @_one_thread
    def record_batch(
        self,
        npcs: Any,
        entities: Any,
        memory_types: Any,
        saliences: Any,
        now: float,
        *,
        tags: Sequence[Iterable[str] | None] | None = None,
    ) -> None:
        """Perceive many events at time `now` (arrays of equal length; `memory_types` and
        `saliences` may be scalars). Events of one NPC apply in input order."""
        now = self._time(now)
        ids, rows = self._rows(npcs)
        n = rows.shape[0]
        ent = self._int64(entities, "entities")
        typ = self._types(memory_types, n)
        sal = self._saliences(saliences, n)
        if not ent.shape[0] == typ.shape[0] == sal.shape[0] == n:
            raise ValueError(
                f"record_batch needs equally long inputs, got npcs {n}, entities {ent.shape[0]}, "
                f"memory_types {typ.shape[0]}, saliences {sal.shape[0]}"
            )
        tag_sets: list[frozenset[str]] | None = None
        if tags is not None:
            if isinstance(tags, str):  # would be split into one letter per event
                raise TypeError("record_batch tags must be one tag list per event, got a string")
            if len(tags) != n:
                raise ValueError(f"tags needs one entry per event ({n}), got {len(tags)}")
            tag_sets = [self._tag_set(t) for t in tags]
            if not any(tag_sets):
                tag_sets = None
        if n and self._pinned[rows].max() >= self._C:
            self._check_pinned_full(ids, rows, ent, typ)
        self._clock = now  # the call is accepted: only now does the pool's clock move
        if n == 0:
            return
        if tag_sets is not None:
            self._ensure_tags()
        rounds, tail = self._rounds(rows, _NARROW_ROUND)
        hq = entity_hash(ent)

        def one_round(ev: np.ndarray, state: dict[str, Any]) -> None:
            self._record_round(rows[ev], hq[ev], ent[ev], typ[ev], sal[ev], ids[ev], now, tag_sets, ev, state)

        if rounds:
            state: dict[str, Any] = {"K": None, "u": rows if rounds[0] is None else rows[rounds[0]]}
            for ev in rounds:
                if ev is None:
                    self._record_round(rows, hq, ent, typ, sal, ids, now, tag_sets, None, state)
                else:
                    one_round(ev, state)
        if tail is not None:
            self._record_tail(tail, rows, ids, ent, typ, sal, now, tag_sets is None, one_round)
        self._tmax = max(self._tmax, now)

    def _record_tail(  # noqa: PLR0917
        self,
        tail: np.ndarray,
        rows: np.ndarray,
        ids: np.ndarray,
        ent: np.ndarray,
        typ: np.ndarray,
        sal: np.ndarray,
        now: float,
        scalar: bool,
        one_round: Callable[[np.ndarray, dict[str, Any]], None],
    ) -> None:
        """The events of narrow rounds, one at a time in input order (NPCs never share memories, so
        only each NPC's own order matters): the scalar path where it applies (`scalar`: no tags),
        else `one_round` of that event alone."""
        keys: dict[int, np.ndarray] = {}  # eviction keys of the rows seen, kept current
        for i, npc, entity, memory_type, salience in zip(
            tail.tolist(), ids[tail].tolist(), ent[tail].tolist(), typ[tail].tolist(), sal[tail].tolist(),
            strict=True,
        ):  # fmt: skip
            if scalar and self._record_one(npc, entity, memory_type, salience, now, keys):
                continue
            one = np.array([i])
            keys.pop(int(rows[i]), None)
            one_round(one, {"K": None, "u": rows[one]})

    def _check_pinned_full(self, ids: np.ndarray, rows: np.ndarray, ent: np.ndarray, typ: np.ndarray) -> None:
        for i in np.flatnonzero(self._pinned[rows] >= self._C).tolist():
            r = int(rows[i])
            if not ((self._ent[r] == ent[i]) & (self._typ[r] == typ[i])).any():
                raise PoolFullError(
                    f"npc {int(ids[i])}: all {self._C} working slots are pinned, no room for a new memory of "
                    f"entity {int(ent[i])} ({MemoryType(int(typ[i])).name}); unpin one or raise capacity"
                )

    def _record_round(  # noqa: PLR0917
        self,
        rr: np.ndarray,
        hq: np.ndarray,
        ent: np.ndarray,
        typ: np.ndarray,
        sal: np.ndarray,
        ids: np.ndarray,
        now: float,
        tag_sets: list[frozenset[str]] | None,
        ev: np.ndarray | None,
        state: dict[str, Any],
    ) -> None:
        p, cap = self._p, self._C
        m = rr.shape[0]
        sel = _selector(rr)
        eq = self._buf("eq", m * cap, bool).reshape(m, cap)
        np.equal(self._h[sel], hq[:, None], out=eq)
        nz = np.flatnonzero(eq)
        ri = nz // cap
        fi = rr[ri] * cap + (nz - ri * cap)
        same = self._entf[fi] == ent[ri]  # the hash matched; now the full id
        if not same.all():
            ri, fi = ri[same], fi[same]
        tm = self._typf[fi] == typ[ri]
        mi = ri[tm]  # matched events (at most one slot each: keys are unique per NPC)
        mf = fi[tm]
        touched = [mf]
        new_f = cons_f = None
        # ---- rehearsal / refresh
        woke_f = woke_e = woke_k = woke_s = None
        if mi.shape[0]:
            last_old = self._lastf[mf]
            self._lastf[mf] = now
            self._emitf[mf] = False
            reh = (now - last_old) >= p.rehearsal_refractory_s
            if reh.any():
                hf, he = mf[reh], mi[reh]
                k = self._kf[hf] + 1
                self._kf[hf] = k
                e_new = np.maximum(self._salf[hf], sal[he])
                self._salf[hf] = e_new
                s_new = self._stabf[hf] * (1.0 + p.alpha * np.log(1.0 + k) * e_new)
                np.minimum(s_new, p.max_stability, out=s_new)
                self._stabf[hf] = s_new
                woke_f, woke_e, woke_k, woke_s = hf, he, k, e_new
                if self._events_on:
                    self._emit_event(EventKind.REHEARSED, ids[he], self._entf[hf], self._typf[hf])
            if tag_sets is not None:
                tags = self._tags.reshape(-1)  # type: ignore[union-attr]
                for e, f in zip(mi.tolist(), mf.tolist(), strict=True):
                    t = tag_sets[e if ev is None else int(ev[e])]
                    if t:
                        tags[f] = t if tags[f] is None else tags[f] | t
        # ---- new memories
        if mi.shape[0] < m:
            if mi.shape[0]:
                un = np.ones(m, dtype=bool)
                un[mi] = False
                ue = np.flatnonzero(un)
            else:
                ue = None  # every event of the round
            keys = state["K"]
            if keys is None:
                keys = state["K"] = self._batch_keys(state["u"], now)
            if ue is None:
                slots = keys[sel].argmin(axis=1)
                nrows, ne = rr, slice(None)
            elif ue.shape[0] * 4 >= m:
                slots = keys[sel].argmin(axis=1)[ue]
                nrows, ne = rr[ue], ue
            else:
                nrows, ne = rr[ue], ue
                slots = keys[nrows].argmin(axis=1)
            nf = nrows * cap + slots
            old_typ = self._typf[nf]
            evicted = old_typ >= 0
            n_evicted = int(np.count_nonzero(evicted))
            if self._events_on and n_evicted:
                ev_ids = ids[ne][evicted]
                self._emit_event(EventKind.EVICTED, ev_ids, self._entf[nf][evicted], old_typ[evicted])
            if n_evicted < nf.shape[0]:
                self._used[nrows[~evicted]] += 1
            t_new = typ[ne]
            s_new = sal[ne]
            self._entf[nf] = ent[ne]
            self._hf[nf] = hq[ne]
            self._typf[nf] = t_new
            self._lastf[nf] = now
            self._stabf[nf] = np.minimum(self._base[t_new] * (0.5 + s_new), p.max_stability)
            self._salf[nf] = s_new
            self._kf[nf] = 1
            self._pinf[nf] = False
            self._emitf[nf] = False
            if self._tags is not None:
                tags = self._tags.reshape(-1)
                events = range(m) if ue is None else ue.tolist()
                for e, f in zip(events, nf.tolist(), strict=True):
                    tags[f] = (
                        None if tag_sets is None else (tag_sets[e if ev is None else int(ev[e])] or None)
                    )
            if self._events_on:
                self._emit_event(EventKind.FORMED, ids[ne], ent[ne], t_new)
            new_f = nf
        # ---- associative consolidation of what woke with E >= threshold
        if woke_f is not None:
            tf = self._consolidate(ri, fi, rr, woke_f, woke_e, woke_k, woke_s, m, ids)
            if tf is not None:
                cons_f = tf[0]
        # ---- keep the batch's eviction keys current for the slots this round changed
        keys = state["K"]
        if keys is not None:
            # every slot this round rehearsed, refreshed or formed was accessed at `now`, so its R is
            # exactly 1 and its key is w_e E + w_r (the same bits _keys gives); pinned stays +inf
            kf = keys.reshape(-1)
            fresh = touched[0]
            if fresh.shape[0]:
                key = self._salf[fresh] * p.eviction_weight_e + p.eviction_weight_r
                key[self._pinf[fresh]] = np.inf
                kf[fresh] = key
            if new_f is not None:
                kf[new_f] = self._salf[new_f] * p.eviction_weight_e + p.eviction_weight_r
            if cons_f is not None:
                kf[cons_f] = self._flat_keys(cons_f, now)

    def _consolidate(  # noqa: PLR0917
        self,
        ri: np.ndarray,
        fi: np.ndarray,
        rr: np.ndarray,
        woke_f: np.ndarray,
        woke_e: np.ndarray,
        woke_k: np.ndarray,
        woke_s: np.ndarray,
        m: int,
        ids: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Boost the other memories of each woken memory's entity (`ri`/`fi`: this round's entity
        matches) and its linked memories. Does not chain. Returns (flat slots, events) boosted."""
        p = self._p
        strong = woke_s >= p.consolidation_min_salience
        if not strong.any() or p.consolidation_factor == 0.0:
            return None
        wf, we = woke_f[strong], woke_e[strong]  # `we` ascends: events come in order
        factor = 1.0 + (p.consolidation_factor * p.alpha) * np.log(1.0 + woke_k[strong]) * woke_s[strong]
        # only events that matched two or more memories of their entity have same-entity targets
        tf = te = tfac = np.empty(0, dtype=np.int64)
        if ri.shape[0] > 1:
            d = ri[1:] == ri[:-1]
            if d.any():
                both = np.zeros(ri.shape[0], dtype=bool)
                both[1:] = d
                both[:-1] |= d
                ri_m, fi_m = ri[both], fi[both]
                pos = np.minimum(np.searchsorted(we, ri_m), we.shape[0] - 1)
                tsel = (we[pos] == ri_m) & (fi_m != wf[pos]) & (self._typf[fi_m] >= 0)
                tf, te, tfac = fi_m[tsel], ri_m[tsel], factor[pos[tsel]]
        if self._links:
            extra_f: list[int] = []
            extra_e: list[int] = []
            for e, f in zip(we.tolist(), wf.tolist(), strict=True):
                npc = int(ids[e])
                links = self._links.get(npc)
                if not links:
                    continue
                for g in self._linked_slots(npc, int(rr[e]), int(self._entf[f]), int(self._typf[f])):
                    if g != f and not np.any(tf[te == e] == g):
                        extra_f.append(g)
                        extra_e.append(e)
            if extra_f:
                extra_e_arr = np.asarray(extra_e, dtype=np.int64)
                tf = np.concatenate([tf, np.asarray(extra_f, dtype=np.int64)])
                te = np.concatenate([te, extra_e_arr])
                tfac = np.concatenate([tfac, factor[np.searchsorted(we, extra_e_arr)]])
        if not tf.shape[0]:
            return None
        s = self._stabf[tf] * tfac
        np.minimum(s, p.max_stability, out=s)
        self._stabf[tf] = s
        return tf, te

    def _linked_slots(self, npc: int, row: int, entity: int, memory_type: int) -> list[int]:
        links = self._links.get(npc, {})
        keys = links.get((entity, memory_type), set()) | links.get((entity, -1), set())
        out: list[int] = []
        cap = self._C
        for e2, t2 in keys:
            m = (self._ent[row] == e2) & (self._typ[row] >= 0)
            if t2 >= 0:
                m &= self._typ[row] == t2
            out.extend((row * cap + np.flatnonzero(m)).tolist())
        return sorted(set(out))

    def _emit_event(self, kind: EventKind, npcs: np.ndarray, ents: np.ndarray, typs: np.ndarray) -> None:
        if npcs.shape[0]:
            self._ev.append(
                (
                    int(kind),
                    np.array(npcs, dtype=np.int64),
                    np.array(ents, dtype=np.int64),
                    np.array(typs, dtype=np.int8),
                )
            )

    # ---------------------------------------------------------------------------------------------
    # recall
    def query_strongest(self, npc: int, entity: int, now: float) -> MemoryView | None:
        """The NPC's strongest memory of `entity` if its R is above the forget threshold, else None.
        The recall wakes it (last access = now, k + 1, S unchanged); R is reported as it was before
        the wake. Only this and `query_strongest_batch` change state among the read calls."""
        if type(now) is float and type(npc) is int and type(entity) is int:
            found = self._query_one(npc, entity, now)
            if found is not _BATCH:
                return found  # type: ignore[return-value]
        return self.query_strongest_batch(np.array([npc]), np.array([entity]), now).view(0)

    def _query_one(self, npc: int, entity: int, now: float) -> MemoryView | object | None:
        """`query_strongest_batch` of one query on the row's values in plain Python, or `_BATCH`
        when it does not apply (bad input, the power curve, links, long-term memories). The
        candidates' R come from one numpy exp, so they have the batch path's bits."""
        if not (
            -MAX_TIME <= now <= MAX_TIME
            and 0 <= npc < self._next_id
            and _INT64_MIN < entity <= _INT64_MAX
            and self._is_exponential
        ):
            return _BATCH
        row = self._row_of_id.item(npc)
        if row < 0 or self._links.get(npc) or (self._lt.size and self._ltn.item(row)):
            return _BATCH
        self._clock = now
        _, slots = self._slots_of(row, entity, -1)
        if not slots:
            return None
        base = row * self._C
        lastf, stabf = self._lastf, self._stabf
        clamp = now < self._tmax
        x = self._q1x[: len(slots)]
        for i, slot in enumerate(slots):
            d = lastf.item(base + slot) - now
            if clamp and d > 0.0:
                d = 0.0
            x[i] = d / stabf.item(base + slot)
        rs = np.exp(x, out=x).tolist()
        best_r = max(rs)  # ties: the lowest slot (slots ascend)
        p = self._p
        if not best_r > p.forget_threshold:
            return None
        best = slots[rs.index(best_r)]
        f = base + best
        k = self._kf.item(f) + 1
        sal = self._salf.item(f)
        self._tmax = max(self._tmax, now)
        lastf[f] = now
        self._kf[f] = k
        self._emitf[f] = False
        if len(slots) > 1 and sal >= p.consolidation_min_salience and p.consolidation_factor != 0.0:
            factor = 1.0 + (p.consolidation_factor * p.alpha) * _ln1p(k) * sal
            for g in slots:
                if g != best:
                    s_g = stabf.item(base + g) * factor
                    stabf[base + g] = s_g if s_g < p.max_stability else p.max_stability
        memory_type = self._typf.item(f)
        if self._events_on:
            self._ev.append((int(EventKind.RECALLED), npc, entity, memory_type))
        tags = self._tags.reshape(-1)[f] if self._tags is not None else None
        return MemoryView(  # positional: npc, entity, type, R, S, E, k, tier, slot, age, pinned, tags
            npc,
            entity,
            _MEMORY_TYPES[memory_type],
            best_r,
            stabf.item(f),
            sal,
            k,
            Tier.WORKING,
            best,
            0.0,
            self._pinf.item(f),
            tags or _EMPTY_TAGS,
        )

    @_one_thread
    def query_strongest_batch(self, npcs: Any, entities: Any, now: float) -> QueryBatch:
        """`query_strongest` for many (npc, entity) pairs; pairs of one NPC apply in input order."""
        return self._query(npcs, entities, now, wake=True)

    def awareness(self, npc: int, entity: int, now: float) -> Awareness:
        """The layered response to the strongest memory of `entity`. Never wakes anything."""
        if type(now) is float and type(npc) is int and type(entity) is int:
            level = self._awareness_one(npc, entity, now)
            if level >= 0:
                return _AWARENESS[level]
        return Awareness(int(self.awareness_batch(np.array([npc]), np.array([entity]), now)[0]))

    def _awareness_one(self, npc: int, entity: int, now: float) -> int:
        """`awareness_batch` of one query in plain Python, or -1 when it does not apply (bad input,
        the power curve, long-term memories: the batch path decides those). R = e^x with x as the
        batch path computes it; `math.exp` decides the level unless R lies within a relative 1e-12
        of a threshold, where numpy's exp (the batch path's bits) decides."""
        if not (
            -MAX_TIME <= now <= MAX_TIME
            and 0 <= npc < self._next_id
            and _INT64_MIN < entity <= _INT64_MAX
            and self._is_exponential
        ):
            return -1
        row = self._row_of_id.item(npc)
        if row < 0 or (self._lt.size and self._ltn.item(row)):
            return -1
        self._clock = now
        match, same = self._slots_of(row, entity, -1)
        if match < 0 and not same:
            return 0
        base = row * self._C
        lastf, stabf = self._lastf, self._stabf
        clamp = now < self._tmax
        best = -math.inf
        for slot in same:
            x = lastf.item(base + slot) - now
            if clamp and x > 0.0:
                x = 0.0
            x /= stabf.item(base + slot)
            best = max(best, x)
        r = math.exp(best)
        bounds = self._level_bounds
        if any(abs(r - b) <= 1e-12 * b for b in bounds):
            r = float(np.exp(np.array([best]))[0])
        if not r > bounds[0]:  # the forget threshold: not remembered
            return 0
        return (r > bounds[1]) + (r > bounds[2]) + (r > bounds[3])

    @_one_thread
    def awareness_batch(self, npcs: Any, entities: Any, now: float) -> np.ndarray:
        """`awareness` for many pairs, as an int8 array of `Awareness` values. Never wakes."""
        r = self._query(npcs, entities, now, wake=False).retrievability
        return np.searchsorted(self._levels, r, side="left").astype(np.int8)

    def awareness_of(self, retrievability_value: float) -> Awareness:
        """The `Awareness` level of a retrievability value under this pool's thresholds."""
        p = self._p
        r = float(retrievability_value)
        if r > p.awareness_pursue:
            return Awareness.PURSUE
        if r > p.awareness_search:
            return Awareness.SEARCH
        if r > p.forget_threshold:
            return Awareness.PUZZLED
        return Awareness.NONE

    def _query(self, npcs: Any, entities: Any, now: float, wake: bool) -> QueryBatch:
        now = self._time(now)
        ids, rows = self._rows(npcs)
        ent = self._int64(entities, "entities")
        n = rows.shape[0]
        if ent.shape[0] != n:
            raise ValueError(f"queries need equally long inputs, got npcs {n}, entities {ent.shape[0]}")
        self._clock = now
        self._increasing = None
        rounds, tail = self._rounds(rows, _NARROW_ROUND) if wake and n else ([None], None)
        return self._query_rounds(rows, ent, ids, now, wake, rounds, tail)

    def _query_rounds(  # noqa: PLR0917
        self,
        rows: np.ndarray,
        ent: np.ndarray,
        ids: np.ndarray,
        now: float,
        wake: bool,
        rounds: list[np.ndarray | None],
        tail: np.ndarray | None = None,
    ) -> QueryBatch:
        """Run the rounds of a query batch (`_query_round` each) and the `tail` of narrow rounds
        (`_query_tail`), and join them."""
        n = rows.shape[0]
        r_out = np.zeros(n)
        hits: list[np.ndarray] = []
        fields: list[dict[str, Any]] = []
        if n:
            for ev in rounds:
                if ev is None:
                    h, r, f = self._query_round(rows, ent, ids, now, wake)
                else:
                    h, r, f = self._query_round(rows[ev], ent[ev], ids[ev], now, wake)
                    h = ev[h]
                r_out[h] = r
                hits.append(h)
                fields.append(f)
            for h, r, f in self._query_tail(tail, rows, ent, ids, now) if tail is not None else ():
                r_out[h] = r
                hits.append(h)
                fields.append(f)
        if len(hits) == 1:
            hit, hit_fields = hits[0], fields[0]
        elif hits:
            hit = np.concatenate(hits)
            hit_fields = {}
            for name in ("entity", "memory_type", "stability", "salience", "recall_count", "slot", "pinned"):
                hit_fields[name] = np.concatenate([f[name] for f in fields])
            if any("tier" in f for f in fields):
                hit_fields["tier"] = np.concatenate(
                    [f.get("tier", np.zeros(len(f["slot"]), np.int8)) for f in fields]
                )
            if any("tags" in f for f in fields):
                hit_fields["tags"] = [
                    t for f in fields for t in f.get("tags", [_EMPTY_TAGS] * len(f["slot"]))
                ]
        else:
            hit, hit_fields = np.empty(0, dtype=np.int64), {}
        return QueryBatch(n, ids, r_out, hit, hit_fields)

    def _query_tail(
        self, tail: np.ndarray, rows: np.ndarray, ent: np.ndarray, ids: np.ndarray, now: float
    ) -> list[tuple[np.ndarray, np.ndarray, dict[str, Any]]]:
        """The waking queries of narrow rounds, one at a time in input order (as `_record_tail`):
        the scalar path where it applies, else a round of one. (hits, R, fields) parts."""
        parts: list[tuple[np.ndarray, np.ndarray, dict[str, Any]]] = []
        found: list[tuple[int, MemoryView]] = []
        for i, npc, entity in zip(tail.tolist(), ids[tail].tolist(), ent[tail].tolist(), strict=True):
            view = self._query_one(npc, entity, now)
            if view is _BATCH:
                one = np.array([i])
                h, r, f = self._query_round(rows[one], ent[one], ids[one], now, True)
                parts.append((one[h], r, f))
            elif view is not None:
                found.append((i, view))  # type: ignore[arg-type]
        if found:
            views = [view for _, view in found]
            fields: dict[str, Any] = {
                "entity": np.array([v.entity for v in views], dtype=np.int64),
                "memory_type": np.array([v.memory_type for v in views], dtype=np.int8),
                "stability": np.array([v.stability for v in views]),
                "salience": np.array([v.salience for v in views]),
                "recall_count": np.array([v.recall_count for v in views], dtype=np.int64),
                "slot": np.array([v.slot for v in views], dtype=np.int64),
                "pinned": np.array([v.pinned for v in views], dtype=bool),
            }
            if self._tags is not None:
                fields["tags"] = [v.tags for v in views]
            hit = np.array([i for i, _ in found], dtype=np.int64)
            parts.append((hit, np.array([v.retrievability for v in views]), fields))
        return parts

    def _query_round(
        self, rr: np.ndarray, ent: np.ndarray, ids: np.ndarray, now: float, wake: bool
    ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        p, cap = self._p, self._C
        m = rr.shape[0]
        sel = _selector(rr, self._increasing is rr)
        eq = self._buf("qeq", m * cap, bool).reshape(m, cap)
        np.equal(self._h[sel], entity_hash(ent)[:, None], out=eq)
        nz = np.flatnonzero(eq)
        ri = nz // cap
        fi = nz + sel.start * cap if isinstance(sel, slice) else rr[ri] * cap + (nz - ri * cap)
        same = self._entf[fi] == ent[ri]
        if not same.all():
            ri, fi = ri[same], fi[same]
        # does any query see two or more memories of its entity (several types)? then pick the best
        # of each and consolidate; otherwise both steps are no-ops and skipped
        multi = ri.shape[0] > 1 and not bool((ri[1:] != ri[:-1]).all())
        if p.curve == "exponential":
            # plain e^x: it differs from the clamped R only below e^-10 < threshold, where both
            # mean "not remembered"; every R kept below is the exact clamped value
            r = self._lastf[fi] - now
            if now < self._tmax:
                np.minimum(r, 0.0, out=r)
            r /= self._stabf[fi]
            np.exp(r, out=r)
        else:
            r = retrievability(self._lastf[fi], self._stabf[fi], now, p)
        ok = r > p.forget_threshold
        ri_ok, fi_ok, r_ok = ri[ok], fi[ok], r[ok]
        new = None
        if multi and ri_ok.shape[0] > 1:
            new = np.empty(ri_ok.shape[0], dtype=bool)
            new[0] = True
            np.not_equal(ri_ok[1:], ri_ok[:-1], out=new[1:])
        if new is not None and not new.all():
            # hits are grouped by event, slots ascending: per group keep the first maximum of R
            # (highest R, ties to the lowest slot) without sorting
            starts = np.flatnonzero(new)
            group = np.cumsum(new) - 1
            best = np.maximum.reduceat(r_ok, starts)
            cand = np.flatnonzero(r_ok == best[group])
            g = group[cand]
            keep = np.empty(cand.shape[0], dtype=bool)
            keep[0] = True
            np.not_equal(g[1:], g[:-1], out=keep[1:])
            sel_i = cand[keep]
            be, bf, br = ri_ok[sel_i], fi_ok[sel_i], r_ok[sel_i]
        else:
            be, bf, br = ri_ok, fi_ok, r_ok
        lt_e: list[int] = []
        lt_row: list[int] = []
        lt_r: list[float] = []
        if self._lt.size and self._ltn[rr].any():
            be, bf, br, lt_e, lt_row, lt_r = self._query_longterm(rr, ent, ids, be, bf, br)
        sal = self._salf[bf]
        if wake and bf.shape[0]:
            self._tmax = max(self._tmax, now)
            self._lastf[bf] = now
            k = self._kf[bf] + 1
            self._kf[bf] = k
            self._emitf[bf] = False
            if multi or self._links:
                self._consolidate(ri, fi, rr, bf, be, k, sal, m, ids)
            if self._events_on:
                self._emit_event(EventKind.RECALLED, ids[be], self._entf[bf], self._typf[bf])
        else:
            k = self._kf[bf]
        fields: dict[str, Any] = {
            "entity": ent[be],
            "memory_type": self._typf[bf],
            "stability": self._stabf[bf],
            "salience": sal,
            "recall_count": k,
            "slot": bf % cap,
            "pinned": self._pinf[bf],
        }
        return self._finish_hits(be, bf, br, fields, ids, wake, lt_e, lt_row, lt_r)

    def _finish_hits(  # noqa: PLR0917
        self,
        be: np.ndarray,
        bf: np.ndarray,
        br: np.ndarray,
        fields: dict[str, Any],
        ids: np.ndarray,
        wake: bool,
        lt_e: list[int],
        lt_row: list[int],
        lt_r: list[float],
    ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """Wake the long-term winners, add tags and the long-term hits to a round's fields
        (of one query round)."""
        if wake and lt_row:
            for row in lt_row:
                self._lt.wake(row)
            if self._events_on:
                c = self._lt.cols
                self._emit_event(
                    EventKind.RECALLED,
                    ids[np.asarray(lt_e, dtype=np.int64)],
                    c["entity"][lt_row],
                    c["memory_type"][lt_row],
                )
        if self._tags is not None:
            fields["tags"] = [t or _EMPTY_TAGS for t in self._tags.reshape(-1)[bf].tolist()]
        if lt_row:
            c = self._lt.cols
            rows_lt = np.asarray(lt_row, dtype=np.int64)
            nw = be.shape[0]
            be = np.concatenate([be, np.asarray(lt_e, dtype=np.int64)])
            br = np.concatenate([br, np.asarray(lt_r)])
            lt_fields = {
                "entity": c["entity"][rows_lt],
                "memory_type": c["memory_type"][rows_lt],
                "stability": c["stability"][rows_lt],
                "salience": c["salience"][rows_lt],
                "recall_count": c["recall_count"][rows_lt],
                "slot": np.full(len(lt_row), -1),
                "pinned": np.zeros(len(lt_row), bool),
            }
            for name, arr in lt_fields.items():
                fields[name] = np.concatenate([fields[name], arr])
            fields["tier"] = np.concatenate([np.zeros(nw, np.int8), np.ones(len(lt_row), np.int8)])
            fields["tags"] = fields.get("tags", [_EMPTY_TAGS] * nw) + [self._lt.tags[i] for i in lt_row]
        return be, br, fields

    def _query_longterm(  # noqa: PLR0917
        self, rr: np.ndarray, ent: np.ndarray, ids: np.ndarray, be: np.ndarray, bf: np.ndarray, br: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int], list[int], list[float]]:
        """Let long-term memories compete: one wins only with a strictly higher R."""
        thr = self._p.forget_threshold
        best = dict(zip(be.tolist(), br.tolist(), strict=True))
        drop: list[int] = []
        lt_e: list[int] = []
        lt_row: list[int] = []
        lt_r: list[float] = []
        for e, (row, r) in self._longterm_best(rr, ent, ids).items():
            if r > thr and r > best.get(e, 0.0):
                if e in best:
                    drop.append(e)
                lt_e.append(e)
                lt_row.append(row)
                lt_r.append(r)
        if drop:
            keep = ~np.isin(be, drop)
            be, bf, br = be[keep], bf[keep], br[keep]
        return be, bf, br, lt_e, lt_row, lt_r

    def _longterm_best(
        self, rr: np.ndarray, ent: np.ndarray, ids: np.ndarray
    ) -> dict[int, tuple[int, float]]:
        """For each query whose NPC holds long-term memories of its entity: (row, R) of the
        strongest (the first of equal ones), in query order."""
        out: dict[int, tuple[int, float]] = {}
        for e in np.flatnonzero(self._ltn[rr] > 0).tolist():
            cands = self._lt.lookup(int(ids[e]), int(ent[e]))
            if not cands:
                continue
            rs = self._lt.retrievability(cands, self._p)
            j = int(np.argmax(rs))
            out[e] = (cands[j], float(rs[j]))
        return out

    # ---------------------------------------------------------------------------------------------
    # read-only views (never wake)
    def retrievability_all(self, now: float, out: np.ndarray | None = None) -> np.ndarray:
        """R of every working slot, shape (npc_count, capacity), rows as `npc_ids()`; 0 for empty slots."""
        now = self._time(now)
        n, cap = self._n, self._C
        if out is None:
            out = np.empty((n, cap))
        elif out.shape != (n, cap) or out.dtype != np.float64:
            raise ValueError(f"out must be a float64 array of shape {(n, cap)}, got {out.dtype} {out.shape}")
        self._clock = now
        return retrievability(
            self._last[:n],
            self._stab[:n],
            now,
            self._p,
            out=out,
            mask=self._buf("allmask", n * cap, bool).reshape(n, cap),
        )

    def forget_times(self) -> np.ndarray:
        """Analytic time at which each working memory's R reaches the forget threshold, shape
        (npc_count, capacity); +inf for empty slots. Valid until the memory is next woken."""
        n = self._n
        out = self._stab[:n] * self._forget_factor
        out += self._last[:n]
        out[self._typ[:n] < 0] = np.inf
        return out

    @_one_thread
    def pop_forgotten(self, now: float) -> ForgottenRows:
        """Working memories whose forget time has passed and were not reported since they were last
        woken or formed: each forgetting is reported exactly once, whatever the call rate."""
        now = self._time(now)
        n = self._n
        due = self._stab[:n] * self._forget_factor
        due += self._last[:n]
        hit = (due <= now) & (self._typ[:n] >= 0) & ~self._emit[:n]
        fi = np.flatnonzero(hit)
        self._emitf[fi] = True
        self._clock = now
        return ForgottenRows(
            self._row_npc[fi // self._C], self._entf[fi], self._typf[fi], due.reshape(-1)[fi]
        )

    @_one_thread
    def drain_events(self) -> MemoryEvents:
        """The events collected since the last drain (needs `MemoryPool(events=True)`)."""
        ev, self._ev = self._ev, []
        if not ev:
            return MemoryEvents(
                np.empty(0, np.int8), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int8)
            )
        parts: list[tuple[np.ndarray, ...]] = []
        singles: list[tuple[int, int, int, int]] = []
        for e in ev:
            if type(e[1]) is int:
                singles.append(e)
                continue
            if singles:
                parts.append(self._event_columns(singles))
                singles = []
            parts.append((np.full(e[1].shape[0], e[0], dtype=np.int8), e[1], e[2], e[3]))
        if singles:
            parts.append(self._event_columns(singles))
        return MemoryEvents(*(np.concatenate([part[i] for part in parts]) for i in range(4)))

    @staticmethod
    def _event_columns(singles: list[tuple[int, int, int, int]]) -> tuple[np.ndarray, ...]:
        kinds, npcs, ents, typs = zip(*singles, strict=True)
        return (
            np.array(kinds, dtype=np.int8),
            np.array(npcs, dtype=np.int64),
            np.array(ents, dtype=np.int64),
            np.array(typs, dtype=np.int8),
        )

    def _working_views(self, npc: int, row: int, now: float) -> list[MemoryView]:
        cap = self._C
        slots = np.flatnonzero(self._typ[row] >= 0)
        fi = row * cap + slots
        r = retrievability(self._lastf[fi], self._stabf[fi], now, self._p)
        tags = self._tags.reshape(-1)[fi].tolist() if self._tags is not None else [None] * fi.shape[0]
        return [
            MemoryView(
                npc=npc,
                entity=int(self._entf[f]),
                memory_type=MemoryType(int(self._typf[f])),
                retrievability=float(r[i]),
                stability=float(self._stabf[f]),
                salience=float(self._salf[f]),
                recall_count=int(self._kf[f]),
                tier=Tier.WORKING,
                slot=int(s),
                age=max(now - float(self._lastf[f]), 0.0),
                pinned=bool(self._pinf[f]),
                tags=tags[i] or _EMPTY_TAGS,
            )
            for i, (f, s) in enumerate(zip(fi.tolist(), slots.tolist(), strict=True))
        ]

    def _longterm_views(self, npc: int) -> list[MemoryView]:
        rows = self._lt.rows_for(npc)
        if not rows:
            return []
        r = self._lt.retrievability(rows, self._p)
        c = self._lt.cols
        return [
            MemoryView(
                npc=npc,
                entity=int(c["entity"][j]),
                memory_type=MemoryType(int(c["memory_type"][j])),
                retrievability=float(r[i]),
                stability=float(c["stability"][j]),
                salience=float(c["salience"][j]),
                recall_count=int(c["recall_count"][j]),
                tier=Tier.LONG_TERM,
                slot=-1,
                age=float(c["age"][j]),
                tags=self._lt.tags[j],
            )
            for i, j in enumerate(rows)
        ]

    def memories(self, npc: int, now: float) -> list[MemoryView]:
        """Every memory the NPC holds (working slots in slot order, then long-term), forgotten ones
        included (R = 0). Never wakes."""
        row = self._row(npc)
        now = self._time(now)
        self._clock = now
        return self._working_views(int(npc), row, now) + self._longterm_views(int(npc))

    def top_k(
        self, npc: int, now: float, k: int = 5, tags: Collection[str] | None = None
    ) -> list[MemoryView]:
        """The k memories to put in an LLM prompt, best first: score = R^w_r x E^w_i x relevance^w_t
        (relevance from shared tags when `tags` is given). Forgotten memories never appear. Never wakes."""
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
            raise ValueError(f"k must be a non-negative integer, got {k!r}")
        query = None if tags is None else self._tag_set(tags)
        return retrieval.top_k(self.memories(npc, now), int(k), query, self._p)

    # ---------------------------------------------------------------------------------------------
    # links and pins
    def link(
        self, npc: int, entity_a: int, entity_b: int, type_a: int | None = None, type_b: int | None = None
    ) -> None:
        """Tie memories of one NPC together: waking a memory of (entity_a, type_a) with E >= the
        consolidation threshold also consolidates the (entity_b, type_b) memories, and vice versa.
        A type of None means any type of that entity. Links survive eviction and are saved."""
        self._row(npc)
        a = (int(self._int64(entity_a, "entity")[0]), -1 if type_a is None else int(MemoryType(type_a)))
        b = (int(self._int64(entity_b, "entity")[0]), -1 if type_b is None else int(MemoryType(type_b)))
        if a == b:
            raise ValueError("a memory cannot be linked to itself")
        links = self._links.setdefault(int(npc), {})
        links.setdefault(a, set()).add(b)
        links.setdefault(b, set()).add(a)

    def unlink(
        self, npc: int, entity_a: int, entity_b: int, type_a: int | None = None, type_b: int | None = None
    ) -> None:
        self._row(npc)
        a = (int(entity_a), -1 if type_a is None else int(MemoryType(type_a)))
        b = (int(entity_b), -1 if type_b is None else int(MemoryType(type_b)))
        links = self._links.get(int(npc), {})
        links.get(a, set()).discard(b)
        links.get(b, set()).discard(a)

    def links(self, npc: int) -> list[tuple[int, int | None, int, int | None]]:
        """(entity_a, type_a, entity_b, type_b) for each link of the NPC, each once."""
        self._row(npc)
        out = set()
        for a, bs in self._links.get(int(npc), {}).items():
            for b in bs:
                x, y = min(a, b), max(a, b)
                out.add((x[0], None if x[1] < 0 else x[1], y[0], None if y[1] < 0 else y[1]))
        return sorted(
            out, key=lambda t: (t[0], -1 if t[1] is None else t[1], t[2], -1 if t[3] is None else t[3])
        )

    def pin(self, npc: int, entity: int, memory_type: int, pinned: bool = True) -> None:
        """Pin (or unpin) the NPC's working memory of (entity, type): a pinned memory is never
        evicted (it still fades) and is never moved to the long-term tier."""
        row = self._row(npc)
        e = int(self._int64(entity, "entity")[0])
        t = int(MemoryType(memory_type))
        slots = np.flatnonzero((self._ent[row] == e) & (self._typ[row] == t))
        if not slots.shape[0]:
            raise KeyError(f"npc {int(npc)} has no working memory of entity {e} ({MemoryType(t).name})")
        s = int(slots[0])
        if bool(self._pin[row, s]) != bool(pinned):
            self._pin[row, s] = bool(pinned)
            self._pinned[row] += 1 if pinned else -1

    # ---------------------------------------------------------------------------------------------
    # long-term tier
    @_one_thread
    def advance_game_day(self, days: float = 1.0, now: float | None = None) -> None:
        """Game-clock step (the source's dual-track time): first age the long-term tier by `days`
        and drop what it forgot, then move every remembered, unpinned working memory whose S reaches
        `longterm_min_stability` or whose k reaches `longterm_min_recalls` to the long-term tier,
        freeing its slot. `now` (default: the latest call's) decides "remembered" (R > threshold)."""
        if (
            isinstance(days, bool)
            or not isinstance(days, int | float | np.integer | np.floating)
            or not math.isfinite(float(days))
            or float(days) < 0.0
        ):
            raise ValueError(f"days must be a finite number >= 0, got {days!r}")
        now = self._clock if now is None else self._time(now)
        p = self._p
        gone = self._lt.decay(float(days), p)
        if gone.shape[0]:
            c = self._lt.cols
            gone_npcs = c["npc"][gone].copy()
            if self._events_on:
                self._emit_event(
                    EventKind.LONG_TERM_FORGOTTEN, gone_npcs, c["entity"][gone], c["memory_type"][gone]
                )
            keep = np.ones(self._lt.size, dtype=bool)
            keep[gone] = False
            self._lt.keep(keep)
            np.subtract.at(self._ltn, self._row_of_id[gone_npcs], 1)
        n, cap = self._n, self._C
        if not n:
            return
        r = retrievability(self._last[:n], self._stab[:n], now, p)
        cand = (
            (self._typ[:n] >= 0)
            & ~self._pin[:n]
            & (r > p.forget_threshold)
            & ((self._stab[:n] >= p.longterm_min_stability) | (self._k[:n] >= p.longterm_min_recalls))
        )
        fi = np.flatnonzero(cand)
        if not fi.shape[0]:
            return
        tags = self._tags.reshape(-1) if self._tags is not None else None
        rows = fi // cap
        for f, row in zip(fi.tolist(), rows.tolist(), strict=True):
            npc = int(self._row_npc[row])
            before = self._lt.count_for(npc)
            s_days = max(p.longterm_min_days, p.longterm_stability_gain * float(self._stabf[f]) / DAY_SECONDS)
            self._lt.add(
                npc,
                int(self._entf[f]),
                int(self._typf[f]),
                float(self._salf[f]),
                int(self._kf[f]),
                s_days,
                (tags[f] if tags is not None else None) or _EMPTY_TAGS,
            )
            self._ltn[row] += self._lt.count_for(npc) - before
        if self._events_on:
            self._emit_event(EventKind.PROMOTED, self._row_npc[rows], self._entf[fi], self._typf[fi])
        np.subtract.at(self._used, rows, 1)
        self._clear_flat(fi)

    # ---------------------------------------------------------------------------------------------
    # persistence
    def save(self, path: str | Path, now: float | None = None) -> None:
        """Write the whole pool (params, NPC ids, memories as ages, links, long-term tier).
        `now` (default: the latest call's) turns last-access times into ages."""
        now = self._clock if now is None else self._time(now)
        persistence.write_atomic(Path(path), persistence.dump_pool(self, now))

    @classmethod
    def load(
        cls,
        path: str | Path,
        now: float,
        *,
        events: bool = False,
        max_bytes: int = persistence.MAX_LOAD_BYTES,
    ) -> MemoryPool:
        """A pool read from `save`'s file, resumed at time `now` of the new session's clock.
        `max_bytes` bounds what the file may make it allocate (its NPC rows x capacity, the id
        table): a file asking for more raises `SaveFormatError` before anything is allocated."""
        now = cls._time(now)
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise persistence.SaveFormatError(f"cannot read save file {path}: {exc}") from exc
        return persistence.load_pool(cls, data, now, events=events, max_bytes=max_bytes)

    @_one_thread
    def export_npc(self, npc: int, now: float | None = None) -> bytes:
        """One NPC's memories (working as ages, long-term, links) as bytes, for per-node game saves."""
        row = self._row(npc)
        now = self._clock if now is None else self._time(now)
        return persistence.dump_npc(self, int(npc), row, now)

    @_one_thread
    def import_npc(self, npc: int, data: bytes, now: float) -> None:
        """Replace the NPC's memories with `export_npc` bytes, resumed at `now`. The pool's own
        params apply. On any error the pool is left untouched."""
        row = self._row(npc)
        now = self._time(now)
        persistence.load_npc(self, int(npc), row, data, now)
        self._clock = now
