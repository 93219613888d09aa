"""A UtilitySelector's target, picked from memory or by its per-target scoring (kept current each
frame by `npc_mind_godot.selector_feed`).

An entity is what the senses record: a node's instance id (0: none). The target is chosen:
- `target_from = "memory"`: each frame, the entity of the NPC's strongest working memory of
  `target_memory_types` (none set: any type) whose R is above `target_min_retrievability`, read
  from the selector's MemoryStream without waking anything;
- `"scoring"`: after each `evaluate(context)` whose behavior scored per target, the context's
  `target_ids_key` array (the entity of each target, in the order of the per-target inputs) at the
  chosen target's index;
- `"none"`: only `set_target(entity_id)` from a script (which the other modes may replace).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gdbridge.types import StringName, Vector2, Vector3
from npc_mind.server.looks import NO_ENTITY
from npc_mind_godot import mistakes
from npc_mind_godot._common import entity_name, object_of, server

TARGET_FROM = ("none", "memory", "scoring")
MEMORY_TYPE_FLAGS = "Trivia,Observation,Interaction,Hostile,Trauma"  # bit t: MemoryStream type t
TARGET_CHANGED = "target_changed"
# the selector's settings read here: a change re-reads them (`selector_feed.reconfigured`)
SETTINGS = (
    "memory_stream", "target_from", "target_memory_types", "target_min_retrievability", "auto_evaluate",
)  # fmt: skip


def stream_of(selector: Any, *, report: bool = True) -> Any:
    """The selector's MemoryStream: `memory_stream` when set, else the first MemoryStream child of
    its parent (a sibling). None when there is none (reported once when `report`)."""
    path = selector.memory_stream
    if str(path):
        found = selector.get_node_or_null(path)
        if found is not None and found.is_class("MemoryStream"):
            return found
        if report:
            mistakes.report(
                selector, "memory_stream:unresolved",
                f"memory_stream {str(path)!r} does not point at a MemoryStream, so targets and "
                "memory inputs read nothing (target none, inputs 0 or default_input).",
                fix="point memory_stream at the NPC's MemoryStream, or clear it to use a sibling",
            )  # fmt: skip
        return None
    parent = selector.get_parent()
    for child in parent.get_children() if parent is not None else ():
        if child.is_class("MemoryStream"):
            return child
    if report:
        mistakes.report(
            selector, "memory_stream:none",
            "no MemoryStream beside this selector, so targets and memory inputs read nothing "
            "(target none, inputs 0 or default_input).",
            fix="add a MemoryStream under the NPC (a sibling of the selector), or set memory_stream",
        )  # fmt: skip
    return None


def stream_handle(selector: Any, nodes: dict[int, Any] | None = None) -> int:
    """The server handle of the selector's stream (0: none, reported once), looked up again only
    when the stream it found is gone (or `memory_stream` changed). `nodes`: the server's nodes by
    handle, when the caller holds them."""
    cached = selector.__dict__.get("_stream")
    if cached is not None and (server().nodes if nodes is None else nodes).get(cached[0]) is cached[1]:
        return cached[0]
    stream = stream_of(selector)
    if stream is None:
        return 0
    handle = int(stream.get_server_id())
    selector.__dict__["_stream"] = (handle, stream)
    return handle


def npc_of(selector: Any) -> tuple[Any, int]:
    """(the NPC: the selector's parent, or None; 2 or 3 when it is a Node2D or Node3D, else 0),
    looked up once while the selector stays in the tree (`forget_place` on leaving it)."""
    found = selector.__dict__.get("_npc")
    if found is None or (found[0] is not None and not found[0].is_valid):
        npc = selector.get_parent()
        spatial = 0 if npc is None else 2 if npc.is_class("Node2D") else 3 if npc.is_class("Node3D") else 0
        found = selector.__dict__["_npc"] = (npc, spatial)
    return found


def placement() -> int:
    """A count that changes whenever what a per-frame reader may keep of the selectors' places can
    change: a node joined or left the server, a selector left the tree, a target was set."""
    return _placement[0]


def placement_changed() -> None:
    _placement[0] += 1


_placement = [0]


def forget_place(selector: Any) -> None:
    """The selector left the tree: its NPC and stream are looked up again where it enters next."""
    placement_changed()
    selector.__dict__.pop("_npc", None)
    selector.__dict__.pop("_stream", None)
    selector.__dict__.pop("_property_nodes", None)
    selector.__dict__.pop("_intent_decisions", None)


def reads_memory(selector: Any) -> bool:
    return str(selector.target_from) == "memory"


def set_target(selector: Any, entity_id: int) -> None:
    """Set the target now, emitting `target_changed` when it changed."""
    entity = int(entity_id)
    if entity < 0:
        raise ValueError(f"set_target: an entity id is 0 (none) or a positive instance id, got {entity}")
    if selector.__dict__.get("_target", NO_ENTITY) != entity:
        selector.__dict__["_target"] = entity
        placement_changed()
        selector.emit_signal(StringName(TARGET_CHANGED), entity)


def target_id(selector: Any) -> int:
    return int(selector.__dict__.get("_target", NO_ENTITY))


def target_node(selector: Any) -> Any:
    """The target's node while it exists (an entity need not be a node: None then)."""
    entity = target_id(selector)
    return object_of(entity) if entity != NO_ENTITY else None


def describe_target(selector: Any) -> str:
    """The target as a person reads it: its name (while its node exists) and entity id."""
    entity = target_id(selector)
    if entity == NO_ENTITY:
        return ""
    name = entity_name(entity)
    return f"{name} ({entity})" if name else str(entity)


def target_position(selector: Any) -> Any:
    """The target's last known position in the selector's stream (a Vector2/3), or None."""
    point = target_point(selector)
    if point is None:
        return None
    return Vector2(*point) if len(point) == 2 else Vector3(*point)


def target_point(selector: Any) -> tuple[float, ...] | None:
    """`target_position` as its 2 or 3 numbers (no engine value made), or None."""
    return _target_points([selector])[0]


def target_points(selectors: list[Any], dimension: int) -> np.ndarray:
    """`target_point` of many selectors, (selectors, dimension) floats: NaNs where there is none
    (or it has the other dimension)."""
    missing = (math.nan,) * dimension
    points = [point if point and len(point) == dimension else missing for point in _target_points(selectors)]
    return np.array(points, dtype=np.float64).reshape(len(selectors), dimension)


def _target_points(selectors: list[Any]) -> list[tuple[float, ...] | None]:
    """Each selector's target's last known position in its stream (the server's tables looked up once)."""
    mind = server()
    nodes, sighting_of = mind.nodes, mind.core.sightings.get
    points: list[tuple[float, ...] | None] = []
    for selector in selectors:
        entity = int(selector.__dict__.get("_target", NO_ENTITY))
        if entity == NO_ENTITY:
            points.append(None)
            continue
        handle = stream_handle(selector, nodes)
        sighting = sighting_of(handle, entity) if handle else None
        points.append(None if sighting is None else sighting.position)
    return points


def after_evaluate(selector: Any, entry: Any, context: Any) -> None:
    """`target_from = "scoring"`: the chosen target's entity from the context's id array."""
    state = entry.state
    index = state.target if state is not None else None
    if index is None:
        return
    key = str(selector.target_ids_key)
    ids: Any = context.get(key) if hasattr(context, "get") else None  # anything: checked by the try
    try:
        entity = int(ids[index])
    except (TypeError, ValueError, IndexError, KeyError):
        mistakes.report(
            selector, "target_ids:missing",
            f"target_from is 'scoring' but the context has no entity id at {key!r}[{index}], so the "
            "target is unchanged.",
            fix=f"pass {key!r}: an array of the targets' entity ids (instance ids), in the order of the "
            "per-target inputs, or set target_ids_key",
        )  # fmt: skip
        return
    set_target(selector, entity)
