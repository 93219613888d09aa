"""Run headless Godot on a project and read what its GDScript printed as JSON lines.

    run = run_godot(PROJECT, "-s", "res://checks.gd")
    assert run.returncode == 0, run.log
    checks = run.checks()          # {"name": {"check": "name", "ok": true, ...}} from {"check": ...} lines

The engine comes from `scripts/provision godot` (`.deps/godot/godot`, or the `GODOT` engine it wraps).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / ".deps" / "godot" / "godot"


def godot_command() -> list[str]:
    if not LAUNCHER.is_file():
        raise RuntimeError("no engine: run scripts/provision godot gdextension first")
    return [str(LAUNCHER)]


@dataclasses.dataclass
class GodotRun:
    returncode: int
    stdout: str
    stderr: str

    @property
    def log(self) -> str:
        """Everything the engine printed (for assertion messages)."""
        return f"--- stdout\n{self.stdout[-6000:]}\n--- stderr\n{self.stderr[-6000:]}"

    def json_lines(self) -> list[dict[str, Any]]:
        found = []
        for raw in self.stdout.splitlines():
            line = raw.strip()
            if line.startswith("{") and line.endswith("}"):
                try:
                    found.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return found

    def checks(self) -> dict[str, dict[str, Any]]:
        """`{"check": name, "ok": bool, ...}` lines by name (the last one wins)."""
        return {line["check"]: line for line in self.json_lines() if "check" in line}

    def errors(self) -> list[str]:
        """Engine error lines ("ERROR: ...", "SCRIPT ERROR: ...") from both streams."""
        lines = (self.stdout + "\n" + self.stderr).splitlines()
        return [line for line in lines if line.lstrip().startswith(("ERROR:", "SCRIPT ERROR:"))]


def run_godot(
    project: Path, *args: str, timeout: float = 120, env: dict[str, str] | None = None, headless: bool = True
) -> GodotRun:
    """`godot [--headless] --path PROJECT ARGS...`; never raises on a non-zero exit (the test asserts)."""
    command = [*godot_command(), *(["--headless"] if headless else []), "--path", str(project), *args]
    merged = {**os.environ, **(env or {})}
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=merged, check=False
        )
    except subprocess.TimeoutExpired as error:
        out = error.stdout.decode() if isinstance(error.stdout, bytes) else (error.stdout or "")
        err = error.stderr.decode() if isinstance(error.stderr, bytes) else (error.stderr or "")
        return GodotRun(-9, out, err + f"\n(timed out after {timeout} s)")
    return GodotRun(done.returncode, done.stdout, done.stderr)


def run_check_script(
    project: Path,
    script: str,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    *,
    engine_args: tuple[str, ...] = (),
    allow_errors: bool = False,
) -> tuple[GodotRun, dict[str, dict[str, Any]]]:
    """Run a GDScript check script (`-s res://...`) that prints `{"check": ...}` lines and ends with
    `{"done": true}`; asserts it finished with every check ok and (unless `allow_errors`: the caller
    checks the errors it provokes) no engine errors."""
    run = run_godot(project, *engine_args, "-s", script, env=env, timeout=timeout)
    return run, checked(run, allow_errors=allow_errors)


def checked(run: GodotRun, *, allow_errors: bool = False) -> dict[str, dict[str, Any]]:
    """The checks of a run that printed `{"check": ...}` lines and ended with `{"done": true}`;
    asserts it exited 0 with every check ok and (unless `allow_errors`) no engine errors."""
    assert run.returncode == 0, run.log
    assert run.json_lines() and run.json_lines()[-1] == {"done": True}, run.log
    checks = run.checks()
    assert {name for name, check in checks.items() if not check["ok"]} == set(), checks
    assert allow_errors or not run.errors(), run.log
    return checks


def engine_version() -> str:
    done = subprocess.run([*godot_command(), "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "unknown"
