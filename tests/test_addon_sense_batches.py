"""The senses' due checks run in batches (npc_mind_godot.senses.BATCHES_HZ), in the real engine
under --fixed-fps 60: every other frame for 10 Hz senses, every frame once one sees at 60 Hz; each
sense keeps its rate (tests/addon/senses_batches.gd)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.godot


def test_due_checks_run_in_batches_and_each_sense_keeps_its_rate() -> None:
    script = "res://tests/addon/senses_batches.gd"
    _run, checks = run_check_script(ROOT, script, engine_args=("--fixed-fps", "60"))
    assert len(checks) == 4, checks
