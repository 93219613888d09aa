"""`scripts/provision godot`: Godot 4.6 from Debian sid, under `.deps/godot/`.

- Debian 12 only has Godot 3; sid has 4.6, built for a newer glibc. The shared `SidFetcher`
  downloads its closure (plus Mesa's software OpenGL, so real frames render under Xvfb) and we
  run it through sid's own loader (see `tools.provision.debian`).
- The editor binary is copied to `.deps/godot/engine/godot` and patched (PT_INTERP = sid's loader,
  DT_RPATH = the unpacked library folders), so it runs directly: `OS.get_executable_path()` is a
  real engine, and the editor's relaunch of itself (Play, `--export` children) works.
- sid's export templates (the same build) are patched to find a loader and libraries in `lib/`
  beside the exported binary; those libraries wait in `.deps/godot/engine/npc_mind_export_libs/`,
  which the addon's export plugin (`addons/npc_mind/export/engine_libs.gd`) copies into each export.
- `GODOT=/path/to/godot` set: that engine is used instead (4.6 or newer), nothing is fetched or patched.

Layout (all git-ignored): `.deps/godot/root/` (unpacked packages), `.deps/godot/engine/` (the
patched editor in self-contained mode: `._sc_`, so its settings, caches and export templates live in
`editor_data/` there, not in the user's home), `.deps/godot/godot` (launcher, also written for a
`GODOT` engine so everything else has one path), `.deps/godot/godot.lock.json` (what was fetched:
names, versions, sha256), `.deps/godot/apt/` (the private apt state).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from tools.provision import elf
from tools.provision.debian import (
    LIB_DIRS,
    LOADER,
    FetchedPackage,
    ProvisionError,
    SidFetcher,
    loader_command,
    read_lock,
    write_launcher,
    write_lock,
)

REPO = Path(__file__).resolve().parents[2]
GODOT_DIR = REPO / ".deps" / "godot"
ROOT = GODOT_DIR / "root"
LAUNCHER = GODOT_DIR / "godot"
LOCK = GODOT_DIR / "godot.lock.json"
BINARY = "usr/bin/godot"
EXTRA_LIB_DIRS = ("usr/lib/x86_64-linux-gnu/pulseaudio",)
ENGINE_DIR = GODOT_DIR / "engine"
ENGINE = ENGINE_DIR / "godot"
EXPORT_LIBS = ENGINE_DIR / "npc_mind_export_libs"
STAMP = ENGINE_DIR / "engine.stamp"
# Export template file name in the editor's templates folder -> sid's binary.
TEMPLATES = {
    "linux_release.x86_64": "usr/bin/godot-template-release",
    "linux_debug.x86_64": "usr/bin/godot-template-debug",
}
# Beside an exported binary: its loader, relative (resolved from the working directory, which the
# export's launcher sets), and its libraries next to it.
EXPORT_LOADER = f"lib/{elf.LOADER_NAME}"
EXPORT_RPATH = "$ORIGIN/lib"
# Not in the templates' DT_NEEDED but wanted at run time: glibc's compatibility stubs (libraries
# built for an older glibc, such as a bundled libpython, name them) and libudev (dlopened for joypads).
EXPORT_EXTRA_LIBS = ("libpthread.so.0", "libdl.so.2", "librt.so.1", "libutil.so.1", "libresolv.so.2",
                     "libanl.so.1", "libudev.so.1")  # fmt: skip
# The engine, its export templates, and Mesa's GL stack for rendering without a GPU (llvmpipe under Xvfb).
PACKAGES = [
    "godot",
    "godot-template-release",
    "godot-template-debug",
    "libgl1-mesa-dri",
    "libglx-mesa0",
    "libegl-mesa0",
    "libglvnd0",
    "libgl1",
    "libglx0",
    "libegl1",
    "libopengl0",
    "libgles2",
    "libxcb-glx0",
    "libxxf86vm1",
]
MINIMUM = (4, 6)
ENV = "GODOT"


def engine_version(command: list[str]) -> str:
    """`godot --version`, e.g. `4.6.3.stable.debian4.6.3+ds-3`."""
    try:
        done = subprocess.run(
            [*command, "--version"], check=False, capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ProvisionError(f"cannot run {command[-1]} --version: {error}") from error
    lines = [line for line in done.stdout.splitlines() if re.match(r"\d+\.\d+", line)]
    if done.returncode != 0 or not lines:
        raise ProvisionError(f"{command[-1]} --version failed: {done.stdout[-500:]}{done.stderr[-500:]}")
    return lines[-1].strip()


def _check_minimum(version: str, source: str) -> None:
    major, minor = (int(part) for part in version.split(".")[:2])
    if (major, minor) < MINIMUM:
        raise ProvisionError(
            f"{source} is Godot {version}; npc_mind needs Godot {MINIMUM[0]}.{MINIMUM[1]} or newer "
            f"(its extension uses the {MINIMUM[0]}.{MINIMUM[1]} GDExtension interface). "
            f"Unset {ENV} to use the project's own engine."
        )


def _use_own_engine(path: str) -> None:
    engine = Path(path).expanduser()
    if not engine.is_file() or not os.access(engine, os.X_OK):
        raise ProvisionError(f"{ENV}={path} is not an executable file")
    version = engine_version([str(engine)])
    _check_minimum(version, f"{ENV}={path}")
    GODOT_DIR.mkdir(parents=True, exist_ok=True)
    if engine.resolve() != LAUNCHER.resolve():  # GODOT naming our own launcher: leave it as it is
        write_launcher(LAUNCHER, [str(engine.resolve())])
    print(f"provision: godot: using {ENV}={engine} ({version})", flush=True)


def _fetch(locked: dict[str, FetchedPackage]) -> None:
    """Download the closure; unpack what the lock does not already record (all of it on a fresh root)."""
    fetcher = SidFetcher(GODOT_DIR / "apt")
    fetched = fetcher.download(PACKAGES)
    fresh = not (ROOT / BINARY).is_file()
    todo = [package for package in fetched if fresh or locked.get(package.name) != package]
    print(f"provision: godot: unpacking {len(todo)} packages into .deps/godot/root", flush=True)
    fetcher.unpack(todo, ROOT)
    write_lock(LOCK, fetched)


def template_folder(version: str) -> str:
    """The editor's folder name for its export templates: `4.6.3.stable` for `4.6.3.stable.debian...`."""
    return ".".join(version.split(".")[:4])


def _lib_dirs() -> list[Path]:
    return [ROOT / folder for folder in (*LIB_DIRS, *EXTRA_LIB_DIRS)]


def _fix_runpaths() -> None:
    """A library with its own RUNPATH does not see the engine's DT_RPATH for what it needs itself:
    sid's libpulse names the system's pulseaudio folder (absent here), libLLVM (Mesa's software GL)
    `$ORIGIN/../lib`. Both then pick up this machine's older libraries, or none. Point every such
    library at the unpacked folders instead."""
    wanted = f"$ORIGIN:$ORIGIN/{Path(EXTRA_LIB_DIRS[0]).name}"
    for library in sorted((ROOT / LIB_DIRS[0]).glob("lib*.so*")):
        if library.is_symlink() or not library.is_file() or elf.search_path(library) in ("", wanted):
            continue
        elf.set_runpath(library, wanted)


def _stamp(version: str, locked: dict[str, FetchedPackage]) -> str:
    digest = hashlib.sha256()
    for part in (version, str(ROOT), *(locked[name].sha256 for name in sorted(locked))):
        digest.update(part.encode())
    for source in (Path(__file__), Path(elf.__file__)):
        digest.update(source.read_bytes())
    return digest.hexdigest()


def _copy_patched(source: Path, target: Path, loader: str, rpath: str) -> None:
    partial = target.with_name(target.name + ".partial")
    shutil.copy2(source, partial)
    elf.set_loader_and_rpath(partial, loader, rpath)
    partial.replace(target)


def _export_libs(target: Path) -> int:
    """The loader, the templates' library closure and EXPORT_EXTRA_LIBS, flat in `target`."""
    binaries = [ROOT / binary for binary in TEMPLATES.values()]
    libraries = elf.closure(binaries, _lib_dirs(), EXPORT_EXTRA_LIBS)
    libraries[elf.LOADER_NAME] = (ROOT / LOADER).resolve()
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for soname, source in sorted(libraries.items()):
        shutil.copy2(source, target / soname)
        if soname != elf.LOADER_NAME and elf.search_path(target / soname):
            elf.set_runpath(target / soname, "$ORIGIN")  # flat folder: its neighbours are beside it
    return len(libraries)


def _build_engine(version: str, locked: dict[str, FetchedPackage]) -> None:
    """The patched editor, templates and export libraries under ENGINE_DIR (skipped when up to date)."""
    stamp = _stamp(version, locked)
    templates = ENGINE_DIR / "editor_data" / "export_templates" / template_folder(version)
    outputs = [ENGINE, EXPORT_LIBS / elf.LOADER_NAME, *(templates / name for name in TEMPLATES)]
    if STAMP.is_file() and STAMP.read_text() == stamp and all(path.exists() for path in outputs):
        return
    print("provision: godot: patching the engine and export templates for this machine's glibc", flush=True)
    _fix_runpaths()
    ENGINE_DIR.mkdir(parents=True, exist_ok=True)
    rpath = ":".join(str(folder) for folder in _lib_dirs())
    _copy_patched(ROOT / BINARY, ENGINE, str(ROOT / LOADER), rpath)
    (ENGINE_DIR / "._sc_").touch()  # self-contained: editor data under ENGINE_DIR/editor_data
    templates.mkdir(parents=True, exist_ok=True)
    for name, binary in TEMPLATES.items():
        _copy_patched(ROOT / binary, templates / name, EXPORT_LOADER, EXPORT_RPATH)
    count = _export_libs(EXPORT_LIBS.with_name(EXPORT_LIBS.name + ".partial"))
    shutil.rmtree(EXPORT_LIBS, ignore_errors=True)
    EXPORT_LIBS.with_name(EXPORT_LIBS.name + ".partial").rename(EXPORT_LIBS)
    STAMP.write_text(stamp)
    print(f"provision: godot: templates in {templates.relative_to(GODOT_DIR)}, {count} export libraries",
          flush=True)  # fmt: skip


def provision() -> None:
    own = os.environ.get(ENV)
    if own:
        _use_own_engine(own)
        return
    locked = {package.name: package for package in read_lock(LOCK)}
    if not (ROOT / BINARY).is_file() or not set(PACKAGES) <= locked.keys():
        _fetch(locked)
        locked = {package.name: package for package in read_lock(LOCK)}
    # The unpacked engine through sid's loader names the templates' folder; the patched copy is built from it.
    _build_engine(engine_version(loader_command(ROOT, BINARY, EXTRA_LIB_DIRS)), locked)
    write_launcher(LAUNCHER, [str(ENGINE)])
    version = engine_version([str(ENGINE)])
    _check_minimum(version, "the unpacked engine")
    # Drift: the unpacked engine is not what the lock says (a partial unpack, or a hand edit).
    want = locked["godot"].version.split(":")[-1]
    if want not in version:
        print(
            f"provision: godot: WARNING the unpacked engine says {version} but {LOCK.name} records "
            f"godot {want}; delete .deps/godot to fetch again",
            flush=True,
        )
    print(f"provision: godot: {version} (launcher .deps/godot/godot -> .deps/godot/engine/godot)", flush=True)
