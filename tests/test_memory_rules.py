"""Each rule of the memory model (npc_mind.memory.rules, curves) against the design's formula with
hand-computed values, on floats and on arrays; and the project's equivalence contract, bit-for-bit:
a rule gives a float the same bits it gives that value inside an array."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from npc_mind.memory import MemoryParams
from npc_mind.memory import rules as r
from npc_mind.memory.curves import retrievability

LN2, LN4 = math.log(2.0), math.log(4.0)


def same_bits(scalar_fn: Callable[..., Any], *columns: np.ndarray) -> None:
    """The rule on each row's floats equals, bit for bit, the rule on the whole columns."""
    batch = np.asarray(scalar_fn(*columns))
    for i in range(columns[0].shape[0]):
        one = scalar_fn(*(c.item(i) if isinstance(c, np.ndarray) else c for c in columns))
        assert np.float64(one).tobytes() == np.float64(batch[i]).tobytes(), (i, one, batch[i])


RNG = np.random.default_rng(14)
E = RNG.random(200)
S = RNG.random(200) * 1e4 + 0.1
K = RNG.integers(1, 70_000, 200)  # past the log table too


def test_initial_stability_is_base_times_half_plus_salience_capped() -> None:
    assert r.initial_stability(120.0, 0.5, 1e6) == 120.0
    assert r.initial_stability(600.0, 0.9, 500.0) == 500.0  # 840 capped
    assert r.initial_stability(30.0, 0.0, 1e6) == 15.0
    arr = r.initial_stability(np.array([120.0, 600.0, 30.0]), np.array([0.5, 0.9, 0.0]), 500.0)
    assert arr.tolist() == [120.0, 500.0, 15.0]
    same_bits(lambda b, e: r.initial_stability(b, e, 5e3), S, E)


def test_log1p_count_has_numpys_bits_in_and_past_its_table() -> None:
    assert r.log1p_count(0) == 0.0
    assert r.log1p_count(1) == pytest.approx(LN2, rel=1e-15)
    assert r.log1p_count(3) == pytest.approx(LN4, rel=1e-15)
    same_bits(r.log1p_count, K)


def test_rehearsal_needs_the_refractory_time_since_the_last_access() -> None:
    assert r.rehearses(10.0, 8.0, 2.0)  # exactly the refractory time: rehearses
    assert not r.rehearses(9.9, 8.0, 2.0)
    assert r.rehearses(10.0, np.array([8.0, 8.5, -math.inf]), 2.0).tolist() == [True, False, True]


def test_rehearsed_stability_is_s_times_one_plus_alpha_ln1pk_e() -> None:
    assert r.rehearsed_stability(100.0, 1, 0.5, 0.8, 1e9) == pytest.approx(100.0 * (1 + 0.4 * LN2), rel=1e-15)
    assert r.rehearsed_stability(100.0, 3, 1.0, 2.0, 300.0) == 300.0  # 100 (1 + 2 ln 4) = 377 capped
    assert r.rehearsed_stability(100.0, 0, 1.0, 2.0, 1e9) == 100.0  # ln 1 = 0
    arr = r.rehearsed_stability(np.array([100.0, 100.0]), np.array([1, 3]), np.array([0.5, 1.0]), 0.8, 1e9)
    assert arr.tolist() == pytest.approx([100.0 * (1 + 0.4 * LN2), 100.0 * (1 + 0.8 * LN4)], rel=1e-15)
    same_bits(lambda s, k, e: r.rehearsed_stability(s, k, e, 0.8, 5e3), S, K, E)
    assert r.larger(0.3, 0.7) == 0.7 and r.larger(np.array([0.9]), np.array([0.2])).tolist() == [0.9]


def test_consolidation_factor_is_one_plus_c_alpha_ln1pk_e() -> None:
    assert r.consolidation_factor(0.5, 0.8, 3, 1.0) == pytest.approx(1.0 + 0.4 * LN4, rel=1e-15)
    assert r.consolidation_factor(0.0, 0.8, 3, 1.0) == 1.0
    arr = r.consolidation_factor(0.5, 0.8, np.array([1, 3]), np.array([0.5, 1.0]))
    assert arr.tolist() == pytest.approx([1.0 + 0.2 * LN2, 1.0 + 0.4 * LN4], rel=1e-15)
    same_bits(lambda k, e: r.consolidation_factor(0.5, 0.8, k, e), K, E)
    assert (
        r.consolidated(0.5, 0.7, 0.7)
        and not r.consolidated(0.5, 0.7, 0.69)
        and not r.consolidated(0.0, 0.7, 1.0)
    )
    assert r.consolidated(0.5, 0.7, np.array([0.7, 0.69])).tolist() == [True, False]


def test_retrievability_under_each_curve() -> None:
    exp = MemoryParams()
    power = MemoryParams(curve="power")
    last, stab = np.array([0.0, 0.0, 5.0, 0.0]), np.array([10.0, 10.0, 10.0, 10.0])
    got = retrievability(last, stab, 10.0, exp)
    # e^(-t/S): t = 10 -> e^-1; a last access after now -> t = 0 -> 1
    assert got[0] == pytest.approx(math.exp(-1.0), rel=1e-15)
    assert got[2] == pytest.approx(math.exp(-0.5), rel=1e-15)
    assert retrievability(np.array([20.0]), np.array([10.0]), 10.0, exp).tolist() == [1.0]
    assert retrievability(np.array([0.0]), np.array([1.0]), 11.0, exp).tolist() == [0.0]  # past e^-10
    # the power curve puts R = 0.5 at t = S ln 2, as the exponential does
    half = 10.0 * LN2
    assert retrievability(np.array([0.0]), np.array([10.0]), half, power)[0] == pytest.approx(0.5, rel=1e-12)
    assert retrievability(np.array([0.0]), np.array([10.0]), half, exp)[0] == pytest.approx(0.5, rel=1e-15)
    # the exponent both curves' exponential paths use, on floats and arrays
    assert r.exponential_exponent(0.0, 10.0, 4.0) == -2.5
    assert r.exponential_exponent(12.0, 10.0, 4.0) == 0.0  # clamped
    assert r.exponential_exponent(12.0, 10.0, 4.0, clamp=False) == 0.5
    same_bits(lambda last, s: r.exponential_exponent(last, 1e3, s), RNG.random(200) * 2e3, S)


def test_eviction_key_is_weighted_r_plus_weighted_e() -> None:
    assert r.eviction_key(0.5, 0.25, 0.6, 0.4) == pytest.approx(0.4, rel=1e-15)
    assert r.fresh_eviction_key(0.5, 0.6, 0.4) == pytest.approx(0.8, rel=1e-15)  # R = 1
    arr = r.eviction_key(np.array([0.5, 1.0]), np.array([0.25, 0.5]), 0.6, 0.4)
    assert arr.tolist() == pytest.approx([0.4, 0.8], rel=1e-15)
    out, scratch = np.empty(200), np.empty(200)
    keys = r.eviction_key(E, E[::-1].copy(), 0.6, 0.4, out=out, scratch=scratch)
    assert keys is out
    same_bits(lambda a, b: r.eviction_key(a, b, 0.6, 0.4), E, E[::-1].copy())
    same_bits(lambda e: r.fresh_eviction_key(e, 0.6, 0.4), E)


def test_awareness_level_counts_the_thresholds_r_is_strictly_above() -> None:
    levels = (0.05, 0.3, 0.8)
    values = [0.0, 0.05, 0.06, 0.3, 0.31, 0.8, 0.81, 1.0]
    expected = [0, 0, 1, 1, 2, 2, 3, 3]
    assert [r.awareness_level(v, *levels) for v in values] == expected
    arr = r.awareness_level(np.array(values), *levels)
    assert arr.dtype == np.int8 and arr.tolist() == expected
    # not remembered (R at or below the forget threshold) is level 0 whatever the other thresholds
    assert r.awareness_level(0.35, 0.4, 0.3, 0.8) == 0
    assert r.awareness_level(np.array([0.35]), 0.4, 0.3, 0.8).tolist() == [0]


def test_salience_clip_matches_numpys() -> None:
    for e in (-0.5, -0.0, 0.0, 0.3, 1.0, 2.0):
        assert np.float64(r.clip_salience(e)).tobytes() == np.clip(np.float64(e), 0.0, 1.0).tobytes()
