"""Each rule of utility selection written once, against its definition with hand-computed values,
on floats and on arrays: the curves' steps and family shapes (`npc_mind.utility.rules`) and the
anti-dithering rules (also in `npc_mind.utility.rules`, floats as the generated per-NPC decision inlines
them, arrays for the batch `decide`, same bits on both).

The contract (rules.py's docstring): every path gives a curve's number to 1e-12, arithmetic bit for
bit; it is tested once, over every family, in `test_every_path_gives_a_curves_number`."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_utility_batch import random_curve

from npc_mind.utility import rules
from npc_mind.utility.curves import CurveStack, Table
from npc_mind.utility.rules import (
    boosted,
    keeps_running,
    moves_forward,
    rested,
    restricted,
    switch_margin,
    tag_ready,
    weighted_top_n,
    within_top_n,
)
from npc_mind.utility.selector import AntiDithering


def test_momentum_boosts_the_running_score() -> None:
    assert boosted(0.5, 0.2) == 0.6
    got = boosted(np.array([0.5, 0.25]), 0.2)
    assert got.tolist() == [0.6, 0.3]
    assert [boosted(x, 0.2) for x in (0.5, 0.25)] == got.tolist()


def test_cooldown_holds_a_stopped_behavior_for_its_seconds_except_the_running_one() -> None:
    assert rested(10.0, 9.5, 1.0, False) is False
    assert rested(10.0, 9.0, 1.0, False) is True  # exactly the cooldown: ready again
    assert rested(10.0, -np.inf, 1.0, False) is True  # never stopped
    assert rested(10.0, 9.5, 1.0, True) is True  # running: it has not stopped
    stopped = np.array([[9.5, 9.0, -np.inf, 9.5]])
    running = np.array([[False, False, False, True]])
    assert rested(10.0, stopped, np.array([1.0, 1.0, 1.0, 1.0]), running).tolist() == [
        [False, True, True, True]
    ]


def test_tags_allow_a_behavior_that_carries_one_and_scores_above_zero() -> None:
    assert tag_ready(True, 0.5) is True
    assert tag_ready(True, 0.0) is False  # at 0: not available
    assert tag_ready(False, 0.9) is False
    allowed = np.array([[True, True, False]])
    assert tag_ready(allowed, np.array([[0.5, 0.0, 0.9]])).tolist() == [[True, False, False]]


def test_a_restriction_is_ignored_when_nothing_would_pass_it() -> None:
    assert restricted(True, False) is True and restricted(False, False) is False
    assert restricted(False, True) is True  # nothing passes: every candidate stays
    passes = np.array([[True, False], [False, False]])
    none_pass = np.array([[False], [True]])  # per NPC, broadcast over its behaviors
    assert restricted(passes, none_pass).tolist() == [[True, False], [True, True]]


def test_commitment_raises_the_margin_until_it_expires() -> None:
    settings = AntiDithering(tie_tolerance=0.05, commitment=2.0, interrupt_margin=0.25)
    assert switch_margin(11.0, 10.0, settings) == 0.25  # within the commitment
    assert switch_margin(12.0, 10.0, settings) == 0.05  # 2 s after the start: expired
    assert switch_margin(11.0, np.array([10.0, 8.0]), settings).tolist() == [0.25, 0.05]
    assert switch_margin(11.0, 10.0, AntiDithering(tie_tolerance=0.05)) == 0.05  # no commitment
    small = AntiDithering(tie_tolerance=0.3, commitment=2.0, interrupt_margin=0.1)
    assert switch_margin(11.0, 10.0, small) == 0.3  # the larger of the two


def test_time_moves_forward_from_the_last_now_seen() -> None:
    assert moves_forward(1.0, 1.0)  # the same frame again
    assert moves_forward(-math.inf, 0.0)  # nothing seen yet
    assert not moves_forward(1.0, 0.5)  # backwards
    for bad in (math.inf, -math.inf, math.nan):
        assert not moves_forward(-math.inf, bad)


def test_the_running_behavior_stays_unless_beaten_by_more_than_the_margin() -> None:
    assert keeps_running(0.6, 0.5, 0.1)  # 0.6 <= 0.5 + 0.1
    assert not keeps_running(0.61, 0.5, 0.1)
    assert not keeps_running(0.0, 0.0, 0.1)  # a running behavior at 0 is dropped
    best, running = np.array([0.6, 0.61, 0.0]), np.array([0.5, 0.5, 0.0])
    assert keeps_running(best, running, 0.1).tolist() == [True, False, False]
    assert keeps_running(best, running, np.array([0.1, 0.2, 0.1])).tolist() == [True, True, False]


def test_top_n_keeps_a_pick_while_it_is_among_the_n_best_and_clamps_the_draw() -> None:
    assert within_top_n(2, 3) and not within_top_n(3, 3)
    assert within_top_n(np.array([0, 2, 3]), 3).tolist() == [True, True, False]


def test_top_n_draws_among_the_n_best_weighted_by_score() -> None:
    # scores 0.1, 0.6, -inf (not ready), 0.3: the two best are 1 (0.6) and 3 (0.3), total 0.9;
    # a draw below 0.6 picks 1, from 0.6 on 3 (fraction x 0.9 against the running sums 0.6, 0.9)
    scores = [0.1, 0.6, -math.inf, 0.3]
    assert weighted_top_n(scores, 1, 2, 0.0) == 1
    assert weighted_top_n(scores, 1, 2, 0.66) == 1  # 0.594 < 0.6
    assert weighted_top_n(scores, 1, 2, 0.67) == 3  # 0.603
    assert weighted_top_n(scores, 1, 2, 1.0) == 3  # a draw at the total: the last candidate
    assert weighted_top_n(scores, 1, 9, 0.99) == 0  # 0.1 takes part: 0.99 is past 0.6 + 0.3
    assert weighted_top_n([0.5, 0.5], 0, 2, 0.5) == 1  # a draw at a running sum: the next one
    assert weighted_top_n([0.5, -math.inf, 0.0], 0, 3, 0.999) == 0  # not ready or at 0: no weight
    assert weighted_top_n([0.0, -math.inf, 0.0], 2, 2, 0.5) == 2  # no weight at all: the given best
    rows = np.array([scores, scores, scores, [0.5, 0.5, -math.inf, 0.0], [0.0, -math.inf, 0.0, 0.0]])
    got = weighted_top_n(rows, np.array([1, 1, 1, 0, 3]), 2, np.array([0.66, 0.67, 1.0, 0.5, 0.5]))
    assert got.tolist() == [1, 3, 3, 1, 3]
    got = weighted_top_n(rows[3:4], np.array([0]), 4, np.array([0.999]))
    assert got.tolist() == [1]  # the last ready candidate; -inf and 0 after it weigh nothing


# --- the curves' rules ---------------------------------------------------------------------------
INF, NAN = math.inf, math.nan
SHAPE_CASES = [
    # (family, parameters, u, hand-computed value)
    ("saturating", {"k": 2.0}, 6.0, 6.0 / 8.0),
    ("polynomial", {"m": 2.0, "k": 2.0, "c": 0.25, "b": 0.1, "floor": -INF}, 0.75, 2.0 * 0.25 + 0.1),
    ("polynomial", {"m": 4.0, "k": 3.0, "c": 0.5, "b": 0.5, "floor": -INF}, 0.25, 4.0 * -0.015625 + 0.5),
    ("polynomial", {"m": 1.0, "k": 0.5, "c": 0.5, "b": 0.0, "floor": 0.0}, 0.25, 0.0),  # negative base: 0
    ("polynomial", {"m": 1.0, "k": 0.5, "c": 0.0, "b": 0.0, "floor": 0.0}, 0.36, 0.6),
    ("polynomial", {"m": 1.0, "k": 2.0, "c": 0.0, "b": 0.0, "floor": -INF}, 1e200, INF),  # overflow: inf
    ("logistic", {"m": 8.0, "k": 0.9, "c": 0.4, "b": 0.05}, 0.7, 0.9 / (1.0 + math.exp(-2.4)) + 0.05),
    ("logistic", {"m": -1.0, "k": 1.0, "c": 0.0, "b": 0.0}, 800.0, 0.0),  # e^800 overflows to inf: 0
    ("logit", {"m": 0.2, "c": 0.0, "b": 0.5}, 0.8, 0.2 * math.log(4.0) + 0.5),
    # z kept inside (0, 1): z = 1 - 1e-9, and 1 - z as the float it rounds to
    ("logit", {"m": 1.0, "c": 0.0, "b": 0.0}, 2.0, math.log((1.0 - 1e-9) / (1.0 - (1.0 - 1e-9)))),
    ("normal", {"m": 0.8, "inverse_k": 5.0, "c": 0.6, "b": 0.1}, 0.3, 0.8 * math.exp(-1.125) + 0.1),
    (
        "sine",
        {"m": 0.5, "frequency": 2.0 * math.pi, "c": 0.1, "b": 0.5},
        0.3,
        0.5 * math.sin(0.4 * math.pi) + 0.5,
    ),
    ("sine", {"m": 1.0, "frequency": 1.0, "c": 0.0, "b": 0.0}, INF, NAN),
    ("step", {"threshold": 0.3, "span": 0.5, "low": 0.2}, 0.29, 0.2),
    ("step", {"threshold": 0.3, "span": 0.5, "low": 0.2}, 0.3, 0.7),
    ("step", {"threshold": 0.3, "span": 0.5, "low": 0.2}, NAN, NAN),
    ("table", Table(points=((0.0, 0.0), (0.5, 0.8), (1.0, 0.4))).shape_params(), 0.25, 0.4),
    ("table", Table(points=((0.0, 0.0), (0.5, 0.8), (1.0, 0.4))).shape_params(), 7.0, 0.4),  # flat beyond
    ("table", Table(points=((-2.0, 0.3), (4.0, 0.9))).shape_params(), 1.0, 0.6),
]


@pytest.mark.parametrize(("family", "params", "u", "expected"), SHAPE_CASES)
def test_each_family_shape_on_a_float_and_an_array(
    family: str, params: dict, u: float, expected: float
) -> None:
    shape = rules.SHAPES[family]
    one = shape(u, **params)
    assert isinstance(one, float)
    assert one == pytest.approx(expected, abs=1e-12, nan_ok=True)
    columns = {
        name: value if isinstance(value, list) else np.array([[value]]) for name, value in params.items()
    }
    if family == "table":  # a stack's table: x values, points and ends as arrays
        columns = {name: np.asarray(value) if isinstance(value, list) else np.array([[value]])
                   for name, value in params.items() if name != "slopes"} | {"slopes": None}  # fmt: skip
    with np.errstate(all="ignore"):  # overflow to inf is the expected answer
        many = shape(np.array([[u, u]]), **columns)
    assert many.shape == (1, 2)
    assert many[0].tolist() == pytest.approx([one, one], abs=1e-12, nan_ok=True)


def test_the_pipeline_steps_on_floats_and_arrays() -> None:
    # An input range [10, 30]: 20 is half way, beyond the ends clamped; NaN stays NaN until the end.
    assert rules.normalised(20.0, 10.0, 1.0 / 20.0, 0.0, 1.0) == 0.5
    assert rules.normalised(np.array([0.0, 99.0, NAN]), 10.0, 0.05, 0.0, 1.0).tolist()[:2] == [0.0, 1.0]
    assert rules.normalised(5.0, 0.0, 1.0, -INF, INF) == 5.0  # a batch row without a range
    assert rules.clamped(-3.0, 0.0, rules.HUGE) == 0.0 and rules.clamped(INF, 0.0, rules.HUGE) == rules.HUGE
    assert rules.inverted(0.25, -1.0, 1.0) == 0.75 and rules.inverted(0.25, 1.0, 0.0) == 0.25
    for y in (0.1, 0.3, 0.7, 1.0 / 3.0):  # y * -1 + 1 is 1 - y bit for bit
        assert rules.inverted(y, -1.0, 1.0) == 1.0 - y
    assert [rules.finished(y) for y in (-0.5, 0.5, 1.5, NAN, INF)] == [0.0, 0.5, 1.0, 0.0, 1.0]
    assert rules.finished(np.array([-0.5, 0.5, 1.5, NAN, INF])).tolist() == [0.0, 0.5, 1.0, 0.0, 1.0]


SPECIAL = [NAN, INF, -INF, 1e300, -1e300, 1e30, 1e-300, 0.0, -0.0, 0.5, 1.0]


@pytest.mark.parametrize("seed", range(4))
def test_every_path_gives_a_curves_number(seed: int) -> None:
    # The contract, once over every family: a curve on one float (plain Python made from the
    # rules), the same curve in a stack with others (numpy code made from them) and the rules
    # called on arrays agree to 1e-12, on ordinary and special inputs.
    rng = np.random.default_rng(seed)
    curves = [random_curve(rng) for _ in range(60)]
    xs = np.concatenate([rng.uniform(-1.5, 3.0, 100), SPECIAL])
    stack = CurveStack(curves)
    stacked = stack.evaluate(np.tile(xs, (len(curves), 1)))
    for row, index in enumerate(stack.order):
        curve = curves[index]
        one = [curve(float(x)) for x in xs]
        assert all(isinstance(y, float) and 0.0 <= y <= 1.0 for y in one)
        assert one == pytest.approx(stacked[row].tolist(), rel=0.0, abs=1e-12), curve
        assert curve(xs).tolist() == pytest.approx(one, rel=0.0, abs=1e-12), curve
        if curve.family != "table":  # the rules themselves, called on arrays step by step
            u = xs if curve.input_min is None else rules.normalised(
                xs, curve.input_min, 1.0 / (curve.input_max - curve.input_min), 0.0, 1.0)  # fmt: skip
            if curve.domain is not None:
                u = rules.clamped(u, *curve.domain)
            with np.errstate(all="ignore"):
                y = rules.SHAPES[curve.family](u, **curve.shape_params())
            y = rules.finished(rules.inverted(y, -1.0, 1.0) if curve.invert else y)
            assert y.tolist() == pytest.approx(one, rel=0.0, abs=1e-12), curve
