"""The addon's first slice, in the real engine: a GDScript test run headless builds a guard from the
three nodes by class name, records a theft, advances the server's manual clock, and sees awareness
fall from pursue to search to puzzled on the schedule R = e^(-t/S) gives."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import npc_mind
from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.godot


def test_guard_forgets_a_theft_on_the_exponential_schedule_in_the_engine() -> None:
    _, checks = run_check_script(ROOT, "res://tests/addon/first_slice.gd")
    assert checks["forgotten once at the analytic time"]["ok"]
    steps = [check for name, check in checks.items() if name.startswith("awareness at")]
    awareness = [check["detail"]["awareness"] for check in steps]
    assert awareness == [3, 3, 2, 2, 1, 1, 0]


def test_plugin_version_is_the_package_version() -> None:
    text = (ROOT / "addons" / "npc_mind" / "plugin.cfg").read_text()
    assert re.search(r'^version="([^"]+)"$', text, re.M).group(1) == npc_mind.__version__
