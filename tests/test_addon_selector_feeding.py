"""The batched path fed per node in the real engine: `UtilitySelector.set_input` from each guard's
own `_process`, the choice made at the end of that frame (its signal in that frame) and read as
`choice`, equal to the Dictionary path's for the same inputs (tests/addon/pernode_batched.gd)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.godot


def test_nodes_feed_the_batch_and_read_their_choice_in_the_same_frame() -> None:
    _, checks = run_check_script(ROOT, "res://tests/addon/pernode_batched.gd")
    assert len(checks) == 4
