"""The memory pool's two query paths, for tests that must hold on both: the pure numpy path and
the compiled kernel (`npc_mind.memory.kernel`). A pool takes its path when it is created."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from npc_mind.memory import kernel

BACKENDS = ("numpy", "c")


@contextlib.contextmanager
def memory_backend(name: str) -> Iterator[None]:
    """Pools created inside use `name` ("numpy" or "c"); "c" skips when the kernel is not built."""
    if name == "c" and not kernel.available():
        pytest.skip(f"memory kernel {kernel.unavailable_reason()}")
    old = os.environ.get(kernel.ENV_VAR)
    os.environ[kernel.ENV_VAR] = name
    try:
        yield
    finally:
        if old is None:
            del os.environ[kernel.ENV_VAR]
        else:
            os.environ[kernel.ENV_VAR] = old
