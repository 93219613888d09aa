"""The local model shipped with a game, as a game developer on another machine gets it: the addon's
`-with-model` zip (scripts/package --with-model) unzipped into a fresh project whose guard asks an
AsyncLLMDecision, with `npc_mind/llm/start_local_model` on. Played from the editor binary it starts
the addon's own llama-server; exported with the preset option `npc_mind/ship_local_model` it starts
the one beside the executable, with the checkout, `.venv`, `.deps` and the build machine's Python
hidden; exported without the option it carries nothing of the model and says so when asked to start it.
One import and two exports serve every test (module fixtures)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from npc_mind.llm.local_server import SHIPPED_DIR, SHIPPED_MODEL, SHIPPED_SERVER
from tests.support.godot import REPO, GodotRun, run_godot
from tests.support.ship import can_isolate, isolated_run
from tools.provision import package
from tools.provision.debian import ProvisionError

pytestmark = [pytest.mark.godot, pytest.mark.llm]
SCENE = Path(__file__).resolve().parent / "ship"
BINARY = "game.x86_64"
WITH_MODEL = "Linux with model"
# Whatever the player's shell has, the game decides by its own project setting and shipped files.
PLAYER_ENV = {
    "NPC_MIND_LLM_URL": "",
    "NPC_MIND_START_LOCAL_MODEL": "",
    "NPC_MIND_LLAMA_SERVER": "",
    "NPC_MIND_LLM_MODEL_FILE": "",
}
STARTED = re.compile(r"npc_mind: local model \S+\.gguf at http://127\.0\.0\.1:\d+/v1 \((\S+)\)")


@pytest.fixture(scope="module")
def zips() -> dict[bool, Path]:
    """Both zips: the default one and the one with bin/llama/ (built, or reused when unchanged)."""
    package.provision()
    try:
        package.bundle_local_model()
    except ProvisionError as error:
        pytest.skip(f"the local model cannot be bundled here: {error}")
    return {False: package.current_zip(False), True: package.current_zip(True)}


@pytest.fixture(scope="module")
def game(zips: dict[bool, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh project with the unzipped -with-model addon, the model switched on, and two presets
    (the repository's "Linux", and WITH_MODEL: the same with the option on); imported once."""
    folder = tmp_path_factory.mktemp("model_game") / "game"
    with zipfile.ZipFile(zips[True]) as archive:
        archive.extractall(folder)  # drops the permission bits, as Godot's asset installer does
    for name in ("local_model.gd", "local_model.tscn"):
        shutil.copy2(SCENE / name, folder / name)
    (folder / "project.godot").write_text(
        'config_version=5\n\n[application]\n\nconfig/name="model game"\nrun/main_scene="res://local_model.tscn"\n'
        "\n[npc_mind]\n\nllm/start_local_model=true\n"
    )
    presets = (REPO / "export_presets.cfg").read_text()
    with_model = presets.replace("[preset.0", "[preset.1").replace('name="Linux"', f'name="{WITH_MODEL}"')
    (folder / "export_presets.cfg").write_text(
        presets + "\n" + with_model + "npc_mind/ship_local_model=true\n"
    )
    imported = run_godot(folder, "--import", timeout=300)
    assert imported.returncode == 0, imported.log
    return folder


@pytest.fixture(scope="module")
def exports(game: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[bool, tuple[Path, GodotRun]]:
    found = {}
    for shipped, preset in ((True, WITH_MODEL), (False, "Linux")):
        folder = tmp_path_factory.mktemp("model_export" if shipped else "plain_export")
        found[shipped] = (
            folder,
            run_godot(game, "--export-release", preset, str(folder / BINARY), timeout=300),
        )
    return found


def _start_command(folder: Path) -> list[str]:
    """The exported game as a player starts it: its launcher when the engine needs its libraries."""
    launcher = folder / "game.sh"
    return [str(launcher if launcher.is_file() else folder / BINARY), "--headless"]


def _answered_or_skip(run: GodotRun) -> None:
    """The model's answer applied, or (only when it came too late on a loaded machine) a skip that
    says the measured latency; any other outcome fails."""
    checks = run.checks()
    assert checks.get("one decision signal", {}).get("ok"), run.log
    ended = checks["one decision signal"]["detail"][0]
    if ended.get("fallback") == "timeout":
        pytest.skip(f"the model answered too late on this machine: {ended}")
    assert checks["the model's answer was applied"]["ok"], (ended, run.log)


def test_the_default_zip_has_no_model_and_the_other_one_carries_it(zips: dict[bool, Path]) -> None:
    folder = f"addons/npc_mind/bin/{SHIPPED_DIR}/"
    with zipfile.ZipFile(zips[False]) as archive:
        assert not [name for name in archive.namelist() if name.startswith(folder) or name.endswith(".gguf")]
    with zipfile.ZipFile(zips[True]) as archive:
        names = set(archive.namelist())
    for name in (SHIPPED_SERVER, SHIPPED_MODEL, "ld-linux-x86-64.so.2", "libllama.so.0", ".gdignore"):
        assert folder + name in names, name
    assert any(re.fullmatch(re.escape(folder) + r"libggml-cpu-\w+\.so", name) for name in names)


def test_the_shipped_server_needs_nothing_of_the_build_machine(tmp_path: Path) -> None:
    """A chroot holding only a copy of bin/llama/ (no /usr, no /lib): every library the server needs
    resolves inside it, and it runs."""
    if os.geteuid() != 0:
        pytest.skip("chroot needs root")
    package.bundle_local_model()
    root = tmp_path / "llama"
    shutil.copytree(package.LOCAL_MODEL, root, ignore=shutil.ignore_patterns("models"))
    (root / "proc").mkdir()
    chroot = f"mount -t proc proc {shlex.quote(str(root / 'proc'))} && exec chroot {shlex.quote(str(root))}"
    command = f"{chroot} /ld-linux-x86-64.so.2 --list /{SHIPPED_SERVER}"
    listed = subprocess.run(["unshare", "-m", "sh", "-c", command],
                            capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert listed.returncode == 0, listed.stdout + listed.stderr
    resolved = re.findall(r"=> (\S+)", listed.stdout)
    assert len(resolved) > 10 and all(path.count("/") == 1 for path in resolved), listed.stdout  # all at /
    version = subprocess.run(["unshare", "-m", "sh", "-c", f"{chroot} /{SHIPPED_SERVER} --version"],
                             capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert version.returncode == 0 and "version:" in version.stdout + version.stderr, version.stderr


def test_played_from_the_editor_binary_the_game_starts_the_addons_own_model(game: Path) -> None:
    run = run_godot(game, "res://local_model.tscn", env=PLAYER_ENV, timeout=180)
    assert run.returncode == 0, run.log
    started = STARTED.search(run.stdout)
    assert started and started.group(1) == str(game / "addons/npc_mind/bin" / SHIPPED_DIR / SHIPPED_SERVER), (
        run.log
    )
    _answered_or_skip(run)


def test_an_export_without_the_option_carries_nothing_of_the_model(exports: dict) -> None:
    folder, run = exports[False]
    assert run.returncode == 0, run.log
    assert (folder / BINARY).is_file() and (folder / "python").is_dir()
    assert not (folder / SHIPPED_DIR).exists()
    files = [path for path in folder.rglob("*") if path.is_file()]
    assert not [
        path
        for path in files
        if path.suffix == ".gguf" or re.match(r"lib(llama|ggml)|llama-server", path.name)
    ]
    pack = (folder / "game.pck").read_bytes()
    assert b"GGUF" not in pack and SHIPPED_SERVER.encode() not in pack


def test_the_opted_in_export_carries_the_server_and_the_model(exports: dict) -> None:
    folder, run = exports[True]
    assert run.returncode == 0, run.log
    shipped = folder / SHIPPED_DIR
    assert (shipped / SHIPPED_MODEL).stat().st_size == (package.LOCAL_MODEL / SHIPPED_MODEL).stat().st_size
    for name in (SHIPPED_SERVER, "ld-linux-x86-64.so.2"):
        assert os.access(shipped / name, os.X_OK), name


def _play_isolated(exports: dict, shipped: bool, scratch: Path) -> tuple[Path, GodotRun, list[str]]:
    """The export played as on a player's machine (the checkout, `.venv`, `.deps` and every Python
    hidden); its folder, the run (exit 0) and the files it opened."""
    reason = can_isolate()
    if reason:
        pytest.skip(reason)
    folder, export = exports[shipped]
    assert export.returncode == 0, export.log
    run, opened = isolated_run(_start_command(folder), scratch, timeout=240, env=PLAYER_ENV)
    assert run.returncode == 0, run.log
    return folder, run, opened


def test_the_exported_game_starts_its_own_model_on_a_machine_without_the_checkout(
    exports: dict, tmp_path: Path
) -> None:
    folder, run, opened = _play_isolated(exports, True, tmp_path)
    started = STARTED.search(run.stdout)
    assert started and started.group(1) == str(folder / SHIPPED_DIR / SHIPPED_SERVER), run.log
    # The server and its libraries came from the export folder, never from this checkout's .deps.
    llama = [path for path in opened if re.search(r"/lib(llama|ggml)[^/]*\.so|\.gguf$", path)]
    assert llama and all(path.startswith(str(folder / SHIPPED_DIR) + "/") for path in llama), llama
    _answered_or_skip(run)


def test_an_export_without_the_model_says_so_and_plays_on_the_fallback_tiers(
    exports: dict, tmp_path: Path
) -> None:
    folder, run, _ = _play_isolated(exports, False, tmp_path)
    errors = [line for line in run.errors() if "npc_mind:" in line]
    assert len(errors) == 1 and "ships no local model" in errors[0], run.log
    assert "npc_mind/ship_local_model" in errors[0] and str(folder / SHIPPED_DIR) in errors[0], run.log
    checks = run.checks()
    assert checks["one decision signal"]["detail"][0]["tier"] == 3, checks


def test_an_opted_in_export_without_the_model_folder_is_refused(
    game: Path, exports: dict, tmp_path: Path
) -> None:
    # Last in this module: it takes the model out of the game's addon (after both exports were made).
    shutil.rmtree(game / "addons/npc_mind/bin" / SHIPPED_DIR)
    run = run_godot(game, "--export-release", WITH_MODEL, str(tmp_path / BINARY), timeout=300)
    assert run.returncode != 0, run.log
    assert "npc_mind/ship_local_model is on but" in run.log and "scripts/package --with-model" in run.log, (
        run.log
    )
    assert not (tmp_path / BINARY).exists()
