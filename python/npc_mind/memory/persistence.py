"""Versioned save format for `MemoryPool.save` / `load` and `export_npc` / `import_npc`.

Layout (little-endian):

    magic      11 bytes  b"NPCMIND-MEM"
    version    3 x u16   npc_mind version that wrote it (the package's one version number)
    kind       u8        1 = whole pool, 2 = one NPC
    header_len u64
    header     JSON      capacity, params, npc ids, array directory, links, tags
    payload              the arrays of the directory, back to back
    crc32      u32       of everything before it

Working memories are stored with their age (now - last access), never the absolute time, so a
pool loaded at time `now` of a new session's clock resumes exactly where it was. Long-term
memories carry their age in game days (a save taken at a time before a memory's last access
stores age 0, as the pool reads elapsed time then). Every field is checked, and bounded, before
anything is allocated, built or changed; a problem raises `SaveFormatError` naming it (never
`MemoryError`, `ValueError` or `RecursionError`). Files are written to one temporary name per
target (`.<name>.tmp`, locked while written), fsynced, then renamed over the target, so concurrent
saves take turns, a crash leaves the previous file or the new one, and saves killed mid-write leave
at most one temporary file.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None  # type: ignore[assignment]  # no fcntl (Windows): saves skip the lock

import numpy as np

from npc_mind._version import __version__
from npc_mind.memory.columns import SLOT_BYTES, SLOT_COLUMNS, Column
from npc_mind.memory.params import MemoryParams
from npc_mind.memory.types import SaveFormatError

if TYPE_CHECKING:
    from npc_mind.memory.pool import MemoryPool

MAGIC = b"NPCMIND-MEM"
KIND_POOL = 1
KIND_NPC = 2
_PREFIX = struct.Struct("<11s3HBQ")

WORKING = {
    "w_npc": "<i8",
    "w_slot": "<i8",
    "w_entity": "<i8",
    "w_type": "<i1",
    "w_age": "<f8",
    "w_stability": "<f8",
    "w_salience": "<f8",
    "w_recalls": "<i8",
    "w_pinned": "<u1",
    "w_reported": "<u1",
}
LONGTERM = {
    "l_npc": "<i8",
    "l_entity": "<i8",
    "l_type": "<i1",
    "l_salience": "<f8",
    "l_recalls": "<i8",
    "l_stability": "<f8",
    "l_age": "<f8",
}
ARRAYS = {**WORKING, **LONGTERM}

_INT64_MAX = 2**63 - 1
#: Recall counts above this are refused (2^53: exact as a float; a memory recalled every frame at
#: 60 fps takes 4.7 million years to get there), so k + 1 can never overflow.
MAX_RECALL_COUNT = 2**53
#: Default bound of what loading a whole-pool file may allocate (`MemoryPool.load(max_bytes=...)`):
#: 512 MiB holds e.g. 180,000 NPCs x 64 slots. A small crafted file cannot make the loader allocate
#: more than this however large the capacity, NPC count or next id it claims.
MAX_LOAD_BYTES = 512 * 2**20


def _is_int(value: Any, low: int = -(2**63), high: int = _INT64_MAX) -> bool:
    """An integer (not a bool) within [low, high]."""
    return type(value) is int and low <= value <= high


def _version_tuple(text: str) -> tuple[int, int, int]:
    major, minor, patch = (int(x) for x in text.split("."))
    return major, minor, patch


# -------------------------------------------------------------------------------------------------
# writing
def _collect(
    pool: MemoryPool, rows: list[int], npc_ids: list[int], now: float
) -> tuple[dict[str, np.ndarray], list[Any], list[Any]]:
    """The file's arrays, links and tags of pool rows `rows` (holding NPCs `npc_ids`)."""
    local, slot, values, slot_tags = pool.working_state(rows)
    arrays = {"w_npc": local.astype(np.int64), "w_slot": slot.astype(np.int64)}
    for col in SLOT_COLUMNS:
        if col.saved is not None:
            arrays[col.saved] = _to_file(col, values[col.name], now)
    tags = [[i, sorted(t)] for i, t in enumerate(slot_tags) if t]
    index_of = {npc: i for i, npc in enumerate(npc_ids)}
    lt = pool.longterm
    lt_rows = [j for npc in npc_ids for j in lt.rows_for(npc)]
    lr = np.asarray(lt_rows, dtype=np.int64)
    c = lt.cols
    arrays.update(
        {
            "l_npc": np.asarray([index_of[int(x)] for x in c["npc"][lr].tolist()], dtype=np.int64),
            "l_entity": c["entity"][lr],
            "l_type": c["memory_type"][lr],
            "l_salience": c["salience"][lr],
            "l_recalls": c["recall_count"][lr],
            "l_stability": c["stability"][lr],
            "l_age": c["age"][lr],
        }
    )
    lt_tags = [[i, sorted(lt.tags[j])] for i, j in enumerate(lt_rows) if lt.tags[j]]
    links = []
    for npc in npc_ids:
        for ea, ta, eb, tb in pool.links(npc):
            links.append([index_of[npc], ea, ta, eb, tb])
    return arrays, links, [tags, lt_tags]


def _to_file(col: Column, values: np.ndarray, now: float) -> np.ndarray:
    """A column's values as the file stores them: last access as age, flags as bytes."""
    if col.name == "last_access":
        return np.maximum(now - values, 0.0)
    return values.astype(np.uint8) if values.dtype == bool else values


def _from_file(col: Column, values: np.ndarray, now: float) -> np.ndarray:
    if col.name == "last_access":
        return now - values
    return values.astype(bool) if np.dtype(col.dtype) == bool else values


def _pack(kind: int, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> bytes:
    directory = []
    payload = []
    for name, dtype in ARRAYS.items():
        arr = np.ascontiguousarray(arrays[name], dtype=dtype)
        directory.append([name, dtype, int(arr.shape[0])])
        payload.append(arr.tobytes())
    header = {**header, "arrays": directory}
    hdr = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    major, minor, patch = _version_tuple(__version__)
    body = _PREFIX.pack(MAGIC, major, minor, patch, kind, len(hdr)) + hdr + b"".join(payload)
    return body + struct.pack("<I", zlib.crc32(body))


def temporary_path(path: Path) -> Path:
    """The one temporary name of saves to `path` (beside it, hidden): a save killed mid-write
    leaves at most this file, and the next save to `path` takes it over."""
    return path.with_name(f".{path.name}.tmp")


def _lock_temporary(tmp: Path, mode: int) -> int:
    """Open `tmp` (created when missing) and hold an exclusive lock on it, so concurrent saves to
    one target take turns; returns the descriptor. A saver that waited on a file another one has
    since renamed over the target (or removed) opens the name again."""
    while True:
        # never through a link planted at the name (mkstemp's O_EXCL had kept that out)
        flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(tmp, flags, mode)
        if fcntl is None:  # no advisory locks here: one saver at a time is the caller's to keep
            return fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.path.samestat(os.fstat(fd), tmp.stat()):
                return fd
        except FileNotFoundError:
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through its one temporary file (`temporary_path`), fsynced before
    the rename (and the folder after it): concurrent saves to one path take turns on that file's
    lock, a crash leaves either the previous file or the new one, whole, and saves killed
    mid-write leave at most one temporary file, which the next save reuses."""
    tmp = temporary_path(path)
    # keep the mode of the file replaced, else 0644 (the umask applies to a new one only)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd = _lock_temporary(tmp, mode)
    try:
        os.ftruncate(fd, 0)  # what a killed save left
        with contextlib.suppress(OSError):
            tmp.chmod(mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        tmp.replace(path)  # under the lock: a waiting saver then finds the name gone and reopens
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):  # the rename itself is durable once the folder is synced
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def dump_pool(pool: MemoryPool, now: float) -> bytes:
    npc_ids = pool.npc_ids().tolist()
    arrays, links, (tags, lt_tags) = _collect(pool, list(range(len(npc_ids))), npc_ids, now)
    header = {
        "capacity": pool.capacity,
        "params": pool.params.to_dict(),
        "next_id": pool.next_id,
        "npc_ids": npc_ids,
        "links": links,
        "tags": tags,
        "lt_tags": lt_tags,
        "library": __version__,
    }
    return _pack(KIND_POOL, header, arrays)


def dump_npc(pool: MemoryPool, npc: int, row: int, now: float) -> bytes:
    arrays, links, (tags, lt_tags) = _collect(pool, [row], [npc], now)
    header = {
        "capacity": pool.capacity,
        "params": pool.params.to_dict(),
        "npc_ids": [npc],
        "links": links,
        "tags": tags,
        "lt_tags": lt_tags,
        "library": __version__,
    }
    return _pack(KIND_NPC, header, arrays)


# -------------------------------------------------------------------------------------------------
# reading: everything is parsed and checked into plain arrays before any pool is touched
def parse(data: bytes, expect_kind: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise SaveFormatError(f"expected bytes, got {type(data).__name__}")
    data = bytes(data)
    what = "memory save file" if expect_kind == KIND_POOL else "exported NPC memory"
    if len(data) < _PREFIX.size + 4:
        raise SaveFormatError(f"{what} is truncated: {len(data)} bytes")
    magic, major, minor, patch, kind, hlen = _PREFIX.unpack_from(data)
    if magic != MAGIC:
        raise SaveFormatError(f"not an npc_mind {what} (bad magic {magic!r})")
    ours = _version_tuple(__version__)
    if (major, minor, patch) > ours:
        raise SaveFormatError(
            f"{what} was written by npc_mind {major}.{minor}.{patch}, newer than this "
            f"npc_mind {__version__}; upgrade npc_mind to read it"
        )
    if kind != expect_kind:
        other = "a whole-pool save file" if kind == KIND_POOL else "one exported NPC"
        raise SaveFormatError(f"expected a {what}, got {other} (kind {kind})")
    body, crc = data[:-4], struct.unpack("<I", data[-4:])[0]
    if _PREFIX.size + hlen > len(body):
        raise SaveFormatError(
            f"{what} is truncated: header of {hlen} bytes does not fit in {len(data)} bytes"
        )
    if zlib.crc32(body) != crc:
        raise SaveFormatError(f"{what} is corrupt or truncated (checksum mismatch)")
    try:
        header = json.loads(body[_PREFIX.size : _PREFIX.size + hlen])
    except (ValueError, RecursionError) as exc:  # bad JSON or UTF-8, an over-long number, deep nesting
        raise SaveFormatError(f"{what} has a corrupt header: {type(exc).__name__}: {exc}"[:300]) from None
    if not isinstance(header, dict):
        raise SaveFormatError(f"{what} has a corrupt header")
    arrays: dict[str, np.ndarray] = {}
    offset = _PREFIX.size + hlen
    try:
        directory = header["arrays"]
        if not isinstance(directory, list) or not all(isinstance(d, list) and len(d) == 3 for d in directory):
            raise SaveFormatError(f"{what} has a corrupt array directory")
        names = [d[0] for d in directory]
        if not all(isinstance(name, str) for name in names) or sorted(names) != sorted(ARRAYS):
            raise SaveFormatError(f"{what} lists arrays {names!r:.200}, expected {sorted(ARRAYS)}")
        for name, dtype, length in directory:
            if dtype != ARRAYS[name] or not _is_int(length, 0):
                raise SaveFormatError(
                    f"{what}: array {name} has dtype {dtype!r:.40} and length {length!r:.40}"
                )
            size = np.dtype(dtype).itemsize * length
            if offset + size > len(body):
                raise SaveFormatError(f"{what} is truncated inside array {name}")
            arrays[name] = np.frombuffer(body, dtype=dtype, count=length, offset=offset).copy()
            offset += size
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, SaveFormatError):
            raise
        raise SaveFormatError(f"{what} has a corrupt array directory: {exc}") from None
    if offset != len(body):
        raise SaveFormatError(f"{what} has {len(body) - offset} unexpected trailing bytes")
    _check(header, arrays, what)
    return header, arrays


def _check(header: dict[str, Any], a: dict[str, np.ndarray], what: str) -> None:
    def bad(msg: str) -> SaveFormatError:
        return SaveFormatError(f"{what} is invalid: {msg}")

    try:
        capacity = header["capacity"]
        npc_ids = header["npc_ids"]
        params = header["params"]
        if not isinstance(params, dict):
            raise TypeError(f"params must be an object, got {type(params).__name__}")
        header["params_obj"] = MemoryParams.from_dict(params)
    except KeyError as exc:
        raise bad(f"missing header field {exc}") from None
    except (TypeError, ValueError, OverflowError, AttributeError) as exc:
        raise bad(f"params: {exc}"[:300]) from None
    if not _is_int(capacity, 1, 65_535):
        raise bad(f"capacity {capacity!r:.40}")
    if (
        not isinstance(npc_ids, list)
        or not all(_is_int(x, 0) for x in npc_ids)
        or len(set(npc_ids)) != len(npc_ids)
    ):
        raise bad("npc ids must be distinct integers in [0, 2^63)")
    if "next_id" in header and (
        not _is_int(header["next_id"], 0) or any(x >= header["next_id"] for x in npc_ids)
    ):
        raise bad("next_id must be an integer in [0, 2^63) that exceeds every npc id")
    n_npc = len(npc_ids)
    nw = {a[k].shape[0] for k in WORKING}
    nl = {a[k].shape[0] for k in LONGTERM}
    if len(nw) != 1 or len(nl) != 1:
        raise bad("arrays of one tier differ in length")
    if a["w_npc"].shape[0]:
        if a["w_npc"].min() < 0 or a["w_npc"].max() >= n_npc:
            raise bad("a working memory names an unknown npc")
        if a["w_slot"].min() < 0 or a["w_slot"].max() >= capacity:
            raise bad("a working memory's slot is outside the capacity")
        if np.unique(a["w_npc"] * capacity + a["w_slot"]).shape[0] != a["w_npc"].shape[0]:
            raise bad("two working memories share a slot")
        keys = set(zip(a["w_npc"].tolist(), a["w_entity"].tolist(), a["w_type"].tolist(), strict=True))
        if len(keys) != a["w_npc"].shape[0]:
            raise bad("two working memories of one npc share entity and type")
    for prefix in ("w", "l"):
        t = a[f"{prefix}_type"]
        if t.shape[0] and (t.min() < 0 or t.max() > 4):
            raise bad("unknown memory type")
        s, e, k, age = (
            a[f"{prefix}_stability"],
            a[f"{prefix}_salience"],
            a[f"{prefix}_recalls"],
            a[f"{prefix}_age"],
        )
        if not (np.isfinite(s).all() and (s > 0).all()):
            raise bad("stability must be finite and positive")
        if not (np.isfinite(e).all() and (e >= 0).all() and (e <= 1).all()):
            raise bad("salience must be in [0, 1]")
        if (k < 1).any() or (k > MAX_RECALL_COUNT).any():
            raise bad(f"recall count must be in [1, 2^53], got {int(k.min())}..{int(k.max())}")
        if not (np.isfinite(age).all() and (age >= 0).all()):
            raise bad("ages must be finite and >= 0")
    if a["l_npc"].shape[0]:
        if a["l_npc"].min() < 0 or a["l_npc"].max() >= n_npc:
            raise bad("a long-term memory names an unknown npc")
        keys = set(zip(a["l_npc"].tolist(), a["l_entity"].tolist(), a["l_type"].tolist(), strict=True))
        if len(keys) != a["l_npc"].shape[0]:
            raise bad("two long-term memories of one npc share entity and type")
    # links and tags: checked so that writing them (`_fill`) cannot fail half-way
    links, tags_w, tags_l = header.get("links", []), header.get("tags", []), header.get("lt_tags", [])
    if not all(isinstance(x, list) for x in (links, tags_w, tags_l)):
        raise bad("links and tags must be lists")
    for link in links:
        if not (isinstance(link, list) and len(link) == 5):
            raise bad(f"link {link!r:.80}")
        i, ea, ta, eb, tb = link
        if not (
            _is_int(i, 0, n_npc - 1)
            and _is_int(ea)
            and _is_int(eb)
            and (ta is None or _is_int(ta, 0, 4))
            and (tb is None or _is_int(tb, 0, 4))
            and (ea, -1 if ta is None else ta) != (eb, -1 if tb is None else tb)
        ):
            raise bad(f"link {link!r:.80}")
    for key, entries, count in (
        ("tags", tags_w, a["w_npc"].shape[0]),
        ("lt_tags", tags_l, a["l_npc"].shape[0]),
    ):
        for entry in entries:
            if not (
                isinstance(entry, list)
                and len(entry) == 2
                and _is_int(entry[0], 0, count - 1)
                and isinstance(entry[1], list)
                and all(isinstance(t, str) for t in entry[1])
            ):
                raise bad(f"{key} entry {entry!r:.80}")


# -------------------------------------------------------------------------------------------------
def _fill(  # noqa: PLR0917
    pool: MemoryPool,
    rows: np.ndarray,
    slot: np.ndarray,
    a: dict[str, np.ndarray],
    now: float,
    header: dict[str, Any],
    npc_ids: list[int],
    w_pos: np.ndarray | None,
) -> None:
    """Write parsed memories into the pool (rows[i] is the pool row of the file's npc index i)."""
    values = {col.name: _from_file(col, a[col.saved], now) for col in SLOT_COLUMNS if col.saved is not None}
    tags = {int(w_pos[i]) if w_pos is not None else i: frozenset(t) for i, t in header.get("tags", [])}
    pool.restore_working(rows[a["w_npc"]], slot, values, tags)
    lt_tags = {i: frozenset(t) for i, t in header.get("lt_tags", [])}
    for i in range(a["l_npc"].shape[0]):
        pool.restore_longterm(
            npc_ids[int(a["l_npc"][i])],
            int(a["l_entity"][i]),
            int(a["l_type"][i]),
            float(a["l_salience"][i]),
            int(a["l_recalls"][i]),
            float(a["l_stability"][i]),
            float(a["l_age"][i]),
            lt_tags.get(i, frozenset()),
        )
    for i, ea, ta, eb, tb in header.get("links", []):
        pool.link(npc_ids[i], ea, eb, ta, tb)


def load_pool(
    cls: type[MemoryPool], data: bytes, now: float, events: bool = False, max_bytes: int = MAX_LOAD_BYTES
) -> MemoryPool:
    header, a = parse(data, KIND_POOL)
    npc_ids = header["npc_ids"]
    next_id = header.get("next_id")
    if next_id is None:
        raise SaveFormatError("memory save file is invalid: missing header field 'next_id'")
    # what the pool's columns and id table will take, before any of it is allocated
    rows = max(16, len(npc_ids))
    need = rows * header["capacity"] * SLOT_BYTES + 8 * max(16, next_id)
    if need > max_bytes:
        raise SaveFormatError(
            f"memory save file asks for {need:,} bytes ({len(npc_ids):,} npcs x capacity "
            f"{header['capacity']:,}, next id {next_id:,}), above max_bytes {max_bytes:,}; "
            "pass a larger MemoryPool.load(max_bytes=...) if the file is trusted"
        )
    pool = cls(header["capacity"], header["params_obj"], events=events, reserve_npcs=rows)
    pool.restore_ids(npc_ids, next_id, now)
    _fill(pool, np.arange(len(npc_ids), dtype=np.int64), a["w_slot"], a, now, header, npc_ids, None)
    return pool


def load_npc(pool: MemoryPool, npc: int, data: bytes, now: float) -> None:
    header, a = parse(data, KIND_NPC)
    if len(header["npc_ids"]) != 1:
        raise SaveFormatError("exported NPC memory is invalid: it must hold exactly one npc")
    count = a["w_npc"].shape[0]
    cap = pool.capacity
    if count > cap:
        raise SaveFormatError(
            f"exported NPC memory holds {count} working memories; this pool's capacity is {cap}"
        )
    if header["capacity"] == cap:
        slot = a["w_slot"]
        w_pos = None
    else:  # pack in slot order
        order = np.argsort(a["w_slot"], kind="stable")
        for name in WORKING:
            a[name] = a[name][order]
        slot = np.arange(count, dtype=np.int64)
        w_pos = np.empty(count, dtype=np.int64)
        w_pos[order] = np.arange(count)
    # validated: now replace the npc's memories
    pool.clear_npc(npc)
    _fill(pool, np.array([pool.row_of(npc)], dtype=np.int64), slot, a, now, header, [npc], w_pos)
