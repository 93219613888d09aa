"""Actions without code in the real engine, physics on: a behavior's on_enter, on_tick and on_exit
lists move a CharacterBody2D through its NavigationAgent2D (or straight, with no agent), set a
property, call a method, play an AnimationPlayer and an AnimatedSprite2D, emit a signal on the NPC,
and the selector emits behavior_exited / behavior_entered around them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.godot


def test_a_behavior_runs_its_actions_on_enter_tick_and_exit() -> None:
    _, checks = run_check_script(ROOT, "res://tests/addon/actions.gd", engine_args=("--fixed-fps", "60"))
    assert len(checks) == 15
