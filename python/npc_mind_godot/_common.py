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


_core: list[Any] = []  # the singleton's MindServer, once looked up (it is created once a process)


def core() -> Any:
    """The singleton's engine-agnostic `MindServer`: what the nodes' per-call methods use, without
    the import and attribute lookups of `server().core` on every call."""
    if not _core:
        _core.append(server().core)
    return _core[0]
