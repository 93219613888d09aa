"""npc_mind's Godot front end: thin nodes over the engine-agnostic `npc_mind.server`.

Imported by the addon's GDExtension at start-up (an entry module of `addons/npc_mind/`). It registers
the classes `MemoryProfile`, `MemoryStream`, `UtilityConsideration`, `UtilityBehavior`,
`UtilitySelector`, the input sources (`AwarenessInput`, `RecallInput`, `DistanceInput`,
`SinceSeenInput`, `PropertyInput`, `BlackboardInput`), the `MindAction` resources (`actions`),
`AsyncLLMDecision`, the senses (`SenseRule`, `SightSense2D/3D`, `HearingSense2D/3D`,
`TouchSense2D/3D`, `Stimulus2D/3D`) and the engine singleton
`NpcMindServer`, the only per-frame Python entry: the nodes never override `_process`.
"""

import logging

from npc_mind_godot import (
    actions,
    debug_feed,
    decision_node,
    designer,
    inputs,
    memory_nodes,
    senses,
    server_singleton,
    ticker,
    utility_nodes,
)

logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request would flood the Output
server_singleton.install()

__all__ = [
    "actions", "debug_feed", "decision_node", "designer", "inputs", "memory_nodes", "selector_feed",
    "senses", "server_singleton", "ticker", "utility_nodes",
]  # fmt: skip
