"""The engine side of shipping: a fresh project's first import, the provisioned engine relaunching
itself (what the editor's Play does), and exported games that run with nothing but their folder."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
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
	# Written beside the marker and renamed onto it: the editor stops this game as soon as the
	# marker exists, which could be before a file written in place had its text.
	var path := OS.get_environment("NPC_MIND_TEST_MARKER")
	var marker := FileAccess.open(path + ".part", FileAccess.WRITE)
	marker.store_string("played by " + OS.get_executable_path())
	marker.close()
	DirAccess.rename_absolute(path + ".part", path)
	get_tree().quit()
"""
# An editor plugin that presses Play (F5) and quits once the game has written its marker
# (only in the editor run that names a marker: the import before it leaves it alone).
PLAY = """@tool
extends EditorPlugin
func _ready() -> void:
	set_process(OS.get_environment("NPC_MIND_TEST_MARKER") != "")
	if is_processing():
		EditorInterface.play_main_scene.call_deferred()
func _process(_delta: float) -> void:
	# Gives up after 100 s (a safety net on a loaded machine; the game normally starts in about 1 s).
	if FileAccess.file_exists(OS.get_environment("NPC_MIND_TEST_MARKER")) or Time.get_ticks_msec() > 100000:
		EditorInterface.stop_playing_scene()
		get_tree().quit()
"""


TOGGLE = """@tool
extends EditorPlugin
# Turns the npc_mind plugin on (NPC_MIND_TEST_TOGGLE=on) or off, as Project Settings > Plugins does,
# then waits until the editor has written project.godot (it saves settings a moment later).
const NPC_MIND := "res://addons/npc_mind/plugin.cfg"
var _on := OS.get_environment("NPC_MIND_TEST_TOGGLE") == "on"
func _ready() -> void:
	EditorInterface.set_plugin_enabled.call_deferred(NPC_MIND, _on)
func _process(_delta: float) -> void:
	var text := FileAccess.get_file_as_string("res://project.godot")
	# Gives up after 100 s (a safety net on a loaded machine; the editor saves within seconds).
	if ("npc_mind/plugin.cfg" in text) == _on or Time.get_ticks_msec() > 100000:
		print(JSON.stringify({"check": "toggled", "ok": true, "text": text,
			"setting": ProjectSettings.has_setting("autoload/NpcMindMonitors")}))
		get_tree().quit()
"""
LEGACY_AUTOLOAD = '\n[autoload]\n\nNpcMindMonitors="*res://addons/npc_mind/monitors.gd"\n'


@pytest.mark.godot
def test_the_plugin_adds_no_autoload_and_disabling_it_removes_the_old_one(tmp_path: Path) -> None:
    """Issue 22 (5): enabling the plugin wrote an `NpcMindMonitors` autoload into project.godot that
    the README did not mention, and that does nothing since the server registers the monitors
    itself. Enabling now writes only the plugin's own entry; disabling removes the autoload a
    project enabled with an earlier build still lists."""
    project = _new_project(tmp_path / "toggle", "toggle", with_addon=True)
    with (project / "project.godot").open("a") as settings:
        settings.write('\n[editor_plugins]\n\nenabled=PackedStringArray("res://addons/toggle/plugin.cfg")\n')
    (project / "addons" / "toggle").mkdir(parents=True)
    (project / "addons" / "toggle" / "plugin.cfg").write_text(
        '[plugin]\nname="toggle"\ndescription=""\nauthor=""\nversion="1"\nscript="plugin.gd"\n'
    )
    (project / "addons" / "toggle" / "plugin.gd").write_text(TOGGLE)
    assert run_godot(project, "--import", timeout=300).returncode == 0
    found = {}
    for toggle in ("on", "off"):
        run = run_godot(project, "-e", timeout=300, env={"NPC_MIND_TEST_TOGGLE": toggle})
        assert run.returncode == 0 and not run.errors(), run.log
        found[toggle] = run.checks().get("toggled")
        assert found[toggle] is not None, run.log
        if toggle == "on":  # a project that an earlier build's plugin gave the autoload
            with (project / "project.godot").open("a") as settings:
                settings.write(LEGACY_AUTOLOAD)
    assert "npc_mind/plugin.cfg" in found["on"]["text"], found
    assert "NpcMindMonitors" not in found["on"]["text"] and not found["on"]["setting"], found
    written = (project / "project.godot").read_text()
    assert "npc_mind/plugin.cfg" not in written and "NpcMindMonitors" not in written, written
    assert not found["off"]["setting"], found


def _provisioned_engine_in_use() -> bool:
    """Whether the launcher starts this checkout's provisioned engine, by whatever path (a shared
    `.deps/godot` names the checkout that provisioned it)."""
    from tools.provision import godot

    if not godot.ENGINE.is_file():
        return False
    named = re.findall(r'exec "([^"]+)"', godot.LAUNCHER.read_text())
    return any(Path(path).resolve() == godot.ENGINE.resolve() for path in named)


def test_the_provisioned_engine_is_a_real_executable() -> None:
    from tools.provision import elf, godot

    if not _provisioned_engine_in_use():
        pytest.skip("GODOT names the user's own engine: nothing was patched")
    loader = Path(elf.patchelf("--print-interpreter", str(godot.ENGINE)).strip())
    assert loader.resolve() == (godot.ROOT / godot.LOADER).resolve()
    searched = [Path(entry).resolve() for entry in elf.search_path(godot.ENGINE).split(":")]
    assert any(entry.is_relative_to(godot.ROOT.resolve()) for entry in searched)
    # A library's own RUNPATH hides the engine's DT_RPATH from what it loads: each must name the
    # unpacked library folders (sid's libpulse and libLLVM did not: no sound library, no software GL).
    folders = {folder.resolve() for folder in godot._lib_dirs()}
    away = {}
    for library in (godot.ROOT / godot.LIB_DIRS[0]).glob("lib*.so*"):
        if library.is_symlink() or not library.is_file() or not elf.search_path(library):
            continue
        named = {Path(entry.replace("$ORIGIN", str(library.parent))).resolve()
                 for entry in elf.search_path(library).split(":")}  # fmt: skip
        if not named <= folders:
            away[library.name] = elf.search_path(library)
    assert away == {}, away


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
    run = run_godot(project, "-e", env={"NPC_MIND_TEST_MARKER": str(marker)}, timeout=150)
    assert run.returncode == 0, run.log
    assert marker.is_file(), run.log
    assert marker.read_text().startswith("played by "), marker.read_text()


# ---- exported games: sid's templates and the engine libraries beside them ----

GAME = """extends Node
func _ready() -> void:
	print("EXPORTED GAME RAN template=%s launched_from=%s" % [OS.has_feature("template"),
		OS.get_environment("NPC_MIND_LAUNCH_DIR")])
	get_tree().quit(0)
"""
PRESETS = """[preset.0]

name="Linux"
platform="Linux"
runnable=true
export_filter="all_resources"
include_filter=""
exclude_filter=""
export_path=""

[preset.0.options]

binary_format/embed_pck=false
"""

REGISTER_ENGINE_LIBS = """@tool
extends EditorPlugin
var engine_libs: EditorExportPlugin
func _enter_tree() -> void:
	engine_libs = load("res://addons/npc_mind/export/engine_libs.gd").new()
	add_export_plugin(engine_libs)
func _exit_tree() -> void:
	remove_export_plugin(engine_libs)
"""


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, GodotRun]]:
    """A GDScript-only game with the addon's engine-libraries export plugin, exported both ways."""

    if not _provisioned_engine_in_use():
        pytest.skip("GODOT names the user's own engine: no patched templates were provisioned")
    base = tmp_path_factory.mktemp("export")
    project = _new_project(base / "game", "game", with_addon=False)
    with (project / "project.godot").open("a") as settings:
        settings.write('run/main_scene="res://main.tscn"\n\n')
        settings.write('[editor_plugins]\n\nenabled=PackedStringArray("res://addons/libs/plugin.cfg")\n')
    # The addon's export piece, registered as gdbridge's own editor plugin does (without Python here).
    shutil.copytree(ADDON / "export", project / "addons" / "npc_mind" / "export")
    (project / "addons" / "libs").mkdir(parents=True)
    (project / "addons" / "libs" / "plugin.cfg").write_text(
        '[plugin]\nname="libs"\ndescription=""\nauthor=""\nversion="1"\nscript="plugin.gd"\n'
    )
    (project / "addons" / "libs" / "plugin.gd").write_text(REGISTER_ENGINE_LIBS)
    (project / "main.tscn").write_text(MAIN_SCENE)
    (project / "main.gd").write_text(GAME)
    (project / "export_presets.cfg").write_text(PRESETS)
    assert run_godot(project, "--import").returncode == 0
    built = {}
    for kind in ("release", "debug"):
        folder = base / kind
        folder.mkdir()
        built[kind] = folder, run_godot(project, f"--export-{kind}", "Linux", str(folder / "game.x86_64"))
    # A zip export: the engine exports into a temporary folder (binary "game", no suffix) and zips it.
    (base / "zip").mkdir()
    run = run_godot(project, "--export-release", "Linux", str(base / "zip" / "game.zip"))
    if run.returncode == 0:
        shutil.unpack_archive(base / "zip" / "game.zip", base / "zip" / "unzipped")
        for unzipped in (base / "zip" / "unzipped").rglob("*"):
            unzipped.chmod(0o755)  # unpack_archive drops the modes the zip records
    built["zip"] = base / "zip" / "unzipped", run
    # Into a folder that does not exist: the engine refuses it, and nothing may be left there.
    built["no folder"] = base / "no folder", run_godot(project, "--export-release", "Linux",
                                                      str(base / "no folder" / "game.x86_64"))  # fmt: skip
    return built


@pytest.mark.godot
@pytest.mark.parametrize("kind", ["release", "debug"])
def test_an_export_carries_the_engine_libraries_and_a_launcher(
    exports: dict[str, tuple[Path, GodotRun]], kind: str
) -> None:
    from tools.provision import elf, godot

    folder, run = exports[kind]
    assert run.returncode == 0, run.log
    assert run.errors() == [], run.log
    copied = sorted(p.name for p in (folder / "lib").iterdir())
    assert copied == sorted(p.name for p in godot.EXPORT_LIBS.iterdir()), copied
    # The binary is game.bin (its pack still game.pck); game.x86_64 and game.sh start it from its folder.
    assert elf.patchelf("--print-interpreter", str(folder / "game.bin")).strip() == godot.EXPORT_LOADER
    for launcher in ("game.sh", "game.x86_64"):
        assert (folder / launcher).stat().st_mode & 0o111
        assert (folder / launcher).read_bytes().startswith(b"#!/bin/sh\n"), launcher


@pytest.mark.godot
def test_an_export_into_a_missing_folder_fails_and_writes_nothing(
    exports: dict[str, tuple[Path, GodotRun]],
) -> None:
    folder, run = exports["no folder"]
    assert run.returncode != 0, run.log
    assert any("export path doesn't exist" in line for line in run.errors()), run.log
    assert not folder.exists(), sorted(p.name for p in folder.rglob("*"))


@pytest.mark.godot
@pytest.mark.parametrize("kind", ["release", "debug", "zip"])
@pytest.mark.parametrize("started", ["game.sh", "the export's own name"])
def test_the_launcher_starts_the_game_from_any_folder(
    exports: dict[str, tuple[Path, GodotRun]], kind: str, started: str, tmp_path: Path
) -> None:
    """Issue 22 (4): the exported binary itself, started from another folder (as a store's client or
    a desktop entry starts it), said only `not found` (exit 127): only game.sh started it."""
    folder, run = exports[kind]
    assert run.returncode == 0, run.log
    # The zip's binary is "game" (no suffix): the engine exports into a folder of its own and zips it.
    name = "game" if kind == "zip" else "game.x86_64"
    command = str(folder / ("game.sh" if started == "game.sh" else name))
    done = subprocess.run([command, "--headless"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"EXPORTED GAME RAN template=true launched_from={tmp_path}" in done.stdout, done.stdout


@pytest.mark.godot
@pytest.mark.skipif(os.geteuid() != 0, reason="chroot and mount namespaces need root")
def test_the_export_runs_in_a_chroot_holding_only_its_folder(
    exports: dict[str, tuple[Path, GodotRun]], tmp_path: Path
) -> None:
    """No /usr, no /etc, no shell: only the export folder, plus the kernel's /proc (where the engine
    reads its own path) mounted in a private mount namespace."""
    folder, _ = exports["release"]
    root = tmp_path / "root"
    shutil.copytree(folder, root, symlinks=True)
    (root / "proc").mkdir()
    script = f'mount -t proc proc "{root}/proc" && exec chroot "{root}" /game.bin --headless'  # no sh there
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "EXPORTED GAME RAN template=true" in done.stdout, done.stdout + done.stderr
    # What the chroot held: the export, /proc, and the user data the game wrote under $HOME (/root).
    held = sorted(p.name for p in root.iterdir())
    assert held == ["game.bin", "game.pck", "game.sh", "game.x86_64", "lib", "proc", "root"], held


@pytest.mark.godot
@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="no xvfb-run: scripts/provision display")
def test_the_export_opens_a_window_with_the_machines_own_gl(
    exports: dict[str, tuple[Path, GodotRun]], tmp_path: Path
) -> None:
    """lib/ carries no GL stack: a windowed game uses the player's (here Debian 12's Mesa) through
    sid's loader and glibc."""
    folder, _ = exports["release"]
    command = ["xvfb-run", "-a", "-s", "-screen 0 640x480x24 -nolisten tcp", str(folder / "game.sh"),
               "--rendering-driver", "opengl3", "--audio-driver", "Dummy"]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OpenGL API" in done.stdout and "EXPORTED GAME RAN template=true" in done.stdout, done.stdout
