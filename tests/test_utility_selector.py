"""Choosing: tags and their fallback, cooldowns, commitment, momentum, tie tolerance, top-N, dithering."""

import itertools

import numpy as np
import pytest

from npc_mind.utility import Behavior, Consideration, UtilityError, UtilitySelector
from npc_mind.utility.curves import Linear


def two_rivals(**settings) -> UtilitySelector:
    """Two behaviors scored straight from their inputs a and b (identity curves)."""
    return UtilitySelector(
        [
            Behavior("guard", [Consideration("a", Linear())], tags=("calm",)),
            Behavior(
                "chase",
                [Consideration("b", Linear())],
                tags=("hostile",),
                cooldown=settings.pop("cooldown", 0.0),
            ),
        ],
        **settings,
    )


def count_switches(selector: UtilitySelector, a: np.ndarray, b: np.ndarray, dt: float = 0.1) -> list[str]:
    return [selector.choose({"a": a[t], "b": b[t]}, now=t * dt) for t in range(len(a))]


def switches(choices: list[str]) -> int:
    return sum(1 for before, after in itertools.pairwise(choices) if before != after)


def noisy_equal_inputs(ticks: int = 1000, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return 0.5 + rng.normal(0.0, 0.02, ticks), 0.5 + rng.normal(0.0, 0.02, ticks)


@pytest.mark.parametrize(
    "settings",
    [{"momentum": 0.15}, {"commitment": 2.0, "interrupt_margin": 0.2}, {"tie_tolerance": 0.08}],
    ids=["momentum", "commitment", "tie_tolerance"],
)
def test_anti_dithering_cuts_switches_but_a_large_change_switches_at_once(settings: dict) -> None:
    a, b = noisy_equal_inputs()
    plain = switches(count_switches(two_rivals(), a, b))
    assert plain > 300  # near-equal behaviors under noise flicker: arg max switches constantly

    steady = two_rivals(**settings)
    choices = count_switches(steady, a, b)
    assert switches(choices) * 10 < plain

    # A large change in the inputs: the behavior not running becomes far better at tick 1000.
    running = choices[-1]
    jump = {"a": 0.1, "b": 0.9} if running == "guard" else {"a": 0.9, "b": 0.1}
    expected = "chase" if running == "guard" else "guard"
    assert steady.choose(jump, now=100.0) == expected


def test_without_settings_choose_is_plain_arg_max() -> None:
    selector = two_rivals()
    assert selector.choose({"a": 0.6, "b": 0.59}, now=0.0) == "guard"
    assert selector.choose({"a": 0.6, "b": 0.61}, now=0.0) == "chase"  # same instant, no commitment
    assert selector.last_choice is not None
    assert selector.last_choice.score == pytest.approx(0.61)


def test_commitment_expires_then_allows_small_switches() -> None:
    selector = two_rivals(commitment=1.0)
    assert selector.choose({"a": 0.6, "b": 0.5}, now=0.0) == "guard"
    assert selector.choose({"a": 0.5, "b": 0.6}, now=0.5) == "guard"  # committed
    assert selector.choose({"a": 0.5, "b": 0.6}, now=1.0) == "chase"  # commitment over
    # A running behavior that drops to 0 (e.g. vetoed) breaks the commitment at once.
    assert selector.choose({"a": 0.7, "b": 0.0}, now=1.1) == "guard"


def test_cooldown_blocks_a_behavior_after_it_stops() -> None:
    selector = two_rivals(cooldown=2.0)
    assert selector.choose({"a": 0.2, "b": 0.8}, now=0.0) == "chase"
    assert selector.choose({"a": 0.8, "b": 0.2}, now=1.0) == "guard"  # chase stops at t=1
    assert selector.choose({"a": 0.2, "b": 0.8}, now=2.5) == "guard"  # chase cooling down until t=3
    assert selector.choose({"a": 0.2, "b": 0.8}, now=3.0) == "chase"


def test_cooldowns_narrow_what_the_tags_left() -> None:
    """A cooling behavior gives way to another allowed one (not to one the tags exclude), and
    cooldowns are ignored only when every allowed candidate is cooling; per NPC and in a batch."""
    behaviors = [  # strike last: a step that wrongly left nothing ready would pick the first
        Behavior("idle", [Consideration("i", Linear())]),
        Behavior("dodge", [Consideration("d", Linear())], tags=("fight",)),
        Behavior("strike", [Consideration("s", Linear())], tags=("fight",), cooldown=2.0),
    ]
    steps = [  # (now, inputs, allowed tags, expected)
        (0.0, {"s": 0.9, "d": 0.3, "i": 0.1}, None, "strike"),
        (1.0, {"s": 0.1, "d": 0.3, "i": 0.9}, None, "idle"),  # strike stops: cooling until t=3
        (1.5, {"s": 0.9, "d": 0.3, "i": 0.95}, ["fight"], "dodge"),
        (1.6, {"s": 0.9, "d": 0.0, "i": 0.95}, ["fight"], "strike"),  # only strike is allowed
    ]
    single = UtilitySelector(behaviors)
    batch = UtilitySelector(behaviors).batch(1)
    for now, inputs, tags, expected in steps:
        assert single.choose(inputs, now, tags) == expected, now
        mask = None if tags is None else single.tag_mask(tags)
        chosen = batch.choose({key: np.array([v]) for key, v in inputs.items()}, now, mask)
        assert batch.names[chosen[0]] == expected, now
        assert not single.last_choice.tag_fallback and not batch.tag_fallback[0]


def test_allowed_tags_restrict_the_choice_and_fall_back_observably() -> None:
    selector = two_rivals()
    context = {"a": 0.9, "b": 0.3}
    assert selector.choose(context, now=0.0, allowed_tags=["hostile"]) == "chase"
    assert selector.last_choice is not None and not selector.last_choice.tag_fallback
    assert selector.choose(context, now=0.1, allowed_tags=["fishing"]) == "guard"
    assert selector.last_choice.tag_fallback
    # A tagged behavior scoring 0 is not available either: free choice, reported.
    assert selector.choose({"a": 0.9, "b": 0.0}, now=0.2, allowed_tags=["hostile"]) == "guard"
    assert selector.last_choice.tag_fallback
    with pytest.raises(UtilityError, match="not one string"):
        selector.choose(context, now=0.3, allowed_tags="hostile")


def test_top_n_picks_by_weight_and_is_reproducible_with_a_seed() -> None:
    behaviors = [Behavior(name, [Consideration(name, Linear())]) for name in ("a", "b", "c")]
    context = {"a": 0.6, "b": 0.3, "c": 0.1}

    def fresh_picks(seed: int) -> list[str]:
        selector = UtilitySelector(behaviors, top_n=2, seed=seed)
        picks = []
        for _ in range(3000):
            selector.reset()  # a new decision each time
            picks.append(selector.choose(context, now=0.0))
        return picks

    first = fresh_picks(11)
    assert first == fresh_picks(11)
    assert first != fresh_picks(12)
    assert "c" not in first  # only the two best take part
    assert first.count("a") / len(first) == pytest.approx(0.6 / 0.9, abs=0.03)

    # Without a reset the pick stays while it is among the two best: variety without flicker.
    selector = UtilitySelector(behaviors, top_n=2, seed=3)
    kept = [selector.choose(context, now=float(t)) for t in range(50)]
    assert len(set(kept)) == 1
    # Once it drops out (here to 0), a new pick is drawn from the new best.
    assert selector.choose({"a": 0.0, "b": 0.0, "c": 0.9}, now=50.0) == "c"


def test_time_must_not_go_backwards() -> None:
    selector = two_rivals()
    selector.choose({"a": 0.5, "b": 0.4}, now=5.0)
    with pytest.raises(UtilityError, match="backwards"):
        selector.choose({"a": 0.5, "b": 0.4}, now=4.0)
    selector.reset()
    assert selector.choose({"a": 0.5, "b": 0.4}, now=0.0) == "guard"


def test_targets_rank_per_target_and_choose_reports_the_best_target() -> None:
    attack = Behavior(
        "attack",
        [
            Consideration(
                "enemy_distance", Linear(input_min=0.0, input_max=20.0, invert=True), 0.7, per_target=True
            ),
            Consideration("ammo", Linear(), 0.3),
        ],
    )
    idle = Behavior("idle", [Consideration("boredom", Linear())])
    selector = UtilitySelector([attack, idle])
    context = {"enemy_distance": [15.0, 4.0, 10.0], "ammo": 1.0, "boredom": 0.5}
    ranked = selector.rank(context)
    assert ranked[0] == ("attack", 1, pytest.approx(0.7 * 0.8 + 0.3))
    assert [(name, target) for name, target, _ in ranked] == [
        ("attack", 1),
        ("attack", 2),
        ("idle", None),
        ("attack", 0),
    ]
    assert selector.choose(context, now=0.0) == "attack"
    assert selector.last_choice is not None and selector.last_choice.target_index == 1
    # No enemies: attack has no target to score, idle is chosen.
    assert selector.choose({**context, "enemy_distance": []}, now=1.0) == "idle"
    with pytest.raises(UtilityError, match=r"consideration 'enemy_distance'.*one per target"):
        selector.rank({**context, "enemy_distance": 4.0})
