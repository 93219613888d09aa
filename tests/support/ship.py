"""Running the engine as on a machine with no Python and no npc_mind checkout (tests/test_ship_*.py).

`isolated_run(...)`: the command inside a private mount namespace (`unshare -m`, root) where the
checkout (with `.venv`), the build Python's prefix and the system's Python folders are hidden under
empty tmpfs; only the engine folder is mounted back at its own path, so the launcher still works.
`strace` records every file the engine opens; `opened()` lists those that were opened. Fontconfig
reads a private configuration whose cache starts empty in each run (`font_config`), so what it
opens does not depend on the state of the machine's font cache.

`chroot_run(...)`: an exported game started in a chroot whose root is its export folder only.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.support.godot import LAUNCHER, REPO, GodotRun

ENGINE = LAUNCHER.parent
TRACE_LINE = re.compile(r'^\d+\s+(?:openat|open)\((?:AT_FDCWD, )?"([^"]+)", [^)]*\)\s+=\s+(-?\d+)')


def game_from_zip(scratch: Path) -> Path:
    """A fresh game folder, `scratch/game`, holding only the addon unzipped from the package zip
    (built first when the addon changed), as a game developer starts one."""
    from tools.provision import package

    package.provision()  # idempotent: rebuilt only when the addon changed
    with zipfile.ZipFile(package.zip_path()) as archive:
        archive.extractall(scratch / "unpacked")
    game = scratch / "game"
    game.mkdir()
    shutil.copytree(scratch / "unpacked" / "addons", game / "addons")
    return game


def engine_folders() -> list[Path]:
    """The engine's folder as this checkout reaches it, as it resolves, and as the provisioned
    engine's loader path names it (absolute, written by whichever checkout last provisioned a
    shared `.deps/godot`): the engine's own files, by every path it opens them."""
    found = [ENGINE, ENGINE.resolve()]
    from tools.provision import elf, godot

    if godot.ENGINE.is_file():  # the provisioned engine (patched), whether or not GODOT names another
        loader = elf.patchelf("--print-interpreter", str(godot.ENGINE)).strip()
        named = loader.removesuffix(f"/{godot.ROOT.name}/{godot.LOADER}")
        if named != loader:
            found.append(Path(named))
    return found


def can_isolate() -> str:
    """Why an isolated run is impossible here ('' when it is possible)."""
    if os.geteuid() != 0:
        return "a mount namespace needs root"
    missing = [tool for tool in ("unshare", "strace", "mount") if shutil.which(tool) is None]
    return f"missing {', '.join(missing)} (scripts/provision installs strace)" if missing else ""


def hidden_folders() -> list[Path]:
    """What a player's machine lacks: this checkout (and .venv), the build Python, the system's Python."""
    found = [REPO, Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]
    found += sorted(Path("/usr/lib").glob("python3*")) + sorted(Path("/usr/local/lib").glob("python3*"))
    unique: list[Path] = []
    for path in found:
        if path.is_dir() and not any(path.is_relative_to(other) for other in unique):
            unique.append(path)
    return unique


# The machine's font folders (as /etc/fonts/fonts.conf lists them); the cache is the run's own.
FONT_CONFIG = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <dir>/usr/share/fonts</dir>
  <dir>/usr/local/share/fonts</dir>
  <dir prefix="xdg">fonts</dir>
  <cachedir>{cache}</cachedir>
</fontconfig>
"""


def font_config(scratch: Path) -> Path:
    """A fontconfig configuration for one run: the machine's fonts, and a cache of its own that
    starts empty. With the machine's configuration, a run right after fonts were installed rebuilt
    the system's cache (reading every font) and the runs after it read none, so which files a run
    opened depended on the runs before it and on the machine."""
    folder = scratch / "fontconfig"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "cache").mkdir(parents=True)
    config = folder / "fonts.conf"
    config.write_text(FONT_CONFIG.format(cache=folder / "cache"))
    return config


def isolated_run(
    command: list[str],
    scratch: Path,
    timeout: float = 240,
    env: dict[str, str] | None = None,
    also_hidden: tuple[Path, ...] = (),
) -> tuple[GodotRun, list[str]]:
    """Run `command` with the build machine's Python (and `also_hidden`) hidden; returns the run
    and the files it opened."""
    scratch.mkdir(parents=True, exist_ok=True)
    trace = scratch / "open.trace"
    saved = scratch / "engine"
    saved.mkdir(exist_ok=True)
    lines = ["set -e", f"mount --bind {shlex.quote(str(ENGINE))} {shlex.quote(str(saved))}"]
    for folder in [*hidden_folders(), *also_hidden]:
        lines.append(f"mount -t tmpfs tmpfs {shlex.quote(str(folder))}")
    lines += [
        f"mkdir -p {shlex.quote(str(ENGINE))}",
        f"mount --bind {shlex.quote(str(saved))} {shlex.quote(str(ENGINE))}",
        "exec strace -f -qq -e trace=open,openat -o "
        + shlex.quote(str(trace))
        + " "
        + " ".join(shlex.quote(part) for part in command),
    ]
    home = scratch / "home"
    home.mkdir(exist_ok=True)
    clean = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "VIRTUAL_ENV"))}
    # A player's environment: their own home, and PYTHON* variables the runtime must ignore.
    clean.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "PYTHONPATH": "/nonexistent/site",
            "PYTHONHOME": "/nonexistent/prefix",
            "PYTHONSTARTUP": "/nonexistent/startup.py",
            "FONTCONFIG_FILE": str(font_config(scratch)),
        }
    )
    clean.update(env or {})
    try:
        done = subprocess.run(
            ["unshare", "-m", "--propagation", "private", "sh", "-c", "\n".join(lines)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=clean,
            check=False,
            cwd="/",
        )
        run = GodotRun(done.returncode, done.stdout, done.stderr)
    except subprocess.TimeoutExpired as error:
        out = error.stdout.decode() if isinstance(error.stdout, bytes) else (error.stdout or "")
        run = GodotRun(-9, out, f"(timed out after {timeout} s)")
    opened = []
    if trace.is_file():
        for line in trace.read_text(errors="replace").splitlines():
            found = TRACE_LINE.match(line)
            if found and int(found.group(2)) >= 0:
                opened.append(found.group(1))
    return run, opened


def outside(opened: list[str], allowed: list[Path]) -> list[str]:
    """Opened absolute paths under none of `allowed` (nor the kernel's /dev, /proc, /sys)."""
    roots = [str(path) for path in allowed] + ["/dev", "/proc", "/sys"]
    return sorted(
        {
            path
            for path in opened
            if path.startswith("/")
            and not any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)
        }
    )
