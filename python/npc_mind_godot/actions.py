"""Actions without code: what a `UtilityBehavior` does when it starts, while it holds and when it ends.

A behavior holds three lists of `MindAction` resources: `on_enter` (run once when the selector
chooses it), `on_tick` (run every physics frame while it holds) and `on_exit` (run once when another
behavior replaces it). A change runs the old behavior's `on_exit`, emits the selector's
`behavior_exited(old)`, runs the new one's `on_enter` and emits `behavior_entered(new)`; it happens
when the server delivers the selector's `behavior_changed` (at the end of the frame of the choice),
just before that signal.

Every NodePath of an action is relative to the UtilitySelector (as the inspector picks it); an
empty one means the NPC, the selector's parent. One pass over every running behavior per physics
frame (`tick`, connected once to the SceneTree's `physics_frame`) runs the `on_tick` lists and moves
the bodies of the running move actions: no `_physics_process` per NPC. The engine side of that pass
is one read of every moving body's and waypoint's position per dimension (`interface.node_poses`),
one crossing that sets every body's velocity and facing and slides it (`interface.move_bodies`),
one crossing for a run of the pass's on_tick property sets (between other actions:
`interface.call_many`), and one GDScript call a dimension for the navigation agents' paths
(`ENGINE_SOURCE`).
A paused tree pauses them, as it pauses `_physics_process` (an NPC whose process_mode runs while
paused keeps acting).

A mistake at run time (a path to nothing, a property or method that does not exist, a move with no
body) is reported once per selector and action through `npc_mind_godot.mistakes`, naming the node,
the behavior, the action and the fix; the action is skipped and the rest keep running.

Why one file of over 600 lines: the eight action classes are short, and they, the running
behaviors (`Running`) and the one physics pass that moves every body (`Motion`, `tick`) share the
state of that pass (which action resolved what, the moves in flight); split, it would become a
protocol between modules.
"""

from __future__ import annotations

import math
import string
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gdbridge import classes, interface, objects
from gdbridge.callables import python_function
from gdbridge.declare import export, python_only
from gdbridge.interface import MOVE_FACE, MOVE_GO, MOVE_HALT, MOVE_KEEP_VERTICAL, MOVE_SKIP
from gdbridge.types import (
    GODOT_NAMES,
    NodePath,
    PropertyHint,
    PropertyUsage,
    StringName,
    VariantType,
    Vector2,
    Vector3,
)
from npc_mind.memory import MemoryType
from npc_mind_godot import inputs, mistakes, targets
from npc_mind_godot._common import (
    NOTIFICATION_PREDELETE,
    decision_of,
    emit_signals,
    engine_script,
    has_property,
    icon,
    server,
)
from npc_mind_godot.motion_table import MotionTable

PHASES = ("on_enter", "on_tick", "on_exit")
ACTIONS_HINT = "24/17:MindAction"  # the behaviors' typed arrays (an Array[MindAction])
HISTORY = 32  # entries kept per selector for `get_recent_actions`
DESTINATIONS = ("target", "away_from_target", "node", "route")
WAYPOINTS = ("node", "route")  # the destinations read from `node`
ANIMATED = ("AnimationPlayer", "AnimatedSprite2D", "AnimatedSprite3D")
BODIES = ("CharacterBody2D", "CharacterBody3D")
AGENTS = ("NavigationAgent2D", "NavigationAgent3D")


def action_list(doc: str) -> Any:
    """A UtilityBehavior's exported list of actions (an Array[MindAction] in the inspector)."""
    return export([], hint=PropertyHint.ARRAY_TYPE, hint_string=ACTIONS_HINT, doc=doc)


class ActionError(Exception):
    """A run-time mistake of one action: `cause` names it for `mistakes.report`, `fix` says what to do."""

    def __init__(self, cause: str, message: str, fix: str) -> None:
        super().__init__(message)
        self.cause, self.fix = cause, fix


class MindAction(classes.Resource, abstract=True, icon=icon("MindAction")):
    """One thing a behavior does, without code: put it in a UtilityBehavior's `on_enter`, `on_tick`
    or `on_exit`.

    `on_enter` runs once when the selector chooses the behavior, `on_tick` every physics frame while
    it holds, `on_exit` once when another behavior replaces it. When the selector's choice changes,
    at the end of the frame of the choice (the server's step), the old behavior's `on_exit` runs,
    then the selector emits `behavior_exited(old)`, the new behavior's `on_enter` runs, then
    `behavior_entered(new)`, then `behavior_changed(new)`. The selector's first choice has no exit.
    The `on_tick` lists of every NPC run in one pass per physics frame (no `_physics_process` per
    NPC), before the moves.

    Every NodePath of an action is relative to the **UtilitySelector** (as the inspector's node
    picker makes it); an empty path means **the NPC**, the selector's parent. The actions:
    MoveAction, SetPropertyAction, CallMethodAction, PlayAnimationAction, EmitSignalAction and
    AskDecisionAction.

    In the inspector an action list names each element by what it does (`MoveAction target`,
    `SetPropertyAction text`, `PlayAnimationAction alert`): an action's `resource_name` follows its
    main field, as a sense rule's does.

    **Mistakes.** The selector's configuration warnings list every action that cannot work, naming
    the behavior, the list and the place (`Behavior 'patrol', on_enter[0] MoveAction ../Post: ...`):
    a NodePath that resolves to nothing, a property or method the node does not have, a move with
    no CharacterBody2D/3D or a `navigation_agent` that is not an agent, a player that is not one or
    lacks the animation, no decision to ask, an empty name. At run time such an action is skipped
    and reported once per selector and action (one error naming the selector's path, the behavior,
    the action and the fix; later repeats, such as an `on_tick` action every frame, only count in
    `NpcMindServer.get_metrics()["mistakes/repeats"]`). The rest keep running.

    **History.** `UtilitySelector.get_recent_actions()` returns the selector's last 32 actions.

    **Cost.** What an action needs (its nodes, the property or method it checked) is found when its
    behavior begins and kept while it holds; it is found again only when one of its nodes is freed.
    The engine side of the physics pass is one GDScript object the addon builds from source, called
    a fixed number of times a frame whatever the number of NPCs, with packed arrays: one read of
    every moving body's and waypoint's position and one call that steers and moves every body per
    dimension, and one call that writes the pass's `on_tick` property sets. The move rule (arrived?
    far enough away?) is one array function for all bodies. The other actions in `on_tick` are one
    engine call each (`scripts/bench actions`).
    """

    @python_only
    def run(self, running: Running) -> None:
        """Do it now for the NPC of `running`; raise ActionError for a user's mistake."""
        raise NotImplementedError

    @python_only
    def resolve(self, running: Running) -> tuple[Any, ...]:
        """The nodes (first: the one whose freeing makes it look again) and checked names `run`
        uses, found once per run of the behavior (`Running.resolved`); raise ActionError."""
        return (running.npc,)

    @python_only
    def problems(self, selector: Any) -> list[str]:
        """What is wrong with it for this selector's NPC (the editor's configuration warnings)."""
        return []

    @python_only
    def label(self) -> str:
        """A short text for the history and the messages, e.g. `SetPropertyAction visible`."""
        return type(self).__name__


def _node_at(selector: Any, path: Any) -> Any:
    """The node `path` names from the selector (empty: the NPC, its parent), or None."""
    if not str(path):
        return selector.get_parent()
    return selector.get_node_or_null(path)


def _found(selector: Any, path: Any, what: str) -> Any:
    node = _node_at(selector, path)
    if node is None:
        raise ActionError(
            f"missing:{what}",
            f"{what} {str(path)!r} resolves to no node",
            f"point {what} at a node (relative to the UtilitySelector; empty: its parent, the NPC)",
        )
    return node


def _path_problem(selector: Any, path: Any, what: str) -> list[str]:
    if selector.get_parent() is None or _node_at(selector, path) is not None:
        return []
    return [f"{what} {str(path)!r} resolves to no node (relative to the UtilitySelector)."]


#: Variant types the engine converts into one another when a property is set (numbers, text,
#: integer and float vectors); any other pair is refused, and the property silently becomes 0.
_CONVERTIBLE = tuple(
    frozenset(group)
    for group in (
        (VariantType.BOOL, VariantType.INT, VariantType.FLOAT),
        (VariantType.STRING, VariantType.STRING_NAME, VariantType.NODE_PATH),
        (VariantType.VECTOR2, VariantType.VECTOR2I),
        (VariantType.VECTOR3, VariantType.VECTOR3I),
        (VariantType.VECTOR4, VariantType.VECTOR4I),
        (VariantType.RECT2, VariantType.RECT2I),
    )
)


def _value_type_problem(target: Any, name: str, value: Any) -> str:
    """Why `value` cannot be set to the property `name` of `target` (its type neither matches the
    property's nor converts to it: the engine would write 0 without a word), or "". A property of
    no declared type (an untyped script variable) takes any value; an object property takes null."""
    if ":" in name:  # a sub-path (position:x): the type of what is there now
        wanted = int(objects.utility.typeof(target.get_indexed(NodePath(name))))
    else:
        wanted = next(
            (int(prop["type"]) for prop in target.get_property_list() if str(prop["name"]) == name),
            VariantType.NIL,
        )
    given = int(objects.utility.typeof(value))  # the engine's type of the value, as it is set
    if wanted in {VariantType.NIL, given} or (given == VariantType.NIL and wanted == VariantType.OBJECT):
        return ""
    if any(given in group and wanted in group for group in _CONVERTIBLE):
        return ""
    return (
        f"property {name!r} of {target.get_class()} {str(target.get_name())!r} is a "
        f"{GODOT_NAMES[VariantType(wanted)]}, but value is a {GODOT_NAMES[VariantType(given)]}"
    )


class SetPropertyAction(MindAction, icon=icon("SetPropertyAction")):
    """Set a property of a node: `node` (empty: the NPC), `property` (a name, or a path such as
    `position:x` or `modulate:a`) and `value`.

    **Mistakes.** `value` is of the property's type, or of one the engine converts to it (a number
    for a number, text for text): another type would become 0 without a word, so it is a
    configuration warning in the editor and, at run time, one error naming the node, the property,
    both types and the fix; the action is then skipped."""

    node: NodePath = export(
        NodePath(""), doc="The node to change (relative to the selector; empty: the NPC)."
    )
    property: StringName = export(StringName(""), doc="The property, or a sub-path such as position:x.")
    value: Any = export(None, doc="The value to set.")

    @python_only
    def resolve(self, running: Running) -> tuple[Any, ...]:
        target = _found(running.selector, self.node, "node")
        name = str(self.property)
        if not name or not has_property(target, name):
            raise ActionError(
                f"no_property:{name}",
                f"{target.get_class()} {str(target.get_name())!r} has no property {name!r}",
                "set property to one the node has (see its inspector)",
            )
        wrong = _value_type_problem(target, name, self.value)
        if wrong:
            raise ActionError(
                f"value_type:{name}", wrong, "give value the property's type (see its inspector)"
            )
        return target, NodePath(name)

    @python_only
    def run(self, running: Running) -> None:
        target, path = running.resolved(self)
        if _tick_sets is not None:  # in the physics pass: written with the others in one call
            _tick_sets.append((target._id, path, self.value, running))
        else:
            target.set_indexed(path, self.value)

    @python_only
    def problems(self, selector: Any) -> list[str]:
        found = _path_problem(selector, self.node, "node")
        target = _node_at(selector, self.node)
        name = str(self.property)
        if not name:
            found.append("No property set.")
        elif target is not None and not has_property(target, name):
            found.append(f"{target.get_class()} {str(target.get_name())!r} has no property {name!r}.")
        elif target is not None:
            wrong = _value_type_problem(target, name, self.value)
            if wrong:
                found.append(f"{wrong}: give value the property's type.")
        return found

    @python_only
    def label(self) -> str:
        return f"SetPropertyAction {self.property}"


class CallMethodAction(MindAction, icon=icon("CallMethodAction")):
    """Call a method of a node: `node` (empty: the NPC), `method` and its `args`."""

    node: NodePath = export(NodePath(""), doc="The node to call (relative to the selector; empty: the NPC).")
    method: StringName = export(StringName(""), doc="The method's name.")
    args: list = export([], doc="Its arguments, in order.")

    @python_only
    def resolve(self, running: Running) -> tuple[Any, ...]:
        target = _found(running.selector, self.node, "node")
        name = str(self.method)
        if not name or not target.has_method(name):
            raise ActionError(
                f"no_method:{name}",
                f"{target.get_class()} {str(target.get_name())!r} has no method {name!r}",
                "set method to one the node (or its script) has",
            )
        wrong = _arity_problem(target, name, len(self.args))
        if wrong:  # else the engine would print its own error at every call (every frame on_tick)
            raise ActionError(f"args:{name}", wrong, "give args as many values as the method takes")
        return target, StringName(name)

    @python_only
    def run(self, running: Running) -> None:
        target, method = running.resolved(self)
        target.callv(method, list(self.args))

    @python_only
    def problems(self, selector: Any) -> list[str]:
        found = _path_problem(selector, self.node, "node")
        target = _node_at(selector, self.node)
        name = str(self.method)
        if not name:
            found.append("No method set.")
        elif target is not None and not target.has_method(name):
            found.append(f"{target.get_class()} {str(target.get_name())!r} has no method {name!r}.")
        elif target is not None and _arity_problem(target, name, len(self.args)):
            found.append(_arity_problem(target, name, len(self.args)) + ".")
        return found

    @python_only
    def label(self) -> str:
        return f"CallMethodAction {self.method}"


METHOD_FLAG_VARARG = 16


def _arity_problem(node: Any, name: str, given: int) -> str:
    """What is wrong with calling the node's method `name` with `given` arguments, e.g. "method
    'tick' takes 1 argument, 0 given"; "" when they suit it (or it takes any number, or is not listed)."""
    for method in node.get_method_list():
        if str(method["name"]) != name:
            continue
        if int(method["flags"]) & METHOD_FLAG_VARARG:
            return ""
        most = len(method["args"])
        least = most - len(method["default_args"])
        if least <= given <= most:
            return ""
        takes = str(most) if least == most else f"{least} to {most}"
        return f"method {name!r} takes {takes} argument{'' if most == 1 else 's'}, {given} given"
    return ""


def _animated(selector: Any, path: Any) -> Any:
    """The AnimationPlayer / AnimatedSprite2D/3D `path` names; empty: the NPC's first such child."""
    if str(path):
        return _node_at(selector, path)
    npc = selector.get_parent()
    if npc is None:
        return None
    return _first_child(npc, ANIMATED)


def _first_child(npc: Any, kinds: tuple[str, ...]) -> Any:
    for child in npc.get_children():
        if any(child.is_class(kind) for kind in kinds):
            return child
    return None


def _has_animation(player: Any, name: str) -> bool:
    if player.is_class("AnimationPlayer"):
        return bool(player.has_animation(StringName(name)))
    frames = player.sprite_frames
    return frames is not None and bool(frames.has_animation(StringName(name)))


class PlayAnimationAction(MindAction, icon=icon("PlayAnimationAction")):
    """Play an animation on the NPC.

    `player` is an AnimationPlayer, AnimatedSprite2D or AnimatedSprite3D (empty: the NPC's first such
    child) and `animation` its name, e.g. `walk` or `library/walk`."""

    player: NodePath = export(
        NodePath(""), doc="AnimationPlayer or AnimatedSprite2D/3D (empty: the NPC's first such child)."
    )
    animation: StringName = export(StringName(""), doc="The animation to play.")
    speed: float = export(1.0, range=(-10.0, 10.0, 0.01, "or_greater", "or_less"), doc="Playback speed.")

    @python_only
    def resolve(self, running: Running) -> tuple[Any, ...]:
        player = _animated(running.selector, self.player)
        if player is None or not any(player.is_class(kind) for kind in ANIMATED):
            raise ActionError(
                "no_player",
                f"player {str(self.player)!r} is not an AnimationPlayer or AnimatedSprite2D/3D",
                "point player at one (or give the NPC one as a child and leave player empty)",
            )
        name = str(self.animation)
        if not _has_animation(player, name):
            raise ActionError(
                f"no_animation:{name}",
                f"{player.get_class()} {str(player.get_name())!r} has no animation {name!r}",
                "set animation to one of its animations",
            )
        return player, StringName(name), bool(player.is_class("AnimationPlayer"))

    @python_only
    def run(self, running: Running) -> None:
        player, name, has_blend = running.resolved(self)
        if has_blend:  # AnimationPlayer.play(name, custom_blend, custom_speed)
            player.play(name, -1.0, float(self.speed))
        else:  # AnimatedSprite2D/3D.play(name, custom_speed)
            player.play(name, float(self.speed))

    @python_only
    def problems(self, selector: Any) -> list[str]:
        if selector.get_parent() is None:
            return []
        player = _animated(selector, self.player)
        if player is None or not any(player.is_class(kind) for kind in ANIMATED):
            return [f"player {str(self.player)!r} is not an AnimationPlayer or AnimatedSprite2D/3D."]
        if not _has_animation(player, str(self.animation)):
            return [
                f"{player.get_class()} {str(player.get_name())!r} has no animation {str(self.animation)!r}."
            ]
        return []

    @python_only
    def label(self) -> str:
        return f"PlayAnimationAction {self.animation}"


class EmitSignalAction(MindAction, icon=icon("EmitSignalAction")):
    """Emit a signal on the NPC (the selector's parent).

    `signal_name` and its `args`. A signal the NPC does not declare is added to it as a user signal
    the first time, so code can connect it."""

    signal_name: StringName = export(StringName(""), doc="The signal to emit on the NPC.")
    args: list = export([], doc="Its arguments, in order.")

    @python_only
    def resolve(self, running: Running) -> tuple[Any, ...]:
        npc = running.npc
        name = StringName(str(self.signal_name))
        if not str(name):
            raise ActionError("no_signal", "no signal_name set", "set signal_name")
        if not npc.has_signal(name):
            npc.add_user_signal(name)
        return npc, name

    @python_only
    def run(self, running: Running) -> None:
        npc, name = running.resolved(self)
        npc.emit_signal(name, *list(self.args))

    @python_only
    def problems(self, selector: Any) -> list[str]:
        return [] if str(self.signal_name) else ["No signal_name set."]

    @python_only
    def label(self) -> str:
        return f"EmitSignalAction {self.signal_name}"


class MoveAction(MindAction, icon=icon("MoveAction")):
    """Move the NPC's body to its target's last known position, away from it, to a node, or along a route.

    `destination`: the selector's target's last known position (`target`), away from it
    (`away_from_target`, until `flee_distance` from it), a node such as a Marker2D/3D (`node`) or a
    route (`route`: `node`'s Node2D/3D children in order, looping), at `speed`, stopping within
    `arrive_distance`. The body is the NPC (a CharacterBody2D or CharacterBody3D; or `body`); with
    a NavigationAgent2D/3D child (or `navigation_agent`) it
    follows the agent's path, else it steers straight (in 3D, level: its vertical velocity is
    kept). The move lasts while the behavior holds and follows the destination when it moves; it
    stops (velocity zero) on arrival and when the behavior ends. With `face_motion` the body turns
    to face its heading while it moves (a sight on the NPC then looks where it goes). One move per
    body: a later one replaces it. With no target, or a target never perceived, the body stands. A
    NavigationAgent3D's path points lie on the navigation mesh, which may be baked above the floor:
    set the agent's `path_height_offset` to that height, or the body rises to it. The agent's
    avoidance is not used (its `velocity_computed` is left to scripts)."""

    destination: str = export(
        "node",
        hint=PropertyHint.ENUM,
        hint_string=",".join(DESTINATIONS),
        doc="target: the target's last known position; away_from_target; node: a waypoint node; route: "
        "node's children (Marker2D/3D) one after the other, looping.",
    )
    node: NodePath = export(
        NodePath(""),
        doc="For destination node: the node to go to (a Marker2D/3D); route: the parent of the waypoints "
        "(top_level on, so they stay put when the NPC moves).",
    )
    speed: float = export(100.0, range=(0.0, 2000.0, 0.1, "or_greater"), doc="Units per second.")
    arrive_distance: float = export(
        8.0, range=(0.0, 1000.0, 0.1, "or_greater"), doc="Within this distance of the destination: arrived."
    )
    flee_distance: float = export(
        300.0, range=(0.0, 10000.0, 1.0, "or_greater"), doc="For away_from_target: how far to get from it."
    )
    body: NodePath = export(NodePath(""), doc="The CharacterBody2D/3D to move (empty: the NPC).")
    navigation_agent: NodePath = export(
        NodePath(""), doc="The NavigationAgent2D/3D (empty: the NPC's first; none: straight steering)."
    )
    face_motion: bool = export(
        False,
        doc="Turn the body to face where it moves (2D: +X forward; 3D: about Y, -Z forward), so its "
        "sight looks ahead. Off: the body keeps its facing.",
    )

    def _validate_property(self, prop: Any) -> None:
        if (prop.name == "node" and self.destination not in WAYPOINTS) or (
            prop.name == "flee_distance" and self.destination != "away_from_target"
        ):
            prop.usage = PropertyUsage.STORAGE

    @python_only
    def resolve(self, running: Running) -> tuple[Any, ...]:
        body = _found(running.selector, self.body, "body")
        if not any(body.is_class(kind) for kind in BODIES):
            raise ActionError(
                "no_body",
                f"{body.get_class()} {str(body.get_name())!r} is not a CharacterBody2D/3D to move",
                "make the NPC a CharacterBody2D/3D, or point body at one",
            )
        agent = _agent(running.selector, self.navigation_agent, body)
        if self.destination in WAYPOINTS:
            _found(running.selector, self.node, "node")
        elif self.destination not in DESTINATIONS:
            raise ActionError(
                "destination", f"unknown destination {self.destination!r}", "pick one in the list"
            )
        return body, agent, int(body.get_instance_id()), 3 if body.is_class("CharacterBody3D") else 2

    @python_only
    def run(self, running: Running) -> None:
        body, agent, key, dimension = running.resolved(self)
        motion = _motions.get(key)
        if motion is None or motion.action is not self or motion.running is not running:
            ids = (key, int(agent.get_instance_id()) if agent is not None else 0)
            _motions.add(Motion(running, self, body, agent, dimension, ids))
            running.moved.add(key)
            _start_ticking()

    @python_only
    def problems(self, selector: Any) -> list[str]:
        if selector.get_parent() is None:
            return []
        found = []
        body = _node_at(selector, self.body)
        if body is None:
            found.append(f"body {str(self.body)!r} resolves to no node.")
        elif not any(body.is_class(kind) for kind in BODIES):
            found.append(
                f"No body to move: {body.get_class()} {str(body.get_name())!r} is not a CharacterBody2D/3D "
                "(make the NPC one, or set body)."
            )
        if str(self.navigation_agent) and _agent(selector, self.navigation_agent, body) is None:
            found.append(f"navigation_agent {str(self.navigation_agent)!r} is not a NavigationAgent2D/3D.")
        if self.destination in WAYPOINTS:
            found += _path_problem(selector, self.node, "node") if str(self.node) else ["No node to move to."]
            route = _node_at(selector, self.node) if str(self.node) else None
            if self.destination == "route" and route is not None and not _waypoints(route):
                found.append(f"The route {str(self.node)!r} has no Node2D/Node3D children to visit.")
        return found

    @python_only
    def label(self) -> str:
        where = str(self.node) if self.destination in WAYPOINTS else self.destination
        return f"MoveAction {where}"


MoveAction.__dict__["destination"].on_change = lambda action, _v: action.notify_property_list_changed()


def _show_label(action: MindAction, _value: Any) -> None:
    # The inspector labels an action list's element with its resource_name: "MoveAction target",
    # "SetPropertyAction text", not the class name alone (as the sense rules are labelled).
    action.set(StringName("resource_name"), action.label())


def _also_on_change(kind: type, field: str, then: Any) -> None:
    """After the field's own on_change (if any), `then(action, value)` too."""
    earlier = kind.__dict__[field].on_change

    def changed(action: MindAction, value: Any) -> None:
        if earlier is not None:
            earlier(action, value)
        then(action, value)

    kind.__dict__[field].on_change = changed


for _kind, _fields in (
    (SetPropertyAction, ("property",)), (CallMethodAction, ("method",)),
    (PlayAnimationAction, ("animation",)), (EmitSignalAction, ("signal_name",)),
    (MoveAction, ("destination", "node")),
):  # fmt: skip
    for _field in _fields:
        _also_on_change(_kind, _field, _show_label)
for _field in ("destination", "arrive_distance", "flee_distance", "speed", "face_motion"):
    # the moves in flight read them from the table's columns (`_move_settings`)
    _also_on_change(MoveAction, _field, lambda action, _value: _motions.refresh(action))


def _waypoints(route: Any) -> list[Any]:
    """A route's waypoints: its Node2D/Node3D children, in order."""
    return [child for child in route.get_children() if child.is_class("Node2D") or child.is_class("Node3D")]


def _agent(selector: Any, path: Any, body: Any) -> Any:
    if str(path):
        agent = selector.get_node_or_null(path)
        return agent if agent is not None and any(agent.is_class(kind) for kind in AGENTS) else None
    return _first_child(body, AGENTS) if body is not None else None


class AskDecisionAction(MindAction, icon=icon("AskDecisionAction")):
    """Ask the NPC's AsyncLLMDecision what to do, in a situation written from `template`.

    The decision is the NPC's child, or `decision`; nothing is asked while a request is already out.
    The context holds the `situation` written from `template`, the NPC's sourced
    inputs, its target and (added by the decision node) its strongest memories. Template fields, in
    Python's format syntax (`{since_seen:.0f}`): `npc_name`, `behavior`, `target_id` (0: none),
    `target_name` ("someone" when the target's node is gone or unknown), `since_seen` (seconds
    since the target was last perceived; inf: never), `distance` (from the NPC to the target's last
    known position; inf: unknown), `awareness` (0 none .. 3 pursue), `strongest_type` and
    `strongest_r` (the NPC's strongest memory: its type's name and R; "nothing" and 0.0 when it
    remembers nothing), and each sourced input of the selector's considerations by its key (as
    `get_sourced_inputs()` gives it; a field above keeps its name). The answer arrives as the decision's
    `decision_made` / `decision_fallback`, and its intent steers the selector as before. Unknown
    (infinite) numbers are left out of the facts; `target_id` is never sent to the model."""

    decision: NodePath = export(
        NodePath(""), doc="The AsyncLLMDecision (empty: the NPC's AsyncLLMDecision child)."
    )
    template: str = export(
        "{target_name} was last seen {since_seen:.0f} s ago, {distance:.0f} m away",
        multiline=True,
        doc="The situation text; fields: npc_name, behavior, target_id, target_name, since_seen, "
        "distance, awareness, strongest_type, strongest_r and each sourced input by its key.",
    )

    @python_only
    def resolve(self, running: Running) -> tuple[Any, ...]:
        return (_decision_to_use(running.selector, self.decision),)

    @python_only
    def run(self, running: Running) -> None:
        (decision,) = running.resolved(self)
        fields = situation_fields(running)
        try:
            text = string.Formatter().vformat(str(self.template), (), fields)
        except KeyError as error:
            known = ", ".join(sorted(fields))
            raise ActionError(
                f"template_field:{error.args[0]}",
                f"the template names an unknown field {{{error.args[0]}}}",
                f"use one of: {known}",
            ) from None
        except (ValueError, IndexError, TypeError) as error:
            raise ActionError(
                "template", f"the template cannot be written: {error}", "fix its {...} fields"
            ) from None
        if decision.is_pending():
            return  # one question at a time: the answer to the one out is still to come
        context = {key: value for key, value in fields.items() if _told(key, value)}
        context["situation"] = text
        decision.request_decision(context)

    @python_only
    def problems(self, selector: Any) -> list[str]:
        return _decision_problems(selector, self.decision, "ask")

    @python_only
    def label(self) -> str:
        return "AskDecisionAction"


class AbortDecisionAction(MindAction, icon=icon("AbortDecisionAction")):
    """Drop the NPC's AsyncLLMDecision request (its child, or `decision`) while one is pending or its
    signal is owed in this frame, as `AsyncLLMDecision.abort()` does: no signal for it (not even the
    one owed), its late answer discarded and its last intent no longer steering. Put it in the
    `on_enter` of a behavior that must not wait for the model (a flee from a grenade). With nothing
    pending or owed it does nothing: an answer already applied keeps steering."""

    decision: NodePath = export(
        NodePath(""), doc="The AsyncLLMDecision (empty: the NPC's AsyncLLMDecision child)."
    )

    @python_only
    def resolve(self, running: Running) -> tuple[Any, ...]:
        return (_decision_to_use(running.selector, self.decision),)

    @python_only
    def run(self, running: Running) -> None:
        (decision,) = running.resolved(self)
        if decision.is_pending() or decision.get_server_id() in server().owed_in_delivery:
            decision.abort()  # (an answer already applied is left alone: its intent may be why)

    @python_only
    def problems(self, selector: Any) -> list[str]:
        return _decision_problems(selector, self.decision, "abort")

    @python_only
    def label(self) -> str:
        return "AbortDecisionAction"


def _decision_to_use(selector: Any, path: Any) -> Any:
    decision = decision_of(selector, path)
    if decision is None:
        raise ActionError(
            "no_decision",
            f"decision {str(path)!r} is not an AsyncLLMDecision",
            "give the NPC an AsyncLLMDecision child, or point decision at one",
        )
    return decision


def _decision_problems(selector: Any, path: Any, verb: str) -> list[str]:
    if selector.get_parent() is not None and decision_of(selector, path) is None:
        return [f"No AsyncLLMDecision to {verb} (give the NPC one as a child, or set decision)."]
    return []


def _told(key: str, value: Any) -> bool:
    """What of the fields goes to the model as facts: no id, no unknown (infinite) number."""
    if key == "target_id" or not isinstance(value, int | float | str):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def situation_fields(running: Running) -> dict[str, Any]:
    """The values an AskDecisionAction's template can name (see its doc), read now."""
    selector, npc = running.selector, running.npc
    fields = dict(
        npc_name=str(npc.get_name()), behavior=running.name, target_id=0, target_name="someone",
        since_seen=math.inf, distance=math.inf, awareness=0, strongest_type="nothing", strongest_r=0.0,
    )  # fmt: skip
    memory = targets.stream_of(selector, report=False)
    target = targets.target_id(selector)
    if target:
        fields["target_id"] = target
        node = targets.target_node(selector)
        if node is not None and node.is_class("Node"):
            fields["target_name"] = str(node.get_name())
        where = targets.target_position(selector)
        if where is not None and (npc.is_class("Node2D") or npc.is_class("Node3D")):
            fields["distance"] = (npc.global_position - where).length()
        if memory is not None:
            fields["since_seen"] = float(memory.get_seconds_since_seen(target))
            fields["awareness"] = int(memory.awareness_of(target))
    if memory is not None:
        remembered = memory.get_memories()
        if remembered:
            strongest = remembered[0]
            fields["strongest_type"] = MemoryType(int(strongest["memory_type"])).name.lower()
            fields["strongest_r"] = float(strongest.get("retrievability", 0.0))
    for key, value in inputs.sourced_context(selector).items():  # the NPC's sourced inputs
        fields.setdefault(key, value)
    return fields


# --- the move rule and the engine side -----------------------------------------------------------
def plan(
    positions: np.ndarray, anchors: np.ndarray, away: np.ndarray, arrive: np.ndarray, flee: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The move rule, for every moving body of a dimension at once (rows: bodies): where each goes
    this frame and whether it moves. `anchors` are the waypoints' or targets' positions (NaN: none,
    it stands); an `away` row flees its anchor to `flee` from it (beyond that: far enough, it
    stands); a body within `arrive` of its goal has arrived."""
    offset = positions - anchors
    distance = np.linalg.norm(offset, axis=1)
    unit = np.zeros_like(offset)
    unit[:, 0] = 1.0  # right on the threat: any way out
    near = ~(distance > 1e-6)
    unit = np.where(near[:, None], unit, offset / np.where(near, 1.0, distance)[:, None])
    goals = np.where(away[:, None], anchors + unit * flee[:, None], anchors)
    moving = np.isfinite(distance) & ~(away & (distance >= flee))
    moving &= np.linalg.norm(goals - positions, axis=1) > arrive
    return goals, moving


STAND, HALT, MOVE, FRESH = 0, 1, 2, 3  # what the engine side does with a body this frame


def steer(  # noqa: PLR0917 - the moving bodies' columns
    dimension: int, positions: np.ndarray, points: np.ndarray, speeds: np.ndarray, modes: np.ndarray,
    faces: np.ndarray, guided: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The move's engine half, for every moving body of a dimension at once (rows: bodies; modes:
    STAND..FRESH): each body's velocity toward its point (its agent's next path position when
    `guided`, else its goal, and then in 3D level, the body's own vertical velocity kept), its yaw
    (turned to when its action has face_motion) and its `interface.move_bodies` mode. A body on
    its point halts as one told to (HALT: velocity zero, in 3D its vertical kept); one that stands
    is left alone."""  # fmt: skip
    heading = points - positions
    level = ~guided if dimension == 3 else np.zeros(len(modes), bool)
    if dimension == 3:
        heading[level, 1] = 0.0
    length = np.linalg.norm(heading, axis=1)
    going = modes >= MOVE
    moving = going & (length > 1e-6)
    velocities = np.zeros_like(heading)
    velocities[moving] = heading[moving] * (speeds[moving] / length[moving])[:, None]
    codes = np.where(moving, MOVE_GO, np.where(going | (modes == HALT), MOVE_HALT, MOVE_SKIP))
    if dimension == 2:
        yaws = np.arctan2(heading[:, 1], heading[:, 0])
        facing = faces.astype(bool)
    else:
        yaws = np.arctan2(-velocities[:, 0], -velocities[:, 2])
        facing = faces.astype(bool) & (np.hypot(velocities[:, 0], velocities[:, 2]) > 1e-3)
        codes |= np.where((codes == MOVE_HALT) | (level & moving), MOVE_KEEP_VERTICAL, 0)
    codes |= np.where(moving & facing, MOVE_FACE, 0)
    return velocities, yaws, codes.astype(np.uint8)


# The engine side of the physics pass besides the poses, the moves (`interface.move_bodies`) and
# the on_tick property sets (`interface.call_many`), looped at the engine's own cost, nodes passed
# as instance ids: the navigation agents' next path positions (each agent given its body's goal
# when it moved, or its first one: `fresh`; a freed agent's body goes straight to its goal).
ENGINE_SOURCE = """extends RefCounted


func guide(dimension: int, agents: PackedInt64Array, goals: Variant, fresh: PackedByteArray) -> Array:
	var points: Variant = goals.duplicate()  # a PackedVector2Array or PackedVector3Array, as goals
	var guided := PackedByteArray()
	guided.resize(agents.size())
	for i in agents.size():
		var agent := instance_from_id(agents[i])
		if agent is NavigationAgent2D if dimension == 2 else agent is NavigationAgent3D:
			if fresh[i] or agent.target_position.distance_to(goals[i]) > 1e-3:
				agent.target_position = goals[i]
			points[i] = agent.get_next_path_position()
			guided[i] = 1
	return [points, guided]
"""
_engine: list[Any] = []  # the ENGINE_SOURCE object, made on first use


def _engine_side() -> Any:
    if not _engine:
        _engine.append(engine_script(ENGINE_SOURCE))
    return _engine[0]


# --- the runner ---------------------------------------------------------------------------------
@dataclass(eq=False)
class Running:
    """One selector's running behavior: what `tick` runs each physics frame, and its history."""

    selector: Any
    npc: Any
    name: str = ""
    behavior: Any = None
    history: deque = field(default_factory=lambda: deque(maxlen=HISTORY))
    ticked: dict[int, dict[str, Any]] = field(default_factory=dict)  # on_tick index -> its entry this run
    found: dict[int, tuple[Any, ...]] = field(default_factory=dict)  # id(action) -> its resolve(), this run
    legs: dict[int, int] = field(default_factory=dict)  # id(route move) -> its waypoint (kept: resumes)
    # the bodies its moves drove (`_motions` keys): a later move of another running may have taken one
    moved: set[int] = field(default_factory=set)

    def resolved(self, action: MindAction) -> tuple[Any, ...]:
        """`action.resolve(self)`, kept for this run of the behavior and found again only when its
        node is freed: the per-frame path is the action's effect alone."""
        found = self.found.get(id(action))
        if found is None or not found[0]:
            found = self.found[id(action)] = action.resolve(self)
        return found

    def waypoint(self, action: MoveAction, dimension: int) -> Any:
        """A move's destination node (a Node2D/3D of the body's dimension), kept as `resolved` keeps nodes."""
        key = -id(action)
        found = self.found.get(key)
        if found is None or not found[0]:
            node = _node_at(self.selector, action.node)
            if node is None:
                raise ActionError("missing:node", f"node {str(action.node)!r} is gone", "point node at one")
            if action.destination == "route":
                node = self._leg(action, node)
            if not (node.is_class("Node2D") or node.is_class("Node3D")):
                raise ActionError(
                    "not_placed",
                    f"node {str(action.node)!r} is a {node.get_class()}, which has no position",
                    "point node at a Node2D or Node3D (a Marker2D/3D)",
                )
            if not node.is_class(f"Node{dimension}D"):
                raise ActionError(
                    "dimension",
                    f"node {str(action.node)!r} is a {node.get_class()}, not in the {dimension}D body's",
                    f"point node at a Node{dimension}D (a Marker{dimension}D)",
                )
            found = self.found[key] = (node,)
        return found[0]

    def _leg(self, action: MoveAction, route: Any) -> Any:
        """The route's waypoint this move heads for now (the first one when the behavior starts)."""
        stops = _waypoints(route)
        if not stops:
            raise ActionError(
                "empty_route",
                f"the route {str(action.node)!r} has no Node2D/Node3D children",
                "add Marker2D/3D children to the route node, in the order to visit them",
            )
        return stops[self.legs.get(id(action), 0) % len(stops)]

    def next_leg(self, action: MoveAction) -> None:
        """The route's waypoint is reached: head for the next one (found at the next frame)."""
        self.legs[id(action)] = self.legs.get(id(action), 0) + 1
        self.found.pop(-id(action), None)


@dataclass(eq=False)
class Motion:
    """A body a move action drives, until its behavior ends (one per body: the latest move wins)."""

    running: Running
    action: MoveAction
    body: Any
    agent: Any
    dimension: int  # 2 or 3, the body's
    ids: tuple[int, int]  # the body's and the agent's instance ids (0: no agent)
    row: int = -1  # its row in `_motions.columns[dimension]`, which holds its per-frame state


def _move_settings(action: MoveAction) -> tuple[float, ...]:
    """What `_move` reads of a move action, one number each (`motion_table.SETTINGS`): the
    destination (its index in DESTINATIONS; one not in it moves as "target"), the arrive and
    flee distances, the speed and face_motion. The table reads it when a move of the action
    starts and when one of these changes (`_move_setting_changed`), not every frame."""
    destination = str(action.destination)
    kind = DESTINATIONS.index(destination) if destination in DESTINATIONS else 0
    return (
        kind, float(action.arrive_distance), float(action.flee_distance), float(action.speed),
        bool(action.face_motion),
    )  # fmt: skip


_running: dict[int, Running] = {}  # selector instance id -> its running behavior
# The runnings whose behavior has an on_tick action, and them in `_running`'s order (None: to be
# found again): a physics frame visits these only, not every selector (`_retick` keeps them).
_ticking_runs: dict[int, Running] = {}
_tick_order: list[Running] | None = []
_motions: MotionTable = MotionTable(_move_settings)  # body instance id -> its move; the moves' columns
_ticking: list[Any] = []  # (tree, the callable) while `tick` is connected to its physics_frame


_EXITED, _ENTERED = StringName("behavior_exited"), StringName("behavior_entered")
# While the server delivers a frame's signals, behavior_exited and behavior_entered wait here to go
# in its one crossing (`hold_signals`); an action about to run emits those waiting first, so the
# order is as if each had been emitted at once.
_held: list[list[tuple[Any, ...]]] = []


def hold_signals() -> list[tuple[Any, ...]]:
    """From now until `release_signals`, `change` holds its signals in the list returned."""
    held: list[tuple[Any, ...]] = []
    _held.append(held)
    return held


def release_signals() -> None:
    _held.pop()


def _emit(selector: Any, signal: StringName, behavior: str) -> None:
    if _held:
        _held[-1].append((selector._id, signal, StringName(behavior)))
    else:
        selector.emit_signal(signal, StringName(behavior))


def _emit_held() -> None:
    """The signals held, emitted now: an action runs next."""
    if _held and _held[-1]:
        calls = _held[-1][:]
        _held[-1].clear()
        emit_signals(calls)


def change(selector: Any, name: str) -> None:
    """The selector chose `name`: the old behavior's on_exit and behavior_exited, then the new
    one's on_enter and behavior_entered."""
    key = selector._id
    running = _running.get(key)
    if running is None:
        npc = selector.get_parent()
        if npc is None:
            return  # a selector outside any NPC has no one to act for
        running = _running[key] = Running(selector, npc)
    if running.name == name:  # the same behavior again (a redefined selector): its latest resource
        running.behavior = _behavior_named(selector, name)
        _retick(key, running)
        return
    old = running.name
    if old:
        _stop_motions(running)
        _run_list(running, "on_exit")
        _emit(selector, _EXITED, old)
    running.name = name
    running.ticked, running.found = {}, {}
    running.behavior = _behavior_named(selector, name)
    _retick(key, running)
    _run_list(running, "on_enter")
    _emit(selector, _ENTERED, name)
    _start_ticking()


def changes_apart(selector: Any) -> bool:
    """Whether `change(selector, ...)` would only keep its books and hold its two signals: no action
    runs, no move stops, nothing reads the engine (its running behavior and its behaviors' names
    known, none of its behaviors acts, nothing ticks or moves). Then the update thread may run it
    (`NpcMindServer._frame_apart`): the main thread's Python is waiting meanwhile."""
    running = _running.get(selector._id)
    named = selector.__dict__.get("_behaviors_by_name")
    if running is None or named is None or running.moved or _ticking_runs or _motions or _ticking:
        return False
    return not any(
        action is not None
        for behavior in named.values() for phase in PHASES for action in getattr(behavior, phase)
    )  # fmt: skip


def _retick(key: int, running: Running) -> None:
    """Whether `tick` visits this running: while its behavior has an on_tick action."""
    global _tick_order  # noqa: PLW0603 - the cached order, found again when the set changes
    behavior = running.behavior
    wanted = behavior is not None and any(action is not None for action in behavior.on_tick)
    if wanted != (key in _ticking_runs):
        if wanted:
            _ticking_runs[key] = running
        else:
            del _ticking_runs[key]
        _tick_order = None


def on_tick_changed(behavior: Any, _value: Any) -> None:
    """A behavior's on_tick list was set (the inspector, a script): the runnings holding it again."""
    for key, running in list(_running.items()):
        if running.behavior is behavior:
            _retick(key, running)


def _behavior_named(selector: Any, name: str) -> Any:
    """The selector's first behavior named `name`, or None. The names are read once, until its
    definition changes (`UtilitySelector._redefine` drops them with its other per-definition caches)."""
    named = selector.__dict__.get("_behaviors_by_name")
    if named is None:
        named = {str(b.name): b for b in reversed(list(selector.behaviors)) if b is not None}
        selector.__dict__["_behaviors_by_name"] = named
    return named.get(name)


def _run_list(running: Running, phase: str) -> None:
    behavior = running.behavior
    if behavior is None:
        return
    for index, action in enumerate(getattr(behavior, phase)):
        if action is not None:
            _emit_held()
            _run_one(running, phase, index, action)


def _run_one(running: Running, phase: str, index: int, action: MindAction, now: float | None = None) -> bool:
    """Run one action; a mistake is reported once (naming the node, behavior, action and fix) and
    the action skipped. True when it ran."""
    try:
        action.run(running)
    except Exception as error:  # an ActionError, or anything the engine refused: skipped, never lost
        error = _as_mistake(error)
        _note(running, phase, index, action, False, now)
        mistakes.report(
            running.selector,
            f"action:{running.name}:{phase}:{index}:{error.cause}",
            f"behavior {running.name!r}, {phase}[{index}] {action.label()}: {error}; the action is skipped.",
            fix=error.fix + ".",
        )
        return False
    _note(running, phase, index, action, True, now)
    return True


def _as_mistake(error: Exception) -> ActionError:
    if isinstance(error, ActionError):
        return error
    return ActionError(
        f"error:{type(error).__name__}", f"it failed ({type(error).__name__}: {error})", "check its fields"
    )


def _note(  # noqa: PLR0917 - one entry's fields
    running: Running, phase: str, index: int, action: MindAction, ok: bool, now: float | None
) -> None:
    """The history: an on_tick action's entry of this run counts its repeats instead of adding one
    (`now`: the server's clock, read once a pass by `tick`)."""
    if now is None:
        now = server().core.now()
    history = running.history
    if phase == "on_tick":
        entry = running.ticked.get(index)
        if entry is not None and (entry is history[-1] or any(kept is entry for kept in history)):
            entry["times"] += 1
            entry["time"], entry["ok"] = now, ok
            return
    entry = {
        "time": now, "behavior": running.name, "phase": phase, "index": index, "action": action.label(),
        "ok": ok, "times": 1,
    }  # fmt: skip
    history.append(entry)
    if phase == "on_tick":
        running.ticked[index] = entry


def recent(selector: Any) -> list[dict[str, Any]]:
    """The selector's last actions, oldest first: {time, behavior, phase, index, action, ok, times}
    (an on_tick action is one entry per run of its behavior, `times` counting its frames)."""
    running = _running.get(selector.get_instance_id())
    return [dict(entry) for entry in running.history] if running is not None else []


def _stop_motions(running: Running) -> None:
    for motion in _motions_of(running):
        if motion.body:
            _halt(motion.body)


def _motions_of(running: Running) -> list[Motion]:
    """The moves of `running` still driving their bodies, taken out of `_motions`."""
    found = []
    for key in running.moved:
        motion = _motions.get(key)
        if motion is not None and motion.running is running:
            _motions.remove(key)
            found.append(motion)
    running.moved.clear()
    return found


def _halt(body: Any) -> None:
    velocity = body.velocity
    body.velocity = Vector3(0.0, velocity.y, 0.0) if isinstance(velocity, Vector3) else Vector2()


def _start_ticking() -> None:
    """`tick` on every physics frame, while a behavior ticks or a body moves: only then, so a frame
    with nothing to tick makes no Python call (with the server's update on its thread, such a call
    would wait for the update)."""
    if _ticking or not (_ticking_runs or _motions):
        return
    tree = objects.singleton("Engine").get_main_loop()
    if tree is None or not tree.is_class("SceneTree"):
        return
    ticked = python_function(lambda: tick(tree))
    tree.connect(_PHYSICS_FRAME, ticked)
    _ticking.append((tree, ticked))


def _stop_ticking() -> None:
    if _ticking:
        tree, ticked = _ticking.pop()
        if tree.is_valid and tree.is_connected(_PHYSICS_FRAME, ticked):
            tree.disconnect(_PHYSICS_FRAME, ticked)


_PHYSICS_FRAME = StringName("physics_frame")


def tick(tree: Any) -> None:
    """Once per physics frame: every running behavior's on_tick, then every move. While the tree is
    paused, only the NPCs that process when paused (process_mode) act."""
    global _tick_sets, _tick_order  # noqa: PLW0603 - the pass's property sets, while it runs
    if not _ticking_runs and not _motions:
        _stop_ticking()  # nothing ticks or moves (behaviors with on_enter/on_exit actions only)
        return
    paused = bool(tree.is_paused())
    now = server().core.now()
    _tick_sets = []
    if _tick_order is None:
        _tick_order = [running for key, running in _running.items() if key in _ticking_runs]
    try:
        for running in list(_tick_order):  # a freed selector left it (`notified`)
            if paused and not running.npc.can_process():
                continue
            behavior = running.behavior
            if behavior is not None:
                for index, action in enumerate(behavior.on_tick):
                    if action is not None:
                        if type(action) is not SetPropertyAction:
                            _write_sets()  # in order: what another action reads is written first
                        _run_one(running, "on_tick", index, action, now)
        _write_sets()
    finally:
        _tick_sets = None
    for dimension, columns in _motions.columns.items():  # a freed selector dropped its moves (`notified`)
        rows = columns.live()
        if paused:
            bodies = [columns.motions[row].body for row in rows.tolist()]
            rows = rows[[bool(body and body.can_process()) for body in bodies]]
        if rows.size:
            _move(dimension, rows)


# (node's instance id, property path, value, the running it is for) to write
_tick_sets: list[tuple[int, Any, Any, Running]] | None = None


def _write_sets() -> None:
    """The on_tick property sets met so far in this pass, written in one crossing (`set_indexed` of
    each; a freed node's skipped, one that fails reported once per selector, the rest written)."""
    if _tick_sets:
        sets = _tick_sets[:]
        _tick_sets.clear()
        calls = [(node, path, value) for node, path, value, _ in sets]
        for position, reason in interface.call_many("Object", "set_indexed", calls):
            _node, path, value, running = sets[position]
            mistakes.report(
                running.selector,
                f"action:{running.name}:on_tick:set:{path}",
                f"behavior {running.name!r}, on_tick SetPropertyAction {path}: the value {value!r} was "
                f"not written ({reason}); the set is skipped.",
                fix="give value one the property takes (see its inspector).",
            )  # fmt: skip


def _move(dimension: int, rows: np.ndarray) -> None:
    """One physics frame of the moves in these rows of the dimension's table: one read of the
    bodies' and waypoints' positions, the move rule (`plan`) and its engine half (`steer`) for
    all, and one crossing that moves them (`interface.move_bodies`); the agents' paths, if any
    body has one, in one engine call before."""
    columns = _motions.columns[dimension]
    count = len(rows)
    read = np.empty((2 * count, 2 * dimension))
    ids = np.concatenate((columns.bodies[rows], columns.waypoints[rows])).astype(np.uint64)
    interface.node_poses(ids, dimension, read)  # (their facings are not used)
    positions, anchors = read[:count, :dimension], read[count:, :dimension]
    placed = np.isfinite(positions[:, 0])
    slots = columns.actions[rows]
    kinds, arrive, flee, speeds, faces = (
        _motions.kinds[slots], _motions.arrive, _motions.flee, _motions.speeds, _motions.faces
    )  # (by slot, read before a move ends and frees its slot)
    for body in columns.bodies[rows[~placed]].tolist():  # a body freed apart from its NPC: its move ends
        _motions.remove(body)
    waypointed = kinds >= DESTINATIONS.index("node")
    unknown = placed & ~np.isfinite(anchors[:, 0])  # no waypoint yet, or a target's point
    motions = columns.motions
    for position in np.flatnonzero(unknown & waypointed).tolist():
        anchors[position] = _waypoint_at(motions[int(rows[position])])
    aiming = unknown & ~waypointed  # the rows that go to (or from) their target's last known position
    selectors = [motions[row].running.selector for row in rows[aiming].tolist()]
    anchors[aiming] = targets.target_points(selectors, dimension)
    kept = columns.bodies[rows] != 0  # less the ended moves (freed bodies, a waypoint's mistake)
    if not kept.all():
        if not kept.any():
            return
        rows, positions, anchors = rows[kept], positions[kept], anchors[kept]
        slots, kinds = slots[kept], kinds[kept]
    away = kinds == DESTINATIONS.index("away_from_target")
    goals, going = plan(positions, anchors, away, arrive[slots], flee[slots])
    fresh, standing = columns.fresh[rows], columns.standing[rows]
    modes = np.where(going, np.where(fresh, FRESH, MOVE), np.where(standing, STAND, HALT)).astype(np.uint8)
    columns.standing[rows] = ~going  # arrived, or nowhere to go: the velocity is zeroed once, not every frame
    columns.fresh[rows] = fresh & ~going
    at_stop = (kinds == DESTINATIONS.index("route")) & ~going & (columns.waypoints[rows] != 0)
    for row in rows[at_stop].tolist():  # at a waypoint: on to the next
        motion = motions[row]
        motion.running.next_leg(motion.action)
        columns.waypoints[row] = 0
    points, guided = goals, np.zeros(len(rows), bool)
    agents = columns.agents[rows]
    asked = (modes >= MOVE) & (agents != 0)  # the moving bodies with a navigation agent
    if asked.any():
        fresh_goals = (modes[asked] == FRESH).astype(np.uint8)
        wanted = goals[asked].astype(np.float32)  # (a PackedVector2Array or PackedVector3Array)
        found = _engine_side().call("guide", dimension, agents[asked], wanted, fresh_goals)
        points = goals.copy()
        points[asked] = np.asarray(found[0], dtype=np.float64).reshape(-1, dimension)
        guided[asked] = np.asarray(found[1], dtype=bool)
    velocities, yaws, codes = steer(dimension, positions, points, speeds[slots], modes, faces[slots], guided)
    interface.move_bodies(dimension, columns.bodies[rows].astype(np.uint64), velocities, yaws, codes)


def _waypoint_at(motion: Motion) -> Any:
    """A node destination's position this frame (NaN: none this frame), its node being found (first,
    or freed: the read was NaN); a mistake stops the move, reported once."""
    waypoints = _motions.columns[motion.dimension].waypoints
    waypoints[motion.row] = 0
    try:
        node = motion.running.waypoint(motion.action, motion.dimension)
    except Exception as error:
        _stop(motion, _as_mistake(error))
        return np.nan
    waypoints[motion.row] = node._id
    return _position(node)


def _position(node: Any) -> tuple[float, ...]:
    at = node.global_position
    return (at.x, at.y) if isinstance(at, Vector2) else (at.x, at.y, at.z)


def _stop(motion: Motion, error: ActionError) -> None:
    """A move's mistake: reported once per selector and cause, the move ends and its body stops."""
    _motions.remove(motion.ids[0])
    running = motion.running
    mistakes.report(
        running.selector,
        f"action:{running.name}:move:{error.cause}",
        f"behavior {running.name!r}, {motion.action.label()}: {error}; the move stops.",
        fix=error.fix + ".",
    )
    if motion.body:
        _halt(motion.body)


def close() -> None:
    """Drop the engine side (the server singleton is being freed: nothing runs after)."""
    _stop_ticking()
    _engine.clear()


def configuration_warnings(selector: Any) -> list[str]:
    """Every action's problems for this selector's NPC, each naming its behavior and place."""
    warnings = []
    for behavior in selector.behaviors:
        if behavior is None:
            continue
        for phase in PHASES:
            for index, action in enumerate(getattr(behavior, phase)):
                if action is None:
                    empty = f"Behavior {str(behavior.name)!r}: {phase}[{index}] is empty (it is skipped)."
                    warnings.append(empty)
                    continue
                for problem in action.problems(selector):
                    warnings.append(
                        f"Behavior {str(behavior.name)!r}, {phase}[{index}] {action.label()}: {problem}"
                    )
    return warnings


def notified(selector: Any, what: int) -> None:
    """A selector is freed: its running behavior and its moves go (and the resources they hold)."""
    if what != NOTIFICATION_PREDELETE:
        return
    global _tick_order  # noqa: PLW0603 - found again without it
    key = selector.get_instance_id()
    running = _running.pop(key, None)
    if _ticking_runs.pop(key, None) is not None:
        _tick_order = None
    if running is not None:
        _motions_of(running)


__all__ = [
    "AbortDecisionAction", "AskDecisionAction", "CallMethodAction", "EmitSignalAction", "MindAction",
    "MoveAction", "PlayAnimationAction", "SetPropertyAction",
]  # fmt: skip
