"""A UtilitySelector's target, picked from memory or by its per-target scoring, and the per-frame
feed that keeps targets and sourced inputs (`npc_mind_godot.inputs`) current.

An entity is what the senses record: a node's instance id (0: none). The target is chosen:
- `target_from = "memory"`: each frame, the entity of the NPC's strongest working memory of
  `target_memory_types` (none set: any type) whose R is above `target_min_retrievability`, read
  from the selector's MemoryStream without waking anything;
- `"scoring"`: after each `evaluate(context)` whose behavior scored per target, the context's
  `target_ids_key` array (the entity of each target, in the order of the per-target inputs) at the
  chosen target's index;
- `"none"`: only `set_target(entity_id)` from a script (which the other modes may replace).

The feed is one function the server runs each frame before its selectors choose
(`MindServer.before_choosing`): it updates every memory-targeting selector's target in one look
per memory pool, then writes the sourced inputs of the auto-evaluating selectors in one batch per
input (`npc_mind_godot.inputs.feed`). A changed target is signalled as `target_changed` with the
frame's other signals.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gdbridge.types import StringName, Vector2, Vector3
from npc_mind.server.looks import NO_ENTITY, strongest
from npc_mind_godot import mistakes
from npc_mind_godot._common import server
from npc_mind_godot.debug_feed import _object_of

TARGET_FROM = ("none", "memory", "scoring")
MEMORY_TYPE_FLAGS = "Trivia,Observation,Interaction,Hostile,Trauma"  # bit t: MemoryStream type t
TARGET_CHANGED = "target_changed"
# the selector's settings read here: a change re-reads them (`reconfigured`)
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


def forget_place(selector: Any) -> None:
    """The selector left the tree: its NPC and stream are looked up again where it enters next."""
    selector.__dict__.pop("_npc", None)
    selector.__dict__.pop("_stream", None)
    selector.__dict__.pop("_property_nodes", None)


def reads_memory(selector: Any) -> bool:
    return str(selector.target_from) == "memory"


def set_target(selector: Any, entity_id: int) -> None:
    """Set the target now, emitting `target_changed` when it changed."""
    entity = int(entity_id)
    if entity < 0:
        raise ValueError(f"set_target: an entity id is 0 (none) or a positive instance id, got {entity}")
    if selector.__dict__.get("_target", NO_ENTITY) != entity:
        selector.__dict__["_target"] = entity
        selector.emit_signal(StringName(TARGET_CHANGED), entity)


def target_id(selector: Any) -> int:
    return int(selector.__dict__.get("_target", NO_ENTITY))


def target_node(selector: Any) -> Any:
    """The target's node while it exists (an entity need not be a node: None then)."""
    entity = target_id(selector)
    return _object_of(entity) if entity != NO_ENTITY else None


def describe_target(selector: Any) -> str:
    """The target as a person reads it: its name (while its node exists) and entity id."""
    from npc_mind_godot.debug_feed import entity_name

    entity = target_id(selector)
    if entity == NO_ENTITY:
        return ""
    name = entity_name(entity)
    return f"{name} ({entity})" if name else str(entity)


def target_position(selector: Any) -> Any:
    """The target's last known position in the selector's stream (a Vector2/3), or None."""
    entity = target_id(selector)
    handle = stream_handle(selector) if entity != NO_ENTITY else 0
    sighting = server().core.sightings.get(handle, entity) if handle else None
    if sighting is None:
        return None
    point = sighting.position
    return Vector2(*point) if len(point) == 2 else Vector3(*point)


def pick_with_sources(selector: Any, entry: Any, pick: Any, context: Any) -> int:
    """`evaluate`'s pick for a selector with sourced inputs or a scoring target: the sourced values
    under the context (a given value wins), then the chosen target's entity."""
    from npc_mind_godot import inputs

    if selector.__dict__.get("_sourced"):
        context = inputs.sourced_context(selector) | context
    chosen = pick(entry, context)
    if str(selector.target_from) == "scoring":
        after_evaluate(selector, entry, context)
    return chosen


def after_evaluate(selector: Any, entry: Any, context: Any) -> None:
    """`target_from = "scoring"`: the chosen target's entity from the context's id array."""
    state = entry.state
    index = state.target if state is not None else None
    if index is None:
        return
    key = str(selector.target_ids_key)
    ids = context.get(key) if hasattr(context, "get") else None
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


class Feed:
    """The selectors that read memory or the world each frame, by server handle. One per server."""

    def __init__(self) -> None:
        self.members: dict[int, Any] = {}
        self.installed_on: Any = None

    def join(self, selector: Any, handle: int) -> None:
        mind = server().core
        if self.installed_on is not mind:
            mind.before_choosing.append(self)
            self.installed_on = mind
        self.members[handle] = selector

    def leave(self, handle: int) -> None:
        self.members.pop(handle, None)

    def __call__(self, now: float) -> None:
        nodes = server().nodes
        live = [(handle, node) for handle, node in self.members.items() if nodes.get(handle) is node]
        if len(live) != len(self.members):
            self.members = dict(live)
        if not live:
            return
        self._update_targets([node for _, node in live if node.__dict__["_memory_target"]], now)
        from npc_mind_godot import inputs

        inputs.feed([(handle, node) for handle, node in live if node.__dict__["_auto"]], now)

    @staticmethod
    def _update_targets(selectors: list[Any], now: float) -> None:
        if not selectors:
            return
        mind = server().core
        nodes = server().nodes
        streams = np.array([stream_handle(selector, nodes) for selector in selectors], dtype=np.int64)
        looks = [selector.__dict__["_target_look"] for selector in selectors]  # (type mask, R floor)
        masks = np.array([look[0] for look in looks], dtype=np.int64)
        floors = np.array([look[1] for look in looks])
        found, _, _ = strongest(
            mind.memory, streams, entities=np.zeros_like(streams), type_masks=masks, floors=floors, now=now
        )
        for selector, entity in zip(selectors, found.tolist(), strict=True):
            if selector.__dict__.get("_target", NO_ENTITY) != entity:
                selector.__dict__["_target"] = entity
                mind.events.push(selector.__dict__["_server_handle"], TARGET_CHANGED, entity)


feed = Feed()


def wants_feed(selector: Any) -> bool:
    from npc_mind_godot import inputs

    return reads_memory(selector) or inputs.auto_evaluates(selector)


def joined(selector: Any, handle: int) -> None:
    """The selector joined the server (or was reconfigured): it is fed each frame when it needs it,
    and its evaluate reads its sources and sets its scoring target when it has them. What the feed
    asks of each selector each frame is worked out here, once."""
    from npc_mind_godot import inputs

    fields = selector.__dict__
    fields["_reads_more"] = bool(inputs.sourced(selector)) or str(selector.target_from) == "scoring"
    fields["_memory_target"] = reads_memory(selector)
    fields["_target_look"] = (int(selector.target_memory_types), float(selector.target_min_retrievability))
    fields["_auto"] = inputs.auto_evaluates(selector)
    if fields["_memory_target"] or fields["_auto"]:
        feed.join(selector, handle)
    else:
        feed.leave(handle)


def rejoin(selector: Any) -> None:
    """A fed selector was redefined at run time: it joins its new group now (nobody else calls
    it), so it goes on choosing by itself."""
    if wants_feed(selector):
        selector._handle()


def warnings(selector: Any) -> list[str]:
    """Configuration warnings about the target and the memory it is read from."""
    found = []
    if reads_memory(selector) or _needs_stream(selector):
        if str(selector.memory_stream):
            if stream_of(selector, report=False) is None:
                path = str(selector.memory_stream)
                found.append(f"memory_stream {path!r} does not point at a MemoryStream.")
        elif stream_of(selector, report=False) is None:
            found.append(
                "Targets and memory inputs need a MemoryStream: add one under the NPC (a sibling of "
                "this selector) or set memory_stream."
            )
    return found


def _needs_stream(selector: Any) -> bool:
    from npc_mind_godot import inputs

    return any(source.reads_memory() for source in inputs.sources_of(selector))


def reconfigured(selector: Any, _value: Any) -> None:
    """A target or input setting changed: find the stream again, join or leave the feed. (The
    inspector's type flags are the looks' mask as they are: bit t is type t, 0 any.)"""
    selector.__dict__.pop("_stream", None)
    handle = selector.__dict__.get("_server_handle", 0)
    if handle:
        joined(selector, handle)
