"""The engine side of shipping: a fresh project's first import, the provisioned engine relaunching
itself (what the editor's Play does), and exported games that run with nothing but their folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.godot import GodotRun, run_check_script, run_godot

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


# ---- the provisioned engine relaunches itself (the editor's Play, `--export` children) ----

RELAUNCH = """extends SceneTree
# Starts this engine again as the editor does for Play: its own executable with engine options.
func _init() -> void:
	var out := []
	var args := ["--headless", "--path", ProjectSettings.globalize_path("res://"), "-s", "res://child.gd"]
	var code := OS.execute(OS.get_executable_path(), args, out, true)
	print(JSON.stringify({"check": "relaunch", "ok": code == 7, "code": code, "out": "".join(out)}))
	print(JSON.stringify({"done": true}))
	quit()
"""
CHILD = """extends SceneTree
func _init() -> void:
	print("CHILD RAN ", OS.get_executable_path())
	quit(7)
"""
MAIN_SCENE = """[gd_scene load_steps=2 format=3]

[ext_resource type="Script" path="res://main.gd" id="1"]

[node name="Main" type="Node"]
script = ExtResource("1")
"""
MAIN = """extends Node
func _ready() -> void:
	var marker := FileAccess.open(OS.get_environment("NPC_MIND_TEST_MARKER"), FileAccess.WRITE)
	marker.store_string("played by " + OS.get_executable_path())
	marker.close()
	get_tree().quit()
"""
# An editor plugin that presses Play (F5) and quits once the game has written its marker
# (only in the editor run that names a marker: the import before it leaves it alone).
PLAY = """@tool
extends EditorPlugin
var frames := 0
func _ready() -> void:
	set_process(OS.get_environment("NPC_MIND_TEST_MARKER") != "")
	if is_processing():
		EditorInterface.play_main_scene.call_deferred()
func _process(_delta: float) -> void:
	frames += 1
	if FileAccess.file_exists(OS.get_environment("NPC_MIND_TEST_MARKER")) or frames > 3000:
		EditorInterface.stop_playing_scene()
		get_tree().quit()
"""


def test_the_provisioned_engine_is_a_real_executable() -> None:
    from tools.provision import elf, godot

    if not godot.ENGINE.is_file():
        pytest.skip("GODOT names the user's own engine: nothing was patched")
    assert elf.patchelf("--print-interpreter", str(godot.ENGINE)).strip() == str(godot.ROOT / godot.LOADER)
    assert str(godot.ROOT) in elf.search_path(godot.ENGINE)


@pytest.mark.godot
def test_a_running_game_relaunches_the_engine(tmp_path: Path) -> None:
    project = _new_project(tmp_path / "relaunch", "relaunch", with_addon=False)
    (project / "relaunch.gd").write_text(RELAUNCH)
    (project / "child.gd").write_text(CHILD)
    _, checks = run_check_script(project, "res://relaunch.gd")
    assert "CHILD RAN " in checks["relaunch"]["out"], checks


@pytest.mark.godot
def test_play_in_the_editor_starts_the_game(tmp_path: Path) -> None:
    project = _new_project(tmp_path / "play", "play", with_addon=False)
    with (project / "project.godot").open("a") as settings:
        settings.write('run/main_scene="res://main.tscn"\n\n[editor]\n\nrun/main_run_args="--headless"\n\n')
        settings.write('[editor_plugins]\n\nenabled=PackedStringArray("res://addons/play/plugin.cfg")\n')
    (project / "main.tscn").write_text(MAIN_SCENE)
    (project / "main.gd").write_text(MAIN)
    (project / "addons" / "play").mkdir(parents=True)
    (project / "addons" / "play" / "plugin.cfg").write_text(
        '[plugin]\nname="play"\ndescription=""\nauthor=""\nversion="1"\nscript="plugin.gd"\n'
    )
    (project / "addons" / "play" / "plugin.gd").write_text(PLAY)
    marker = tmp_path / "played.txt"
    assert run_godot(project, "--import").returncode == 0
    run = run_godot(project, "-e", env={"NPC_MIND_TEST_MARKER": str(marker)})
    assert run.returncode == 0, run.log
    assert marker.is_file(), run.log
    assert marker.read_text().startswith("played by "), marker.read_text()
