"""Exported games: the demo exported with --export-release and --export-debug (the repository's own
export_presets.cfg) carries its Python runtime and runs in a chroot holding only its export folder
(no /usr, no /etc, no Python); exports that could not run fail with one clear message."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.godot import REPO, GodotRun, run_godot
from tests.test_demo_headless import assert_stories
from tools.provision import package

pytestmark = pytest.mark.godot
BINARY = "demo.x86_64"
# The demo's scripted scenario, headless and as fast as it goes (no --realtime), no model.
SCENARIO = ["--headless", "--fixed-fps", "30", "--quit-after", "4000", "--", "--out=/out"]


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, GodotRun]]:
    found = {}
    for mode in ("release", "debug"):
        folder = tmp_path_factory.mktemp(f"export_{mode}")
        found[mode] = folder, run_godot(REPO, f"--export-{mode}", "Linux", str(folder / BINARY), timeout=300)
    return found


@pytest.mark.parametrize("mode", ["release", "debug"])
def test_the_export_carries_the_runtime_beside_the_binary(exports: dict, mode: str) -> None:
    folder, run = exports[mode]
    assert run.returncode == 0, run.log
    for name in (
        BINARY,
        "demo.pck",
        "libgdbridge.linux.x86_64.so",
        "gdbridge_api.json.gz",
        "python/lib/libpython3.11.so.1.0",
        "python/lib/python3.11/site-packages/npc_mind_godot/__init__.py",
    ):
        assert (folder / name).is_file(), name
    rpath = subprocess.run(
        [package.patchelf(), "--print-rpath", str(folder / "libgdbridge.linux.x86_64.so")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert rpath == "$ORIGIN/python/lib"
    # The lean runtime (tools/provision/package.py): 97 MB before numpy without BLAS and bytecode only;
    # about 40 MB with new modules; about 33 MB without numpy's unused submodules, C modules with
    # pure twins, and with the pure-Python distributions zipped (issue 21's goal: 35, the bound).
    runtime_mb = sum(path.stat().st_size for path in (folder / "python").rglob("*") if path.is_file()) / 1e6
    assert runtime_mb <= 35, runtime_mb


def engine_binary(folder: Path) -> str:
    """The export's ELF binary: `demo.bin` where the engine's libraries came along (`demo.x86_64`
    is then a launcher script), else `demo.x86_64` itself."""
    return "demo.bin" if (folder / "demo.bin").is_file() else BINARY


def chroot_run(folder: Path, args: list[str], timeout: float = 240) -> GodotRun:
    """The exported binary in a chroot whose root is its export folder and nothing else but the
    kernel's /proc (where the engine reads its own path), mounted in a private mount namespace
    (no shell either: the ELF binary itself, not its launcher)."""
    (folder / "proc").mkdir(exist_ok=True)
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/home",
        "PYTHONHOME": "/nonexistent",
        "PYTHONPATH": "/nonexistent",
        "PYTHONSTARTUP": "/nonexistent.py",
        "NPC_MIND_LLM_URL": "",
    }
    script = (
        f"mount -t proc proc {shlex.quote(str(folder / 'proc'))} && exec chroot {shlex.quote(str(folder))} "
        + (" ".join(shlex.quote(part) for part in [f"/{engine_binary(folder)}", *args]))
    )
    try:
        done = subprocess.run(
            ["unshare", "-m", "sh", "-c", script],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=environment,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        out = error.stdout.decode() if isinstance(error.stdout, bytes) else (error.stdout or "")
        return GodotRun(-9, out, f"(timed out after {timeout} s)")
    return GodotRun(done.returncode, done.stdout, done.stderr)


@pytest.mark.parametrize("mode", ["release", "debug"])
def test_the_exported_demo_plays_its_scenario_in_a_chroot_of_its_folder(exports: dict, mode: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("chroot needs root")
    folder, export = exports[mode]
    assert export.returncode == 0, export.log
    run = chroot_run(folder, SCENARIO)
    assert run.returncode == 0, run.log
    # No shell in the chroot: the engine's own lookup of the desktop folder (xdg-user-dir through
    # /bin/sh, at start-up) fails there; a player's machine has one. Nothing else may fail.
    shell = 'Cannot create pipe from command: "xdg-user-dir"'
    run = GodotRun(
        run.returncode, run.stdout, "\n".join(line for line in run.stderr.splitlines() if shell not in line)
    )
    assert "gdbridge: Python 3.11" in run.stdout and "(/python;" in run.stdout, run.log
    assert_stories(run)
    assert (folder / "out" / "forgetting.png").is_file()  # the scene wrote its plot in the chroot


def test_the_launcher_starts_the_python_game_from_any_folder(exports: dict, tmp_path: Path) -> None:
    folder, export = exports["release"]
    assert export.returncode == 0, export.log
    launcher = folder / "demo.sh"
    if not launcher.is_file():
        pytest.skip("an engine without npc_mind's engine libraries: the binary starts directly")
    environment = {**os.environ, "PYTHONHOME": "/nonexistent", "PYTHONPATH": "/nonexistent"}
    command = [str(launcher), "--headless", "--quit-after", "5"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=environment,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"gdbridge: Python 3.11.{sys.version_info.micro} ({folder / 'python'};" in done.stdout, done.stdout


def test_the_exported_binary_starts_the_python_game_from_any_folder(exports: dict, tmp_path: Path) -> None:
    """Issue 22 (4): `demo.x86_64` started directly from another folder (as a store's client or a
    desktop entry starts it, not through `demo.sh`) said only `not found` (exit 127): its loader is
    found from the working directory. It starts the game now, from any folder, on the game's runtime."""
    folder, export = exports["release"]
    assert export.returncode == 0, export.log
    environment = {**os.environ, "PYTHONHOME": "/nonexistent", "PYTHONPATH": "/nonexistent"}
    command = [str(folder / BINARY), "--headless", "--quit-after", "5"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=environment,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"gdbridge: Python 3.11.{sys.version_info.micro} ({folder / 'python'};" in done.stdout, done.stdout


def test_a_data_only_export_beside_the_game_works(exports: dict) -> None:
    folder, export = exports["release"]
    assert export.returncode == 0, export.log
    run = run_godot(REPO, "--export-pack", "Linux", str(folder / "patch.pck"), timeout=300)
    assert run.returncode == 0, run.log
    assert (folder / "patch.pck").stat().st_size > 10_000


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("demo.pck", "needs the game's Python runtime in its folder"),
        ("demo.zip", "needs the game's Python runtime in its folder"),
        ("missing/folder/demo.pck", "goes beside an exported game, and"),
    ],
)
def test_a_data_only_export_without_the_runtime_fails_with_its_message(
    tmp_path: Path, target: str, said: str
) -> None:
    """Issue 22 (9): the .zip form exited 0 after npc_mind refused it (the engine ignores a zip it
    could not move into place), and into a missing folder the refusal left the folders it made."""
    run = run_godot(REPO, "--export-pack", "Linux", str(tmp_path / target), timeout=300)
    assert run.returncode != 0, run.log
    messages = [line for line in run.errors() if "npc_mind:" in line]
    assert len(messages) == 1 and said in messages[0], run.log
    assert list(tmp_path.iterdir()) == []  # no pack, no blocker and no folder left behind


def test_the_projects_own_python_modules_ship_with_the_game(tmp_path: Path) -> None:
    """The binding test project's python/paths (res://) module defines its classes in the export."""
    if os.geteuid() != 0:
        pytest.skip("chroot needs root")
    project = REPO / "tests" / "godot" / "binding"
    export = run_godot(project, "--export-debug", "Linux", str(tmp_path / BINARY), timeout=300)
    assert export.returncode == 0, export.log
    assert (tmp_path / "python" / "res" / "binding_classes.py").is_file()
    assert not list((tmp_path / "python" / "res").rglob("*.gd"))  # only the Python side
    # Templates take no scene or script on the command line: the project starts exported_check.tscn
    # in exported games only (run/main_scene.template).
    run = chroot_run(tmp_path, ["--headless", "--quit-after", "300"])
    assert run.checks().get("project module", {}).get("ok"), run.log


NO_TEMPLATE = "/nonexistent/template.x86_64"


@pytest.fixture(scope="module")
def zipped_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A game with the unzipped addon and the repository's export preset, plus a second preset
    whose custom templates do not exist; imported once."""
    package.provision()
    game = tmp_path_factory.mktemp("zipped") / "game"
    with zipfile.ZipFile(package.zip_path()) as archive:
        archive.extractall(game)
    (game / "project.godot").write_text('config_version=5\n\n[application]\n\nconfig/name="game"\n')
    presets = (REPO / "export_presets.cfg").read_text()
    no_template = presets.replace("[preset.0", "[preset.1").replace('name="Linux"', 'name="No template"')
    for name in ("custom_template/release", "custom_template/debug"):
        no_template = no_template.replace(f'{name}=""', f'{name}="{NO_TEMPLATE}"')
    (game / "export_presets.cfg").write_text(presets + "\n" + no_template)
    imported = run_godot(game, "--import", timeout=300)
    assert imported.returncode == 0, imported.log
    return game


def test_an_export_without_a_template_fails_with_the_engines_message(
    zipped_game: Path, tmp_path: Path
) -> None:
    run = run_godot(zipped_game, "--export-release", "No template", str(tmp_path / BINARY), timeout=300)
    assert run.returncode != 0, run.log
    assert any("template" in line.lower() for line in run.errors()), run.log
    assert not (tmp_path / BINARY).exists()


BROKEN_MODULE = "import gdbridge\n\n\ndef broken(:\n    pass\n"  # a syntax error on line 4


def test_an_export_of_python_that_does_not_compile_fails_with_its_file_and_line(
    zipped_game: Path, tmp_path: Path
) -> None:
    """Issue 22 (8): a project whose Python entry module had a syntax error exported with exit 0,
    and the game then failed with `Cannot get class`. Both export forms now fail with one message
    naming the file and line, and leave nothing."""
    folder = zipped_game / "game_python"
    folder.mkdir()
    (folder / "game_classes.py").write_text(BROKEN_MODULE)
    project = zipped_game / "project.godot"
    original = project.read_text()
    project.write_text(
        original + '\n[python]\n\npaths=PackedStringArray("res://game_python")\n'
        'entry_modules=PackedStringArray("game_classes")\n'
    )
    try:
        for export in (("--export-release", "Linux", str(tmp_path / BINARY)),
                       ("--export-pack", "Linux", str(tmp_path / "game.pck"))):  # fmt: skip
            run = run_godot(zipped_game, *export, timeout=300)
            assert run.returncode != 0, run.log
            messages = [line for line in run.errors() if "npc_mind:" in line]
            assert len(messages) == 1, run.log
            assert "res://game_python/game_classes.py:4 has a syntax error" in messages[0], run.log
            assert list(tmp_path.iterdir()) == [], export
    finally:
        project.write_text(original)
        shutil.rmtree(folder)


def test_an_export_missing_a_runtime_file_fails_with_its_message(zipped_game: Path, tmp_path: Path) -> None:
    # Last in this module: it breaks the game's addon.
    shutil.rmtree(zipped_game / "addons/npc_mind/bin/python/lib/python3.11/site-packages/npc_mind_godot")
    run = run_godot(zipped_game, "--export-release", "Linux", str(tmp_path / BINARY), timeout=300)
    assert run.returncode != 0, run.log
    messages = [line for line in run.errors() if "npc_mind:" in line]
    assert len(messages) == 1 and "the addon's Python runtime is incomplete" in messages[0], run.log
    assert "npc_mind_godot" in messages[0], run.log
    assert not (tmp_path / BINARY).exists()
