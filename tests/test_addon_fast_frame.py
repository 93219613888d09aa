"""Issue 21, item 3: frames run whole on the update thread (NpcMindServer.update_on_thread with no
main-thread Python between frames), in the real engine (tests/addon/fast_frame.gd): the same signals
in the same frames and order, and the same clock, as frames that run Python on the main thread; and
a server with no node left resting (its frames kept in C, no Python run), its clock moved alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.godot


def test_frames_on_the_update_thread_signal_and_clock_as_frames_in_python() -> None:
    _run, checks = run_check_script(
        ROOT, "res://tests/addon/fast_frame.gd", engine_args=("--fixed-fps", "60")
    )
    assert len(checks) == 8, checks
