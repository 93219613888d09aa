"""What the engine benchmarks share: the provisioned Godot they run, and its version for their headers."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GODOT = ROOT / ".deps" / "godot" / "godot"


def engine_version() -> str:
    """The engine's own version line (`godot --version`)."""
    done = subprocess.run([str(GODOT), "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip().splitlines()[-1]
