"""`choice_repeats`, the rule that lets the engine binding answer UtilitySelector.evaluate from a
table: where it holds, a choice made again for the same inputs, at any later time, is the same and
writes nothing but `last_now` and the same scores; where it does not, a counterexample each (why
commitment, cooldowns and top_n draws are left out)."""

from __future__ import annotations

import copy
import random

import pytest

from npc_mind.utility import Behavior, Consideration, UtilitySelector
from npc_mind.utility.curves import Linear, Saturating
from npc_mind.utility.selector import choice_repeats


def state_fields(state: object) -> tuple[object, ...]:
    return (state.running, state.started, list(state.stopped))  # type: ignore[attr-defined]


def two(**settings: object) -> UtilitySelector:
    a = Behavior("a", [Consideration("x", Linear(), 1.0)], cooldown=float(settings.pop("cooldown", 0.0)))  # type: ignore[arg-type]
    b = Behavior("b", [Consideration("y", Linear(), 1.0)])
    return UtilitySelector([a, b], **settings)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(40))
def test_a_repeated_choice_is_the_same_and_writes_nothing(seed: int) -> None:
    rng = random.Random(seed)
    behaviors = [
        Behavior(
            name,
            [
                Consideration(
                    key,
                    Saturating(k=rng.uniform(0.5, 4)),
                    rng.uniform(0.2, 1.0),
                    veto_below=rng.choice([None, 0.2]),
                )
                for key in rng.sample(["p", "q", "r"], rng.randint(1, 3))
            ],
            weight=rng.uniform(0.1, 1.0),
        )
        for name in ("a", "b", "c", "d")
    ]
    selector = UtilitySelector(
        behaviors, momentum=rng.choice([0.0, 0.1, 0.9]), tie_tolerance=rng.choice([0.0, 0.05])
    )
    assert selector.repeats and choice_repeats(selector.settings, selector.cooldowns)
    state = selector.new_state()
    now = 0.0
    for _ in range(30):
        context = {key: rng.choice([0.0, 0.1, 0.5, 0.5, 2.0, 7.0]) for key in "pqr"}
        chosen = selector.pick(state, context, now)
        fields, scores = state_fields(state), list(state.scores or [])
        for later in (now, now + 0.5, now + 1000.0):
            assert selector.pick(state, context, later) == chosen
            assert state_fields(state) == fields and state.scores == scores
        now += 1000.0 + rng.random()


def test_commitment_repeats_another_choice_once_it_ends() -> None:
    selector = two(commitment=1.0, interrupt_margin=0.25)
    assert not choice_repeats(selector.settings, selector.cooldowns)
    state = selector.new_state()
    assert selector.pick(state, {"x": 0.6, "y": 0.0}, 0.0) == 0
    held = {"x": 0.6, "y": 0.7}  # b better, within the margin: a stays while committed
    assert selector.pick(state, held, 0.1) == 0
    assert selector.pick(state, held, 2.0) == 1


def test_a_cooldown_repeats_another_choice_once_it_ends() -> None:
    selector = two(cooldown=1.0)
    assert not choice_repeats(selector.settings, selector.cooldowns)
    state = selector.new_state()
    assert selector.pick(state, {"x": 0.9, "y": 0.0}, 0.0) == 0
    assert selector.pick(state, {"x": 0.0, "y": 0.5}, 0.1) == 1  # a stops: its cooldown starts
    again = {"x": 0.9, "y": 0.5}
    assert selector.pick(state, again, 0.2) == 1  # a rests
    assert selector.pick(state, again, 2.0) == 0


def test_top_n_draws_on_every_choice() -> None:
    selector = two(top_n=2, seed=3)
    assert not choice_repeats(selector.settings, selector.cooldowns)
    state = selector.new_state()
    context = {"x": 0.5, "y": 0.5}
    selector.pick(state, context, 0.0)
    before = copy.deepcopy(state.rng.bit_generator.state)  # type: ignore[union-attr]
    selector.pick(state, context, 1.0)
    assert state.rng.bit_generator.state != before  # type: ignore[union-attr]  # a skipped call would not draw
