"""The addon's first slice, in the real engine: a GDScript test run headless builds a guard from the
three nodes by class name, records a theft, advances the server's manual clock, and sees awareness
fall from pursue to search to puzzled on the schedule R = e^(-t/S) gives."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

import npc_mind

ROOT = Path(__file__).resolve().parents[1]
GODOT = ROOT / ".deps" / "godot" / "godot"

pytestmark = pytest.mark.godot


def run_godot(*args: str, timeout: int = 120) -> tuple[int, list[dict], str]:
    """Run the engine on the repository's root project; returns (exit code, JSON lines, full output)."""
    if not (ROOT / ".godot" / "extension_list.cfg").is_file():
        importing = [str(GODOT), "--headless", "--path", str(ROOT), "--import"]
        subprocess.run(importing, check=False, capture_output=True, timeout=300)
    done = subprocess.run(
        [str(GODOT), "--headless", "--path", str(ROOT), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    output = done.stdout + done.stderr
    lines = []
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return done.returncode, lines, output


def test_guard_forgets_a_theft_on_the_exponential_schedule_in_the_engine() -> None:
    code, lines, output = run_godot("-s", "res://tests/addon/first_slice.gd")
    assert code == 0, output
    assert lines and lines[-1] == {"done": True}, output
    checks = [line for line in lines if "check" in line]
    failed = [line for line in checks if not line["ok"]]
    assert not failed, failed
    names = [line["check"] for line in checks]
    assert "forgotten once at the analytic time" in names
    awareness = [line["detail"]["awareness"] for line in checks if line["check"].startswith("awareness at")]
    assert awareness == [3, 3, 2, 2, 1, 1, 0]
    assert "SCRIPT ERROR" not in output and "Traceback" not in output, output


def test_plugin_version_is_the_package_version() -> None:
    text = (ROOT / "addons" / "npc_mind" / "plugin.cfg").read_text()
    assert re.search(r'^version="([^"]+)"$', text, re.M).group(1) == npc_mind.__version__
