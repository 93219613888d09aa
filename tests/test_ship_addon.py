"""The zipped addon (scripts/package) as a game developer gets it: it names no path of the build
machine, and unzipped into a fresh Godot project it imports once and runs a guard scene on a machine
with no Python (the checkout, .venv, the build Python and the system's Python hidden)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.godot import LAUNCHER, REPO, GodotRun
from tests.support.ship import can_isolate, engine_folders, isolated_run, outside
from tools.provision import package

SCENE = Path(__file__).resolve().parent / "ship"
# Strings that would tie the package to this machine.
MACHINE_PATHS = sorted(
    {str(REPO), str(REPO.resolve()), sys.prefix, sys.base_prefix, str(Path(sys.base_prefix).resolve())}
)
# Settings of the player's own machine that the runtime's C libraries read when present (never code):
# glibc's time zone and locale, OpenSSL's configuration and the system's CA certificates.
HOST_SETTINGS = [Path("/etc/localtime"), Path("/usr/lib/locale"), Path("/etc/ssl"), Path("/usr/lib/ssl")]


@pytest.fixture(scope="module")
def addon_zip() -> Path:
    package.provision()  # idempotent: rebuilt only when the addon changed
    return package.zip_path()


@pytest.fixture(scope="module")
def unpacked(addon_zip: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(addon_zip) as archive:
        archive.extractall(folder)
    # zipfile drops the permission bits; the engine dlopens, which needs none, but keep them honest.
    return folder


def _is_text(data: bytes) -> bool:
    return b"\0" not in data[:8192]


def test_the_zip_holds_only_the_addon_folder(addon_zip: Path) -> None:
    with zipfile.ZipFile(addon_zip) as archive:
        names = archive.namelist()
    assert {name.split("/")[0] for name in names} == {"addons"}
    assert {name.split("/")[1] for name in names} == {"npc_mind"}
    for needed in (
        "npc_mind.gdextension",
        "plugin.cfg",
        "bin/libgdbridge.linux.x86_64.so",
        "bin/gdbridge_api.json.gz",
        "bin/python/.gdignore",
        "bin/python/lib/libpython3.11.so.1.0",
        "bin/python/lib/python3.11/site-packages/npc_mind_godot/__init__.py",
        "bin/python/lib/python3.11/site-packages/numpy/__init__.pyc",
        "bin/python/lib/python311.zip",
    ):
        assert f"addons/npc_mind/{needed}" in names, needed
    assert not [name for name in names if name.endswith((".pth", "gdbridge_env.json"))]
    assert not [
        name for name in names if "/site-packages/pytest" in name or "/site-packages/matplotlib" in name
    ]


def test_the_runtime_is_lean(addon_zip: Path) -> None:
    """Bytecode only but for the project's own sources; numpy without BLAS; no test suites, stubs or
    headers; only the standard library modules the keep-list names; within its size budget."""
    runtime = "addons/npc_mind/bin/python/lib/python3.11/"
    with zipfile.ZipFile(addon_zip) as archive:
        names = [name for name in archive.namelist() if name.startswith(runtime)]
    own = tuple(f"{runtime}site-packages/{name}/" for name in package.OWN_PACKAGES)
    sources = [name for name in names if name.endswith(".py") and not name.startswith(own)]
    assert sources == [], sources[:10]
    assert f"{runtime}site-packages/npc_mind/__init__.py" in names  # tracebacks show npc_mind's lines
    unshipped = [name for name in names if "/tests/" in name or name.endswith((".pyi", ".h", ".pxd"))]
    assert unshipped == [], unshipped[:10]
    assert not [name for name in names if "numpy.libs/" in name or "/numpy/f2py/" in name]
    assert not [
        name
        for name in names
        if name.startswith((f"{runtime}site-packages/pycparser", f"{runtime}site-packages/cffi/"))
    ]
    keep = package.stdlib_keep() | package.STDLIB_ALWAYS
    with zipfile.ZipFile(addon_zip) as archive:
        inner = archive.read(f"addons/npc_mind/bin/python/lib/{package.STDLIB_ZIP}")
    zipped = zipfile.ZipFile(io.BytesIO(inner)).namelist()
    assert zipped and [name for name in zipped if name.endswith(".py")] == []  # bytecode only
    dynload = f"{runtime}lib-dynload/"
    tops = {package._module_name(name.split("/")[0]) for name in zipped}
    # The pure-Python distributions' bytecode is in the zip too; their metadata stays on disk.
    zipped_dists = tops - sys.stdlib_module_names
    site = f"{runtime}site-packages/"
    metadata = [name[len(site) :] for name in names if name.startswith(site) and ".dist-info/" in name]
    on_disk = {name.split("-")[0] for name in metadata}
    assert zipped_dists and zipped_dists <= on_disk, sorted(zipped_dists - on_disk)
    assert {"httpx", "anyio"} <= zipped_dists and "certifi" not in zipped_dists  # its CA file: by name
    tops |= {name[len(dynload) :] for name in names if name.startswith(dynload)}
    stdlib = {package._module_name(top) for top in tops} - zipped_dists
    assert stdlib - keep == set(), sorted(stdlib - keep)
    assert {"json", "asyncio", "encodings", "_json"} <= stdlib and "unittest" not in stdlib
    assert not {"_decimal", "pyexpat", "_lzma", "_bz2", "multiprocessing"} & stdlib  # pure twins or unused
    numpy = f"{runtime}site-packages/numpy/"
    unused = (f"{numpy}fft/", f"{numpy}polynomial/", f"{numpy}linalg/lapack_lite")
    assert not [name for name in names if name.startswith(unused)]
    assert f"{numpy}ma/core.pyc" in names  # numpy.lib.recfunctions imports numpy.ma
    # Was 97.4 MB (31.4 zipped); 39.6 (16.5) with the lean runtime, 40.1 (16.7) with new modules;
    # 34.4 (14.8) without numpy's unused submodules, C modules with pure twins, in the zip the
    # pure-Python distributions and gzipped the engine API. Issue 21's goal, 35 (15), is the bound:
    # what is left under it is room for the compiled memory kernel.
    sizes = package.size_report(addon_zip)
    assert sizes["unpacked_bytes"] <= 35_000_000 and sizes["zipped_bytes"] <= 15_000_000, sizes  # not rounded


def test_no_file_names_a_path_of_the_build_machine(unpacked: Path) -> None:
    patchelf = package.patchelf()
    texts = elves = 0
    for path in sorted(p for p in unpacked.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if data[:4] == b"\x7fELF":
            elves += 1
            for flag in ("--print-rpath",):
                rpath = subprocess.run(
                    [patchelf, flag, str(path)], capture_output=True, text=True, check=True
                ).stdout
                entries = [entry for entry in rpath.strip().split(":") if entry]
                assert all(entry.startswith("$ORIGIN") for entry in entries), (path, rpath)
            # libpython's compiled-in prefix too (package._scrub_prefix)
            assert not [machine for machine in MACHINE_PATHS if machine.encode() in data], path
        elif _is_text(data):
            texts += 1
            text = data.decode("utf-8", errors="replace")
            assert not [machine for machine in MACHINE_PATHS if machine in text], path
    assert elves > 50 and texts > 150, (elves, texts)  # the check saw the whole runtime


def test_the_checkout_has_the_same_relocatable_library() -> None:
    rpath = subprocess.run(
        [package.patchelf(), "--print-rpath", str(package.BIN / "libgdbridge.linux.x86_64.so")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert rpath == "$ORIGIN/python/lib"
    assert not (package.BIN / "gdbridge_env.json").exists()
    # Built without debug info, whose folder names (the checkout, the build Python's headers) it would carry.
    built = (package.BIN / "libgdbridge.linux.x86_64.so").read_bytes()
    assert not [machine for machine in MACHINE_PATHS if machine.encode() in built]


@pytest.fixture(scope="module")
def fresh_game(unpacked: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A new project (outside this repository) with the unzipped addon and the guard scene."""
    scratch = tmp_path_factory.mktemp("fresh")
    game = scratch / "game"
    game.mkdir()
    shutil.copytree(unpacked / "addons", game / "addons")
    for name in ("main.gd", "main.tscn"):
        shutil.copy2(SCENE / name, game / name)
    (game / "project.godot").write_text(
        'config_version=5\n\n[application]\n\nconfig/name="fresh game"\nrun/main_scene="res://main.tscn"\n'
    )
    return scratch, game


@pytest.fixture(scope="module")
def isolated(fresh_game: tuple[Path, Path]) -> dict[str, tuple[GodotRun, list[str]]]:
    """Import, open in the editor and play the fresh game, and import and play an empty project
    (what the engine opens by itself: fonts, locale, certificates), all with no Python on the machine."""
    reason = can_isolate()
    if reason:
        pytest.skip(reason)
    scratch, game = fresh_game
    empty = scratch / "empty"
    empty.mkdir(exist_ok=True)
    (empty / "project.godot").write_text('config_version=5\n\n[application]\n\nconfig/name="empty"\n')
    stages = {
        "import": (game, ["--import"]),
        "editor": (game, ["-e", "--quit-after", "60"]),  # the editor opens the game (headless)
        "play": (game, ["--quit-after", "2000"]),
        "empty import": (empty, ["--import"]),
        "empty play": (empty, ["--quit-after", "5"]),
    }
    runs = {}
    for name, (project, stage) in stages.items():
        runs[name] = isolated_run(
            [str(LAUNCHER), "--headless", "--path", str(project), *stage],
            scratch / name.replace(" ", "_"),
            timeout=240,
        )
    return runs


def _imports_game(game: Path, folder: Path) -> Path:
    """A game whose own Python module imports everything the addon uses (tests/ship/runtime_imports.py),
    given the standard library modules the runtime keeps."""
    folder.mkdir()
    shutil.copytree(game / "addons", folder / "addons")
    for name in ("runtime_imports.py", "runtime_imports.gd"):
        shutil.copy2(SCENE / name, folder / name)
    names = sorted(package.stdlib_keep() - {"__main__", "antigravity", "this"})
    (folder / "stdlib_modules.json").write_text(json.dumps(names))
    (folder / "project.godot").write_text(
        'config_version=5\n\n[application]\n\nconfig/name="imports"\n\n'
        '[python]\n\npaths=PackedStringArray("res://")\nentry_modules=PackedStringArray("runtime_imports")\n'
    )
    return folder


@pytest.fixture(scope="module")
def isolated_imports(fresh_game: tuple[Path, Path]) -> tuple[GodotRun, list[str]]:
    """The imports game, imported then run, with no Python on the machine."""
    reason = can_isolate()
    if reason:
        pytest.skip(reason)
    scratch, game = fresh_game
    imports = _imports_game(game, scratch / "imports_game")
    for stage in (["--import"], ["-s", "res://runtime_imports.gd"]):
        command = [str(LAUNCHER), "--headless", "--path", str(imports), *stage]
        run, opened = isolated_run(command, scratch / f"imports_{stage[0].strip('-')}", timeout=240)
    return run, opened


@pytest.mark.godot
def test_everything_the_addon_uses_imports_from_the_pruned_runtime(
    isolated_imports: tuple[GodotRun, list[str]],
) -> None:
    run, opened = isolated_imports
    assert run.returncode == 0, run.log
    check = run.checks().get("imports")
    assert check and check["ok"], run.log
    detail = check["detail"]
    assert detail["imported"] > 150 and detail["matmul"] == 3.0 and detail["inverse"] == 0.5, detail
    assert detail["own_source_line"].startswith('raise ValueError(f"soft_deadline'), detail  # a source line
    assert not [path for path in opened if "/numpy.libs/" in path or "openblas" in path.lower()]
    assert not run.errors(), run.log


@pytest.mark.godot
def test_a_fresh_project_imports_once_with_no_python_installed(isolated: dict) -> None:
    run, _ = isolated["import"]
    assert run.returncode == 0, run.log
    assert not run.errors(), run.log


@pytest.mark.godot
def test_the_editor_opens_the_game_without_errors(isolated: dict) -> None:
    run, _ = isolated["editor"]
    assert run.returncode == 0, run.log
    assert "gdbridge: Python 3.11" in run.stdout, run.log
    assert not run.errors(), run.log


@pytest.mark.godot
def test_the_guard_scene_runs_with_no_python_installed(isolated: dict, fresh_game: tuple[Path, Path]) -> None:
    run, _ = isolated["play"]
    assert run.returncode == 0, run.log
    assert "gdbridge: Python 3.11" in run.stdout and str(fresh_game[1]) in run.stdout, run.log
    checks = run.checks()
    assert {"done": True} in run.json_lines(), run.log
    assert checks and all(check["ok"] for check in checks.values()), checks
    assert len(checks) == 5, checks
    assert not run.errors(), run.log


@pytest.mark.godot
def test_nothing_is_opened_outside_the_project_and_the_engine(
    isolated: dict, fresh_game: tuple[Path, Path]
) -> None:
    scratch, game = fresh_game
    runtime = str(game / "addons" / "npc_mind" / "bin" / "python")
    for stage in ("import", "play"):
        _, opened = isolated[stage]
        _, by_itself = isolated[f"empty {stage}"]
        assert sum(path.startswith(runtime) for path in opened) > 100, stage  # the runtime did run
        allowed = [game, *engine_folders(), scratch, *HOST_SETTINGS]
        stray = sorted(set(outside(opened, allowed)) - set(outside(by_itself, allowed)))
        assert stray == [], (stage, stray)


SYSTEM_FONT_CACHE = Path("/var/cache/fontconfig")


@pytest.mark.godot
def test_what_a_run_opens_does_not_depend_on_the_machines_font_cache(fresh_game: tuple[Path, Path]) -> None:
    """Issue 22 (14): on a machine where fonts had just been installed, the first run rebuilt
    fontconfig's system cache and opened every font, the runs after it none, and the check above
    saw fonts opened by the game but not by the empty project. The same run with the system's font
    cache emptied (as fonts just installed leave it) opens exactly what it opens with it."""
    reason = can_isolate()
    if reason:
        pytest.skip(reason)
    if not SYSTEM_FONT_CACHE.is_dir():
        pytest.skip("no fontconfig system cache on this machine")
    scratch = fresh_game[0] / "font_cache"
    empty = scratch / "empty"
    empty.mkdir(parents=True, exist_ok=True)
    (empty / "project.godot").write_text('config_version=5\n\n[application]\n\nconfig/name="empty"\n')
    importing = [str(LAUNCHER), "--headless", "--path", str(empty), "--import"]
    imported, _ = isolated_run(importing, scratch / "import")
    assert imported.returncode == 0, imported.log
    # What the engine opens by itself (it then says the project has no main scene, exit 1).
    command = [str(LAUNCHER), "--headless", "--path", str(empty), "--quit-after", "5"]
    opened = {}
    for cache in ("kept", "emptied"):
        hidden = (SYSTEM_FONT_CACHE,) if cache == "emptied" else ()
        run, files = isolated_run(command, scratch / cache, also_hidden=hidden)
        assert any(path.startswith(str(LAUNCHER.parent)) for path in files), run.log  # the engine ran
        opened[cache] = set(outside(files, [empty, *engine_folders(), scratch]))
    assert opened["emptied"] == opened["kept"], sorted(opened["emptied"] ^ opened["kept"])
