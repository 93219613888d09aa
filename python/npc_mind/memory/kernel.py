"""The optional compiled query kernel of `MemoryPool` (`memkernel.c`), and how the pool finds it.

`scripts/provision memkernel` compiles `memkernel.c` with cffi into `.deps/memkernel/` (git-ignored).
A pool uses it for `query_strongest`, `query_strongest_batch` and `awareness` when it is built and
matches the source in this checkout; otherwise (not built, stale, installed without the checkout)
the pool runs the pure numpy path. Both give bit-for-bit the same answers and state.

The environment variable `NPC_MIND_MEMORY_KERNEL` chooses, read when a pool is created:
`auto` (default: the kernel when built, else numpy), `numpy` (never the kernel), `c` (the kernel
or an error saying why it cannot load).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ENV_VAR = "NPC_MIND_MEMORY_KERNEL"
MODES = ("auto", "numpy", "c")
MODULE = "_npc_mind_memkernel"
SOURCE = Path(__file__).with_name("memkernel.c")
#: Where `scripts/provision memkernel` builds it: `.deps/memkernel/` at the checkout's root.
BUILD_DIR = Path(__file__).resolve().parents[3] / ".deps" / "memkernel"
#: -ffp-contract=off: no fused multiply-add, so every product and sum rounds as numpy's do.
COMPILE_ARGS = ("-O2", "-march=native", "-ffp-contract=off", "-fno-fast-math")

HEADER = Path(__file__).with_name("memkernel.h")
#: The declarations cffi binds; the same file memkernel.c includes, so the two never drift.
CDEF = HEADER.read_text()


def _cpu_flags() -> str:
    """The CPU's feature flags: -march=native code may not run on another CPU (SIGILL)."""
    try:
        with Path("/proc/cpuinfo").open() as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def build_id() -> str:
    """Fingerprint of what the build depends on (source, declarations, flags, cffi, the Python ABI
    and the CPU); a build with another one is stale and unused (cached: it reads the source)."""
    if "build_id" not in _loaded:
        import cffi

        digest = hashlib.sha256()
        parts = (
            SOURCE.read_bytes(),
            CDEF,
            " ".join(COMPILE_ARGS),
            cffi.__version__,
            sys.implementation.cache_tag,
        )
        for part in (*parts, _cpu_flags()):
            digest.update(part if isinstance(part, bytes) else str(part).encode())
            digest.update(b"\0")
        _loaded["build_id"] = digest.hexdigest()[:32]
    return str(_loaded["build_id"])


def c_source() -> str:
    """The C text given to cffi: the kernel plus its build id."""
    return f'const char *mk_build_id(void) {{ return "{build_id()}"; }}\n' + SOURCE.read_text()


class KernelUnavailableError(RuntimeError):
    """`NPC_MIND_MEMORY_KERNEL=c` but the kernel is not built, stale, or does not load."""


@dataclass(frozen=True)
class Kernel:
    ffi: Any
    lib: Any
    path: Path


_loaded: dict[str, Kernel | str] = {}  # "kernel": the kernel or why not; "build_id"


def _built_file() -> Path | None:
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = BUILD_DIR / (MODULE + suffix)
        if path.is_file():
            return path
    return None


def _load_once() -> Kernel | str:
    """The kernel, or why it is not available (cached per process)."""
    if "kernel" in _loaded:
        return _loaded["kernel"]
    found: Kernel | str
    path = _built_file()
    if path is None:
        found = "not built (run scripts/provision memkernel)"
    else:
        try:
            spec = importlib.util.spec_from_file_location(MODULE, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"no loader for {path}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            lib, ffi = module.lib, module.ffi
            built = ffi.string(lib.mk_build_id()).decode()
            if built != build_id():
                found = "stale: built from another memkernel.c (run scripts/provision memkernel)"
            else:
                found = Kernel(ffi, lib, path)
        except (ImportError, OSError, AttributeError) as exc:
            found = f"does not load: {exc}"
    _loaded["kernel"] = found
    return found


def available() -> bool:
    """Whether the kernel is built, current and loads (whatever `NPC_MIND_MEMORY_KERNEL` says)."""
    return isinstance(_load_once(), Kernel)


def unavailable_reason() -> str:
    """Why the kernel cannot be used ("" when it can)."""
    found = _load_once()
    return "" if isinstance(found, Kernel) else found


def mode() -> str:
    value = os.environ.get(ENV_VAR, "auto").strip().lower() or "auto"
    if value not in MODES:
        raise ValueError(f"{ENV_VAR}={value!r}; choose one of {MODES}")
    return value


def load() -> Kernel | None:
    """The kernel a new pool should use under `NPC_MIND_MEMORY_KERNEL`, or None for numpy."""
    wanted = mode()
    if wanted == "numpy":
        return None
    found = _load_once()
    if isinstance(found, Kernel):
        return found
    if wanted == "c":
        raise KernelUnavailableError(f"{ENV_VAR}=c but the memory kernel is {found}")
    return None


def status() -> str:
    """One line for logs and benchmarks: which query path new pools use, and why."""
    wanted = mode()
    if wanted == "numpy":
        return f"numpy ({ENV_VAR}=numpy)"
    found = _load_once()
    if isinstance(found, Kernel):
        return f"compiled kernel ({found.path.name})"
    return f"numpy (memory kernel {found})"


# ln(1 + k) for k = 0, 1, ...: computed by numpy so the kernel's consolidation factor has the bits
# numpy's np.log gives on the numpy path. Shared by every pool; grown on demand. Every table ever
# made is kept, so a pool still pointing at an older, shorter one stays valid.
_ln_tables: list[tuple[np.ndarray, Any]] = []


def ln_table(kernel: Kernel, need: int = 0) -> tuple[Any, int]:
    """A cffi pointer to ln(1 + k) for k < size, and size (at least `need`, at least 4096)."""
    if not _ln_tables or _ln_tables[-1][0].shape[0] < need:
        size = max(4096, 1 << max(need - 1, 1).bit_length())
        table = np.log(1.0 + np.arange(size, dtype=np.int64))
        _ln_tables.append((table, kernel.ffi.from_buffer("double[]", table)))
    table, pointer = _ln_tables[-1]
    return pointer, int(table.shape[0])
