"""Save / load of the whole pool and export / import of one NPC: ages, not clock times."""

from __future__ import annotations

import numpy as np
import pytest

from npc_mind.memory import MemoryParams, MemoryPool, MemoryType, SaveFormatError, Tier


def busy_pool(curve: str = "exponential") -> MemoryPool:
    pool = MemoryPool(6, MemoryParams(curve=curve, rehearsal_refractory_s=0.0, alpha=1.5))
    ids = pool.add_npcs(4)
    pool.remove_npc(ids[1])  # rows move; the id stays retired
    rng = np.random.default_rng(3)
    for t in range(30):
        n = rng.choice([ids[0], ids[2], ids[3]], 5)
        pool.record_batch(n, rng.integers(0, 9, 5), rng.integers(0, 5, 5), rng.random(5), 100.0 + t)
    pool.record(ids[0], 42, MemoryType.HOSTILE, 0.9, 130.0, tags=["theft", "night"])
    pool.pin(ids[0], 42, MemoryType.HOSTILE)
    pool.link(ids[2], 1, 2, MemoryType.HOSTILE, None)
    for t in range(9):
        pool.record(ids[3], 77, MemoryType.INTERACTION, 0.8, 131.0 + t, tags=["trade"])
    pool.advance_game_day(1.0, now=140.0)  # entity 77 goes long-term
    pool.pop_forgotten(140.0)
    return pool


def answers(pool: MemoryPool, now: float) -> list:
    out = []
    for npc in sorted(pool.npc_ids().tolist()):
        out.append(
            [
                (
                    v.entity,
                    v.memory_type,
                    v.stability,
                    v.salience,
                    v.recall_count,
                    v.tier,
                    v.slot,
                    v.pinned,
                    v.tags,
                    round(v.retrievability, 12),
                )
                for v in pool.memories(npc, now)
            ]
        )
        out.append([int(pool.awareness(npc, e, now)) for e in range(10)])
        out.append(pool.links(npc))
    return out


@pytest.mark.parametrize("curve", ["exponential", "power"])
def test_roundtrip_restores_everything_relative_to_the_new_clock(tmp_path, curve: str) -> None:
    pool = busy_pool(curve)
    pool.save(tmp_path / "p.npcmem", now=140.0)
    loaded = MemoryPool.load(tmp_path / "p.npcmem", now=-5000.0)
    assert loaded.params == pool.params and loaded.capacity == pool.capacity
    assert sorted(loaded.npc_ids().tolist()) == sorted(pool.npc_ids().tolist())
    for dt in (0.0, 3.0, 50.0):
        assert answers(loaded, -5000.0 + dt) == answers(pool, 140.0 + dt)
    assert loaded.add_npc() == pool.add_npc()  # ids continue, never reused
    assert loaded.longterm_count() == pool.longterm_count() >= 1
    # forgetting already reported stays reported
    assert len(loaded.pop_forgotten(-5000.0).npc) == len(pool.pop_forgotten(140.0).npc)


def test_save_defaults_to_the_latest_call_time(tmp_path) -> None:
    pool = MemoryPool()
    npc = pool.add_npc()
    pool.record(npc, 1, MemoryType.OBSERVATION, 0.5, 10.0)
    pool.awareness(npc, 1, 40.0)  # the latest call: t = 40
    pool.save(tmp_path / "p.npcmem")
    loaded = MemoryPool.load(tmp_path / "p.npcmem", now=0.0)
    assert loaded.memories(npc, 0.0)[0].age == 30.0


def test_export_import_one_npc(tmp_path) -> None:
    pool = busy_pool()
    npc = int(pool.npc_ids()[0])
    blob = pool.export_npc(npc, now=140.0)
    other = MemoryPool(6, pool.params)
    a, b = other.add_npc(), other.add_npc()
    other.record(b, 5, MemoryType.TRIVIA, 0.5, 0.0)
    other.record(a, 9, MemoryType.TRIVIA, 0.5, 0.0)  # replaced by the import
    other.import_npc(a, blob, now=1000.0)
    mine = [
        (
            v.entity,
            v.memory_type,
            v.stability,
            v.recall_count,
            v.slot,
            v.pinned,
            v.tags,
            v.tier,
            round(v.retrievability, 12),
        )
        for v in pool.memories(npc, 150.0)
    ]
    theirs = [
        (
            v.entity,
            v.memory_type,
            v.stability,
            v.recall_count,
            v.slot,
            v.pinned,
            v.tags,
            v.tier,
            round(v.retrievability, 12),
        )
        for v in other.memories(a, 1010.0)
    ]
    assert theirs == mine
    assert other.memories(b, 0.0)[0].entity == 5  # the other NPC is untouched


def test_import_into_other_capacity_packs_slots_or_refuses() -> None:
    pool = busy_pool()
    npc3 = int(pool.npc_ids()[-1])
    blob = pool.export_npc(npc3, now=140.0)
    count = pool.memory_count(npc3)
    big = MemoryPool(64, pool.params)
    n = big.add_npc()
    big.import_npc(n, blob, now=0.0)
    assert big.memory_count(n) == count
    assert [v.slot for v in big.memories(n, 0.0) if v.tier is Tier.WORKING] == list(range(count))
    assert big.longterm_count(n) == pool.longterm_count(npc3)
    tiny = MemoryPool(1, pool.params)
    t = tiny.add_npc()
    if count > 1:
        with pytest.raises(SaveFormatError, match="capacity is 1"):
            tiny.import_npc(t, blob, now=0.0)


def test_save_is_atomic_and_loadable_repeatedly(tmp_path) -> None:
    pool = busy_pool()
    path = tmp_path / "p.npcmem"
    pool.save(path, now=140.0)
    first = path.read_bytes()
    pool.save(path, now=140.0)
    assert path.read_bytes() == first
    assert not list(tmp_path.glob("*.tmp"))
    assert first[:11] == b"NPCMIND-MEM"
