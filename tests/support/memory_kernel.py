"""The memory kernel's dispatch levels this machine runs, and forcing one (`NPC_MIND_KERNEL`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from npc_mind.memory import kernel

#: numpy, then each compiled level this CPU runs (none when the kernel is not built: the kernel
#: tests then fail, saying so).
LEVELS = (
    "numpy",
    *(kernel.LEVELS[: kernel.LEVELS.index(kernel.cpu_level()) + 1] if kernel.cpu_level() else ()),
)


@contextlib.contextmanager
def forced_kernel(level: str) -> Iterator[None]:
    """Run the block with NPC_MIND_KERNEL=level (a pool reads it at every batch call)."""
    before = os.environ.get(kernel.ENV_VAR)
    os.environ[kernel.ENV_VAR] = level
    try:
        yield
    finally:
        if before is None:
            del os.environ[kernel.ENV_VAR]
        else:
            os.environ[kernel.ENV_VAR] = before
