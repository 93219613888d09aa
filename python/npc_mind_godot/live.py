"""Read-only "Live" properties of the running nodes, for the Remote inspector (memory count and the
strongest memories, current behavior and scores, pending LLM request).

Each property is declared on its node with `live(...)` (shown in the editor, never stored, read-only)
and read through a `get_live_*` method that asks the server; before the node has registered (in the
editor, or not yet in the tree) it reads as empty, so the editor never registers anything.
"""

from __future__ import annotations

from typing import Any

from gdbridge.declare import export, export_group
from gdbridge.types import PackedStringArray, PropertyUsage
from npc_mind.memory import MemoryType
from npc_mind_godot._common import entity_name, server

USAGE = PropertyUsage.EDITOR | PropertyUsage.READ_ONLY
GROUP_TITLE = "Live (read-only, while the game runs)"
STRONGEST = 5
TYPE_NAMES = {int(kind): kind.name.lower() for kind in MemoryType}


def group() -> Any:
    return export_group(GROUP_TITLE, "live_")


def live(default: Any, doc: str) -> Any:
    return export(default, usage=USAGE, doc=doc + " Read-only: see it in the Remote inspector.")


def handle_of(node: Any) -> int:
    """The node's server handle, or 0 when it has not registered (nothing is created here)."""
    return int(node.__dict__.get("_server_handle", 0) or 0)


def strongest_memories(handle: int) -> PackedStringArray:
    rows = []
    for memory in server().core.memories(handle)[:STRONGEST]:
        entity = int(memory["entity_id"])
        who = entity_name(entity) or str(entity)
        kind = TYPE_NAMES.get(int(memory["memory_type"]), str(memory["memory_type"]))
        rows.append(f"{who} {kind}: R {memory['retrievability']:.3f}, S {memory['stability']:.0f} s")
    return PackedStringArray(rows)
