"""Faults inside Python (raising hooks, wrong argument or result types, freed objects) from typed
and untyped GDScript: tests/godot/binding/faults.gd runs to the end, each fault reported with its
Python traceback, the engine never crashing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.godot import GodotRun, run_godot

PROJECT = Path(__file__).resolve().parent / "godot" / "binding"


@pytest.fixture(scope="module")
def run() -> GodotRun:
    return run_godot(PROJECT, "-s", "res://faults.gd", timeout=60)


@pytest.mark.godot
def test_runs_to_the_end(run: GodotRun) -> None:
    assert run.returncode == 0, run.log
    assert run.json_lines()[-1] == {"done": True}, run.log
    assert all(check["ok"] for check in run.checks().values()), run.checks()


@pytest.mark.godot
@pytest.mark.parametrize(
    "reported",
    [
        "ValueError: broken property list",
        "ValueError: broken get anything",
        "ValueError: broken set anything",
        "ValueError: broken postinitialize",
        "Cannot convert argument 1 from String to int",
        "Cannot convert argument 1 from float to int",
        "Object instance was freed",
        "TypeError: a container of int cannot hold 'not' (String)",
        "TypeError: 'str' object cannot be interpreted as an integer",
        "RecursionError: a list that contains itself cannot be converted to an Array",
        "RecursionError: a dict that contains itself cannot be converted to a Dictionary",
        "ValueError: broken frame hook",
    ],
)
def test_each_fault_is_reported_with_its_traceback(run: GodotRun, reported: str) -> None:
    text = run.stdout + run.stderr
    assert reported in text, run.log
    assert "Traceback (most recent call last)" in text, run.log


@pytest.mark.godot
def test_a_frame_hook_failing_every_frame_prints_one_traceback(run: GodotRun) -> None:
    text = run.stdout + run.stderr
    assert text.count("ValueError: broken frame hook") == 1, run.log
    assert run.checks()["frame_hook_repeats_counted"]["ok"], run.checks()
