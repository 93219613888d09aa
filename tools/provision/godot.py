"""`scripts/provision godot`: Godot 4.6 from Debian sid, under `.deps/godot/`.

- Debian 12 only has Godot 3; sid has 4.6, built for a newer glibc. The shared `SidFetcher`
  downloads its closure (plus Mesa's software OpenGL, so real frames render under Xvfb) and we
  run it through sid's own loader (see `tools.provision.debian`).
- `GODOT=/path/to/godot` set: that engine is used instead (4.6 or newer), nothing is fetched.

Layout (all git-ignored): `.deps/godot/root/` (unpacked packages), `.deps/godot/godot` (launcher,
also written for a `GODOT` engine so everything else has one path), `.deps/godot/godot.lock.json`
(what was fetched: names, versions, sha256), `.deps/godot/apt/` (the private apt state).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tools.provision.debian import (
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
# The engine, and Mesa's GL stack for rendering without a GPU (llvmpipe under Xvfb).
PACKAGES = [
    "godot",
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


def _fetch() -> None:
    fetcher = SidFetcher(GODOT_DIR / "apt")
    fetched = fetcher.download(PACKAGES)
    print(f"provision: godot: unpacking {len(fetched)} packages into .deps/godot/root", flush=True)
    fetcher.unpack(fetched, ROOT)
    write_lock(LOCK, fetched)


def provision() -> None:
    own = os.environ.get(ENV)
    if own:
        _use_own_engine(own)
        return
    locked = {package.name: package for package in read_lock(LOCK)}
    if not (ROOT / BINARY).is_file() or not set(PACKAGES) <= locked.keys():
        _fetch()
        locked = {package.name: package for package in read_lock(LOCK)}
    command = loader_command(ROOT, BINARY, EXTRA_LIB_DIRS)
    write_launcher(LAUNCHER, command)
    version = engine_version(command)
    _check_minimum(version, "the unpacked engine")
    # Drift: the unpacked engine is not what the lock says (a partial unpack, or a hand edit).
    want = locked["godot"].version.split(":")[-1]
    if want not in version:
        print(
            f"provision: godot: WARNING the unpacked engine says {version} but {LOCK.name} records "
            f"godot {want}; delete .deps/godot to fetch again",
            flush=True,
        )
    print(f"provision: godot: {version} (launcher .deps/godot/godot)", flush=True)
