"""The server's one per-frame hook: a node the singleton adds to the tree root."""

from __future__ import annotations

from gdbridge import classes
from npc_mind_godot._common import server


class NpcMindTicker(classes.Node):
    """Internal: calls NpcMindServer once per frame, after every other node (added automatically)."""

    def _process(self, delta: float) -> None:
        server().frame(delta)
