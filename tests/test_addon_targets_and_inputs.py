"""Issue 23, items 2 and 3, in the real engine: a UtilitySelector's target from memory and the
sourced inputs of its considerations (tests/addon/target_memory.gd, sourced_inputs.gd)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.godot


def test_target_from_memory_follows_the_strongest_memory_and_outlives_its_node() -> None:
    _, checks = run_check_script(ROOT, "res://tests/addon/target_memory.gd")
    assert len(checks) == 8
