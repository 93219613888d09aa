"""Per-memory signals off for crowds, in the real engine: a MemoryStream with `emit_signals = false`
emits no memory signal while its events still come through `NpcMindServer.drain_memory_events()`
(one batched read of packed arrays); a stream with signals on behaves as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.godot


def test_a_quiet_stream_emits_no_signals_and_its_events_are_in_the_batched_read() -> None:
    run, checks = run_check_script(ROOT, "res://tests/addon/memory_events.gd")
    assert len(checks) == 9
    assert "leaked" not in run.stdout + run.stderr, run.log
