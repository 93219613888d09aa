"""Each anti-dithering rule of `npc_mind.utility.selector` against its definition with hand-computed
values, on floats (the per-NPC `decide_one`) and arrays (the batch `decide`), same bits on both."""

from __future__ import annotations

import numpy as np

from npc_mind.utility.selector import (
    AntiDithering,
    boosted,
    cooling,
    keeps_running,
    pick_index,
    switch_margin,
    within_top_n,
)


def test_momentum_boosts_the_running_score() -> None:
    assert boosted(0.5, 0.2) == 0.6
    got = boosted(np.array([0.5, 0.25]), 0.2)
    assert got.tolist() == [0.6, 0.3]
    assert [boosted(x, 0.2) for x in (0.5, 0.25)] == got.tolist()


def test_cooldown_holds_a_stopped_behaviour_for_its_seconds() -> None:
    assert cooling(10.0, 9.5, 1.0)
    assert not cooling(10.0, 9.0, 1.0)  # exactly the cooldown: ready again
    assert not cooling(10.0, -np.inf, 1.0)  # never stopped
    stopped = np.array([9.5, 9.0, -np.inf])
    assert cooling(10.0, stopped, 1.0).tolist() == [True, False, False]


def test_commitment_raises_the_margin_until_it_expires() -> None:
    settings = AntiDithering(tie_tolerance=0.05, commitment=2.0, interrupt_margin=0.25)
    assert switch_margin(11.0, 10.0, settings) == 0.25  # within the commitment
    assert switch_margin(12.0, 10.0, settings) == 0.05  # 2 s after the start: expired
    assert switch_margin(11.0, np.array([10.0, 8.0]), settings).tolist() == [0.25, 0.05]
    assert switch_margin(11.0, 10.0, AntiDithering(tie_tolerance=0.05)) == 0.05  # no commitment
    small = AntiDithering(tie_tolerance=0.3, commitment=2.0, interrupt_margin=0.1)
    assert switch_margin(11.0, 10.0, small) == 0.3  # the larger of the two


def test_the_running_behaviour_stays_unless_beaten_by_more_than_the_margin() -> None:
    assert keeps_running(0.6, 0.5, 0.1)  # 0.6 <= 0.5 + 0.1
    assert not keeps_running(0.61, 0.5, 0.1)
    assert not keeps_running(0.0, 0.0, 0.1)  # a running behaviour at 0 is dropped
    best, running = np.array([0.6, 0.61, 0.0]), np.array([0.5, 0.5, 0.0])
    assert keeps_running(best, running, 0.1).tolist() == [True, False, False]
    assert keeps_running(best, running, np.array([0.1, 0.2, 0.1])).tolist() == [True, True, False]


def test_top_n_keeps_a_pick_while_it_is_among_the_n_best_and_clamps_the_draw() -> None:
    assert within_top_n(2, 3) and not within_top_n(3, 3)
    assert within_top_n(np.array([0, 2, 3]), 3).tolist() == [True, True, False]
    assert pick_index(5, 3) == 2 and pick_index(1, 3) == 1
    assert pick_index(np.array([0, 1, 5]), 3).tolist() == [0, 1, 2]
