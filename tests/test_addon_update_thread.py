"""Issue 21, item 3: the server's update on its own thread (NpcMindServer.update_on_thread), in the
real engine (tests/addon/update_thread.gd)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.godot


def test_the_update_on_its_thread_chooses_alike_one_frame_later_and_keeps_every_rule() -> None:
    run, checks = run_check_script(
        ROOT, "res://tests/addon/update_thread.gd", engine_args=("--fixed-fps", "60"), allow_errors=True
    )
    assert len(checks) == 9, checks
    errors = [line for line in run.errors() if "npc_mind:" in line]
    assert errors == run.errors(), run.log  # nothing but the mistake the update met
    assert len(errors) == 1 and "Npc3/Selector" in errors[0] and "calm" in errors[0], errors
