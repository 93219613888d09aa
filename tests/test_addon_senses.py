"""The senses in the real engine, physics on (`--fixed-fps 60`: one physics step a frame, so areas
report their bodies on time): sight 2D and 3D (occluders, the cone, the range, rules, the rate, the
last seen position), hearing (attenuated salience, occluders, out of range), touch (a body
entering), and bad configuration (warnings; one error per node and cause, the senses keep working)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]
PHYSICS_EACH_FRAME = ("--fixed-fps", "60")

pytestmark = pytest.mark.godot


@pytest.mark.parametrize(
    ("script", "checks_expected"),
    [("senses_sight_2d", 18), ("senses_sight_3d", 13), ("senses_hearing_touch", 13)],
)
def test_senses_record_what_they_perceive(script: str, checks_expected: int) -> None:
    run, checks = run_check_script(ROOT, f"res://tests/addon/{script}.gd", engine_args=PHYSICS_EACH_FRAME)
    assert len(checks) == checks_expected, checks
    assert "leaked" not in run.stdout + run.stderr, run.log


def test_a_sight_recalls_a_target_coming_into_view() -> None:
    _, checks = run_check_script(ROOT, "res://tests/addon/senses_recall.gd", engine_args=PHYSICS_EACH_FRAME)
    assert len(checks) == 6, checks


def test_bad_configuration_is_one_warning_and_one_error_per_cause_and_the_senses_keep_working() -> None:
    run, checks = run_check_script(
        ROOT, "res://tests/addon/senses_mistakes.gd", engine_args=PHYSICS_EACH_FRAME, allow_errors=True
    )
    assert len(checks) == 12, checks
    errors = [line for line in run.errors() if "npc_mind:" in line]
    expected = [
        "/root/Lonely/@SightSense2D@2: rule 0 is empty. Fix: set a SenseRule",
        "/root/Lonely/@SightSense2D@2: rule 1 has no group",
        "/root/Lonely/@SightSense2D@2: this sense has no MemoryStream sibling",
        "/root/NotSpatial/@SightSense2D@4: the parent must be a Node2D",
    ]
    for text in expected:  # over 40 checks of each sense: each once
        assert sum(text in line for line in errors) == 1, (text, errors)
    assert len(errors) == len(expected), errors
    bad_stimulus = [line for line in run.errors() if "a memory type is a code 0..4" in line]
    assert len(bad_stimulus) == 1, run.log  # the bad emit_stimulus call: its clear error, once
