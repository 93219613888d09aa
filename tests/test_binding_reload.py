"""gdbridge reloads Python edits in the open editor: the headless editor runs
tests/godot/binding_reload/driver.tscn, whose tool node has reload_classes.py rewritten on disk and
sees the same object run the new code (through ClassDB and from Python), its property value kept,
and the method and export it adds registered by the engine's library reload."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.godot import GodotRun, run_godot

PROJECT = Path(__file__).resolve().parent / "godot" / "binding_reload"
MODULE = PROJECT / "reload_classes.py"
VERSION_1 = MODULE.read_text() if MODULE.is_file() else ""  # as committed; written back after the run
VERSION_2 = '''"""Version 2, written by tests/test_binding_reload.py."""

from __future__ import annotations

import gdbridge as gd
from gdbridge.classes import Node


class Greeting:
    def greet(self) -> str:
        return "hello 2"


class Reloadable(Greeting, Node, tool=True):
    level: int = gd.export(7)
    bonus: int = gd.export(5)

    def answer(self, x: int) -> int:
        return x * 3

    def extra(self) -> int:
        return 1

    def _to_string(self) -> str:
        return "version 2"
'''


@pytest.fixture(scope="module")
def edited(tmp_path_factory: pytest.TempPathFactory) -> GodotRun:
    source = tmp_path_factory.mktemp("reload") / "reload_classes_v2.py"
    source.write_text(VERSION_2)
    original = VERSION_1
    if '"""Version 2' in original:  # a run killed before it put version 1 back
        original = subprocess.run(
            ["git", "show", "HEAD:tests/godot/binding_reload/reload_classes.py"],
            capture_output=True, text=True, check=True, cwd=PROJECT,
        ).stdout  # fmt: skip
        MODULE.write_text(original)
    try:
        return run_godot(
            PROJECT, "-e", "res://driver.tscn", "--quit-after", "100000",
            env={"GDBRIDGE_RELOAD_SOURCE": str(source)}, timeout=90,
        )  # fmt: skip
    finally:
        MODULE.write_text(original)


@pytest.mark.godot
def test_the_same_object_runs_the_new_code(edited: GodotRun) -> None:
    results = [line for line in edited.json_lines() if "before" in line]
    assert results, edited.log
    before, after = results[-1]["before"], results[-1]["after"]
    assert before == {"engine_call": 11, "python_call": 11, "to_string": "version 1", "level": 9,
                      "is_instance": True, "mixin": "hello 1", "extra": None, "bonus": None,
                      "same_object": True}, edited.log  # fmt: skip
    assert after == {"engine_call": 30, "python_call": 30, "to_string": "version 2", "level": 9,
                     "is_instance": True, "mixin": "hello 2", "extra": 1, "bonus": 5,
                     "same_object": True}, edited.log  # fmt: skip
    assert "gdbridge: reloaded reload_classes" in edited.stdout, edited.log


@pytest.mark.godot
def test_a_changed_class_reloads_the_library(edited: GodotRun) -> None:
    """A method and an export added: the engine's GDExtension reload registers them (the Python
    objects, their state and the instances' property values stay), no restart asked for."""
    text = edited.stdout + edited.stderr
    wanted = ("gdbridge: reloading the library for Reloadable.bonus (export) added or removed; "
              "Reloadable.extra() added or removed")  # fmt: skip
    assert wanted in edited.stdout, edited.log
    assert "restart the editor" not in text, edited.log
    assert "leaked at exit" not in text and "ERROR" not in text, edited.log
    assert edited.returncode == 0, edited.log
