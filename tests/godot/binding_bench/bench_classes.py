"""The Python side of the binding benchmark: the same small classes as gd_bench.gd."""

from __future__ import annotations

import time

import gdbridge as gd
from gdbridge.classes import Node

_BEHAVIOR = gd.StringName("patrol")


class PyEmpty(Node):
    """An empty `_process`: the cost of one engine -> Python callback."""

    def _process(self, delta: float) -> None:
        pass


class PyCalls(Node):
    """Methods GDScript calls: a typed int call, a call carrying a packed array and a dictionary, and a
    Dictionary result."""

    def add(self, a: int, b: int) -> int:
        return a + b

    def take(self, values: gd.PackedFloat32Array, table: dict) -> int:
        return len(values) + len(table)

    def context_size(self, context: dict) -> int:
        """A 5-key context Dictionary argument, the shape UtilitySelector.evaluate reads."""
        return len(context)

    def strongest(self) -> dict:
        """A 6-key Dictionary result, the shape of MemoryStream.query_strongest."""
        return {
            "event": "gunshot",
            "salience": 0.75,
            "age": 1.5,
            "slot": 3,
            "source": "north_gate",
            "confidence": 0.5,
        }

    def typed_context(self, context: dict[str, float]) -> int:
        """A 5-key Dictionary[String, float] argument."""
        return len(context)

    def behavior(self) -> gd.StringName:
        """A StringName result held by the class, the shape of UtilitySelector.evaluate's."""
        return _BEHAVIOR

    def _get(self, name: str) -> object:
        """A dynamic property (`get(&"level")`), as a designer-facing node would compute one."""
        return 3 if name == "level" else None

    def engine_calls(self, n: int) -> float:
        """Microseconds per call of an engine method from Python (`get_child_count`, a Variant call)."""
        started = time.perf_counter()
        for _ in range(n):
            self.get_child_count()
        return (time.perf_counter() - started) * 1e6 / n
