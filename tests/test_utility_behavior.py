"""Considerations and behaviors: the design source's example, aggregations, veto, explain, errors."""

import logging
import math

import pytest

from npc_mind.utility import (
    Behavior,
    Consideration,
    MissingInputError,
    UtilityDefinitionError,
    UtilityError,
    UtilitySelector,
)
from npc_mind.utility.curves import Linear, Saturating


def source_selector() -> UtilitySelector:
    """The design source's main(): attack, flee, patrol, each a weighted sum of x / (x + k)."""
    attack = Behavior(
        "攻击",
        [Consideration("敌人距离", Saturating(5.0), 0.6), Consideration("弹药余量", Saturating(2.0), 0.4)],
    )
    flee = Behavior(
        "逃跑",
        [Consideration("失血比例", Saturating(1.0), 0.7), Consideration("冷却可用", Saturating(0.5), 0.3)],
    )
    patrol = Behavior(
        "巡逻",
        [Consideration("安宁程度", Saturating(3.0), 0.5), Consideration("路线长度", Saturating(4.0), 0.5)],
    )
    return UtilitySelector([attack, flee, patrol])


SOURCE_CONTEXT = {
    "敌人距离": 8.0,
    "弹药余量": 20.0,
    "失血比例": 30.0,
    "冷却可用": 1.0,
    "安宁程度": 2.0,
    "路线长度": 10.0,
}


def test_source_example_ranks_exactly_as_its_arithmetic_says() -> None:
    expected = {
        "攻击": 0.6 * 8.0 / (8.0 + 5.0) + 0.4 * 20.0 / (20.0 + 2.0),  # 0.732867
        "逃跑": 0.7 * 30.0 / (30.0 + 1.0) + 0.3 * 1.0 / (1.0 + 0.5),  # 0.877419
        "巡逻": 0.5 * 2.0 / (2.0 + 3.0) + 0.5 * 10.0 / (10.0 + 4.0),  # 0.557143
    }
    selector = source_selector()
    ranked = selector.rank(SOURCE_CONTEXT)
    assert [name for name, _ in ranked] == ["逃跑", "攻击", "巡逻"]
    for name, score in ranked:
        assert score == pytest.approx(expected[name], abs=1e-6)
    # The printed numbers of the source, to its three decimals.
    assert [f"{score:.3f}" for _, score in ranked] == ["0.877", "0.733", "0.557"]
    assert selector.choose(SOURCE_CONTEXT, now=0.0) == "逃跑"


def test_weighted_sum_is_not_renormalised() -> None:
    behavior = Behavior("b", [Consideration("x", Linear(), 2.0), Consideration("y", Linear(), 3.0)])
    assert behavior.score({"x": 0.5, "y": 0.5}) == pytest.approx(2.5)


def test_product_raises_to_weights_and_compensates_per_consideration() -> None:
    behavior = Behavior(
        "b",
        [
            Consideration("x", Linear(), 2.0),
            Consideration("y", Linear(), 1.0),
            Consideration("z", Linear(), 0.5),
        ],
        aggregation="product",
        weight=1.5,
    )
    scores = {"x": 0.8, "y": 0.5, "z": 0.25}
    n = 3
    expected = 1.5
    for key, weight in (("x", 2.0), ("y", 1.0), ("z", 0.5)):
        f = scores[key] ** weight
        expected *= f + (1.0 - f) * (1.0 - 1.0 / n) * f
    assert behavior.score(scores) == pytest.approx(expected, abs=1e-12)
    # Compensation lifts the product above the plain product of the powers.
    assert behavior.score(scores) > 1.5 * 0.8**2 * 0.5 * 0.25**0.5


def test_behavior_weight_multiplies_after_aggregation() -> None:
    considerations = [Consideration("x", Linear(), 0.5), Consideration("y", Linear(), 0.5)]
    plain = Behavior("b", considerations)
    heavy = Behavior("b", considerations, weight=3.0)
    context = {"x": 0.2, "y": 0.6}
    assert heavy.score(context) == pytest.approx(3.0 * plain.score(context))


@pytest.mark.parametrize("aggregation", ["weighted_sum", "product"])
def test_veto_zeroes_the_behavior_whatever_the_aggregation(aggregation: str) -> None:
    behavior = Behavior(
        "attack",
        [Consideration("ammo", Linear(), 0.2, veto_below=0.1), Consideration("anger", Linear(), 5.0)],
        aggregation=aggregation,
    )
    assert behavior.score({"ammo": 0.05, "anger": 1.0}) == 0.0
    assert behavior.score({"ammo": 0.1, "anger": 1.0}) > 0.0  # at the threshold: not vetoed
    explanation = behavior.explain({"ammo": 0.05, "anger": 1.0})
    assert explanation.vetoed
    assert [row.vetoed for row in explanation.considerations] == [True, False]


def test_explain_gives_each_considerations_numbers() -> None:
    selector = source_selector()
    rows = {row.behavior: row for row in selector.explain(SOURCE_CONTEXT)}
    attack = rows["攻击"]
    distance, ammo = attack.considerations
    assert distance.input_key == "敌人距离"
    assert distance.raw_input == 8.0
    assert distance.curve_output == pytest.approx(8.0 / 13.0)
    assert distance.weight == 0.6
    assert distance.contribution == pytest.approx(0.6 * 8.0 / 13.0)
    assert attack.score == pytest.approx(distance.contribution + ammo.contribution)
    assert attack.target_index is None


def test_nan_input_scores_zero_and_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    selector = source_selector()
    context = {**SOURCE_CONTEXT, "失血比例": math.nan}
    with caplog.at_level(logging.WARNING, logger="npc_mind.utility"):
        ranked = dict(selector.rank(context))
    assert ranked["逃跑"] == pytest.approx(0.3 * 1.0 / 1.5)  # the NaN consideration adds 0
    assert "逃跑" in caplog.text and "失血比例" in caplog.text and "NaN" in caplog.text
    assert selector.scorer.nan_counts == {"失血比例": 1}
    flee = next(row for row in selector.explain(context) if row.behavior == "逃跑")
    assert flee.considerations[0].nan_input


def test_missing_input_names_behavior_and_consideration() -> None:
    context = dict(SOURCE_CONTEXT)
    del context["弹药余量"]
    with pytest.raises(MissingInputError, match="behavior '攻击', consideration '弹药余量'"):
        source_selector().rank(context)


def test_non_numeric_input_is_a_clear_error() -> None:
    with pytest.raises(UtilityError, match=r"behavior '攻击', consideration '敌人距离'.*number"):
        source_selector().rank({**SOURCE_CONTEXT, "敌人距离": "near"})


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: Behavior("b", [Consideration("x", Linear(), 0.0)]),
            "behavior 'b': every consideration weight is zero",
        ),
        (lambda: Behavior("b", []), "behavior 'b': needs at least one consideration"),
        (
            lambda: Behavior("b", [Consideration("x", Linear())], aggregation="max"),
            "unknown aggregation 'max'",
        ),
        (lambda: Behavior("b", [Consideration("x", Linear())], weight=-1.0), "behavior 'b': weight"),
        (lambda: Behavior("b", [Consideration("x", Linear())], cooldown=math.inf), "cooldown"),
        (lambda: Behavior("b", [Consideration("x", Linear())], tags="fight"), "tags must be a list"),
        (lambda: Behavior("", [Consideration("x", Linear())]), "name must be a non-empty string"),
        (lambda: Consideration("x", Linear(), weight=math.nan), "consideration 'x': weight"),
        (lambda: Consideration("x", Linear(), veto_below=1.5), "consideration 'x': veto_below"),
        (lambda: Consideration("x", 0.5), "consideration 'x': curve must be a Curve"),
        (lambda: Consideration("", Linear()), "input_key must be a non-empty string"),
    ],
)
def test_invalid_definitions_are_rejected(build, message: str) -> None:
    with pytest.raises(UtilityDefinitionError, match=message):
        build()


def test_selector_rejects_duplicate_names_and_all_zero_behavior_weights() -> None:
    one = Behavior("a", [Consideration("x", Linear())])
    with pytest.raises(UtilityDefinitionError, match=r"unique.*'a'"):
        UtilitySelector([one, one])
    with pytest.raises(UtilityDefinitionError, match="every behavior weight is zero"):
        UtilitySelector([Behavior("a", [Consideration("x", Linear())], weight=0.0)])
    with pytest.raises(UtilityDefinitionError, match="momentum"):
        UtilitySelector([one], momentum=-0.1)
    with pytest.raises(UtilityDefinitionError, match="top_n"):
        UtilitySelector([one], top_n=0)
