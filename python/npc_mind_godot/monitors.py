"""npc_mind's numbers in the debugger's Monitors tab, registered by the server itself when its first
node enters the tree: they appear however the addon was enabled (the Plugins dialog, an edited
`project.godot`, or a copied folder with no plugin at all).

Every monitor reads one number the server already keeps (no per-NPC work). Times (`*_ms`) are
`MONITOR_TYPE_TIME` monitors, read in seconds, which the engine shows as milliseconds with decimals;
the rest are counts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gdbridge import objects
from gdbridge.callables import python_function

PREFIX = "npc_mind/"
MONITOR_TYPE_QUANTITY = 0  # Performance.MONITOR_TYPE_*
MONITOR_TYPE_TIME = 2


def monitor_type(name: str) -> int:
    return MONITOR_TYPE_TIME if name.endswith("_ms") else MONITOR_TYPE_QUANTITY


def _reader(mind_server: Any, name: str) -> Callable[[], float]:
    scale = 0.001 if monitor_type(name) == MONITOR_TYPE_TIME else 1.0

    def read() -> float:
        return float(mind_server.get_metrics().get(name, 0.0)) * scale

    return read


def register(mind_server: Any) -> list[str]:
    """Add every server metric as a custom monitor (once); returns the ids added now."""
    performance = objects.singleton("Performance")
    added = []
    for name in sorted(mind_server.get_metrics()):
        monitor_id = PREFIX + name
        if performance.has_custom_monitor(monitor_id):
            continue
        # Owned by the singleton: the Callable is invalid once the server is freed at shutdown.
        read = python_function(_reader(mind_server, name), mind_server)
        performance.add_custom_monitor(monitor_id, read, [], monitor_type(name))
        added.append(monitor_id)
    return added
