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


def test_selector_calls_from_a_thread_are_refused_naming_the_method() -> None:
    """The per-frame calls check the thread rule in the node itself (no call into the server on
    the main thread's path); off the main thread each raises the same WrongThreadError as `core()`."""
    run, checks = run_check_script(ROOT, "res://tests/addon/selector_threads.gd", allow_errors=True)
    assert len(checks) == 2
    errors = run.errors()
    refused = [line for line in errors if "WrongThreadError" in line and "non-main thread" in line]
    assert refused == errors, run.log  # nothing but the refusals
    named = [line.split("WrongThreadError: ")[1].split("()")[0] for line in refused]
    assert named == [
        "UtilitySelector.evaluate", "UtilitySelector.set_input", "UtilitySelector.set_inputs",
        "UtilitySelector.get_choice",
    ], named  # fmt: skip
