"""Small helpers shared by the nodes: the server singleton, project settings, icons."""

from __future__ import annotations

from typing import Any

from gdbridge import objects

ICONS = "res://addons/npc_mind/icons/"


def icon(name: str) -> str:
    return f"{ICONS}{name}.svg"


def project_setting(name: str, default: Any) -> Any:
    """Settings read at runtime always pass their default: the plugin (which declares them) is optional."""
    settings = objects.singleton("ProjectSettings")
    if not settings.has_setting(name):
        return default
    return settings.get_setting(name)


def server() -> Any:
    """The `NpcMindServer` singleton's Python object."""
    from npc_mind_godot.server_singleton import instance

    return instance()
