"""`scripts/provision memkernel`: compile the memory pool's query kernel into `.deps/memkernel/`.

cffi (API mode) builds `python/npc_mind/memory/memkernel.c` into a CPython extension module that
`npc_mind.memory.kernel` loads. Rebuilt only when the C source, its declarations or the flags
change (the build id in the module says which source it came from). Without it the pool runs
its pure numpy path, which gives the same answers, slower.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from tools.provision.debian import ProvisionError


def provision() -> None:
    import cffi

    from npc_mind.memory import kernel

    current = kernel.build_id()
    stamp = kernel.BUILD_DIR / "build_id"
    if kernel._built_file() is not None and stamp.is_file() and stamp.read_text().strip() == current:
        return
    if shutil.which("gcc") is None and shutil.which("cc") is None:
        raise ProvisionError("no C compiler found for the memory kernel (apt-get install gcc)")
    kernel.BUILD_DIR.mkdir(parents=True, exist_ok=True)
    print("provision: memkernel: compiling the memory query kernel", flush=True)
    ffi = cffi.FFI()
    ffi.cdef(kernel.CDEF)
    ffi.set_source(
        kernel.MODULE,
        kernel.c_source(),
        include_dirs=[str(kernel.HEADER.parent)],
        extra_compile_args=list(kernel.COMPILE_ARGS),
    )
    with tempfile.TemporaryDirectory(dir=kernel.BUILD_DIR) as tmp:
        try:
            built = Path(ffi.compile(tmpdir=tmp, verbose=False))
        except Exception as error:
            raise ProvisionError(f"compiling the memory kernel failed: {error}") from error
        target = kernel.BUILD_DIR / built.name
        shutil.copy2(built, target.with_name(target.name + ".tmp"))
        target.with_name(target.name + ".tmp").replace(target)
    stamp.write_text(current + "\n")
