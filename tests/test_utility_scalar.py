"""The per-NPC path (generated plain Python) gives the batch path's numbers and choices (one curve
on one float against the batch: tests/test_utility_rules.py, the contract)."""

import logging
import math

import numpy as np
import pytest
from test_utility_batch import KEYS, random_inputs, random_selector

from npc_mind.utility import (
    Behavior,
    Consideration,
    MissingInputError,
    UtilityError,
    UtilitySelector,
    codegen,
)
from npc_mind.utility.curves import Linear, Saturating, Table

SPECIAL = [math.nan, math.inf, -math.inf, 1e300, -1e300, 1e30, 1e-300, 0.0, -0.0, 0.5, 1.0]


def test_table_points_and_their_ends_are_hit_exactly() -> None:
    table = Table(points=((-1.0, 0.2), (0.3, 0.9), (0.7, 0.1), (2.0, 0.6)))
    xs = [-5.0, -1.0, 0.3, 0.7, 2.0, 9.0, 0.29999999999999993, 0.30000000000000004, 1.3]
    assert [table(x) for x in xs] == table(np.array(xs)).tolist()


@pytest.mark.parametrize("per_target", [False, True], ids=["scalar", "per_target"])
@pytest.mark.parametrize("seed", range(10))
def test_rank_gives_score_batch_numbers(seed: int, per_target: bool) -> None:
    rng = np.random.default_rng(100 + seed)
    selector = random_selector(rng, per_target=per_target)
    inputs = random_inputs(rng, 30, targets=3 if per_target else None)
    inputs["fear"][2] = np.nan
    inputs["health"][4] = np.inf
    inputs["ammo"][6] = -np.inf
    inputs["hunger"][8] = 1e300
    scores = selector.score_batch(inputs)
    for i in range(30):
        context = {key: values[i] for key, values in inputs.items()}
        for row in selector.rank(context):
            name, score = row[0], row[-1]
            b = selector.index[name]
            expected = scores[i, b] if not per_target else scores[i, b, row[1] or 0]
            assert score == pytest.approx(float(expected), rel=0.0, abs=1e-12)


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"top_n": 3, "seed": 4},
        {"top_n": 9, "seed": 8, "momentum": 0.05},  # a draw among 9 of the 10 behaviors
        {"top_n": 2, "seed": 1, "commitment": 0.4, "tie_tolerance": 0.02},
        {"momentum": 0.1, "commitment": 0.3, "interrupt_margin": 0.05},
        {"tie_tolerance": 0.03},
    ],
)
@pytest.mark.parametrize("cooldowns", [True, False])  # the generated decision differs without them
@pytest.mark.parametrize("per_target", [False, True])  # scored and decided in one function, or two
def test_choose_makes_a_batch_of_ones_choices_and_random_draws(
    settings: dict, cooldowns: bool, per_target: bool
) -> None:
    rng = np.random.default_rng(21)
    definition = random_selector(rng, n_behaviors=10, per_target=per_target).to_dict() | settings
    for behavior in definition["behaviors"][1::3]:
        behavior["cooldown"] = 0.25 if cooldowns else 0.0
    for behavior in definition["behaviors"][1::2]:  # tagged: some with a cooldown, some without
        behavior["tags"] = ["odd"]
    single = UtilitySelector.from_dict(definition)
    batch = UtilitySelector.from_dict(definition).batch(1)
    inputs = random_inputs(rng, 1, targets=3 if per_target else None)
    odd = single.tag_mask(["odd"])
    for tick in range(400 if codegen.GENERATE else 100):  # without generated code: the second run, shorter
        for key in inputs:
            inputs[key] = np.clip(inputs[key] + rng.normal(0.0, 0.2, inputs[key].shape), -1.0, 2.5)
        now = tick * 0.1
        restrict = tick % 5 == 0
        chosen = batch.choose(inputs, now, allowed=odd if restrict else None)
        context = {key: v[0].tolist() if v.ndim > 1 else float(v[0]) for key, v in inputs.items()}
        name = single.choose(context, now, ["odd"] if restrict else None)
        choice = single.last_choice
        assert (batch.names[chosen[0]], bool(batch.tag_fallback[0])) == (name, choice.tag_fallback)
        assert choice.target_index == (None if batch.chosen_target[0] < 0 else batch.chosen_target[0])
        best = batch.scores[0, chosen[0]].max() if per_target else batch.scores[0, chosen[0]]
        assert choice.score == pytest.approx(float(best), abs=1e-12)


def test_bad_contexts_raise_the_same_clear_errors() -> None:
    selector = UtilitySelector(
        [
            Behavior("attack", [Consideration("ammo", Saturating(2.0)), Consideration("anger", Linear())]),
            Behavior("hit", [Consideration("distance", Linear(), per_target=True)]),
        ]
    )
    context = {"ammo": 3.0, "anger": 0.5, "distance": [1.0, 0.2]}
    assert selector.choose(context, now=0.0) == "attack"
    assert selector.last_choice is not None and selector.last_choice.target_index is None
    with pytest.raises(MissingInputError, match=r"behavior 'attack', consideration 'anger'.*missing"):
        selector.rank({"ammo": 3.0, "distance": [1.0]})
    with pytest.raises(UtilityError, match="consideration 'ammo': input must be a number, got 'lots'"):
        selector.rank({**context, "ammo": "lots"})
    with pytest.raises(UtilityError, match=r"consideration 'distance'.*one per target"):
        selector.rank({**context, "distance": "far"})
    with pytest.raises(UtilityError, match=r"consideration 'distance'.*one per target"):
        selector.rank({**context, "distance": np.zeros((2, 2))})
    # Inputs no consideration reads are ignored; numpy scalars and ints are numbers.
    ranked = selector.rank({**context, "ammo": np.float32(2.0), "anger": 1, "unused": "x"})
    assert ranked[0] == ("attack", None, pytest.approx(0.5 + 1.0))
    # No per-target input at all: no targets, the other behaviors are still scored.
    assert selector.rank({"ammo": 2.0, "anger": 0.0}) == [("attack", None, 0.5)]


def test_nan_is_counted_once_per_value_on_both_paths(caplog: pytest.LogCaptureFixture) -> None:
    behaviors = [
        Behavior("rest", [Consideration("tired", Saturating(1.0)), Consideration("pain", Linear())]),
        Behavior("run", [Consideration("tired", Saturating(1.0, invert=True))]),
        Behavior("hit", [Consideration("distance", Linear(invert=True), per_target=True)]),
    ]
    selector = UtilitySelector(behaviors)
    with caplog.at_level(logging.WARNING, logger="npc_mind.utility"):
        ranked = selector.rank({"tired": math.nan, "pain": 0.5, "distance": [0.2, math.nan]})
    assert dict((name, score) for name, _, score in ranked if name != "hit") == {"rest": 0.5, "run": 0.0}
    assert ("hit", 1, 0.0) in ranked
    assert selector.scorer.nan_counts == {"tired": 1, "distance": 1}
    assert "'tired'" in caplog.text
    batch = UtilitySelector(behaviors)
    batch.score_batch(
        {
            "tired": np.array([math.nan, 1.0]),
            "pain": np.zeros(2),
            "distance": np.array([[0.2, math.nan], [0, 0]]),
        }
    )
    assert batch.scorer.nan_counts == {"tired": 1, "distance": 1}  # the scalar key is not counted per target


def test_unused_keys_and_a_single_input_selector() -> None:
    selector = UtilitySelector([Behavior("only", [Consideration(KEYS[0], Saturating(1.0))])])
    assert selector.rank({KEYS[0]: 1.0, "other": math.nan}) == [("only", 0.5)]
    assert selector.scorer.nan_counts == {}
    if codegen.GENERATE:  # else the rules run directly: no source
        assert "def scores(ctx, _owner):" in selector.scalar.source


def test_selectors_of_one_definition_share_compiled_code_not_state() -> None:
    definition = random_selector(np.random.default_rng(3)).to_dict()
    first, second = UtilitySelector.from_dict(definition), UtilitySelector.from_dict(definition)
    assert first.scalar.source is second.scalar.source
    assert first.pick_fn is second.pick_fn  # scoring and decision: one function per definition
    context = dict.fromkeys(KEYS, 0.5) | {"fear": math.nan}
    first.rank(context)
    assert first.scorer.nan_counts == {"fear": 1}
    assert second.scorer.nan_counts == {}
    first.choose(context, 0.0)  # the shared function reports through the selector that called it
    assert first.scorer.nan_counts == {"fear": 2}
    assert second.scorer.nan_counts == {}
    assert second.last_choice is None
    with pytest.raises(MissingInputError, match="'ammo'"):
        second.rank({key: 0.5 for key in KEYS if key != "ammo"})
