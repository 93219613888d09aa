"""Every engine class as a Python class, built on first use: `from gdbridge.classes import Node3D`."""

from __future__ import annotations

from typing import Any

from gdbridge import objects


def __getattr__(name: str) -> Any:
    if not objects.API:
        raise ImportError(f"gdbridge.classes.{name}: the engine classes exist only inside Godot")
    if name not in objects.API["classes"]:
        raise AttributeError(f"Godot has no class named {name!r}")
    return objects.engine_class(name)
