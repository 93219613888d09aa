"""`scripts/provision memkernel`: compile the memory pool's kernel beside its loader.

cffi (API mode) builds `python/npc_mind/memory/kernel/memkernel.c` into the CPython extension
module `npc_mind.memory.kernel._memkernel` (git-ignored), for the baseline x86-64 ISA with its
AVX2 and AVX-512 copies inside (see `npc_mind.memory.kernel`); `package` ships it in the addon's
runtime (it needs only the C library: no RPATH). Rebuilt only when the sources, the flags, cffi
or the Python ABI change (the module's build id says what it was built from). Without it the
pool runs numpy, with the same answers.
"""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tools.provision.debian import ProvisionError


def built_file() -> Path | None:
    """The compiled module in the checkout, if any."""
    from npc_mind.memory import kernel

    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = kernel.HERE / (kernel.MODULE + suffix)
        if path.is_file():
            return path
    return None


def provision() -> None:
    import cffi

    from npc_mind.memory import kernel

    current = kernel.build_id()
    stamp = kernel.STAMP
    if built_file() is not None and stamp.is_file() and stamp.read_text().strip() == current:
        return
    if shutil.which("gcc") is None and shutil.which("cc") is None:
        raise ProvisionError("no C compiler found for the memory kernel (apt-get install gcc)")
    print("provision: memkernel: compiling the memory kernel (baseline x86-64, AVX2, AVX-512)", flush=True)
    ffi = cffi.FFI()
    ffi.cdef(kernel.cdef())
    ffi.set_source(
        f"{kernel.__name__}.{kernel.MODULE}",
        kernel.c_source(),
        include_dirs=[str(kernel.HERE)],
        extra_compile_args=list(kernel.COMPILE_ARGS),
    )
    # Linked with a plain `-shared`, not the build Python's LDSHARED: that adds its own library
    # folder as an RPATH, which names this machine (removing the RPATH afterwards leaves the path in
    # the string table) and is not needed: the module needs only the C library.
    linker = os.environ.get("CC", "gcc") + " -shared"
    saved = {name: os.environ.get(name) for name in ("LDSHARED", "LDFLAGS")}
    os.environ["LDSHARED"], os.environ["LDFLAGS"] = linker, ""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            built = Path(ffi.compile(tmpdir=tmp, verbose=False))
        except Exception as error:
            raise ProvisionError(f"compiling the memory kernel failed: {error}") from error
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        target = kernel.HERE / built.name
        partial = target.with_name(target.name + ".partial")
        shutil.copy2(built, partial)
        if shutil.which("strip"):  # its debug information is most of its size
            subprocess.run(["strip", "--strip-unneeded", str(partial)], check=True, capture_output=True)
        partial.replace(target)
    stamp.write_text(current + "\n")
