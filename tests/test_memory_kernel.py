"""The compiled memory kernel (`npc_mind.memory.kernel`) against the numpy path, bit for bit, at
each dispatch level this CPU runs: the same calls on two pools, one on numpy and one forced to a
level, give the same answers, errors and state (every column's bytes) over random and edge inputs
(extreme and backward times, every capacity around the vector widths, hash collisions, the empty
slot's entity id, pinned memories, ties, recall counts past the ln table, events, tags, links and
long-term memories beside it), the strongest look included. Also: the baseline build runs on any
x86-64 CPU (no VEX or EVEX instruction in its copy), and what NPC_MIND_KERNEL chooses."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from npc_mind.memory import MemoryParams, MemoryPool, kernel
from npc_mind.memory.columns import EMPTY_ENTITY, entity_hash
from npc_mind.memory.curves import retrievability
from tests.support.memory_kernel import LEVELS, forced_kernel

COMPILED = [level for level in LEVELS if level != "numpy"]
COLUMNS = (
    "entity", "entity_hash", "memory_type", "last_access", "stability", "salience", "recall_count", "pinned",
    "forget_reported",
)  # fmt: skip
FIELDS = ("entity", "memory_type", "stability", "salience", "recall_count", "tier", "slot")


def test_the_kernel_is_built_and_runs_here() -> None:
    assert kernel.cpu_level() is not None, f"the memory kernel is not available: {kernel.status()}"
    assert COMPILED[0] == "baseline"


def colliding_entities(count: int) -> list[int]:
    """Entity ids sharing one 16-bit hash (the kernel's first comparison), so the full id decides."""
    ids = np.arange(1, 4_000_000, dtype=np.int64)
    hashes = entity_hash(ids)
    target = hashes[0]
    return [int(x) for x in ids[hashes == target][:count]]


ENTITIES = [*colliding_entities(6), EMPTY_ENTITY, 2**63 - 1, -(2**62), 0, 7, 8, 9]


def state(pool: MemoryPool) -> dict[str, bytes]:
    n = pool.npc_count
    held = pool.state
    out = {name: getattr(held, name)[:n].tobytes() for name in COLUMNS}
    out["used"] = held.used_slots[:n].tobytes()
    out["lt"] = b"".join(a[: held.longterm.size].tobytes() for a in held.longterm.cols.values())
    out["clock"] = repr((pool.clock, held.latest_access)).encode()
    return out


def answer(result: Any) -> Any:
    """What a call gave, comparable bit for bit (floats as bytes), or the error it raised."""
    if isinstance(result, BaseException):
        return (type(result).__name__, str(result))
    if isinstance(result, np.ndarray):
        return (result.dtype.str, result.shape, result.tobytes())
    if hasattr(result, "retrievability") and hasattr(result, "view"):  # a QueryBatch
        parts = [answer(result.retrievability), answer(result.found)]
        parts += [answer(getattr(result, name)) for name in FIELDS]
        parts.append([result.view(i) for i in range(len(result))])
        return parts
    if isinstance(result, tuple):
        return tuple(answer(part) for part in result)
    if isinstance(result, list):
        return [answer(part) for part in result]
    if isinstance(result, float):
        return result.hex()  # NaN equals NaN, and -0.0 differs from 0.0
    return result


class Twins:
    """One pool on numpy and one on a kernel level, given the same calls."""

    def __init__(  # noqa: PLR0917
        self,
        level: str,
        capacity: int,
        params: MemoryParams,
        npcs: int,
        events: bool,
        narrow: int | None = None,
    ) -> None:
        """`narrow`: the numpy pool's narrow-round width (0: every round vectorised; None: the default)."""
        self.level = level
        self.pools = []
        for which in ("numpy", level):
            with forced_kernel(which):
                pool = MemoryPool(capacity, params, events=events, reserve_npcs=2)
                pool.add_npcs(npcs)
                self.pools.append(pool)
        if narrow is not None:
            self.pools[0].state.narrow_round = narrow

    def call(self, what: Callable[[MemoryPool], Any]) -> Any:
        results = []
        for which, pool in zip(("numpy", self.level), self.pools, strict=True):
            with forced_kernel(which):
                try:
                    results.append(answer(what(pool)))
                except Exception as error:
                    results.append(answer(error))
        assert results[0] == results[1]
        assert state(self.pools[0]) == state(self.pools[1])
        return results[0]

    def run(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """`call` of one pool method."""
        return self.call(lambda pool: getattr(pool, method)(*args, **kwargs))


def times(rng: np.random.Generator, frames: int) -> list[float]:
    """Clock readings: small steps, big jumps, backward steps (clamped ages), near the bound."""
    now, out = 0.0, []
    for _ in range(frames):
        kind = rng.integers(0, 10)
        if kind < 5:
            now += float(rng.random()) * 0.5
        elif kind < 7:
            now += float(rng.choice([1.0, 60.0, 3600.0, 86400.0 * 30, 1e9]))
        elif kind < 9:
            now -= float(rng.random()) * 2.0
        else:
            now = float(rng.choice([now, 9.9e17, -9.9e17, now + 1e-9]))
        out.append(now)
    return out


SCENARIOS = [
    # capacity, curve, consolidation factor, minimum salience, refractory, events, tags, links, long-term
    (1, "exponential", 0.25, 0.7, 0.0, False, False, False, False),
    (3, "exponential", 1.0, 0.0, 0.0, True, False, False, False),
    (7, "power", 0.25, 0.0, 1.0, True, True, False, False),
    (8, "exponential", 0.25, 0.0, 0.0, False, False, False, False),
    (9, "exponential", 0.0, 0.0, 0.0, True, False, False, False),
    (16, "exponential", 1.0, 0.3, 0.0, True, True, False, False),
    (17, "power", 1.0, 0.0, 0.0, False, False, True, False),
    (31, "exponential", 0.25, 0.0, 0.5, True, False, False, True),
    (33, "exponential", 1.0, 0.0, 0.0, False, False, False, False),
    (64, "exponential", 0.25, 0.7, 0.0, True, False, False, False),
    (65, "power", 0.25, 0.0, 0.0, False, False, False, True),
]


@pytest.mark.parametrize("level", COMPILED)
@pytest.mark.parametrize("scenario", range(len(SCENARIOS)))
def test_every_level_gives_the_numpy_paths_answers_and_state(level: str, scenario: int) -> None:
    capacity, curve, factor, min_salience, refractory, events, tags, links, longterm = SCENARIOS[scenario]
    rng = np.random.default_rng(1000 + scenario)
    params = MemoryParams(
        curve=curve,
        consolidation_factor=factor,
        consolidation_min_salience=min_salience,
        rehearsal_refractory_s=refractory,
    )
    npcs = 12
    twins = Twins(level, capacity, params, npcs, events)
    if links:
        twins.run("link", 0, ENTITIES[0], ENTITIES[1])
    ents = np.array(ENTITIES, dtype=np.int64)
    for frame, now in enumerate(times(rng, 40)):
        n = int(rng.integers(1, 4 * npcs))
        who = rng.integers(0, npcs, n)
        what = ents[rng.integers(0, len(ents), n)]
        kinds = rng.integers(0, 5, n)
        # saliences: ties (one value for all), the extremes, random
        sal = rng.choice([np.full(n, 0.5), rng.random(n), rng.choice([0.0, 1.0], n)])
        labels = [["seen"] if rng.random() < 0.3 else None for _ in range(n)] if tags else None
        twins.run("record_batch", who, what, kinds, sal, now, tags=labels)
        if frame % 7 == 3:  # pin a memory that exists, on both
            held = [(v.entity, int(v.memory_type)) for v in twins.pools[0].memories(1, now)]
            twins.pools[1].memories(1, now)  # (it sets the clock)
            if held:
                twins.run("pin", 1, *held[int(rng.integers(0, len(held)))])
        if longterm and frame % 9 == 5:
            twins.run("advance_game_day", 1.0, now)
        m = int(rng.integers(1, 2 * npcs))
        q_who = rng.integers(0, npcs, m)
        q_what = ents[rng.integers(0, len(ents), m)]
        at = now + float(rng.choice([0.0, 0.25, 1e-12, 30.0]))
        # one query per NPC, rows increasing: one kernel call; then any order (rounds), lists
        twins.run("query_strongest_batch", np.arange(npcs), ents[rng.integers(0, len(ents), npcs)], at)
        twins.run("query_strongest_batch", q_who, q_what, at)
        twins.run("query_strongest_batch", q_who.tolist(), q_what.tolist(), at)
        twins.run("awareness_batch", q_who, q_what, at + 1.0)
        # the strongest look: of anyone (0) or an entity, any type (mask 0) or some, floors to R 1
        wanted = np.where(rng.random(m) < 0.5, 0, q_what)
        type_masks = rng.choice([0, 1, 6, 31, 1 << 62], m)
        floors = rng.choice([0.0, 0.2, 0.9, 1.0, np.nan], m)
        twins.run("strongest", q_who, wanted, type_masks, floors, at + 0.5)
        twins.run("recall_preview", q_who, q_what, at)
        twins.run("retrievability_all", at)
        twins.run("pop_forgotten", at)  # forgetting reports (the kernel's scan), which a wake clears
        if frame % 5 == 4:
            twins.run("pop_forgotten", at + 1e4)
    twins.run("drain_events")
    # bad input is refused by both alike (the kernel leaves it to numpy's checks)
    twins.run("query_strongest_batch", np.array([0, 99]), np.array([1, 2]), 1.0)
    twins.run("query_strongest_batch", np.array([0, 1]), np.array([1]), 1.0)
    twins.call(
        lambda pool: pool.query_strongest_batch(
            np.array([], dtype=np.int64), np.array([], dtype=np.int64), 1.0
        )
    )


RECORD_SCENARIOS = [
    # capacity, consolidation factor, minimum salience, refractory, events, eviction weights (r, e)
    (1, 0.25, 0.7, 0.0, True, (0.6, 0.4)),
    (3, 1.0, 0.0, 0.0, False, (0.6, 0.4)),
    (7, 0.0, 0.0, 1.0, True, (0.0, 1.0)),
    (8, 0.25, 0.0, 0.0, True, (1.0, 0.0)),
    (9, 1.0, 0.3, 0.5, False, (0.6, 0.4)),
    (16, 0.25, 0.7, 0.0, True, (0.6, 0.4)),
    (31, 1.0, 0.0, 0.0, True, (0.5, 0.5)),
    (33, 0.25, 0.0, 0.25, False, (0.6, 0.4)),
    (64, 1.0, 0.0, 0.0, True, (0.6, 0.4)),
    (65, 0.25, 0.3, 0.0, True, (0.6, 0.4)),
]


@pytest.mark.parametrize("level", COMPILED)
@pytest.mark.parametrize("narrow", [0, None])  # numpy's rounds all vectorised, or the default tail
@pytest.mark.parametrize("scenario", range(len(RECORD_SCENARIOS)))
def test_every_level_records_as_the_numpy_rounds(level: str, narrow: int | None, scenario: int) -> None:
    """`record_batch` in the kernel (each NPC's events in input order) against numpy's rounds, wide
    ones (40 NPCs, up to 8 events each, grouped or shuffled) and the narrow tail: the same columns,
    slot counts, event log and answers, over full rows that evict, rehearsals, refreshes inside
    the refractory period, consolidation, pinned memories, colliding hashes, the empty slot's id,
    backward and extreme clocks, removed NPCs and the ln table's end."""
    capacity, factor, min_salience, refractory, events, (w_r, w_e) = RECORD_SCENARIOS[scenario]
    rng = np.random.default_rng(2000 + scenario)
    params = MemoryParams(
        consolidation_factor=factor,
        consolidation_min_salience=min_salience,
        rehearsal_refractory_s=refractory,
        eviction_weight_r=w_r,
        eviction_weight_e=w_e,
    )
    npcs = 40
    twins = Twins(level, capacity, params, npcs, events, narrow)
    ents = np.array(ENTITIES, dtype=np.int64)
    live = list(range(npcs))
    for frame, now in enumerate(times(rng, 30)):
        n = int(rng.integers(1, 8 * len(live)))
        who = np.asarray(live, dtype=np.int64)[rng.integers(0, len(live), n)]
        if rng.random() < 0.5:  # a game loop's order: each NPC's events together
            who = np.sort(who, kind="stable")
        what = ents[rng.integers(0, len(ents), n)]
        kinds = rng.integers(0, 5, n)
        sal = rng.choice([np.full(n, 0.5), rng.random(n), rng.choice([0.0, 1.0], n), rng.random(n) * 3 - 1])
        twins.run("record_batch", who, what, kinds, sal, now)
        if frame % 6 == 2:  # pin a memory that exists, on both
            npc = live[int(rng.integers(0, len(live)))]
            held = [(v.entity, int(v.memory_type)) for v in twins.pools[0].memories(npc, now)]
            twins.pools[1].memories(npc, now)  # (it sets the clock)
            if held:
                twins.run("pin", npc, *held[int(rng.integers(0, len(held)))])
        if frame % 10 == 7:  # a removed NPC's row is refilled by the last one's
            twins.run("remove_npc", live.pop(int(rng.integers(0, len(live)))))
        if frame == 20:  # white box: recall counts at and past the ln table's end (4096)
            counts = rng.choice([4094, 4095, 4096, 70_000], twins.pools[0].state.allocated_rows)
            for pool in twins.pools:
                pool.state.recall_count[:, 0] = counts
        twins.run("query_strongest_batch", np.asarray(live), ents[rng.integers(0, len(ents), len(live))], now)
    twins.run("retrievability_all", now)
    twins.run("drain_events")


@pytest.mark.parametrize("level", COMPILED)
def test_the_kernel_records_the_plain_batches(level: str) -> None:
    """Not a silent fallback: a game loop's arrays are one kernel call that checks them itself (a
    bad one refused before anything is written, then numpy's checks raise); other inputs are
    checked by numpy, then recorded by the kernel; tags are numpy's."""
    calls: list[tuple[bool, int]] = []
    with forced_kernel(level):
        pool = MemoryPool(4)
        ids = pool.add_npcs(20)
        pool.query_strongest_batch(ids[:1], ids[:1], 0.0)  # binds the pool
        binding = pool._recaller.kernel_binding
        assert binding.kernel.level == level
        real = binding.kernel.record
        ffi = binding.kernel.ffi

        def spy(*args: Any) -> Any:
            calls.append((args[1] != ffi.NULL, args[6]))  # ids given (checked in C), events
            return real(*args)

        binding.kernel = dataclasses.replace(binding.kernel, record=spy)
        every = np.repeat(ids, 6)  # full rows: six events into four slots each
        types, saliences = np.full(every.shape[0], 2, np.int8), np.full(every.shape[0], 0.9)
        pool.record_batch(every, np.arange(every.shape[0]), types, saliences, 1.0)
        before = state(pool)
        for bad in (
            (np.array([0, 99]), np.array([1, 2]), np.array([1, 1], np.int8), np.array([0.5, 0.5])),
            (np.array([0, 1]), np.array([1, 2]), np.array([1, 7], np.int8), np.array([0.5, 0.5])),
            (np.array([0, 1]), np.array([1, 2]), np.array([1, 1], np.int8), np.array([0.5, np.nan])),
        ):
            with pytest.raises((KeyError, ValueError)):
                pool.record_batch(*bad, 1.5)
        assert state(pool) == before and pool.clock == 1.0
        pool.record_batch(ids, ids, 1, 0.5, 2.0)  # scalars: numpy's checks, then the kernel
        pool.record_batch(ids, ids, 1, 0.5, 3.0, tags=[["seen"]] * 20)  # tags: numpy's rounds
        pool.record_batch(ids, ids, 1, 0.5, 4.0)  # a pool holding tags: numpy's too
    assert calls == [(True, 120), (True, 2), (True, 2), (True, 2), (False, 20)]
    assert pool.state.used_slots[:20].tolist() == [4] * 20


@pytest.mark.parametrize("level", COMPILED)
def test_the_kernel_runs_the_plain_batches(level: str) -> None:
    """Not a silent fallback: the plain cases go through the kernel's call (and numpy's do not)."""
    calls: list[int] = []
    with forced_kernel(level):
        pool = MemoryPool(8)
        ids = pool.add_npcs(5)
        pool.record_batch(ids, ids * 3, 2, 0.9, 0.0)
        assert not pool.query_strongest_batch(ids[:1], ids[1:2], 0.5).found.any()  # binds the pool
        binding = pool._recaller.kernel_binding
        assert binding.kernel.level == level
        real = binding.kernel.query

        def spy(*args: Any) -> Any:
            calls.append(args[4])  # the number of queries
            return real(*args)

        binding.kernel = dataclasses.replace(binding.kernel, query=spy)
        batch = pool.query_strongest_batch(ids, ids * 3, 1.0)  # one call, ids resolved in C
        # rows that decrease: the kernel refuses before writing, the rounds (one) come back to it
        pool.query_strongest_batch(ids[::-1].copy(), ids * 3, 2.0)
        # an NPC twice: refused, and rounds this narrow run on the scalar path
        pool.query_strongest_batch(np.array([0, 0, 1]), np.array([0, 0, 3]), 2.5)
    with forced_kernel("numpy"):  # a pool keeps the choice it made at its first query
        pool.query_strongest_batch(ids, ids * 3, 3.0)
        other = MemoryPool(8)
        other.add_npcs(5)
        other.query_strongest_batch(ids, ids * 3, 1.0)
        assert other._recaller.kernel_binding is False
    assert calls == [5, 5, 5, 3, 5]
    assert batch.found.all() and batch.recall_count.tolist() == [2] * 5


@pytest.mark.parametrize("level", COMPILED)
def test_an_answer_kept_is_never_overwritten_and_one_dropped_is_reused(level: str) -> None:
    """`query_batch` writes into the previous call's output block only when no answer views it."""
    with forced_kernel(level):
        pool = MemoryPool(8)
        ids = pool.add_npcs(6)
        pool.record_batch(ids, ids, 2, 0.9, 0.0)
        kept = pool.query_strongest_batch(ids, ids, 1.0)
        r, slots, view = kept.retrievability, kept.slot, kept.retrievability[2:]
        want = (r.tobytes(), slots.tobytes(), [kept.view(i) for i in range(6)])
        binding = pool._recaller.kernel_binding
        block = id(binding._answer)  # (its id: a reference would keep it)
        pool.record_batch(ids, ids + 100, 3, 0.2, 1.5)
        other = pool.query_strongest_batch(ids, ids + 100, 2.0)  # kept is alive: a new block
        assert id(binding._answer) != block
        assert (r.tobytes(), slots.tobytes(), [kept.view(i) for i in range(6)]) == want
        del kept, slots
        pool.query_strongest_batch(ids, ids, 3.0)  # a view of kept's R is still alive
        assert view.tobytes() == want[0][16:]
        del r, view, other
        block = id(binding._answer)
        pool.query_strongest_batch(ids, ids, 4.0)  # nothing views the last block: written again
        assert id(binding._answer) == block


@pytest.mark.parametrize("level", COMPILED)
def test_large_recall_counts_consolidate_as_numpy(level: str) -> None:
    """ln(1 + k) is numpy's log loop, called from the kernel, for any k."""
    params = MemoryParams(consolidation_factor=1.0, consolidation_min_salience=0.0)
    twins = Twins(level, 4, params, 2, False)
    twins.call(lambda pool: pool.record_batch([0, 0, 1], [5, 5, 5], [1, 2, 3], [0.9, 0.8, 0.5], 0.0))
    for pool in twins.pools:
        # white box: the INTERACTION memory (the stronger) recalled 70,000 times
        pool.state.recall_count[0, 1] = 70_000
    sibling = float(twins.pools[1].state.stability[0, 0])
    twins.call(lambda pool: pool.query_strongest_batch(np.array([0, 1]), np.array([5, 5]), 1.0))
    assert int(twins.pools[1].state.recall_count[0, 1]) == 70_001  # the strongest woke
    assert float(twins.pools[1].state.stability[0, 0]) > sibling  # and consolidated its sibling


@pytest.mark.parametrize("level", COMPILED)
def test_the_sweep_gives_numpys_bits(level: str) -> None:
    rng = np.random.default_rng(3)
    n = 1037  # not a multiple of any vector width
    last = rng.choice([-np.inf, 0.0, 1e17, -1e17, 5.0, 5.0 + 1e-9], n) + rng.random(n) * rng.choice(
        [0, 1, 1e6], n
    )
    stability = rng.choice([1.0, 1e-3, 3.2e9, 840.0], n) * (1 + rng.random(n))
    params = MemoryParams()
    for now in (0.0, 5.0, -1e17, 1e17, 123.456):
        with forced_kernel("numpy"):
            want = retrievability(last, stability, now, params)
        with forced_kernel(level):
            got = retrievability(last, stability, now, params)
            strided = retrievability(last[::2], stability[::2], now, params)  # numpy's turn
        assert got.tobytes() == want.tobytes()
        assert strided.tobytes() == want[::2].tobytes()


def test_the_baseline_copy_runs_on_any_x86_64_cpu() -> None:
    """The baseline functions hold no VEX or EVEX instruction (AVX and later): only SSE2, which
    every x86-64 CPU has. The wider copies do use their vectors."""
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump (binutils) is not installed")
    module = kernel._loaded()
    listing = subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", module.__file__], capture_output=True, text=True, check=True
    ).stdout
    functions: dict[str, list[str]] = {}
    name = ""
    for line in listing.splitlines():
        head = re.match(r"^[0-9a-f]+ <(\w+?)(@@\w+)?>:$", line)
        if head:
            name = head.group(1)
            functions[name] = []
        elif name and "\t" in line:
            functions[name].append(line.split("\t", 1)[1].strip())
    for fn in ("query", "record", "retrievability", "utility_score"):
        baseline = functions[f"mk_{fn}_baseline"]
        assert baseline, fn
        wide = [ins for ins in baseline if re.search(r"%[yz]mm|%k[0-7]|^v", ins)]
        assert not wide, (fn, wide[:5])
    for fn in ("query", "record"):
        assert any("%zmm" in ins for ins in functions[f"mk_{fn}_avx512"]), fn
        assert any("%ymm" in ins for ins in functions[f"mk_{fn}_avx2"]), fn
    assert any("%zmm" in ins for ins in functions["mk_utility_score_avx512"])


def test_the_environment_variable_chooses() -> None:
    with forced_kernel("numpy"):
        assert kernel.active() is None
        assert kernel.status() == "numpy (NPC_MIND_KERNEL=numpy)"
    with forced_kernel("auto"):
        assert kernel.active().level == kernel.cpu_level()
    with forced_kernel("Baseline "):
        assert kernel.active().level == "baseline"
        assert kernel.status() == "compiled kernel, baseline level"
    with forced_kernel("sse9"), pytest.raises(ValueError, match="choose one of auto, numpy, baseline"):
        kernel.active()


def test_without_a_build_auto_runs_numpy_and_a_forced_level_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel, "_module", ["not built (run scripts/provision memkernel)"])
    monkeypatch.setattr(kernel, "_chosen", {})
    with forced_kernel("auto"):
        assert kernel.active() is None
        assert kernel.status() == "numpy (the kernel is not built (run scripts/provision memkernel))"
        pool = MemoryPool(4)
        pool.add_npc()
        pool.record(0, 1, 1, 0.5, 0.0)
        assert pool.query_strongest_batch(np.array([0]), np.array([1]), 1.0).found.tolist() == [True]
    with (
        forced_kernel("avx2"),
        pytest.raises(kernel.KernelUnavailableError, match="avx2 but the memory kernel is not built"),
    ):
        kernel.active()


def test_numpys_loops_are_taken_only_from_ufuncs_that_look_like_exp_and_log() -> None:
    """The kernel calls np.exp's and np.log's own float64 loops: taken from the ufunc objects and
    checked against them when the module loads; an object of another shape is refused."""
    module = kernel._loaded()
    assert kernel._loops_match_numpy(module) == ""
    struct = module.ffi.new("mk_pool *")
    as_pointer = module.ffi.cast
    assert (
        module.lib.mk_take_loops(struct, as_pointer("void *", id(np.add)), as_pointer("void *", id(np.log)))
        == -1
    )
    assert (
        module.lib.mk_take_loops(struct, as_pointer("void *", id(np.exp)), as_pointer("void *", id(np.log)))
        == 0
    )
    values = np.array([0.0, -1.0, -745.0, -np.inf])
    module.lib.mk_apply(struct, 0, module.ffi.from_buffer("double[]", values), 4)
    assert values.tobytes() == np.exp(np.array([0.0, -1.0, -745.0, -np.inf])).tobytes()


def test_the_addon_runtime_checks_its_build_against_the_shipped_stamp(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The runtime ships the module and its build stamp, not the C sources."""
    monkeypatch.setattr(kernel, "SOURCES", (kernel.HERE / "absent.h",))
    assert kernel.expected_build_id() == kernel.STAMP.read_text().strip()
