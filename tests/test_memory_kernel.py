"""The compiled query kernel and the pure numpy path give bit-for-bit the same answers and state.

Every test drives a numpy pool and a kernel pool through the same calls and compares everything
they return and hold. Also: how a pool picks its path (`NPC_MIND_MEMORY_KERNEL`), the fallback
when the kernel is missing or stale, and the provisioning step that builds it.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npc_mind.memory import MemoryParams, MemoryPool, MemoryType, QueryBatch, UnknownNpcError, kernel
from npc_mind.memory.pool import entity_hash
from tests.support.memory_backend import memory_backend

COLUMNS = ("_ent", "_h", "_typ", "_last", "_stab", "_sal", "_k", "_pin", "_emit", "_used", "_pinned", "_ltn")
FIELDS = ("entity", "memory_type", "stability", "salience", "recall_count", "tier", "slot")
EMPTY_ENTITY = -(2**63)


def _colliding_pair() -> tuple[int, int]:
    """Two entity ids with the same 16-bit hash: only the full-id check tells them apart."""
    ids = np.arange(1, 400_000, dtype=np.int64) * 7919
    hashes = entity_hash(ids)
    order = np.argsort(hashes, kind="stable")
    same = np.flatnonzero(hashes[order][1:] == hashes[order][:-1])[0]
    return int(ids[order][same]), int(ids[order][same + 1])


COLLIDING = _colliding_pair()
ENTITIES = (0, 1, 2, 3, 4, *COLLIDING, EMPTY_ENTITY)


def state(pool: MemoryPool) -> tuple:
    n = pool.npc_count
    lt = pool._lt
    return (
        tuple(getattr(pool, c)[:n].tobytes() for c in COLUMNS),
        tuple(a[: lt.size].tobytes() for a in lt.cols.values()),
        tuple(lt.tags[: lt.size]),
        pool._tags[:n].tolist() if pool._tags is not None else None,
        pool._tmax,
        pool.clock,
    )


def answers(res) -> tuple:
    n = len(res)
    return (
        res.retrievability.tobytes(),
        res.found.tolist(),
        tuple(getattr(res, f).tobytes() for f in FIELDS),
        [res.view(i) for i in range(n)],
    )


def pair(
    capacity: int = 4, params: MemoryParams | None = None, npcs: int = 3
) -> tuple[MemoryPool, MemoryPool]:
    with memory_backend("numpy"):
        a = MemoryPool(capacity, params, events=True)
    with memory_backend("c"):
        b = MemoryPool(capacity, params, events=True)
    assert not a.uses_kernel and b.uses_kernel
    a.add_npcs(npcs)
    b.add_npcs(npcs)
    return a, b


def same(a: MemoryPool, b: MemoryPool, call) -> object:
    """Run `call` on both pools; same result (or same exception), same state."""
    results = []
    for pool in (a, b):
        try:
            results.append(("ok", call(pool)))
        except Exception as exc:  # the exception itself is compared
            results.append(("raised", type(exc), str(exc)))
    ra, rb = results
    if ra[0] == "ok" and rb[0] == "ok" and isinstance(ra[1], QueryBatch):
        assert answers(ra[1]) == answers(rb[1])
    elif ra[0] == "ok" and isinstance(ra[1], np.ndarray):
        assert ra[1].tobytes() == rb[1].tobytes()
    else:
        assert ra == rb
    assert state(a) == state(b)
    return ra


steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("record"),
            st.lists(
                st.tuples(
                    st.integers(0, 2),
                    st.sampled_from(ENTITIES),
                    st.integers(0, 4),
                    st.floats(0.0, 1.0),
                    st.sampled_from([None, ("guard",), ("gold", "guard")]),
                ),
                min_size=1,
                max_size=12,
            ),
        ),
        st.tuples(
            st.just("query"),
            st.lists(st.tuples(st.integers(0, 2), st.sampled_from(ENTITIES)), min_size=1, max_size=10),
        ),
        st.tuples(
            st.just("aware"),
            st.lists(st.tuples(st.integers(0, 2), st.sampled_from(ENTITIES)), min_size=1, max_size=10),
        ),
        st.tuples(st.just("time"), st.floats(-3.0, 40.0)),
        st.tuples(st.just("day"), st.floats(0.0, 3.0)),
        st.tuples(
            st.just("link"),
            st.integers(0, 2),
            st.sampled_from(ENTITIES),
            st.sampled_from(ENTITIES),
            st.sampled_from([None, 3, 4]),
        ),
        st.tuples(st.just("pin"), st.integers(0, 2), st.sampled_from(ENTITIES), st.integers(0, 4)),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(
    steps=steps,
    capacity=st.integers(1, 5),
    curve=st.sampled_from(["exponential", "power"]),
    consolidation=st.sampled_from([0.0, 0.25, 1.0]),
)
def test_both_paths_give_the_same_bits(steps, capacity, curve, consolidation) -> None:
    params = MemoryParams(
        curve=curve,
        rehearsal_refractory_s=1.0,
        consolidation_factor=consolidation,
        longterm_min_recalls=2,  # long-term memories appear within a few steps
        longterm_min_days=0.5,
    )
    a, b = pair(capacity, params)
    now = 0.0
    for step in steps:
        kind = step[0]
        if kind == "record":
            npcs, ents, types, sals, tags = (list(x) for x in zip(*step[1], strict=True))
            same(
                a,
                b,
                lambda p, n=npcs, e=ents, t=types, s=sals, g=tags, now=now: p.record_batch(
                    n, e, t, s, now, tags=g
                ),
            )
        elif kind == "query":
            npcs, ents = (list(x) for x in zip(*step[1], strict=True))
            same(a, b, lambda p, n=npcs, e=ents, now=now: p.query_strongest_batch(n, e, now))
        elif kind == "aware":
            npcs, ents = (list(x) for x in zip(*step[1], strict=True))
            same(a, b, lambda p, n=npcs, e=ents, now=now: p.awareness_batch(n, e, now))
        elif kind == "time":
            now += step[1]  # may go backwards
        elif kind == "day":
            same(a, b, lambda p, d=step[1], now=now: p.advance_game_day(d, now))
        elif kind == "link":
            _, npc, ea, eb, ta = step
            same(a, b, lambda p, npc=npc, ea=ea, eb=eb, ta=ta: p.link(npc, ea, eb, ta, None))
        elif kind == "pin":
            _, npc, ent, typ = step
            same(a, b, lambda p, npc=npc, ent=ent, typ=typ: p.pin(npc, ent, typ))
    same(a, b, lambda p: p.retrievability_all(now + 1.0))
    assert [x.tolist() for x in a.drain_events()] == [x.tolist() for x in b.drain_events()]


def test_one_npc_asking_many_times_in_one_batch() -> None:
    a, b = pair(capacity=6, npcs=2)
    for pool in (a, b):
        pool.record_batch([0, 0, 0, 1], [5, 5, 6, 5], [3, 4, 3, 3], [0.9, 0.95, 0.2, 0.8], 0.0)
    npcs = np.array([0, 1, 0, 0, 1, 0], dtype=np.int64)
    ents = np.array([5, 5, 5, 6, 5, 9], dtype=np.int64)
    for t in (1.0, 5.0, 5.0, 300.0):
        same(a, b, lambda p, t=t: p.query_strongest_batch(npcs, ents, t))
        same(a, b, lambda p, t=t: p.query_strongest_batch(npcs[::-1].copy(), ents[::-1].copy(), t))


def test_recall_counts_past_the_ln_table() -> None:
    """Consolidation needs ln(1 + k); past the kernel's table the pool computes it with numpy."""
    a, b = pair(capacity=4, npcs=1)
    for pool in (a, b):
        pool.record(0, 7, MemoryType.HOSTILE, 0.9, 0.0)
        pool.record(0, 7, MemoryType.TRAUMA, 0.9, 0.0)  # a second memory of 7: consolidation target
    size = b._mk_pool[0].ln_size  # the table this pool's kernel reads
    ids, ents = np.zeros(500, dtype=np.int64), np.full(500, 7, dtype=np.int64)
    t = 1.0
    while int(a._k[0].max()) < size + 600:
        same(a, b, lambda p, t=t: p.query_strongest_batch(ids, ents, t))
        t += 0.5
    same(a, b, lambda p, t=t: p.query_strongest(0, 7, t))


def test_long_term_memories_compete_the_same_way() -> None:
    """A long-term memory wins a query only with a strictly higher R; both paths agree."""
    a, b = pair(capacity=4, params=MemoryParams(longterm_min_recalls=2), npcs=2)
    for pool in (a, b):
        pool.record_batch([0, 1], [5, 5], [3, 3], [0.9, 0.9], 0.0, tags=[("thief",), None])
        pool.query_strongest_batch([0, 1], [5, 5], 1.0)  # k = 2: promoted by the next game day
        pool.advance_game_day(1.0, now=2.0)
    assert a.longterm_count() == 2 and a.memory_count() == 0
    res = same(a, b, lambda p: p.query_strongest_batch([0, 1, 0], [5, 5, 6], 3.0))[1]  # long-term only
    assert res.tier.tolist() == [1, 1, -1]
    for pool in (a, b):
        pool.record(0, 5, MemoryType.TRIVIA, 0.1, 3.0)  # a fresh working memory of the same thief
    same(a, b, lambda p: p.query_strongest_batch([0, 1], [5, 5], 3.0))  # R 1 vs 1: working wins ties
    res = same(a, b, lambda p: p.query_strongest_batch([1, 0], [5, 5], 3.5))[1]
    assert res.tier.tolist() == [1, 1]  # working R < 1 = long-term R
    same(a, b, lambda p: p.advance_game_day(5.0, now=4.0))  # long-term R falls to about 0.5
    for pool in (a, b):
        pool.record(1, 5, MemoryType.HOSTILE, 0.9, 4.0)
    res = same(a, b, lambda p: p.query_strongest_batch([0, 1], [5, 5], 4.0))[1]
    assert res.tier.tolist() == [1, 0]  # npc 1's fresh working memory beats its faded long-term one
    same(a, b, lambda p: p.awareness_batch([0, 1, 0], [5, 5, 5], 60.0))
    same(a, b, lambda p: p.query_strongest_batch([0, 0, 1], [5, 5, 5], 60.0))
    assert [x.tolist() for x in a.drain_events()] == [x.tolist() for x in b.drain_events()]


def test_queries_for_the_empty_entity_id_and_colliding_ids() -> None:
    """-2^63 is a valid entity id that empty slots also carry; hash collisions must not match."""
    a, b = pair(capacity=64, npcs=4)
    x, y = COLLIDING
    for pool in (a, b):
        pool.record_batch([0, 1, 1], [x, EMPTY_ENTITY, y], [3, 3, 2], [0.9, 0.8, 0.7], 0.0)
    # many queries for -2^63 over mostly empty slots: more hash hits than the kernel's scratch
    # holds, so it hands the round to the numpy path
    npcs = np.repeat(np.arange(4, dtype=np.int64), 3)
    same(a, b, lambda p: p.query_strongest_batch(npcs, np.full(12, EMPTY_ENTITY), 1.0))
    same(a, b, lambda p: p.query_strongest_batch(np.arange(4), np.full(4, EMPTY_ENTITY), 2.0))
    same(a, b, lambda p: p.query_strongest_batch([0, 0, 1, 1], [y, x, x, y], 3.0))
    assert a.query_strongest(0, y, 4.0) is None and a.query_strongest(1, x, 4.0) is None


def test_bad_queries_fail_the_same_way_and_change_nothing() -> None:
    a, b = pair(npcs=3)
    for pool in (a, b):
        pool.record(0, 1, 3, 0.9, 0.0)
        pool.remove_npc(2)
    for call in (
        lambda p: p.query_strongest_batch([0, 7], [1, 1], 1.0),
        lambda p: p.query_strongest_batch([0, 2], [1, 1], 1.0),
        lambda p: p.query_strongest_batch([0, -1], [1.5, 1], 1.0),
        lambda p: p.query_strongest_batch([0, 1], [1], 1.0),
        lambda p: p.query_strongest_batch([7], [1, 2], 1.0),
        lambda p: p.query_strongest_batch([[0, 1]], [1, 1], 1.0),
        lambda p: p.query_strongest_batch([0.0], [1], 1.0),
        lambda p: p.query_strongest_batch(np.array([0, 1, 0])[::2], np.array([1, 5, 1])[::2], 1.0),
        lambda p: p.query_strongest_batch(np.array(0), np.array(1), 1.0),
        lambda p: p.query_strongest_batch([], [], 1.0),
        lambda p: p.awareness_batch([0, 2], [1, 1], 1.0),
        lambda p: p.query_strongest(0, 1, float("nan")),
    ):
        same(a, b, call)
    with pytest.raises(UnknownNpcError, match="npc id 2 was removed"):
        b.query_strongest_batch([0, 2], [1, 1], 1.0)


def test_growing_pools_keep_the_kernel_pointed_at_their_columns() -> None:
    a, b = pair(capacity=3, npcs=1)
    rng = np.random.default_rng(3)
    for frame in range(6):
        for pool in (a, b):
            pool.add_npcs(7)  # columns and the id map are reallocated as the pool grows
            pool.remove_npc(int(pool.npc_ids()[0]))
        ids = a.npc_ids()
        n = ids.shape[0]
        ents, types, sals = rng.integers(0, 4, 3 * n), rng.integers(0, 5, 3 * n), rng.random(3 * n)
        same(
            a, b, lambda p, i=ids, e=ents, t=types, s=sals, f=frame: p.record_batch(np.tile(i, 3), e, t, s, f)
        )
        same(a, b, lambda p, i=ids, f=frame: p.query_strongest_batch(i, rng_q(i, f), f + 0.5))


def rng_q(ids: np.ndarray, frame: int) -> np.ndarray:
    return np.random.default_rng(frame).integers(0, 4, ids.shape[0])


def test_saved_and_loaded_pools_take_the_kernel_too(tmp_path) -> None:
    a, b = pair(npcs=2)
    for pool in (a, b):
        pool.record_batch([0, 1, 1], [3, 3, 4], [3, 1, 4], [0.9, 0.5, 0.8], 0.0)
    a.save(tmp_path / "a.mem", now=10.0)
    b.save(tmp_path / "b.mem", now=10.0)
    assert (tmp_path / "a.mem").read_bytes() == (tmp_path / "b.mem").read_bytes()
    with memory_backend("numpy"):
        la = MemoryPool.load(tmp_path / "a.mem", now=500.0)
    with memory_backend("c"):
        lb = MemoryPool.load(tmp_path / "b.mem", now=500.0)
    assert lb.uses_kernel and not la.uses_kernel
    same(la, lb, lambda p: p.query_strongest_batch([0, 1, 1], [3, 3, 4], 520.0))


# -------------------------------------------------------------------------------------------------
# choosing the path


def test_environment_variable_chooses_the_path(monkeypatch) -> None:
    monkeypatch.setenv(kernel.ENV_VAR, "numpy")
    assert not MemoryPool().uses_kernel
    assert kernel.status().startswith("numpy")
    monkeypatch.setenv(kernel.ENV_VAR, "sometimes")
    with pytest.raises(ValueError, match="NPC_MIND_MEMORY_KERNEL"):
        MemoryPool()
    monkeypatch.setenv(kernel.ENV_VAR, "auto")
    assert MemoryPool().uses_kernel == kernel.available()


def test_missing_or_stale_kernel_falls_back_to_numpy(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(kernel, "_loaded", {})
    monkeypatch.setattr(kernel, "BUILD_DIR", tmp_path / "nothing-here")
    monkeypatch.setenv(kernel.ENV_VAR, "auto")
    pool = MemoryPool()
    assert not pool.uses_kernel
    assert "not built" in kernel.status()
    npc = pool.add_npc()
    pool.record(npc, 1, 3, 0.9, 0.0)
    assert pool.awareness(npc, 1, 90.0) == 3  # the numpy path answers
    monkeypatch.setenv(kernel.ENV_VAR, "c")
    with pytest.raises(kernel.KernelUnavailableError, match="not built"):
        MemoryPool()


def test_stale_build_is_not_used(monkeypatch) -> None:
    if not kernel.available():
        pytest.skip(f"memory kernel {kernel.unavailable_reason()}")
    monkeypatch.setattr(kernel, "_loaded", {})
    monkeypatch.setattr(kernel, "build_id", lambda: "a-different-source")
    monkeypatch.setenv(kernel.ENV_VAR, "auto")
    assert not MemoryPool().uses_kernel
    assert "stale" in kernel.status()


def test_provisioning_builds_a_loadable_kernel_once(monkeypatch, tmp_path) -> None:
    from tools.provision import memkernel

    monkeypatch.setattr(kernel, "BUILD_DIR", tmp_path / "memkernel")
    monkeypatch.setattr(kernel, "_loaded", {})
    memkernel.provision()
    built = kernel._built_file()
    assert built is not None
    stamp = built.stat().st_mtime_ns
    memkernel.provision()  # up to date: nothing is rebuilt
    assert built.stat().st_mtime_ns == stamp
    assert kernel.available(), kernel.unavailable_reason()
    assert os.fspath(tmp_path) in os.fspath(kernel._load_once().path)
