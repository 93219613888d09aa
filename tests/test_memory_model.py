"""The model's formulas and rules, one by one (issue 2, "The model")."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from npc_mind.memory import (
    Awareness,
    EventKind,
    MemoryParams,
    MemoryPool,
    MemoryType,
    PoolFullError,
    Tier,
    UnknownNpcError,
)

A = 1.35
E1, E2, E3 = 11, 22, 33


def one(pool: MemoryPool, npc: int, now: float, entity: int | None = None, mtype: MemoryType | None = None):
    views = [
        v
        for v in pool.memories(npc, now)
        if (entity is None or v.entity == entity) and (mtype is None or v.memory_type == mtype)
    ]
    assert len(views) == 1, views
    return views[0]


@pytest.mark.parametrize(
    ("mtype", "base"),
    [
        (MemoryType.TRIVIA, 5.0),
        (MemoryType.OBSERVATION, 30.0),
        (MemoryType.INTERACTION, 120.0),
        (MemoryType.HOSTILE, 600.0),
        (MemoryType.TRAUMA, 3600.0),
    ],
)
def test_initial_stability_is_base_times_half_plus_salience(mtype: MemoryType, base: float) -> None:
    pool = MemoryPool()
    npc = pool.add_npc()
    pool.record(npc, E1, mtype, 0.3, 0.0)
    v = one(pool, npc, 0.0)
    assert v.stability == base * (0.5 + 0.3)
    assert v.recall_count == 1 and v.retrievability == 1.0 and v.tier is Tier.WORKING


def test_salience_is_clamped_to_unit_interval() -> None:
    pool = MemoryPool()
    npc = pool.add_npc()
    pool.record(npc, E1, MemoryType.HOSTILE, 7.0, 0.0)
    pool.record(npc, E2, MemoryType.HOSTILE, -3.0, 0.0)
    assert one(pool, npc, 0.0, E1).salience == 1.0
    assert one(pool, npc, 0.0, E2).salience == 0.0
    assert one(pool, npc, 0.0, E2).stability == 300.0


def test_retrievability_is_exponential_and_clamped_at_exponent_minus_10() -> None:
    pool = MemoryPool()
    npc = pool.add_npc()
    pool.record(npc, E1, MemoryType.OBSERVATION, 0.5, 0.0)  # S = 30
    for t in (0.0, 1.0, 29.0, 150.0, 299.0):
        assert pool.retrievability_all(t)[0, 0] == pytest.approx(math.exp(-t / 30.0), rel=1e-15)
    assert pool.retrievability_all(300.0)[0, 0] == 0.0  # exactly -10: counts as 0
    assert pool.retrievability_all(301.0)[0, 0] == 0.0


def test_huge_elapsed_time_gives_zero_without_slowdown() -> None:
    pool = MemoryPool()
    ids = pool.add_npcs(500)
    pool.record_batch(np.repeat(ids, 64), np.tile(np.arange(64), 500), 0, 0.5, 0.0)
    pool.retrievability_all(1.0)
    t0 = time.perf_counter()
    near = pool.retrievability_all(1.0)
    t1 = time.perf_counter()
    far = pool.retrievability_all(1e15)
    t2 = time.perf_counter()
    assert (far == 0.0).all() and (near > 0).all()
    assert t2 - t1 < 10 * (t1 - t0) + 0.005
    assert pool.awareness(ids[0], 5, 1e15) is Awareness.NONE


def test_rehearsal_multiplies_stability_with_the_larger_salience() -> None:
    pool = MemoryPool()
    npc = pool.add_npc()
    pool.record(npc, E1, MemoryType.HOSTILE, 0.4, 0.0)
    pool.record(npc, E1, MemoryType.HOSTILE, 0.8, 10.0)
    v = one(pool, npc, 10.0)
    s1 = 600.0 * 0.9
    s2 = s1 * (1.0 + A * math.log(1.0 + 2) * 0.8)
    assert v.recall_count == 2 and v.salience == 0.8
    assert v.stability == pytest.approx(s2, rel=1e-15)
    assert v.retrievability == 1.0
    pool.record(npc, E1, MemoryType.HOSTILE, 0.1, 20.0)  # lower salience: the larger one is kept
    v = one(pool, npc, 20.0)
    assert v.salience == 0.8 and v.recall_count == 3
    assert v.stability == pytest.approx(s2 * (1.0 + A * math.log(1.0 + 3) * 0.8), rel=1e-15)


def test_matching_needs_same_entity_and_type_and_ignores_r() -> None:
    pool = MemoryPool()
    npc = pool.add_npc()
    pool.record(npc, E1, MemoryType.TRIVIA, 0.1, 0.0)
    pool.record(npc, E1, MemoryType.HOSTILE, 0.5, 0.0)  # another type: a second memory
    assert pool.memory_count(npc) == 2
    pool.record(npc, E1, MemoryType.TRIVIA, 0.1, 1000.0)  # long forgotten, still matched
    assert pool.memory_count(npc) == 2
    assert one(pool, npc, 1000.0, E1, MemoryType.TRIVIA).recall_count == 2


def test_refractory_period_only_refreshes_last_access() -> None:
    pool = MemoryPool(params=MemoryParams(rehearsal_refractory_s=2.0))
    npc = pool.add_npc()
    pool.record(npc, E1, MemoryType.HOSTILE, 0.5, 0.0)
    s0 = one(pool, npc, 0.0).stability
    pool.record(npc, E1, MemoryType.HOSTILE, 0.9, 1.5)
    v = one(pool, npc, 1.5)
    assert (v.stability, v.recall_count, v.age) == (s0, 1, 0.0)
    pool.record(npc, E1, MemoryType.HOSTILE, 0.5, 3.6)  # 2.1 s after the last access: rehearses
    assert one(pool, npc, 3.6).recall_count == 2


def test_stability_is_clamped_to_max_stability() -> None:
    pool = MemoryPool(params=MemoryParams(max_stability=5000.0, rehearsal_refractory_s=0.0))
    npc = pool.add_npc()
    pool.record(npc, E2, MemoryType.TRAUMA, 1.0, 0.0)  # S0 = 5400 is clamped too
    assert one(pool, npc, 0.0, E2).stability == 5000.0
    for t in range(40):
        pool.record(npc, E1, MemoryType.HOSTILE, 1.0, float(t))
    assert one(pool, npc, 40.0, E1).stability == 5000.0


def test_recall_wakes_reports_r_before_the_wake_and_keeps_stability() -> None:
    pool = MemoryPool()
    npc = pool.add_npc()
    pool.record(npc, E1, MemoryType.INTERACTION, 0.5, 0.0)
    v = pool.query_strongest(npc, E1, 60.0)
    assert v is not None
    assert v.retrievability == pytest.approx(math.exp(-60.0 / 120.0))
    assert v.recall_count == 2 and v.stability == 120.0
    assert one(pool, npc, 60.0).retrievability == 1.0  # woken
    assert pool.query_strongest(npc, E2, 60.0) is None


def test_query_picks_the_strongest_memory_of_the_entity() -> None:
    pool = MemoryPool()
    npc = pool.add_npc()
    pool.record(npc, E1, MemoryType.TRIVIA, 0.2, 0.0)
    pool.record(npc, E1, MemoryType.HOSTILE, 0.2, 0.0)
    v = pool.query_strongest(npc, E1, 3.0)
    assert v is not None and v.memory_type is MemoryType.HOSTILE


def test_only_query_strongest_wakes() -> None:
    pool = MemoryPool()
    npc = pool.add_npc()
    pool.record(npc, E1, MemoryType.OBSERVATION, 0.5, 0.0, tags=["gate"])
    before = one(pool, npc, 10.0)
    pool.awareness(npc, E1, 10.0)
    pool.awareness_batch([npc, npc], [E1, E2], 10.0)
    pool.retrievability_all(10.0)
    pool.top_k(npc, 10.0, tags=["gate"])
    pool.memories(npc, 10.0)
    pool.forget_times()
    assert one(pool, npc, 10.0) == before


@pytest.mark.parametrize(
    ("r", "level"),
    [
        (0.95, Awareness.PURSUE),
        (0.81, Awareness.PURSUE),
        (0.8, Awareness.SEARCH),
        (0.31, Awareness.SEARCH),
        (0.3, Awareness.PUZZLED),
        (0.06, Awareness.PUZZLED),
        (0.05, Awareness.NONE),
        (0.0, Awareness.NONE),
    ],
)
def test_awareness_layers(r: float, level: Awareness) -> None:
    pool = MemoryPool()
    assert pool.awareness_of(r) is level
    npc = pool.add_npc()
    assert pool.awareness(npc, E1, 0.0) is Awareness.NONE  # never seen
    if r > 0:
        pool.record(npc, E1, MemoryType.HOSTILE, 0.5, 0.0)  # S = 600
        t = -600.0 * math.log(r)
        got = pool.awareness(npc, E1, t)
        # at the exact boundary float rounding may land on either side; a hair inside must match
        inside = pool.awareness(npc, E1, t + (1e-6 if level is not Awareness.PURSUE else -1e-6))
        assert level in (got, inside)


def test_time_going_backwards_clamps_elapsed_to_zero() -> None:
    pool = MemoryPool()
    npc = pool.add_npc()
    pool.record(npc, E1, MemoryType.OBSERVATION, 0.5, 100.0)
    assert pool.retrievability_all(50.0)[0, 0] == 1.0
    assert pool.awareness(npc, E1, 50.0) is Awareness.PURSUE
    pool.record(
        npc, E1, MemoryType.OBSERVATION, 0.5, 40.0
    )  # a backwards clock is within the refractory period
    assert one(pool, npc, 40.0).recall_count == 1


def test_consolidation_boosts_same_entity_and_linked_memories_without_chaining() -> None:
    pool = MemoryPool(params=MemoryParams(rehearsal_refractory_s=0.0))
    npc = pool.add_npc()
    pool.record(npc, E1, MemoryType.HOSTILE, 0.9, 0.0)  # the strong memory
    pool.record(npc, E1, MemoryType.OBSERVATION, 0.3, 0.0)  # same entity
    pool.record(npc, E2, MemoryType.INTERACTION, 0.3, 0.0)  # linked
    pool.record(npc, E3, MemoryType.INTERACTION, 0.3, 0.0)  # linked to E2 only: no chaining
    pool.link(npc, E1, E2, MemoryType.HOSTILE, None)
    pool.link(npc, E2, E3)
    s_obs, s_e2, s_e3 = 30 * 0.8, 120 * 0.8, 120 * 0.8
    v = pool.query_strongest(npc, E1, 5.0)
    assert v is not None and v.memory_type is MemoryType.HOSTILE and v.recall_count == 2
    f = 1.0 + 0.25 * A * math.log(1.0 + 2) * 0.9
    assert one(pool, npc, 5.0, E1, MemoryType.OBSERVATION).stability == pytest.approx(s_obs * f, rel=1e-15)
    assert one(pool, npc, 5.0, E2).stability == pytest.approx(s_e2 * f, rel=1e-15)
    assert one(pool, npc, 5.0, E3).stability == s_e3
    for e in (E2, E3):
        assert one(pool, npc, 5.0, e).recall_count == 1  # k and last access unchanged
    assert one(pool, npc, 5.0, E1, MemoryType.OBSERVATION).age == 5.0
    # a rehearsal by event consolidates too; a weak memory (E < 0.7) does not
    pool.record(npc, E1, MemoryType.HOSTILE, 0.9, 6.0)
    assert one(pool, npc, 6.0, E2).stability > s_e2 * f
    s = one(pool, npc, 6.0, E1, MemoryType.HOSTILE).stability
    pool.query_strongest(npc, E3, 7.0)  # E3 weak: nothing else changes
    assert one(pool, npc, 7.0, E1, MemoryType.HOSTILE).stability == s
    assert pool.links(npc) == [(E1, int(MemoryType.HOSTILE), E2, None), (E2, None, E3, None)]


def test_eviction_prefers_free_then_lowest_forgotten_then_lowest_score() -> None:
    params = MemoryParams()
    pool = MemoryPool(4, params)
    npc = pool.add_npc()
    pool.record(npc, 1, MemoryType.TRIVIA, 0.0, 0.0)  # S = 2.5: forgotten by t = 50
    pool.record(npc, 2, MemoryType.TRAUMA, 0.0, 0.0)
    pool.record(npc, 3, MemoryType.TRIVIA, 0.0, 0.0)  # forgotten too, higher slot
    pool.record(npc, 4, MemoryType.TRAUMA, 0.5, 0.0)
    pool.record(npc, 5, MemoryType.TRAUMA, 0.5, 50.0)
    slots = {v.entity: v.slot for v in pool.memories(npc, 50.0)}
    assert slots == {5: 0, 2: 1, 3: 2, 4: 3}  # the lowest-index forgotten slot went
    pool.record(npc, 6, MemoryType.TRAUMA, 0.5, 50.0)
    assert {v.entity for v in pool.memories(npc, 50.0)} == {5, 2, 6, 4}
    # nothing forgotten: lowest 0.6 R + 0.4 E goes (entity 2: E = 0, R ~ 0.99)
    pool.record(npc, 7, MemoryType.TRAUMA, 0.5, 51.0)
    assert {v.entity for v in pool.memories(npc, 51.0)} == {5, 7, 6, 4}


def test_eviction_ties_take_the_lowest_slot_and_never_lru() -> None:
    pool = MemoryPool(3)
    npc = pool.add_npc()
    for e in (1, 2, 3):
        pool.record(npc, e, MemoryType.TRAUMA, 0.5, 0.0)
    pool.record(npc, 4, MemoryType.TRAUMA, 0.5, 0.0)
    assert [v.entity for v in pool.memories(npc, 0.0)] == [4, 2, 3]


def test_pinned_memories_are_never_evicted_and_a_fully_pinned_pool_raises() -> None:
    pool = MemoryPool(2)
    npc = pool.add_npc()
    pool.record(npc, 1, MemoryType.TRIVIA, 0.0, 0.0)
    pool.record(npc, 2, MemoryType.TRIVIA, 0.0, 0.0)
    pool.pin(npc, 1, MemoryType.TRIVIA)
    pool.record(npc, 3, MemoryType.TRAUMA, 1.0, 100.0)
    assert {v.entity for v in pool.memories(npc, 100.0)} == {1, 3}
    pool.pin(npc, 3, MemoryType.TRAUMA)
    before = pool.memories(npc, 100.0)
    with pytest.raises(PoolFullError, match="pinned"):
        pool.record(npc, 4, MemoryType.TRIVIA, 0.5, 100.0)
    pool.record(npc, 1, MemoryType.TRIVIA, 0.5, 100.0)  # rehearsing a pinned memory is fine
    assert pool.memories(npc, 100.0)[1] == before[1]
    pool.pin(npc, 3, MemoryType.TRAUMA, pinned=False)
    pool.record(npc, 4, MemoryType.TRIVIA, 0.5, 100.0)
    with pytest.raises(KeyError, match="no working memory"):
        pool.pin(npc, 99, MemoryType.TRIVIA)


def test_power_curve_matches_half_life_and_caps_age() -> None:
    params = MemoryParams(curve="power")
    pool = MemoryPool(params=params)
    npc = pool.add_npc()
    pool.record(npc, E1, MemoryType.OBSERVATION, 0.5, 0.0)  # S = 30
    d = 0.1542
    assert pool.retrievability_all(30 * math.log(2))[0, 0] == pytest.approx(0.5, rel=1e-12)
    f_fsrs = 0.9 ** (-1 / d) - 1
    s_prime = 30 * math.log(2) * f_fsrs / (2 ** (1 / d) - 1)
    for t in (1.0, 10.0, 60.0):
        assert pool.retrievability_all(t)[0, 0] == pytest.approx((1 + f_fsrs * t / s_prime) ** -d, rel=1e-12)
    cap = 30 * math.log(20)  # default age cap: the exponential's forget time
    assert pool.retrievability_all(cap - 0.01)[0, 0] > 0.3
    assert pool.retrievability_all(cap + 0.01)[0, 0] == 0.0
    assert pool.forget_times()[0, 0] == pytest.approx(cap)
    custom = MemoryPool(params=MemoryParams(curve="power", age_cap=100.0))
    n2 = custom.add_npc()
    custom.record(n2, E1, MemoryType.OBSERVATION, 0.5, 0.0)
    assert custom.retrievability_all(1000.0)[0, 0] > 0.05


@pytest.mark.parametrize("curve", ["exponential", "power"])
def test_pop_forgotten_reports_each_forgetting_exactly_once(curve: str) -> None:
    pool = MemoryPool(params=MemoryParams(curve=curve))
    npc = pool.add_npc()
    pool.record(npc, E1, MemoryType.TRIVIA, 0.5, 0.0)  # S = 5: forgotten at 5 ln 20 = 14.98 s
    pool.record(npc, E2, MemoryType.OBSERVATION, 0.5, 0.0)
    due = pool.forget_times()[0, 0]
    assert due == pytest.approx(5 * math.log(20))
    assert pool.retrievability_all(due - 1e-6)[0, 0] > 0.05 >= pool.retrievability_all(due + 1e-6)[0, 0]
    seen = []
    for frame in range(0, 60 * 20):
        rows = pool.pop_forgotten(frame / 60.0)
        seen += list(zip(rows.npc.tolist(), rows.entity.tolist(), rows.forget_time.tolist(), strict=True))
    assert [(n, e) for n, e, _ in seen] == [(npc, E1)]
    assert seen[0][2] == due
    pool.record(npc, E1, MemoryType.TRIVIA, 0.5, 30.0)  # rehearsed back: it can be forgotten again
    assert len(pool.pop_forgotten(10_000.0).npc) == 2
    assert len(pool.pop_forgotten(20_000.0).npc) == 0
    assert np.isinf(pool.forget_times()[0, 2:]).all()


def test_top_k_scores_recency_importance_and_tags_without_waking() -> None:
    pool = MemoryPool()
    npc = pool.add_npc()
    pool.record(npc, 1, MemoryType.HOSTILE, 0.9, 0.0, tags=["theft", "market"])
    pool.record(npc, 2, MemoryType.INTERACTION, 0.5, 0.0, tags=["trade"])
    pool.record(npc, 3, MemoryType.OBSERVATION, 0.2, 0.0)
    pool.record(npc, 4, MemoryType.TRIVIA, 0.9, 0.0)  # forgotten by t = 60
    best = pool.top_k(npc, 60.0, k=5)
    assert [v.entity for v in best] == [1, 2, 3]
    assert [v.entity for v in pool.top_k(npc, 60.0, k=1)] == [1]
    assert [v.entity for v in pool.top_k(npc, 60.0, k=2, tags={"trade"})] == [2, 1]
    assert pool.top_k(npc, 60.0, k=0) == []
    assert [v.recall_count for v in pool.memories(npc, 60.0)] == [1, 1, 1, 1]
    assert best[0].tags == frozenset({"theft", "market"})
    flat = MemoryPool(params=MemoryParams(topk_importance_weight=0.0))
    n2 = flat.add_npc()
    flat.record(n2, 1, MemoryType.HOSTILE, 0.1, 0.0)
    flat.record(n2, 2, MemoryType.HOSTILE, 0.9, 0.0)
    assert [v.entity for v in flat.top_k(n2, 1.0)] == [2, 1]  # equal R up to S: E dropped, E2 has larger S


def test_entities_lists_every_remembered_entity_once_working_and_long_term() -> None:
    pool = MemoryPool(params=MemoryParams(rehearsal_refractory_s=0.0))
    a, b = pool.add_npc(), pool.add_npc()
    pool.record(a, 7, MemoryType.HOSTILE, 0.9, 0.0)
    pool.record(b, 7, MemoryType.TRIVIA, 0.1, 0.0)
    pool.record(b, 3, MemoryType.OBSERVATION, 0.5, 0.0)
    assert pool.entities().tolist() == [3, 7]
    for t in range(1, 9):  # rehearsed: promoted to the long-term tier at the game day
        pool.record(a, 11, MemoryType.HOSTILE, 0.9, float(t))
    pool.advance_game_day(1.0, now=9.0)
    assert pool.longterm_count(a) == 1 and pool.entities().tolist() == [3, 7, 11]
    pool.remove_npc(b)
    assert pool.entities().tolist() == [7, 11]


def test_long_term_tier_consolidates_on_game_days() -> None:
    pool = MemoryPool(params=MemoryParams(rehearsal_refractory_s=0.0), events=True)
    npc = pool.add_npc()
    pool.record(npc, E1, MemoryType.HOSTILE, 0.9, 0.0)
    pool.advance_game_day(1.0, now=1.0)  # the short story promotes nothing
    assert pool.longterm_count() == 0 and pool.memory_count(npc) == 1
    for t in range(1, 9):  # rehearsed to k = 9 >= 8
        pool.record(npc, E1, MemoryType.HOSTILE, 0.9, float(t))
    pool.drain_events()
    pool.advance_game_day(1.0, now=9.0)
    assert pool.memory_count(npc) == 0 and pool.longterm_count(npc) == 1
    ev = pool.drain_events()
    assert ev.kind.tolist() == [EventKind.PROMOTED] and ev.entity.tolist() == [E1]
    lt = pool.memories(npc, 10.0)[0]
    assert lt.tier is Tier.LONG_TERM and lt.slot == -1 and lt.retrievability == 1.0
    assert lt.stability >= pool.params.longterm_min_days
    # the long-term memory answers queries and awareness, and a recall wakes it
    pool.advance_game_day(3.0)
    r3 = pool.memories(npc, 10.0)[0].retrievability
    assert r3 == pytest.approx(math.exp(-3.0 / lt.stability))
    assert pool.awareness(npc, E1, 1e9) == pool.awareness_of(r3)
    v = pool.query_strongest(npc, E1, 1e9)
    assert v is not None and v.tier is Tier.LONG_TERM and v.retrievability == pytest.approx(r3)
    assert pool.memories(npc, 10.0)[0].age == 0.0
    # decays in batches per game day, then is forgotten
    pool.advance_game_day(lt.stability * 3.1)
    assert pool.longterm_count(npc) == 0
    assert pool.drain_events().kind.tolist() == [EventKind.RECALLED, EventKind.LONG_TERM_FORGOTTEN]


def test_npc_ids_are_never_reused_and_removal_drops_everything() -> None:
    pool = MemoryPool()
    a, b, c = pool.add_npc(), pool.add_npc(), pool.add_npc()
    pool.record(a, E1, MemoryType.HOSTILE, 0.9, 0.0)
    pool.record(c, E3, MemoryType.HOSTILE, 0.9, 0.0)
    pool.link(a, E1, E2)
    pool.remove_npc(a)
    d = pool.add_npc()
    assert d not in (a, b, c)
    with pytest.raises(UnknownNpcError, match="removed"):
        pool.record(a, E1, MemoryType.HOSTILE, 0.9, 0.0)
    assert pool.memory_count(d) == 0 and one(pool, c, 0.0).entity == E3
    assert set(pool.npc_ids().tolist()) == {b, c, d}
    r = pool.retrievability_all(0.0)
    assert r.shape == (3, 64)
    assert r[pool.npc_ids().tolist().index(c), 0] == 1.0


def test_events_report_formed_rehearsed_recalled_evicted() -> None:
    pool = MemoryPool(2, events=True)
    npc = pool.add_npc()
    pool.record(npc, 1, MemoryType.TRIVIA, 0.1, 0.0)
    pool.record(npc, 2, MemoryType.TRIVIA, 0.1, 0.0)
    pool.record(npc, 2, MemoryType.TRIVIA, 0.1, 5.0)
    pool.query_strongest(npc, 2, 5.0)
    pool.record(npc, 3, MemoryType.HOSTILE, 0.9, 100.0)
    ev = pool.drain_events()
    assert [(EventKind(k).name, e) for k, e in zip(ev.kind.tolist(), ev.entity.tolist(), strict=True)] == [
        ("FORMED", 1),
        ("FORMED", 2),
        ("REHEARSED", 2),
        ("RECALLED", 2),
        ("EVICTED", 1),
        ("FORMED", 3),
    ]
    assert len(pool.drain_events()) == 0
