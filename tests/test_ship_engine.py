"""The engine side of shipping: a fresh project's first import, the provisioned engine relaunching
itself (what the editor's Play does), and exported games that run with nothing but their folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.godot import GodotRun, run_godot

REPO = Path(__file__).resolve().parents[1]
ADDON = REPO / "addons" / "npc_mind"


def _new_project(folder: Path, name: str, with_addon: bool) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "project.godot").write_text(f'config_version=5\n\n[application]\n\nconfig/name="{name}"\n')
    if with_addon:
        shutil.copytree(ADDON, folder / "addons" / "npc_mind")
    return folder


@pytest.fixture(scope="module")
def first_import(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GodotRun]:
    project = _new_project(tmp_path_factory.mktemp("fresh"), "fresh", with_addon=True)
    return project, run_godot(project, "--import", timeout=300)


@pytest.mark.godot
def test_a_fresh_projects_first_import_exits_cleanly(first_import: tuple[Path, GodotRun]) -> None:
    project, run = first_import
    assert run.returncode == 0, run.log
    assert run.errors() == [], run.log
    assert "gdbridge: Python 3.11" in run.stdout, run.log
    listed = (project / ".godot" / "extension_list.cfg").read_text()
    assert "res://addons/npc_mind/npc_mind.gdextension" in listed
