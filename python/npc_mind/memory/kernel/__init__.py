"""The memory pool's compiled kernel (`memkernel.c`): which one runs, and how it is found.

`scripts/provision memkernel` compiles `memkernel.c` with cffi into a module beside this file
(`_memkernel*.so`, git-ignored; the addon's runtime ships it). It is built for the baseline x86-64
ISA and holds each function three times, for the levels of `LEVELS`: `baseline` (SSE2, every
x86-64 CPU), `avx2` and `avx512` (AVX-512 F/BW/VL). The batched query (`query.query_round`), the
record (`record.record_batch`), the forgetting scan (`forgetting.forgotten_cells`), the look at
the strongest memory (`query.strongest_rows`) and the exponential curve's sweep
(`curves.retrievability`) call it, and so does a utility batch's float64 scoring
(`npc_mind.utility.compiled`, `utility_body.h`); without it they run numpy, with
the same bits (tests/test_memory_kernel.py compares every level with numpy): exp and ln are
numpy's own float64 inner loops, taken from `np.exp` and `np.log` and checked when the module
loads (a numpy whose ufuncs do not look as expected makes the kernel
"unusable": numpy runs).

`NPC_MIND_KERNEL` chooses, read at every use:
- `auto` (or unset): the widest level this CPU runs, or numpy when the kernel is not built, is
  stale (built from another source) or does not load;
- `numpy`: never the kernel;
- `baseline`, `avx2`, `avx512`: that level, or `KernelUnavailableError` saying why it cannot run.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ENV_VAR = "NPC_MIND_KERNEL"
#: Dispatch levels, narrowest first (index = `mk_cpu_level()`'s answer).
LEVELS = ("baseline", "avx2", "avx512")
CHOICES = ("auto", "numpy", *LEVELS)
HERE = Path(__file__).resolve().parent
SOURCES = tuple(HERE / name for name in ("memkernel.h", "memkernel_body.h", "utility_body.h", "memkernel.c"))
HEADER = HERE / "memkernel.h"
MODULE = "_memkernel"
#: The portable baseline ISA (the levels above add their own options per function);
#: -ffp-contract=off and no fast-math: every product and sum rounds as numpy's do.
COMPILE_ARGS = ("-O3", "-march=x86-64", "-mtune=generic", "-ffp-contract=off", "-fno-fast-math")


class KernelUnavailableError(RuntimeError):
    """`NPC_MIND_KERNEL` names a level that cannot run here (not built, stale, or a CPU without it)."""


@dataclass(frozen=True)
class Kernel:
    """One dispatch level of the loaded kernel: its functions `query`, `record`, `forgotten`,
    `retrievability` and `strongest`, and `loops`, an `mk_pool` holding only numpy's exp and log loops (what
    `retrievability` reads)."""

    level: str
    ffi: Any
    lib: Any
    query: Any
    record: Any
    forgotten: Any
    retrievability: Any
    strongest: Any
    loops: Any

    def take_loops(self, struct: Any) -> None:
        """Point an `mk_pool` at numpy's exp and log loops (checked when the module loaded)."""
        if self.lib.mk_take_loops(struct, *_ufuncs(self.ffi)):
            raise KernelUnavailableError("numpy's exp and log ufuncs changed while running")


def _ufuncs(ffi: Any) -> tuple[Any, Any]:
    return ffi.cast("void *", id(np.exp)), ffi.cast("void *", id(np.log))


def _loops_match_numpy(module: Any) -> str:
    """ "" when the kernel's exp and log (numpy's loops, taken from the ufuncs) give np.exp's and
    np.log's bits on edge and random values; else why not."""
    ffi, lib = module.ffi, module.lib
    struct = ffi.new("mk_pool *")
    if lib.mk_take_loops(struct, *_ufuncs(ffi)):
        return "unusable: numpy's exp or log ufunc has no float64 loop where the kernel looks"
    spread = np.linspace(-800.0, 0.0, 997) + np.sin(np.arange(997.0)) * 0.37  # no numpy.random at load
    sample = np.concatenate(([-np.inf, 0.0, -0.0, -745.2, -708.4, 1e-300], np.minimum(spread, 0.0)))
    for which, ufunc, values in ((0, np.exp, sample), (1, np.log, 1.0 + np.abs(sample[6:]) * 1e4)):
        got = values.copy()
        lib.mk_apply(struct, which, ffi.from_buffer("double[]", got), got.shape[0])
        if got.tobytes() != ufunc(values).tobytes():
            return f"unusable: numpy's {ufunc.__name__} loop, called from the kernel, gives other bits"
    return ""


def cdef() -> str:
    """The declarations cffi binds: the same file memkernel.c includes, so the two never drift."""
    return HEADER.read_text()


def build_id() -> str:
    """Fingerprint of what a build depends on (sources, flags, cffi, the Python ABI); a module built
    from anything else is stale and never used. (cffi's version from its backend: the addon's
    runtime ships only that part of cffi.)"""
    import _cffi_backend  # type: ignore[import-untyped]  # cffi's C backend ships no stubs

    digest = hashlib.sha256()
    for part in (*(path.read_bytes() for path in SOURCES), " ".join(COMPILE_ARGS), _cffi_backend.__version__,
                 sys.implementation.cache_tag):  # fmt: skip
        digest.update(part if isinstance(part, bytes) else part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


#: The build id `scripts/provision memkernel` wrote beside the module it built. The addon's runtime
#: ships the module and this file, not the C sources (then the module is current when they agree).
STAMP = HERE / f"{MODULE}.build_id"


def expected_build_id() -> str:
    """What the module must have been built from: the sources' id where they are (a checkout), else
    the stamp shipped with the module (the addon's runtime, which ships only a current build)."""
    if all(path.is_file() for path in SOURCES):
        return build_id()
    return STAMP.read_text().strip() if STAMP.is_file() else ""


def c_source() -> str:
    """The C text given to cffi: the kernel and its build id."""
    return f'const char *mk_build_id(void) {{ return "{build_id()}"; }}\n#include "memkernel.c"\n'


_module: list[Any] = []  # [the loaded module or the reason it is not there], once per process
_chosen: dict[str, Kernel | None] = {}  # by NPC_MIND_KERNEL's value


def _loaded() -> Any:
    """The compiled module, or a string saying why there is none."""
    if not _module:
        try:
            module = importlib.import_module(f"{__name__}.{MODULE}")
        except ImportError as error:
            found: Any = f"not built (run scripts/provision memkernel): {error}"
        else:
            built = module.ffi.string(module.lib.mk_build_id()).decode()
            if built != expected_build_id():
                found = "stale: built from another source (run scripts/provision memkernel)"
            else:
                found = _loops_match_numpy(module) or module
        _module.append(found)
    return _module[0]


def cpu_level() -> str | None:
    """The widest level this CPU runs, or None when the kernel is not available."""
    module = _loaded()
    return None if isinstance(module, str) else LEVELS[module.lib.mk_cpu_level()]


def _choose(value: str) -> Kernel | None:
    wanted = value.strip().lower() or "auto"
    if wanted not in CHOICES:
        raise ValueError(f"{ENV_VAR}={value!r}: choose one of {', '.join(CHOICES)}")
    if wanted == "numpy":
        return None
    module = _loaded()
    if isinstance(module, str):
        if wanted == "auto":
            return None
        raise KernelUnavailableError(f"{ENV_VAR}={wanted} but the memory kernel is {module}")
    best = LEVELS[module.lib.mk_cpu_level()]
    level = best if wanted == "auto" else wanted
    if LEVELS.index(level) > LEVELS.index(best):
        raise KernelUnavailableError(f"{ENV_VAR}={level} but this CPU runs at most {best}")
    lib, ffi = module.lib, module.ffi
    loops = ffi.new("mk_pool *")
    lib.mk_take_loops(loops, *_ufuncs(ffi))
    query, record = getattr(lib, f"mk_query_{level}"), getattr(lib, f"mk_record_{level}")
    forgotten, sweep = getattr(lib, f"mk_forgotten_{level}"), getattr(lib, f"mk_retrievability_{level}")
    strongest = getattr(lib, f"mk_strongest_{level}")
    return Kernel(level, ffi, lib, query, record, forgotten, sweep, strongest, loops)


def active() -> Kernel | None:
    """The kernel level to use now under `NPC_MIND_KERNEL`, or None for numpy."""
    value = os.environ.get(ENV_VAR, "")
    try:
        return _chosen[value]
    except KeyError:
        kernel = _chosen[value] = _choose(value)
        return kernel


def status() -> str:
    """One line for logs and benchmarks: what the memory pool's batch paths run, and why."""
    kernel = active()
    if kernel is not None:
        return f"compiled kernel, {kernel.level} level"
    module = _loaded()
    why = f"{ENV_VAR}=numpy" if not isinstance(module, str) else f"the kernel is {module}"
    return f"numpy ({why})"


_F64 = np.dtype(np.float64)


def plain_f64(*arrays: Any) -> bool:
    """Are these all C-contiguous float64 numpy arrays (what the kernel can read as `double *`)?"""
    return all(type(a) is np.ndarray and a.dtype is _F64 and a.flags.c_contiguous for a in arrays)


def retrievability(last: Any, stability: Any, now: float, floor: float, out: Any) -> bool:
    """R on the exponential curve into `out` (curves.retrievability: x = min(last - now, 0) / S,
    -inf where x <= floor, then numpy's exp) when the kernel runs and the arrays are C-contiguous
    float64 of one size. False: nothing was done (numpy's turn)."""
    kernel = active()
    if kernel is None or not plain_f64(last, stability, out):
        return False
    n = out.size
    if last.size != n or stability.size != n or not out.flags.writeable:
        return False
    buffer = kernel.ffi.from_buffer
    last_c, stability_c, out_c = (buffer("double[]", a) for a in (last, stability, out))
    kernel.retrievability(kernel.loops, last_c, stability_c, n, now, floor, out_c)
    return True
