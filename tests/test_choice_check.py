"""The kernel's check of a repeated choice (`compiled.ChoiceCheck`, `mk_choice_holds`), which lets
the engine binding answer UtilitySelector.evaluate in C for numbers other than the last choice's:
at each dispatch level, over random definitions of every family (with momentum and tie tolerances)
and random inputs, whenever the check says the running behavior holds, the per-NPC path (the
generated Python decision, scoring with math's functions) chooses it too; it holds often enough to
matter, and says no at a near tie, for a value that is not finite, and for an answer out of range."""

from __future__ import annotations

import math

import numpy as np
import pytest

from npc_mind.utility import Behavior, Consideration, UtilitySelector, compiled
from npc_mind.utility.curves import Linear, Saturating
from tests.support.memory_kernel import forced_kernel
from tests.test_utility_kernel import COMPILED, KEYS, every_family, random_behaviors, wild


def checked(selector: UtilitySelector) -> compiled.ChoiceCheck:
    settings = selector.settings
    check = compiled.choice_check(selector.scorer, settings.momentum, settings.tie_tolerance)
    assert check is not None, "the kernel does not score this definition"
    return check


def python_choice(selector: UtilitySelector, running: int, context: dict[str, float]) -> int:
    """The per-NPC path's choice for `context` of a selector whose running behavior is `running`."""
    state = selector.new_state()
    state.running, state.started = running, 0.0
    return selector.pick(state, context, 1.0)


@pytest.mark.parametrize("level", COMPILED)
@pytest.mark.parametrize("seed", range(12))
def test_a_checked_choice_is_the_per_npc_choice(level: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    if seed % 3 == 0:
        behaviors = every_family(rng)
    else:
        behaviors = random_behaviors(rng, per_target=False, unweighted=seed % 2 == 0)
    selector = UtilitySelector(
        behaviors, momentum=float(rng.choice([0.0, 0.1, 0.9])), tie_tolerance=float(rng.choice([0.0, 0.05]))
    )
    assert selector.repeats
    keys = selector.scorer.keys
    held = 0
    with forced_kernel(level):
        check = checked(selector)
        for trial in range(400):
            # plain numbers most of the time (what a game gives), wild ones sometimes
            values = rng.uniform(-0.5, 2.0, len(keys)) if trial % 4 else wild(rng, (len(keys),))
            context = dict(zip(keys, values.tolist(), strict=True))
            running = int(rng.integers(0, len(selector.names)))
            if check.holds(values, running):
                held += 1
                assert python_choice(selector, running, context) == running, (context, running)
    assert held > 0, "the check never held: it would answer nothing"


def two_behaviors(momentum: float = 0.0, tie_tolerance: float = 0.0) -> UtilitySelector:
    a = Behavior("a", [Consideration("x", Saturating(k=1.0), 1.0)])
    b = Behavior("b", [Consideration("y", Linear(), 1.0)])
    return UtilitySelector([a, b], momentum=momentum, tie_tolerance=tie_tolerance)


@pytest.mark.parametrize("level", COMPILED)
def test_the_check_says_no_near_a_tie_and_for_what_it_cannot_score(level: str) -> None:
    selector = two_behaviors()
    with forced_kernel(level):
        check = checked(selector)
        assert check.holds([1.0, 0.2], 0)  # a: 0.5, b: 0.2
        assert not check.holds([1.0, 0.2], 1)  # b would lose to a
        assert not check.holds([1.0, 0.5], 0)  # a tie: the per-NPC path's last bits decide
        assert not check.holds([1.0, 0.5 - 1e-12], 0)  # within the guard
        assert check.holds([1.0, 0.5 - 1e-6], 0)
        assert not check.holds([0.0, 0.0], 0)  # a running behavior at 0 is not kept
        for bad in (math.nan, math.inf, -math.inf):
            assert not check.holds([bad, 0.2], 0)
            assert not check.holds([1.0, bad], 0)
        assert not check.holds([1.0, 0.2], 2)
        assert not check.holds([1.0, 0.2], -1)


@pytest.mark.parametrize("level", COMPILED)
def test_momentum_and_tie_tolerance_keep_the_running_behavior(level: str) -> None:
    with forced_kernel(level):
        # b at 0.3 x 1.5 = 0.45 stays against a's 0.4 with momentum, not without
        assert checked(two_behaviors(momentum=0.5)).holds([2.0 / 3.0, 0.3], 1)
        assert not checked(two_behaviors()).holds([2.0 / 3.0, 0.3], 1)
        # within the tolerance: b at 0.3 stays against a's 0.33
        assert checked(two_behaviors(tie_tolerance=0.05)).holds([0.33 / 0.67, 0.3], 1)
        for holds, momentum, tie, values in (
            (True, 0.5, 0.0, [2.0 / 3.0, 0.3]),
            (True, 0.0, 0.05, [0.33 / 0.67, 0.3]),
        ):
            selector = two_behaviors(momentum, tie)
            context = dict(zip(("x", "y"), values, strict=True))
            assert python_choice(selector, 1, context) == (1 if holds else 0)


def test_no_check_where_the_kernel_does_not_score() -> None:
    selector = two_behaviors()
    with forced_kernel("numpy"):
        assert compiled.choice_check(selector.scorer, 0.0, 0.0) is None
    many = UtilitySelector(
        [Behavior("a", [Consideration(f"k{i}", Linear(), 1.0) for i in range(compiled.MAX_CHECK_KEYS + 1)])]
    )
    assert compiled.choice_check(many.scorer, 0.0, 0.0) is None
    assert len(KEYS) <= compiled.MAX_CHECK_KEYS
