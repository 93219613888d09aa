"""The class tests/test_binding_reload.py changes on disk while the editor runs (this is version 1;
the test writes version 2 and puts this one back)."""

from __future__ import annotations

import gdbridge as gd
from gdbridge.classes import Node


class Greeting:
    """A plain mixin: its methods reload too."""

    def greet(self) -> str:
        return "hello 1"


class Reloadable(Greeting, Node, tool=True):
    level: int = gd.export(7)

    def answer(self, x: int) -> int:
        return x + 1

    def _to_string(self) -> str:
        return "version 1"
