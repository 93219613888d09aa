"""The package is importable as a plain library, without Godot, with one version number."""

import re
import sys
from pathlib import Path

import npc_mind

ROOT = Path(__file__).resolve().parents[1]


def test_version_is_semver_and_in_changelog() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", npc_mind.__version__)
    assert f"## {npc_mind.__version__}" in (ROOT / "CHANGELOG.md").read_text()


def test_core_never_imports_godot_binding() -> None:
    assert "gdbridge" not in sys.modules
