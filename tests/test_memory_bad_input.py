"""Bad input: a clear exception naming the problem, and the live pool untouched."""

from __future__ import annotations

import math
import struct
import zlib

import numpy as np
import pytest

from npc_mind.memory import (
    MemoryParams,
    MemoryPool,
    MemoryType,
    PoolFullError,
    SaveFormatError,
    UnknownNpcError,
)
from npc_mind.memory.columns import SLOT_COLUMNS
from npc_mind.memory.persistence import _PREFIX

COLUMNS = (*(column.name for column in SLOT_COLUMNS), "used_slots", "pinned_slots")


def snapshot(pool: MemoryPool) -> tuple:
    return (
        tuple(getattr(pool.state, c)[: pool.npc_count].tobytes() for c in COLUMNS),
        pool.npc_count,
        pool.state.next_id,
        pool.state.longterm.size,
        repr(pool.state.links),
    )


@pytest.fixture
def pool() -> MemoryPool:
    p = MemoryPool(4)
    a, b = p.add_npc(), p.add_npc()
    p.record(a, 1, MemoryType.HOSTILE, 0.9, 0.0)
    p.record(b, 2, MemoryType.TRIVIA, 0.1, 0.0)
    p.link(a, 1, 2)
    return p


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_or_infinite_salience(pool: MemoryPool, bad: float) -> None:
    before = snapshot(pool)
    with pytest.raises(ValueError, match="salience"):
        pool.record(0, 5, MemoryType.HOSTILE, bad, 1.0)
    with pytest.raises(ValueError, match="salience"):
        pool.record_batch([0, 1, 0], [5, 6, 7], 3, [0.5, bad, 0.5], 1.0)
    assert snapshot(pool) == before


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 1e300])
def test_nan_infinite_or_absurd_time(pool: MemoryPool, bad: float) -> None:
    before = snapshot(pool)
    for call in (
        lambda: pool.record(0, 5, 3, 0.5, bad),
        lambda: pool.query_strongest(0, 1, bad),
        lambda: pool.awareness(0, 1, bad),
        lambda: pool.retrievability_all(bad),
        lambda: pool.top_k(0, bad),
        lambda: pool.pop_forgotten(bad),
        lambda: pool.record_batch([0], [1], [3], [0.5], bad),
        lambda: pool.strongest([0], [0], [0], [0.0], bad),
    ):
        with pytest.raises(ValueError, match="now"):
            call()
    assert snapshot(pool) == before


def test_unknown_or_removed_npc(pool: MemoryPool) -> None:
    pool.remove_npc(1)
    before = snapshot(pool)
    with pytest.raises(UnknownNpcError, match="never added"):
        pool.record(7, 1, 3, 0.5, 1.0)
    with pytest.raises(UnknownNpcError, match="npc id 1 was removed"):
        pool.record_batch([0, 1], [1, 1], 3, 0.5, 1.0)  # one bad id: nothing applied
    with pytest.raises(UnknownNpcError, match="never added"):
        pool.query_strongest_batch([0, -1], [1, 1], 1.0)
    with pytest.raises(UnknownNpcError, match="removed"):
        pool.awareness(1, 1, 1.0)
    with pytest.raises(UnknownNpcError, match="removed"):
        pool.strongest([0, 1], [0, 0], [0, 0], [0.0, 0.0], 1.0)
    with pytest.raises(UnknownNpcError):
        pool.remove_npc(1)
    with pytest.raises(KeyError):  # UnknownNpcError is a KeyError too
        pool.memories(1, 0.0)
    assert snapshot(pool) == before


def test_other_bad_arguments(pool: MemoryPool) -> None:
    before = snapshot(pool)
    with pytest.raises(ValueError, match="memory type"):
        pool.record(0, 1, 9, 0.5, 1.0)
    with pytest.raises(TypeError, match="integers"):
        pool.record_batch([0.5], [1], 3, 0.5, 1.0)
    with pytest.raises(TypeError, match="entities must be integers"):
        pool.record(0, 1.5, 3, 0.5, 1.0)
    with pytest.raises(ValueError, match="64"):
        pool.record(0, 2**70, 3, 0.5, 1.0)
    with pytest.raises(ValueError, match="equally long"):
        pool.record_batch([0, 0], [1], 3, 0.5, 1.0)
    with pytest.raises(ValueError, match="days"):
        pool.advance_game_day(math.nan)
    with pytest.raises(ValueError, match="k must be"):
        pool.top_k(0, 1.0, k=-1)
    with pytest.raises(ValueError, match="2 npcs, 2 entities, 1 masks and 2 floors"):
        pool.strongest([0, 0], [1, 2], [0], [0.0, 0.0], 1.0)
    with pytest.raises(TypeError, match="type masks must be integers"):
        pool.strongest([0], [1], [0.5], [0.0], 1.0)
    assert snapshot(pool) == before


def test_unsigned_64_bit_entity_ids_are_accepted_as_their_bits() -> None:
    pool = MemoryPool()
    npc = pool.add_npc()
    big = 2**63 + 12345  # a Godot ObjectID with the ref-counted bit set, as uint64
    pool.record(npc, big, 3, 0.9, 0.0)
    assert pool.query_strongest(npc, big, 1.0) is not None
    assert pool.query_strongest(npc, big - 2**64, 1.0) is not None  # the same bits as int64


@pytest.mark.parametrize("capacity", [0, -3, 65_536])
def test_capacity_out_of_bounds(capacity: int) -> None:
    with pytest.raises(ValueError, match="capacity"):
        MemoryPool(capacity)


def test_capacity_must_be_integer() -> None:
    with pytest.raises(TypeError, match="capacity"):
        MemoryPool(2.5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("alpha", 1.0, "alpha"),
        ("alpha", 2.0, "alpha"),
        ("alpha", math.nan, "alpha"),
        ("rehearsal_refractory_s", -1.0, "refractory"),
        ("max_stability", 0.5, "max_stability"),
        ("forget_threshold", 0.0, "forget_threshold"),
        ("forget_threshold", 0.9, "forget_threshold"),
        ("base_stability", (1.0, 2.0), "base_stability"),
        ("base_stability", (5, 30, 120, 600, -1), "base_stability"),
        ("eviction_weight_r", 1.5, "eviction_weight_r"),
        ("awareness_search", 0.9, "awareness_search"),
        ("curve", "linear", "curve"),
        ("age_cap", 0.0, "age_cap"),
        ("power_decay", 0.0, "power_decay"),
        ("longterm_min_recalls", 0, "longterm_min_recalls"),
        ("topk_tag_floor", 2.0, "topk_tag_floor"),
    ],
)
def test_params_are_validated_at_construction(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MemoryParams(**{field: value})


def test_both_eviction_weights_zero_is_refused() -> None:
    with pytest.raises(ValueError, match="both be 0"):
        MemoryParams(eviction_weight_r=0.0, eviction_weight_e=0.0)


def test_fully_pinned_pool_raises_and_batch_is_not_applied() -> None:
    pool = MemoryPool(1)
    a, b = pool.add_npc(), pool.add_npc()
    pool.record(a, 1, 3, 0.5, 0.0)
    pool.pin(a, 1, 3)
    before = snapshot(pool)
    with pytest.raises(PoolFullError, match=f"npc {a}: all 1 working slots are pinned"):
        pool.record_batch([b, a], [7, 2], 3, 0.5, 1.0)
    assert snapshot(pool) == before


# -------------------------------------------------------------------------------------------------
# save files
def saved(pool: MemoryPool) -> bytes:
    return pool.export_npc(0, now=1.0)


def test_save_file_problems_raise_and_leave_the_pool_untouched(pool: MemoryPool, tmp_path) -> None:
    path = tmp_path / "pool.npcmem"
    pool.save(path, now=2.0)
    good = path.read_bytes()
    before = snapshot(pool)
    cases = {
        "truncated": good[: len(good) // 2],
        "empty": b"",
        "corrupt": good[:40] + bytes([good[40] ^ 0xFF]) + good[41:],
        "not ours": b"PK\x03\x04" + good[4:],
    }
    for name, data in cases.items():
        bad = tmp_path / f"{name}.npcmem"
        bad.write_bytes(data)
        with pytest.raises(SaveFormatError):
            MemoryPool.load(bad, now=0.0)
        with pytest.raises(SaveFormatError):
            pool.import_npc(0, data, now=0.0)
    with pytest.raises(SaveFormatError, match="cannot read"):
        MemoryPool.load(tmp_path / "missing.npcmem", now=0.0)
    assert snapshot(pool) == before


def rewrite(data: bytes, *, version: tuple[int, int, int] | None = None, header_edit=None) -> bytes:
    magic, major, minor, patch, kind, hlen = _PREFIX.unpack_from(data)
    header = data[_PREFIX.size : _PREFIX.size + hlen]
    rest = data[_PREFIX.size + hlen : -4]
    if header_edit is not None:
        header = header_edit(header)
    if version is not None:
        major, minor, patch = version
    body = _PREFIX.pack(magic, major, minor, patch, kind, len(header)) + header + rest
    return body + struct.pack("<I", zlib.crc32(body))


def test_newer_version_is_refused_with_a_clear_message(pool: MemoryPool, tmp_path) -> None:
    path = tmp_path / "pool.npcmem"
    pool.save(path, now=2.0)
    newer = rewrite(path.read_bytes(), version=(99, 0, 0))
    path.write_bytes(newer)
    with pytest.raises(SaveFormatError, match=r"written by npc_mind 99\.0\.0, newer than"):
        MemoryPool.load(path, now=0.0)


def test_well_formed_but_invalid_contents_are_refused(pool: MemoryPool, tmp_path) -> None:
    path = tmp_path / "pool.npcmem"
    pool.save(path, now=2.0)
    good = path.read_bytes()
    bad_params = rewrite(good, header_edit=lambda h: h.replace(b'"alpha":1.35', b'"alpha":9.0'))
    path.write_bytes(bad_params)
    with pytest.raises(SaveFormatError, match="alpha"):
        MemoryPool.load(path, now=0.0)
    bad_cap = rewrite(good, header_edit=lambda h: h.replace(b'"capacity":4', b'"capacity":0'))
    path.write_bytes(bad_cap)
    with pytest.raises(SaveFormatError, match="capacity"):
        MemoryPool.load(path, now=0.0)
    # a whole-pool file is not one NPC's export
    before = snapshot(pool)
    with pytest.raises(SaveFormatError, match="expected"):
        pool.import_npc(0, good, now=0.0)
    assert snapshot(pool) == before


def test_salience_nan_in_file_is_refused(pool: MemoryPool) -> None:
    data = bytearray(pool.export_npc(0, now=1.0))
    _, _, _, _, _, hlen = _PREFIX.unpack_from(data)
    off = _PREFIX.size + hlen
    # find the salience array of the working tier and poison it
    import json

    header = json.loads(bytes(data[_PREFIX.size : off]))
    for name, dtype, length in header["arrays"]:
        if name == "w_salience":
            data[off : off + 8] = np.array([np.nan]).tobytes()
            break
        off += np.dtype(dtype).itemsize * length
    body = bytes(data[:-4])
    fixed = body + struct.pack("<I", zlib.crc32(body))
    with pytest.raises(SaveFormatError, match="salience"):
        pool.import_npc(1, fixed, now=0.0)
