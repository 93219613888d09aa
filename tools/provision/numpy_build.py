"""`scripts/provision numpy_build`: the addon's numpy, built from its source without BLAS or LAPACK, cached.

numpy's wheel carries OpenBLAS and gfortran (`numpy.libs/`, 29 MB) that npc_mind never calls. The
addon's runtime (tools/provision/package.py) ships this build instead: the version python/requirements.lock
pins, built from its sdist with meson (`-Dblas=none -Dlapack=none`: numpy's own lapack_lite still
answers `@` and `numpy.linalg`). The build tools are pinned in python/numpy-build.lock and live in
their own environment (`.deps/numpy/build-venv`), so .venv (and its wheel numpy, which the tests
outside the engine use) is untouched.

The wheel is cached under `.deps/numpy/wheels/<key>/`, the key a hash of numpy's version, the build
options, the build tools' lock and this Python's ABI: the first provisioning builds it (about 3 to
6 minutes on 2 cores), later ones find it. `install(site)` unpacks it into a runtime's site-packages
without what nothing imports at run time and with its extension modules stripped.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from pathlib import Path

from tools.provision.debian import ProvisionError

REPO = Path(__file__).resolve().parents[2]
NUMPY_DIR = REPO / ".deps" / "numpy"
BUILD_VENV = NUMPY_DIR / "build-venv"
WHEELS = NUMPY_DIR / "wheels"
REQUIREMENTS_LOCK = REPO / "python" / "requirements.lock"
BUILD_LOCK = REPO / "python" / "numpy-build.lock"
# meson options: no BLAS or LAPACK library (and no error for the lack of one); no x86-simd-sort
# (AVX-512 quicksort kernels: the slowest part of the build, 8 heavy C++ units, and npc_mind sorts
# small arrays, stably); SIMD dispatch to AVX2 (x86-64-v3) and AVX-512 (x86-64-v4) above the
# baseline, not to Ice Lake's and Sapphire Rapids' extra AVX-512 sets (each target is one more
# copy of every dispatched loop in the extension module).
SETUP_ARGS = (
    "-Dallow-noblas=true", "-Dblas=none", "-Dlapack=none",
    "-Ddisable-intel-sort=true", "-Dcpu-dispatch=X86_V3,X86_V4",
)  # fmt: skip
BUILD_TIMEOUT = 3600  # seconds
CONFIG = "numpy/__config__.py"
# Parts of the wheel nothing imports at run time: test suites and numpy's test-only extension
# modules, type stubs, headers, static libraries and Cython declarations (for building against
# numpy), f2py and the packaging hooks, the RECORD (which would list the files left out), and what
# numpy imports only when asked and npc_mind never asks for: numpy.fft and numpy.polynomial, the
# `lapack_lite` extension module (numpy.linalg runs on `_umath_linalg`, which carries its own copy;
# `numpy.linalg.lapack_lite` is only imported by numpy's tests) and numpy's pytest `conftest`.
# numpy.ma stays (numpy.lib's recfunctions imports it), less its notes for readers and its testutils
# (which imports numpy.testing, not shipped).
# The docstrings of the scalar types and of numpy's C objects (modules of add_newdoc calls only, which
# numpy's documentation build mocks out): shipped empty, as the bytecode drops every other docstring.
EMPTIED_DOCS = ("numpy/_core/_add_newdocs_scalars.py", "numpy/_core/_add_newdocs.py")
EMPTIED_DOCS_STUB = '"""Emptied by npc_mind\'s packaging: numpy\'s docstrings are not shipped."""\n'
UNSHIPPED = re.compile(
    r"(^|/)(tests|testing)/|\.(pyi|h|c|pxd|pyx|a|pc|ini)$|(^|/)py\.typed$|\.dist-info/RECORD$"
    r"|^numpy/ma/(README\.rst|API_CHANGES\.txt|testutils\.py)$"
    r"|^numpy/(f2py|_pyinstaller|distutils|doc|_core/include|_core/lib|fft|polynomial)/"
    r"|^numpy/linalg/lapack_lite\.|^numpy/conftest\."
    r"|^numpy/_core/_(simd|multiarray_tests|umath_tests|rational_tests|struct_ufunc_tests|operand_flag_tests)\."
)


def pinned_version() -> str:
    """numpy's version in python/requirements.lock (the one .venv and the runtime share)."""
    found = re.search(r"^numpy==(\S+)$", REQUIREMENTS_LOCK.read_text(), re.MULTILINE)
    if not found:
        raise ProvisionError(f"{REQUIREMENTS_LOCK.name} pins no numpy version (numpy==X.Y.Z)")
    return found.group(1)


def cache_key() -> str:
    """What the wheel depends on: numpy's version, the options, the build tools and this Python's ABI."""
    digest = hashlib.sha256()
    for part in (pinned_version(), *SETUP_ARGS, BUILD_LOCK.read_text(), sys.version,
                 str(sysconfig.get_config_var("EXT_SUFFIX"))):  # fmt: skip
        digest.update(hashlib.sha256(part.encode()).digest())
    return digest.hexdigest()[:16]


def cached_wheel() -> Path | None:
    found = sorted((WHEELS / cache_key()).glob(f"numpy-{pinned_version()}-*.whl"))
    return found[0] if found else None


def _build_environment() -> Path:
    """`.deps/numpy/build-venv` with exactly the tools python/numpy-build.lock names; its python."""
    python = BUILD_VENV / "bin" / "python"
    stamp = BUILD_VENV / ".provisioned"
    wanted = hashlib.sha256(BUILD_LOCK.read_bytes()).hexdigest()
    if python.is_file() and stamp.is_file() and stamp.read_text() == wanted:
        return python
    print("provision: numpy: the build tools in .deps/numpy/build-venv", flush=True)
    if BUILD_VENV.exists():
        shutil.rmtree(BUILD_VENV)
    _run([sys.executable, "-m", "venv", str(BUILD_VENV)], timeout=300)
    _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
          "-r", str(BUILD_LOCK)], timeout=900)  # fmt: skip
    stamp.write_text(wanted)
    return python


def _run(
    command: list[str], timeout: int, log: Path | None = None, env: dict[str, str] | None = None
) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ProvisionError(f"{Path(command[0]).name} failed: {error}") from error
    if log:
        log.write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        where = f" (whole log: {log.relative_to(REPO)})" if log else ""
        tail = (done.stdout + done.stderr)[-3000:]
        raise ProvisionError(f"{' '.join(command[:5])} ... exited {done.returncode}{where}:\n{tail}")


def wheel() -> Path:
    """The cached no-BLAS wheel, built first if there is none for the current key."""
    found = cached_wheel()
    if found:
        return found
    python = _build_environment()
    version = pinned_version()
    print(f"provision: numpy: building numpy {version} from source without BLAS or LAPACK "
          "(once; a few minutes)", flush=True)  # fmt: skip
    started = time.monotonic()
    WHEELS.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=NUMPY_DIR))
    try:
        # meson finds cython, ninja and meson itself on PATH: the build environment's first.
        env = {**os.environ, "PATH": f"{python.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
        _run(
            [str(python), "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-binary", "numpy",
             "--disable-pip-version-check", "--wheel-dir", str(scratch), f"numpy=={version}",
             *(f"-Csetup-args={arg}" for arg in SETUP_ARGS)],
            timeout=BUILD_TIMEOUT, log=NUMPY_DIR / "build.log", env=env,
        )  # fmt: skip
        built = sorted(scratch.glob(f"numpy-{version}-*.whl"))
        if not built:
            raise ProvisionError(f"the numpy build wrote no wheel (log: {NUMPY_DIR / 'build.log'})")
        target = WHEELS / cache_key()
        target.mkdir(parents=True, exist_ok=True)
        shutil.move(str(built[0]), target / built[0].name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"provision: numpy: built in {time.monotonic() - started:.0f} s, cached in "
          f"{target.relative_to(REPO)}", flush=True)  # fmt: skip
    return target / built[0].name


def install(site: Path) -> int:
    """Unpack the wheel into `site` without its unshipped parts, extension modules stripped of every
    symbol nothing links against. Returns how many files it wrote."""
    written = 0
    with zipfile.ZipFile(wheel()) as archive:
        for info in archive.infolist():
            if info.is_dir() or UNSHIPPED.search(info.filename):
                continue
            target = site / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            if info.filename in EMPTIED_DOCS:  # docstrings only (numpy mocks them out for its own doc builds)
                target.write_text(EMPTIED_DOCS_STUB)
                written += 1
                continue
            if info.filename == CONFIG:  # show_config() names the build's Python: no path of this machine
                text = archive.read(info).decode().replace(str(BUILD_VENV), "<numpy's build environment>")
                target.write_text(text)
                written += 1
                continue
            with archive.open(info) as source, target.open("wb") as copy:
                shutil.copyfileobj(source, copy)
            if target.suffix == ".so" and ".libs/" not in info.filename:  # auditwheel-patched: left alone
                _run(["strip", "--strip-unneeded", str(target)], timeout=120)
            written += 1
    return written


def provision() -> None:
    wheel()
