"""Imports everything the addon uses inside the addon's own runtime (tests/test_ship_addon.py runs
it in a fresh game, with no Python on the machine): every module of npc_mind, gdbridge and
npc_mind_godot, the distributions they use and each standard library module the runtime keeps."""

from __future__ import annotations

import importlib
import json
import pkgutil
import traceback

from gdbridge.classes import Node

OWN_PACKAGES = ("npc_mind", "gdbridge", "npc_mind_godot")
# What the engine-side code imports from the shipped distributions (numpy.fft and numpy.polynomial,
# which it never imports, are not shipped: tools/provision/numpy_build.py).
DISTRIBUTIONS = (
    "numpy", "numpy.typing", "numpy.linalg", "numpy.random", "numpy.ma", "numpy.lib.recfunctions",
    "httpx", "httpcore", "h11", "anyio", "anyio._backends._asyncio", "idna", "certifi", "typing_extensions",
    "_cffi_backend",
)  # fmt: skip


def _own_modules() -> list[str]:
    found = []
    for name in OWN_PACKAGES:
        package = importlib.import_module(name)
        found.append(name)
        modules = pkgutil.walk_packages(package.__path__, f"{name}.")
        found += [info.name for info in modules if not info.name.endswith(".__main__")]  # command lines
    return found


def _source_line_of_own_code() -> str:
    """The line a traceback shows for a frame of npc_mind's code ('' when it shows none)."""
    from npc_mind.decision.config import DecisionConfig

    try:
        DecisionConfig(soft_deadline=-1.0)
    except ValueError as error:
        return traceback.extract_tb(error.__traceback__)[-1].line or ""
    return ""


class RuntimeImports(Node):
    """Reports which modules do not import (names: a JSON list of standard library modules)."""

    def failures(self, names: str) -> str:
        wanted = [*_own_modules(), *DISTRIBUTIONS, *json.loads(names)]
        failed = {}
        for name in wanted:
            try:
                importlib.import_module(name)
            except Exception as error:  # every failure is the report
                failed[name] = f"{type(error).__name__}: {error}"
        import numpy as np

        return json.dumps({
            "imported": len(wanted) - len(failed), "failed": failed,
            "own_source_line": _source_line_of_own_code(),
            "matmul": float((np.eye(3) @ np.arange(3.0)).sum()),
            "inverse": float(np.linalg.inv(np.eye(2) * 2)[0, 0]),
        })  # fmt: skip
