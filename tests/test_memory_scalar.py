"""The scalar paths of single `record`, `awareness` and `query_strongest` (plain Python on one row)
give bit-for-bit what the batch path gives, where it is hardest: R exactly
at a threshold's float neighbours, equal R on two slots, eviction, consolidation, and the inputs
that must go through the batch path."""

from __future__ import annotations

import math

import numpy as np
import pytest

from npc_mind.memory import MemoryParams, MemoryPool
from tests.test_memory_batch import state

HOSTILE, TRIVIA, OBSERVATION = 3, 0, 1


def pair(capacity: int = 64, **params: object) -> tuple[MemoryPool, MemoryPool]:
    pools = (MemoryPool(capacity, MemoryParams(**params), events=True) for _ in range(2))
    a, b = pools
    a.add_npcs(2)
    b.add_npcs(2)
    return a, b


def neighbours(t: float, steps: int = 40) -> list[float]:
    """`t` and the floats just around it."""
    out = [t]
    up = down = t
    for _ in range(steps):
        up, down = math.nextafter(up, math.inf), math.nextafter(down, -math.inf)
        out += [up, down]
    return out


def test_awareness_at_every_threshold_matches_the_batch() -> None:
    pool = MemoryPool(events=True)
    npc = pool.add_npc()
    pool.record(npc, 9, HOSTILE, 0.37, 0.0)
    s = float(pool.state.stability[0, 0])
    p = pool.params
    levels_seen = set()
    for level in (p.awareness_pursue, p.awareness_search, p.forget_threshold):
        for now in neighbours(-s * math.log(level)):
            single = int(pool.awareness(npc, 9, now))
            batch = int(pool.awareness_batch(np.array([npc]), np.array([9]), now)[0])
            assert single == batch, (level, now)
            levels_seen.add(single)
    assert levels_seen == {0, 1, 2, 3}


def test_single_calls_match_a_batch_through_ties_eviction_and_consolidation() -> None:
    a, b = pair(capacity=3, rehearsal_refractory_s=1.0)
    script = [
        (0, 5, HOSTILE, 0.9, 0.0),
        (0, 5, TRIVIA, 0.9, 0.0),  # same entity, another type: consolidated by the rehearsal below
        (0, 5, HOSTILE, 0.8, 2.0),  # a rehearsal with E >= 0.7
        (0, 6, OBSERVATION, -0.5, 2.0),  # salience clipped to 0
        (0, 7, OBSERVATION, 2.0, 3.0),  # full: evicts
        (1, 5, HOSTILE, 0.95, 3.0),
        (0, 7, OBSERVATION, 0.1, 3.5),  # refractory: a refresh only
    ]
    for npc, entity, kind, salience, now in script:
        a.record(npc, entity, kind, salience, now)
        b.record_batch([npc], [entity], [kind], [salience], now)
        assert state(a) == state(b)
    # two memories with equal R (same last access, same S): the lowest slot wins, as in the batch
    for pool in (a, b):
        pool.record(1, 8, TRIVIA, 0.5, 4.0)
        pool.record(1, 8, OBSERVATION, 0.5, 4.0)
        pool.state.stability[pool.row_of(1), :] = 50.0
    for now in (4.5, 6.0, 30.0):
        single = a.query_strongest(1, 8, now)
        batch = b.query_strongest_batch([1], [8], now).view(0)
        assert single == batch
        assert state(a) == state(b)
    assert a.query_strongest(0, 5, 5.0) == b.query_strongest_batch([0], [5], 5.0).view(0)
    assert a.query_strongest(0, 404, 5.0) is None is b.query_strongest_batch([0], [404], 5.0).view(0)
    assert state(a) == state(b)
    ea, eb = a.drain_events(), b.drain_events()
    assert [col.tolist() for col in ea] == [col.tolist() for col in eb]
    assert [col.dtype for col in ea] == [col.dtype for col in eb]


def test_inputs_the_scalar_path_leaves_to_the_batch_still_match() -> None:
    a, b = pair(capacity=4)
    a.link(0, 1, 2)
    b.link(0, 1, 2)
    calls = [
        (np.int64(0), 1, HOSTILE, 0.9, 0.0),  # numpy id
        (0, 2, HOSTILE, np.float32(0.8), 1),  # numpy salience, integer time
        (0, 1, HOSTILE, 0.9, 5.0),  # linked NPC
        (1, -(2**63), TRIVIA, 0.5, 5.0),  # the empty-slot id
    ]
    for npc, entity, kind, salience, now in calls:
        a.record(npc, entity, kind, salience, now)
        b.record_batch([npc], [entity], [kind], [salience], now)
    a.record(1, 3, TRIVIA, 0.5, 6.0, tags=["stall"])
    b.record_batch([1], [3], [TRIVIA], [0.5], 6.0, tags=[["stall"]])
    assert state(a) == state(b)
    assert a.memories(1, 6.0) == b.memories(1, 6.0)
    with pytest.raises(ValueError, match="finite"):
        a.record(0, 1, HOSTILE, math.nan, 7.0)
    with pytest.raises(KeyError, match="unknown npc id 9"):
        a.awareness(9, 1, 7.0)
    assert state(a) == state(b)


def test_recall_fields_are_the_recalled_views_fields_on_both_paths() -> None:
    # The fast path (plain ids) and the batch path (a numpy id, a linked NPC) of `recall_fields`
    # give `query_strongest`'s view field for field, and change the pool the same way.
    a, b = pair(capacity=4)
    for pool in (a, b):
        pool.link(1, 1, 2)  # NPC 1's recalls go through the batch path
        for npc in (0, 1):
            pool.record(npc, 1, HOSTILE, 0.9, 0.0)
            pool.record(npc, 1, OBSERVATION, 0.4, 1.0)
    found = []
    for npc, entity, now in [(0, 1, 3.0), (np.int64(0), 1, 4.0), (1, 1, 5.0), (0, 7, 6.0), (0, 1, 1e9)]:
        view = b.query_strongest(npc, entity, now)
        fields = a.recall_fields(npc, entity, now)
        expected = None if view is None else tuple(getattr(view, name) for name in type(view).__slots__)
        assert fields == expected
        assert state(a) == state(b)
        found.append(fields is not None)
    assert found == [True, True, True, False, False]  # both paths found memories; unseen and forgotten
