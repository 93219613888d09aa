"""The design source's stories, under both forgetting curves."""

from __future__ import annotations

import math

import numpy as np
import pytest

from npc_mind.memory import Awareness, MemoryParams, MemoryPool, MemoryType

THIEF, STONE, GRENADE, PASSERBY = 9_000_000_001, 9_000_000_002, 9_000_000_003, 9_000_000_004
CURVES = ["exponential", "power"]


def make_pool(curve: str, capacity: int = 64) -> MemoryPool:
    return MemoryPool(capacity, MemoryParams(curve=curve))


@pytest.mark.parametrize("curve", CURVES)
def test_theft_is_still_vivid_90_seconds_later(curve: str) -> None:
    pool = make_pool(curve)
    guard = pool.add_npc()
    pool.record(guard, THIEF, MemoryType.HOSTILE, 0.9, now=0.0)
    r = pool.retrievability_all(90.0)[0, 0]
    if curve == "exponential":
        assert r == pytest.approx(math.exp(-90.0 / (600.0 * 1.4)))  # 0.898
        assert r == pytest.approx(0.90, abs=0.005)
        assert pool.awareness(guard, THIEF, 90.0) is Awareness.PURSUE
    else:  # FSRS-6 falls faster at first (R = 0.5 at the same age), then far slower
        assert r == pytest.approx(0.661, abs=0.001)
        assert pool.awareness(guard, THIEF, 90.0) is Awareness.SEARCH
    # either way the guard does not greet the thief: he is remembered, not forgotten
    assert pool.awareness(guard, THIEF, 90.0) >= Awareness.SEARCH


@pytest.mark.parametrize("curve", CURVES)
def test_thrown_stone_is_gone_10_seconds_later(curve: str) -> None:
    pool = make_pool(curve)
    npc = pool.add_npc()
    pool.record(npc, STONE, MemoryType.TRIVIA, 0.1, now=0.0)
    assert pool.awareness(npc, STONE, 10.0) is Awareness.NONE
    assert pool.query_strongest(npc, STONE, 10.0) is None
    assert pool.retrievability_all(10.0)[0, 0] <= pool.params.forget_threshold


@pytest.mark.parametrize("curve", CURVES)
def test_rehearsed_hostile_memory_outlasts_a_single_one(curve: str) -> None:
    pool = make_pool(curve)
    once, thrice = pool.add_npc(), pool.add_npc()
    pool.record(once, THIEF, MemoryType.HOSTILE, 0.6, now=0.0)
    for t in (0.0, 30.0, 60.0):
        pool.record(thrice, THIEF, MemoryType.HOSTILE, 0.6, now=t)
    s_once = pool.memories(once, 60.0)[0].stability
    s_thrice = pool.memories(thrice, 60.0)[0].stability
    assert s_thrice > 3 * s_once
    later = 60.0 + 3 * s_once  # the single memory is forgotten by now (exp: R = e^-3 < 0.05... after age)
    assert pool.awareness(once, THIEF, later + 60.0) is Awareness.NONE
    assert pool.awareness(thrice, THIEF, later + 60.0) >= Awareness.PUZZLED
    forget = pool.forget_times()
    assert forget[1, 0] > forget[0, 0]


@pytest.mark.parametrize("curve", CURVES)
def test_full_pool_evicts_low_value_trivia_never_the_trauma(curve: str) -> None:
    pool = make_pool(curve, capacity=8)
    npc = pool.add_npc()
    pool.record(npc, GRENADE, MemoryType.TRAUMA, 1.0, now=0.0)
    for i in range(7):
        pool.record(npc, 100 + i, MemoryType.TRIVIA, 0.1, now=0.0)
    assert pool.memory_count(npc) == 8
    for i in range(20):  # a stream of new observations at the same moment (nothing forgotten yet)
        pool.record(npc, 1000 + i, MemoryType.OBSERVATION, 0.5, now=1.0)
    held = {(v.entity, v.memory_type) for v in pool.memories(npc, 1.0)}
    assert (GRENADE, MemoryType.TRAUMA) in held
    assert not any(t is MemoryType.TRIVIA for _, t in held)  # the trivia went first
    assert pool.memory_count(npc) == 8


@pytest.mark.parametrize("curve", CURVES)
def test_per_frame_recording_does_not_inflate_stability(curve: str) -> None:
    pool = make_pool(curve)
    once, every_frame = pool.add_npc(), pool.add_npc()
    pool.record(once, THIEF, MemoryType.HOSTILE, 0.9, now=0.0)
    for frame in range(600):  # 10 s of perception at 60 Hz
        pool.record(every_frame, THIEF, MemoryType.HOSTILE, 0.9, now=frame / 60.0)
    a, b = pool.memories(once, 10.0)[0], pool.memories(every_frame, 10.0)[0]
    assert b.stability == a.stability
    assert b.recall_count == a.recall_count == 1
    assert np.isfinite(b.stability)
    assert b.retrievability > a.retrievability  # seeing him keeps the memory fresh (last access)


@pytest.mark.parametrize("curve", CURVES)
def test_asking_for_awareness_every_frame_does_not_stop_forgetting(curve: str) -> None:
    pool = make_pool(curve)
    guard = pool.add_npc()
    pool.record(guard, PASSERBY, MemoryType.OBSERVATION, 0.5, now=0.0)
    seen = []
    for frame in range(0, 60 * 200):  # 200 s at 60 Hz
        seen.append(pool.awareness(guard, PASSERBY, frame / 60.0))
    assert seen[0] is Awareness.PURSUE
    assert seen[-1] is Awareness.NONE
    assert pool.memories(guard, 200.0)[0].recall_count == 1
    assert list(seen) == sorted(seen, reverse=True)  # only ever fades


@pytest.mark.parametrize("curve", CURVES)
def test_save_then_load_with_another_clock_origin_gives_identical_answers(curve: str, tmp_path) -> None:
    pool = make_pool(curve)
    guard, smith = pool.add_npc(), pool.add_npc()
    pool.record(guard, THIEF, MemoryType.HOSTILE, 0.9, now=1000.0)
    pool.record(guard, STONE, MemoryType.TRIVIA, 0.1, now=1003.0)
    pool.record(smith, THIEF, MemoryType.INTERACTION, 0.4, now=1004.0)
    pool.record(smith, THIEF, MemoryType.INTERACTION, 0.4, now=1010.0)  # rehearsed
    pool.save(tmp_path / "memory.npcmem", now=1012.0)
    loaded = MemoryPool.load(tmp_path / "memory.npcmem", now=5.0)  # the new session's clock starts elsewhere
    for dt in (0.0, 1.0, 4.0, 90.0, 600.0):
        for npc in (guard, smith):
            for ent in (THIEF, STONE):
                assert loaded.awareness(npc, ent, 5.0 + dt) == pool.awareness(npc, ent, 1012.0 + dt)
        a, b = pool.retrievability_all(1012.0 + dt), loaded.retrievability_all(5.0 + dt)
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=0)
    va = pool.query_strongest(guard, THIEF, 1100.0)
    vb = loaded.query_strongest(guard, THIEF, 93.0)
    assert va is not None and vb is not None
    assert (vb.entity, vb.memory_type, vb.stability, vb.salience, vb.recall_count, vb.tier) == (
        va.entity,
        va.memory_type,
        va.stability,
        va.salience,
        va.recall_count,
        va.tier,
    )
    assert vb.retrievability == pytest.approx(va.retrievability, rel=1e-12)
