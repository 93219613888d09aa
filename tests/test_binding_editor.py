"""gdbridge in the editor: the headless editor opens a scene with Python classes without errors, only
tool classes run game virtuals there (exports: tests/test_ship_export.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.godot import GodotRun, run_godot

PROJECT = Path(__file__).resolve().parent / "godot" / "binding"


@pytest.fixture(scope="module")
def editor() -> GodotRun:
    return run_godot(PROJECT, "--verbose", "-e", "res://editor_scene.tscn", "--quit-after", "60")


@pytest.mark.godot
def test_editor_opens_without_errors(editor: GodotRun) -> None:
    assert editor.returncode == 0, editor.log
    assert "gdbridge: Python 3.11" in editor.stdout, editor.log
    assert editor.errors() == [], editor.log
    assert "leaked at exit" not in editor.stdout + editor.stderr, editor.log


@pytest.mark.godot
def test_only_tool_classes_run_game_virtuals_in_the_editor(editor: GodotRun) -> None:
    ran = {line["editor_virtual"]: line["editor"] for line in editor.json_lines() if "editor_virtual" in line}
    assert ran == {"ToolProbe._ready": True}, editor.log


@pytest.mark.godot
def test_configuration_warnings_run_in_the_editor_for_any_class(editor: GodotRun) -> None:
    asked = [line for line in editor.json_lines() if line.get("editor_warnings") == "GameOnly"]
    assert asked and all(line["editor"] for line in asked), editor.log
