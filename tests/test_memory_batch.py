"""A batch gives bit-for-bit what the same single calls, in order, give: on numpy and on each
level of the compiled memory kernel this CPU runs (every test here runs once per level)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npc_mind.memory import MemoryParams, MemoryPool
from npc_mind.memory.columns import SLOT_COLUMNS
from npc_mind.memory.types import EventKind
from tests.support.memory_kernel import LEVELS, forced_kernel

SIGNAL_KINDS = (EventKind.FORMED, EventKind.REHEARSED, EventKind.EVICTED)
COLUMNS = tuple(column.name for column in SLOT_COLUMNS)


@pytest.fixture(autouse=True, params=LEVELS)
def kernel_level(request: pytest.FixtureRequest):
    with forced_kernel(request.param):
        yield request.param


def state(pool: MemoryPool) -> dict[str, bytes]:
    n = pool.npc_count
    out = {name: getattr(pool.state, name)[:n].tobytes() for name in COLUMNS}
    out["used"] = pool.state.used_slots[:n].tobytes()
    longterm = pool.state.longterm
    out["lt"] = b"".join(a[: longterm.size].tobytes() for a in longterm.cols.values())
    return out


def fresh(npcs: int, capacity: int, curve: str, links: bool, narrow: int | None = None) -> MemoryPool:
    """`narrow`: the pool's narrow-round width (0: every round vectorised; None: the default)."""
    pool = MemoryPool(capacity, MemoryParams(curve=curve, rehearsal_refractory_s=1.0), events=True)
    if narrow is not None:
        pool.state.narrow_round = narrow
    pool.add_npcs(npcs)
    if links:
        pool.link(0, 1, 2)
        pool.link(1, 0, 3, 3, None)
    return pool


events = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 5), st.integers(0, 4), st.floats(0.0, 1.0, allow_nan=False)),
    min_size=1,
    max_size=40,
)
frames = st.lists(
    st.tuples(
        events,
        st.floats(0.0, 4.0, allow_nan=False),
        st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5)), max_size=8),
    ),
    min_size=1,
    max_size=6,
)


@pytest.mark.parametrize("narrow", [0, None])  # 0: every round vectorised; None: the default width
@settings(max_examples=120, deadline=None)
@given(
    frames=frames,
    capacity=st.integers(1, 6),
    curve=st.sampled_from(["exponential", "power"]),
    links=st.booleans(),
)
def test_batches_equal_sequential_singles(narrow, frames, capacity, curve, links) -> None:
    check_batches_equal_sequential_singles(frames, capacity, curve, links, narrow)


def check_batches_equal_sequential_singles(frames, capacity, curve, links, narrow=None) -> None:
    batch = fresh(4, capacity, curve, links, narrow)
    single = fresh(4, capacity, curve, links, narrow)
    now = 0.0
    for evs, dt, queries in frames:
        now += dt
        npcs, ents, types, sals = (list(x) for x in zip(*evs, strict=True))
        batch.record_batch(npcs, ents, types, sals, now)
        for n, e, t, s in evs:
            single.record(n, e, t, s, now)
        assert state(batch) == state(single)
        if queries:
            qn, qe = (list(x) for x in zip(*queries, strict=True))
            res = batch.query_strongest_batch(qn, qe, now + 0.5)
            views = [single.query_strongest(n, e, now + 0.5) for n, e in queries]
            assert [res.view(i) for i in range(len(queries))] == views
            assert res.retrievability.tolist() == [0.0 if v is None else v.retrievability for v in views]
            assert state(batch) == state(single)
            aw = batch.awareness_batch(qn, qe, now + 1.0)
            assert aw.tolist() == [int(single.awareness(n, e, now + 1.0)) for n, e in queries]
    eb, es = batch.drain_events(), single.drain_events()
    assert sorted(zip(*eb, strict=True)) == sorted(zip(*es, strict=True))
    # the signal events (formed, rehearsed, evicted) come in the singles' order too
    assert signal_events(eb) == signal_events(es)


def signal_events(events) -> list[tuple[int, ...]]:
    """The rows of `drain_events` that become signals, in order (recalls are not signals)."""
    rows = zip(*(column.tolist() for column in events), strict=True)
    return [row for row in rows if row[0] in SIGNAL_KINDS]


def test_several_events_for_one_npc_in_one_batch_apply_in_order() -> None:
    a, b = MemoryPool(3), MemoryPool(3)
    for p in (a, b):
        p.add_npcs(2)
    npcs = [0, 1, 0, 0, 1, 0, 0]
    ents = [5, 5, 6, 5, 7, 8, 9]
    sal = [0.9, 0.1, 0.5, 0.95, 0.3, 0.2, 0.4]
    a.record_batch(npcs, ents, 3, sal, 10.0)
    for n, e, s in zip(npcs, ents, sal, strict=True):
        b.record(n, e, 3, s, 10.0)
    assert state(a) == state(b)
    # 5, 6, (5 again: refractory), 8 fill the 3 slots; 9 then evicts 8, the lowest 0.6 R + 0.4 E
    assert [v.entity for v in a.memories(0, 10.0)] == [5, 6, 9]


def test_large_random_batch_matches_singles() -> None:
    rng = np.random.default_rng(7)
    a, b = MemoryPool(8), MemoryPool(8)
    for p in (a, b):
        p.add_npcs(50)
    for frame in range(12):
        n = 300
        npcs = rng.integers(0, 50, n)
        ents = rng.integers(0, 20, n) * (2**40) - 2**62  # big and negative ids too
        types = rng.integers(0, 5, n)
        sals = rng.random(n)
        now = frame * 0.7
        a.record_batch(npcs, ents, types, sals, now)
        for i in range(n):
            b.record(int(npcs[i]), int(ents[i]), int(types[i]), float(sals[i]), now)
        q_n, q_e = rng.integers(0, 50, 60), rng.integers(0, 20, 60) * (2**40) - 2**62
        ra = a.query_strongest_batch(q_n, q_e, now)
        rb = [b.query_strongest(int(x), int(y), now) for x, y in zip(q_n, q_e, strict=True)]
        assert [ra.view(i) for i in range(60)] == rb
        assert state(a) == state(b)
    np.testing.assert_array_equal(a.retrievability_all(20.0), b.retrievability_all(20.0))


def test_query_batch_fields() -> None:
    pool = MemoryPool()
    a, b = pool.add_npc(), pool.add_npc()
    pool.record(a, 5, 3, 0.9, 0.0)
    res = pool.query_strongest_batch([a, b, a], [5, 5, 6], 10.0)
    assert res.found.tolist() == [True, False, False]
    assert res.memory_type.tolist() == [3, -1, -1]
    assert res.recall_count.tolist() == [2, -1, -1]
    assert res.tier.tolist() == [0, -1, -1]
    assert res.slot.tolist() == [0, -1, -1]
    assert np.isnan(res.stability[1]) and res.stability[0] == 840.0
    assert res.view(1) is None and res.view(0).entity == 5 and len(res) == 3


def count_rounds(pool: MemoryPool, method: str = "record_round") -> list[int]:
    """Spy on the pool's vectorised rounds (the real method still runs): how many rows each.
    `record_round` is the recorder's, `query_round` the recaller's."""
    widths: list[int] = []
    collaborator = pool._recorder if method == "record_round" else pool._recaller
    real = getattr(collaborator, method)

    def spy(rr: np.ndarray, *args: object) -> object:
        widths.append(int(rr.shape[0]))
        return real(rr, *args)

    setattr(collaborator, method, spy)
    return widths


@pytest.mark.parametrize(
    "layout",
    ["one npc", "one npc among many", "three npcs", "sixteen npcs"],
)
def test_many_rows_for_few_npcs_cost_rounds_in_proportion_to_rows_not_to_rows_per_npc(layout: str) -> None:
    """Issue 10 defect 8: 20,000 rows for one NPC ran 20,000 rounds (1.7-2.3 s; 200,000 hung), and
    so did 20,000 waking queries. Now narrow rounds run their rows one by one on the scalar path, and
    the result is still exactly the same single calls in order (evictions, rehearsals, the refractory
    period, consolidation, recalls)."""
    rng = np.random.default_rng(11)
    n = 4000
    a, b = MemoryPool(8, events=True), MemoryPool(8, events=True)
    for pool in (a, b):
        pool.add_npcs(200)
    npcs = {
        "one npc": np.zeros(n, dtype=np.int64),
        "one npc among many": np.where(rng.random(n) < 0.5, 0, rng.integers(1, 200, n)),
        "three npcs": rng.integers(0, 3, n),
        "sixteen npcs": rng.integers(0, 16, n),
    }[layout]
    ents, types, sals = rng.integers(0, 12, n), rng.integers(0, 5, n), rng.random(n)
    widths = count_rounds(a)
    for now in (0.0, 0.5, 3.0):
        a.record_batch(npcs, ents, types, sals, now)
        for i in range(n):
            b.record(int(npcs[i]), int(ents[i]), int(types[i]), float(sals[i]), now)
        assert state(a) == state(b)
    assert sum(widths) <= 3 * n
    # every vectorised round carries at least _NARROW_ROUND rows: rounds <= rows / that
    assert all(w >= a.state.narrow_round for w in widths), widths[:20]
    assert len(widths) <= 3 * n // a.state.narrow_round
    # waking queries: the same, one round per query before
    queries = count_rounds(a, "query_round")
    for now in (3.5, 9.0):
        batch = a.query_strongest_batch(npcs, ents, now)
        singles = [b.query_strongest(int(x), int(y), now) for x, y in zip(npcs, ents, strict=True)]
        assert [batch.view(i) for i in range(n)] == singles
        assert state(a) == state(b)
    assert all(w >= a.state.narrow_round for w in queries), queries[:20]
    ea, eb = a.drain_events(), b.drain_events()
    assert sorted(zip(*ea, strict=True)) == sorted(zip(*eb, strict=True))
    assert signal_events(ea) == signal_events(eb)


def test_narrow_rounds_with_tags_and_links_still_match_singles() -> None:
    """Rows the scalar path leaves to the batch (tags, linked NPCs) run as rounds of one, in order."""
    a, b = MemoryPool(4), MemoryPool(4)
    for pool in (a, b):
        pool.add_npcs(2)
        pool.link(0, 1, 2)
    npcs = [0, 0, 0, 1, 0, 0, 1, 0]
    ents = [1, 2, 1, 3, 4, 5, 3, 6]
    tags = [["a"], None, ["b"], ["c"], None, ["d"], None, ["e"]]
    sal = [0.9, 0.8, 0.95, 0.2, 0.1, 0.3, 0.4, 0.5]
    for now in (0.0, 4.0):
        a.record_batch(npcs, ents, 3, sal, now, tags=tags)
        for n, e, s, t in zip(npcs, ents, sal, tags, strict=True):
            b.record(n, e, 3, s, now, tags=t)
        assert state(a) == state(b)
        assert a.memories(0, now) == b.memories(0, now)
