"""Python classes registered with Godot for the binding tests."""

from __future__ import annotations

import gdbridge as gd
from gdbridge.classes import Node


class Greeter(Node):
    """Says hello."""

    count: int = gd.export(3, range=(0, 10))
    label: str = gd.export("hi")
    greeted = gd.signal(who=str)

    def add(self, a: int, b: int) -> int:
        return a + b

    def greet(self, who: str) -> str:
        self.greeted.emit(who)
        return f"{self.label}, {who}"

    def _ready(self) -> None:
        print("Greeter ready", self.name)
