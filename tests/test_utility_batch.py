"""Batched scoring and choosing give the per-NPC path's numbers and choices."""

import logging

import numpy as np
import pytest

from npc_mind.utility import Behavior, Consideration, MissingInputError, UtilityError, UtilitySelector
from npc_mind.utility.curves import (
    Linear,
    Logistic,
    Logit,
    Normal,
    Polynomial,
    Saturating,
    Sine,
    Step,
    Table,
)

KEYS = ("health", "ammo", "fear", "hunger", "distance")


def random_curve(rng: np.random.Generator):
    ranged = rng.random() < 0.4
    common = {"invert": bool(rng.random() < 0.3)}
    if ranged:
        low = float(rng.uniform(-1.0, 0.5))
        common |= {"input_min": low, "input_max": low + float(rng.uniform(0.5, 3.0))}
    family = rng.integers(9)
    u = lambda a, b: float(rng.uniform(a, b))  # noqa: E731
    if family == 0:
        return Saturating(k=u(0.1, 3.0), **common)
    if family == 1:
        return Linear(m=u(-2.0, 2.0), c=u(-0.5, 0.5), b=u(-0.2, 0.8), **common)
    if family == 2:
        return Polynomial(m=u(-2.0, 2.0), k=float(rng.choice([0.5, 1.5, 2.0, 3.0])), c=u(-0.5, 0.5), **common)
    if family == 3:
        return Logistic(m=u(-10.0, 10.0), k=u(0.2, 1.0), c=u(0.0, 1.0), b=u(0.0, 0.3), **common)
    if family == 4:
        return Logit(m=u(0.05, 0.3), c=u(-0.2, 0.2), b=u(0.3, 0.7), **common)
    if family == 5:
        return Normal(m=u(0.3, 1.0), k=u(0.05, 0.5), c=u(0.0, 1.0), b=u(0.0, 0.2), **common)
    if family == 6:
        return Sine(m=u(0.2, 0.5), k=u(0.5, 3.0), c=u(-0.5, 0.5), b=0.5, **common)
    if family == 7:
        return Step(threshold=u(0.0, 1.0), low=u(0.0, 0.5), high=u(0.5, 1.0), **common)
    xs = np.sort(rng.uniform(-1.0, 2.0, int(rng.integers(2, 6))))
    return Table(points=tuple(zip(xs, rng.uniform(-0.2, 1.2, len(xs)), strict=True)), **common)


def random_selector(
    rng: np.random.Generator, n_behaviors: int = 8, per_target: bool = False
) -> UtilitySelector:
    behaviors = []
    for b in range(n_behaviors):
        considerations = []
        for _ in range(int(rng.integers(1, 5))):
            key = str(rng.choice(KEYS))
            veto = float(rng.uniform(0.0, 0.3)) if rng.random() < 0.2 else None
            considerations.append(
                Consideration(
                    key,
                    random_curve(rng),
                    float(rng.uniform(0.1, 2.0)),
                    veto_below=veto,
                    per_target=per_target and key == "distance",
                )
            )
        aggregation = "product" if rng.random() < 0.4 else "weighted_sum"
        behaviors.append(
            Behavior(f"b{b}", considerations, aggregation=aggregation, weight=float(rng.uniform(0.5, 1.5)))
        )
    return UtilitySelector(behaviors)


def random_inputs(rng: np.random.Generator, n: int, targets: int | None = None) -> dict[str, np.ndarray]:
    inputs = {key: rng.uniform(-1.0, 2.5, n) for key in KEYS}
    if targets is not None:
        inputs["distance"] = rng.uniform(-1.0, 2.5, (n, targets))
    return inputs


def per_npc_scores(selector: UtilitySelector, inputs: dict[str, np.ndarray], i: int) -> dict[str, float]:
    """The per-NPC reference: each behavior's own Python loop over its considerations."""
    context = {key: values[i] for key, values in inputs.items()}
    return {row.behavior: row.score for row in selector.explain(context)}


@pytest.mark.parametrize("seed", range(12))
def test_score_batch_equals_the_per_npc_path(seed: int) -> None:
    rng = np.random.default_rng(seed)
    selector = random_selector(rng)
    inputs = random_inputs(rng, 40)
    inputs["fear"][3] = np.nan  # NaN inputs take the batch's clamp-and-redo path
    inputs["health"][5] = np.inf
    scores = selector.score_batch(inputs)
    assert scores.shape == (40, 8)
    for i in range(40):
        expected = per_npc_scores(selector, inputs, i)
        assert scores[i] == pytest.approx([expected[name] for name in selector.names], abs=1e-12)
    assert selector.score_batch(inputs, "float32") == pytest.approx(scores, abs=1e-5)
    # float32 inputs (Godot's packed arrays) are scored in float32 unless asked otherwise.
    inputs32 = {key: values.astype(np.float32) for key, values in inputs.items()}
    assert selector.score_batch(inputs32).dtype == np.float32
    assert selector.score_batch(inputs32, "float64").dtype == np.float64
    assert scores.dtype == np.float64


def test_shared_considerations_are_evaluated_once_with_the_same_numbers() -> None:
    health = Saturating(k=0.5, input_min=0.0, input_max=100.0)
    selector = UtilitySelector(
        [
            Behavior(
                "heal",
                [Consideration("health", Saturating(k=0.5, invert=True)), Consideration("calm", Linear())],
            ),
            Behavior("fight", [Consideration("health", health, 0.7), Consideration("calm", Linear(), 0.3)]),
            Behavior("boast", [Consideration("health", health), Consideration("health", health)], "product"),
        ]
    )
    assert len(selector.scorer.stack) == 3  # six considerations, three distinct (input, curve) pairs
    inputs = {"health": np.array([0.0, 20.0, 90.0]), "calm": np.array([0.2, 0.5, 1.0])}
    scores = selector.score_batch(inputs)
    for i in range(3):
        expected = per_npc_scores(selector, inputs, i)
        assert scores[i] == pytest.approx([expected[name] for name in selector.names], abs=1e-12)


def test_source_example_in_a_batch_keeps_its_numbers() -> None:
    source = [
        ("攻击", [("敌人距离", 5.0, 0.6), ("弹药余量", 2.0, 0.4)]),
        ("逃跑", [("失血比例", 1.0, 0.7), ("冷却可用", 0.5, 0.3)]),
        ("巡逻", [("安宁程度", 3.0, 0.5), ("路线长度", 4.0, 0.5)]),
    ]
    selector = UtilitySelector(
        [
            Behavior(name, [Consideration(key, Saturating(k), w) for key, k, w in parts])
            for name, parts in source
        ]
    )
    context = {
        "敌人距离": 8.0,
        "弹药余量": 20.0,
        "失血比例": 30.0,
        "冷却可用": 1.0,
        "安宁程度": 2.0,
        "路线长度": 10.0,
    }
    scores = selector.score_batch({key: np.full(3, value) for key, value in context.items()})
    assert scores[1] == pytest.approx(
        [8 / 13 * 0.6 + 20 / 22 * 0.4, 30 / 31 * 0.7 + 0.2, 0.2 + 10 / 14 * 0.5], abs=1e-6
    )


def test_targets_score_as_n_b_t_and_match_rank_rows() -> None:
    rng = np.random.default_rng(99)
    selector = random_selector(rng, n_behaviors=6, per_target=True)
    assert selector.targeted
    inputs = random_inputs(rng, 10, targets=3)
    scores = selector.score_batch(inputs)
    assert scores.shape == (10, 6, 3)
    for i in range(10):
        context = {key: values[i] for key, values in inputs.items()}
        for row in selector.explain(context):
            b = selector.index[row.behavior]
            targets = range(3) if row.target_index is None else [row.target_index]
            for t in targets:  # behaviors without per-target inputs score the same for every target
                assert scores[i, b, t] == pytest.approx(row.score, abs=1e-12)
        rows = selector.rank(context)
        assert len(rows) == sum(3 if behavior.targeted else 1 for behavior in selector.behaviors)
        assert [score for _, _, score in rows] == sorted((score for _, _, score in rows), reverse=True)


def test_nan_inputs_in_a_batch_score_zero_and_are_reported(caplog: pytest.LogCaptureFixture) -> None:
    # Weighted sums of saturating curves skip the final clamp unless the result shows a NaN.
    selector = UtilitySelector(
        [
            Behavior("rest", [Consideration("tired", Saturating(1.0), 1.0)]),
            Behavior("work", [Consideration("tired", Saturating(1.0, invert=True), 1.0)]),
        ]
    )
    with caplog.at_level(logging.WARNING, logger="npc_mind.utility"):
        scores = selector.score_batch({"tired": np.array([1.0, np.nan, 3.0, np.nan])})
    assert scores[:, 0] == pytest.approx([0.5, 0.0, 0.75, 0.0])
    assert scores[:, 1] == pytest.approx([0.5, 0.0, 0.25, 0.0])  # inverted, NaN still scores 0
    assert "'tired'" in caplog.text and "NaN" in caplog.text
    assert selector.scorer.nan_counts == {"tired": 2}  # NaN values seen, per input key


def test_batch_inputs_are_validated_with_clear_errors() -> None:
    rng = np.random.default_rng(1)
    selector = random_selector(rng)
    inputs = random_inputs(rng, 5)
    with pytest.raises(MissingInputError, match=r"behavior 'b\d', consideration 'ammo'.*missing"):
        selector.score_batch({key: value for key, value in inputs.items() if key != "ammo"})
    with pytest.raises(UtilityError, match="'fear' has 4"):
        selector.score_batch({**inputs, "fear": inputs["fear"][:4]})
    with pytest.raises(UtilityError, match=r"'hunger' has shape \(5, 2\)"):
        selector.score_batch({**inputs, "hunger": np.zeros((5, 2))})
    with pytest.raises(UtilityError, match="precision"):
        selector.score_batch(inputs, "float16")


def test_batch_choices_equal_per_npc_selectors_tick_by_tick() -> None:
    rng = np.random.default_rng(5)
    definition = random_selector(rng, n_behaviors=6).to_dict()
    for behavior in definition["behaviors"][::2]:
        behavior["cooldown"] = 0.35
        behavior["tags"] = ["even"]
    definition |= {"momentum": 0.05, "tie_tolerance": 0.01, "commitment": 0.3, "interrupt_margin": 0.1}
    n = 16
    batch_selector = UtilitySelector.from_dict(definition)
    batch = batch_selector.batch(n)
    singles = [UtilitySelector.from_dict(definition) for _ in range(n)]
    inputs = random_inputs(rng, n)
    even = batch_selector.tag_mask(["even"])
    for tick in range(150):
        for key in inputs:  # drifting inputs so choices change now and then
            inputs[key] = np.clip(inputs[key] + rng.normal(0.0, 0.15, n), -1.0, 2.5)
        now = tick * 0.1
        restrict = tick % 3 == 0
        chosen = batch.choose(inputs, now, allowed=even if restrict else None)
        for i, single in enumerate(singles):
            context = {key: values[i] for key, values in inputs.items()}
            name = single.choose(context, now, allowed_tags=["even"] if restrict else None)
            assert batch.names[chosen[i]] == name, (tick, i)
            assert batch.tag_fallback[i] == single.last_choice.tag_fallback


def test_choose_batch_reports_targets_and_keeps_state_between_calls() -> None:
    attack = Behavior(
        "attack",
        [
            Consideration(
                "enemy_distance", Linear(input_min=0.0, input_max=10.0, invert=True), per_target=True
            )
        ],
    )
    wander = Behavior("wander", [Consideration("boredom", Linear())])
    selector = UtilitySelector([attack, wander], momentum=0.5)
    inputs = {"enemy_distance": np.array([[9.0, 2.0], [8.0, 9.0]]), "boredom": np.array([0.1, 0.5])}
    assert selector.choose_batch(inputs, 0.0).tolist() == [0, 1]
    assert selector._batch is not None and selector._batch.chosen_target.tolist() == [1, -1]
    # Momentum keeps NPC 1 wandering although attack now scores slightly higher.
    inputs["enemy_distance"][1] = [4.5, 9.0]
    assert selector.choose_batch(inputs, 0.1).tolist() == [0, 1]


def test_target_mask_zeroes_padding_targets_of_per_target_behaviors() -> None:
    attack = Behavior(
        "attack",
        [
            Consideration(
                "enemy_distance", Linear(input_min=0.0, input_max=10.0, invert=True), per_target=True
            )
        ],
    )
    wander = Behavior("wander", [Consideration("boredom", Linear())])
    selector = UtilitySelector([attack, wander])
    # NPC 0 sees two enemies, NPC 1 only one: its second column is padding that would score high.
    inputs = {"enemy_distance": np.array([[9.0, 2.0], [8.0, 0.0]]), "boredom": np.array([0.1, 0.5])}
    mask = np.array([[True, True], [True, False]])
    scores = selector.score_batch(inputs, target_mask=mask)
    assert scores[:, 0, :] == pytest.approx(np.array([[0.1, 0.8], [0.2, 0.0]]))
    assert scores[:, 1, :] == pytest.approx(np.array([[0.1, 0.1], [0.5, 0.5]]))  # not per-target: untouched
    batch = selector.batch(2)
    assert batch.choose(inputs, 0.0, target_mask=mask).tolist() == [0, 1]
    assert batch.chosen_target.tolist() == [1, -1]
    with pytest.raises(UtilityError, match="target_mask has shape"):
        selector.score_batch(inputs, target_mask=np.ones((2, 3), dtype=bool))


def test_resize_keeps_existing_rows_state_and_starts_new_rows_fresh() -> None:
    selector = UtilitySelector(
        [Behavior("a", [Consideration("a", Linear())]), Behavior("b", [Consideration("b", Linear())])],
        momentum=1.0,
    )
    batch = selector.batch(2)
    assert batch.choose({"a": np.array([0.6, 0.2]), "b": np.array([0.5, 0.5])}, 0.0).tolist() == [0, 1]
    batch.resize(3)
    # Rows 0 and 1 keep their running behavior through the momentum; row 2 is a plain arg max.
    inputs = {"a": np.array([0.4, 0.7, 0.4]), "b": np.array([0.5, 0.4, 0.5])}
    assert batch.choose(inputs, 1.0).tolist() == [0, 1, 1]
    batch.resize(1)
    assert batch.state.running.tolist() == [0]
    with pytest.raises(UtilityError, match="at least one NPC"):
        batch.resize(0)


def test_sums_of_inputs_at_least_zero_skip_the_saturating_clip_with_the_same_numbers() -> None:
    selector = UtilitySelector(
        [
            Behavior(
                "a",
                [
                    Consideration("x", Saturating(2.0), 0.7),
                    Consideration("y", Saturating(0.5, invert=True), 0.3),
                ],
            ),
            Behavior(
                "b",
                [
                    Consideration("y", Linear(input_min=0.0, input_max=10.0)),
                    Consideration("x", Saturating(1.0)),
                ],
            ),
        ]
    )
    assert selector.scorer._unclipped_ok  # weighted sums only: the clip may be skipped
    x = np.array([0.0, 1.0, 1e31, 5.0, 2.5])
    y = np.array([3.0, 0.0, 2.0, 1e300, 7.0])
    fast = selector.score_batch({"x": x, "y": y})
    selector.scorer._unclipped_ok = False
    assert selector.score_batch({"x": x, "y": y}).tolist() == fast.tolist()  # bit for bit
    selector.scorer._unclipped_ok = True
    # +inf gives NaN without the clip: found in the result and redone with it, not reported as NaN.
    x[4] = np.inf
    scores = selector.score_batch({"x": x, "y": y})
    assert scores[4] == pytest.approx([0.7 + 0.3 * 0.5 / 7.5, 0.7 + 1.0], abs=1e-12)
    assert selector.scorer.nan_counts == {}
    for i in range(5):
        ranked = dict(selector.rank({"x": x[i], "y": y[i]}))
        assert scores[i] == pytest.approx([ranked["a"], ranked["b"]], rel=0.0, abs=1e-12)
