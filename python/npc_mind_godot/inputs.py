"""Inputs without code: a UtilityConsideration's input read from memory, the world or a blackboard.

A consideration's `source` (one of the resources below, chosen in the inspector) gives its input
instead of a Dictionary key. Its key in the definition is `input_key` when set, else the source's
own name (e.g. "awareness(target)"), so `evaluate(context)` still takes a value for it: a value the
context gives wins over the sourced one.

A selector whose inputs are sourced chooses by itself (`auto_evaluate`): each frame, before the
server's selectors choose, the feed (`npc_mind_godot.selector_feed.Feed`) reads every auto-evaluating
selector's sources, one source at a time for all of them (one look per memory pool, one numpy
distance for all NPCs), writes them with one `set_inputs` per input, and the server's batch chooses
and emits `behavior_changed`. A source that cannot answer (no MemoryStream, a NodePath or property
that resolves to nothing, a value that is not a number) gives the consideration's default_input
(use_default_input on) or 0, and its mistake is reported once per selector and cause; a source that
has nothing to say yet (no target, never seen, a blackboard key not written) gives its
`when_unknown` value, which is no mistake.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from gdbridge import classes
from gdbridge.declare import Export, export, python_only
from gdbridge.types import NodePath, PropertyHint, StringName
from npc_mind.memory import MemoryType
from npc_mind.server.looks import NO_ENTITY, strongest
from npc_mind_godot import mistakes, targets
from npc_mind_godot._common import decision_of, has_property, icon, server

AUTO_EVALUATE = ("when_all_sourced", "always", "never")
FAR = 1.0e6  # when_unknown of a distance or an age: as good as never seen


class InputSource(classes.Resource, icon=icon("InputSource"), abstract=True):
    """Where a UtilityConsideration's input comes from, instead of a key of evaluate()'s Dictionary.

    Pick one of AwarenessInput, RecallInput, DistanceInput, SinceSeenInput, PropertyInput,
    BlackboardInput or IntentInput as the consideration's `source` in the inspector. A
    UtilitySelector whose considerations are all sourced chooses by itself every frame on the
    batched path (`UtilitySelector.auto_evaluate`) and emits `behavior_changed`: no script calls
    `evaluate`.

    The key of a sourced consideration is its `input_key` when set, else the source's name
    (`awareness(target)`, `recall(strongest,hostile)`, `distance(target)`, `since_seen(target)`,
    `property(npc:health)`, `blackboard(hunger)`); `evaluate(context)` still takes a value for that
    key, and a given value wins. The "target" is the selector's (see `UtilitySelector.target_from`);
    the NPC is the selector's parent. Memory reads only look: they never wake a memory (only a
    recall does).

    An input with nothing to say yet (no target, never perceived, a blackboard key never written, no
    target node) is the source's `when_unknown` (distance and seconds: 1,000,000, "as good as never";
    awareness and R: 0). An input that cannot be read because of a mistake (no MemoryStream, a
    `node_path` or property that resolves to nothing, a value that is not a number, an NPC that is not
    a Node2D/Node3D for a distance) gives the consideration's `default_input` (with
    `use_default_input`) or 0, and the mistake is reported once per selector and cause, naming the
    node and the fix; the selector's configuration warnings show it in the editor.

    **Cost.** Each frame, each source is read once for all the auto-evaluating selectors that share
    it, in one look per memory pool (`npc_mind.server.looks`), and written with one `set_inputs`; a
    distance reads each NPC's global position once a frame, a property one engine read per NPC.
    """

    @python_only
    def input_name(self) -> str:
        """The key a consideration without input_key reads under (stable for the same settings)."""
        raise NotImplementedError

    @python_only
    def reads_memory(self) -> bool:
        """True when the selector's MemoryStream is read (a target's sighting, a memory's R)."""
        return True

    @python_only
    def reads_engine(self) -> bool:
        """True when `gather` reads the engine (a node's position or property): the feed then runs
        on the main thread, also with NpcMindServer.update_on_thread."""
        return False

    @python_only
    def gather(self, frame: Frame, rows: np.ndarray) -> np.ndarray:
        """The value for each of `rows` of the frame's selectors; NaN where it cannot answer (the
        mistake already reported): the consideration's fallback then."""
        raise NotImplementedError

    @python_only
    def warnings(self, selector: Any) -> list[str]:
        """What is wrong with this source on `selector`, for the editor."""
        return []


class _MemoryReads:
    """AwarenessInput's and RecallInput's fields and reads (a plain mixin): the same look, one
    gives the awareness level, the other R."""

    _KIND = ""
    of: str = export(
        "target",
        hint=PropertyHint.ENUM,
        hint_string="target,strongest",
        doc="target: the selector's target's strongest memory (of memory_types, if any is checked); "
        "strongest: the NPC's strongest memory of memory_types (none checked: any type).",
    )
    memory_types: int = export(
        0, hint=PropertyHint.FLAGS, hint_string=targets.MEMORY_TYPE_FLAGS, doc="None checked: any type."
    )

    @python_only
    def input_name(self) -> str:
        # the checked types by name (as the inspector lists them), not the flags' number
        mask = int(self.memory_types)
        names = [kind.name.lower() for kind in MemoryType if mask & (1 << int(kind))]
        types = f",{'+'.join(names)}" if names else ""
        return f"{self._KIND}({self.of}{types})"

    @python_only
    def gather(self, frame: Frame, rows: np.ndarray) -> np.ndarray:
        streams = frame.streams_at(rows)
        of_target = self.of == "target"
        wanted = frame.targets[rows] if of_target else np.zeros(rows.size, dtype=np.int64)
        if self._KIND == "awareness" and of_target and not self.memory_types:
            found = frame.mind.awareness_batch(streams, wanted).astype(np.float64)  # long-term too
        else:
            _, r, level = strongest(
                frame.mind.memory, streams, entities=wanted, type_masks=np.full(rows.size, self.memory_types),
                floors=np.zeros(rows.size), now=frame.now,
            )  # fmt: skip
            found = (level if self._KIND == "awareness" else r).astype(np.float64)
        if of_target:
            found[wanted == NO_ENTITY] = 0.0  # no target: knows nothing of it
        found[streams == 0] = np.nan  # no stream (reported): the fallback
        return found


class AwarenessInput(_MemoryReads, InputSource, icon=icon("AwarenessInput")):
    """The NPC's awareness of its target: 0 none, 1 puzzled, 2 search, 3 pursue.

    As MemoryStream.awareness_of gives it: of the selector's target, or of the NPC's strongest memory
    of memory_types. Only looks: never wakes a memory."""

    _KIND = "awareness"


class RecallInput(_MemoryReads, InputSource, icon=icon("RecallInput")):
    """How well the NPC remembers its target: R, the retrievability (0..1) of its strongest memory.

    Of the selector's target, or of the NPC's strongest memory of memory_types. Only looks: never
    wakes a memory (0 once forgotten)."""

    _KIND = "recall"


class DistanceInput(InputSource, icon=icon("DistanceInput")):
    """How far the NPC is from where it last perceived its target.

    From the NPC (the selector's parent, a Node2D or Node3D) to the target's last known position
    (MemoryStream.get_last_known_position), in the world's units."""

    when_unknown: float = export(FAR, doc="The input while there is no target or it was never perceived.")

    @python_only
    def input_name(self) -> str:
        return "distance(target)"

    @python_only
    def reads_engine(self) -> bool:
        return True

    @python_only
    def gather(self, frame: Frame, rows: np.ndarray) -> np.ndarray:
        here = frame.positions[rows]
        there = np.full((rows.size, 3), np.nan)
        found = np.full(rows.size, float(self.when_unknown))
        sightings = frame.mind.sightings
        pairs = zip(frame.streams[rows].tolist(), frame.targets[rows].tolist(), strict=True)
        for i, (stream, entity) in enumerate(pairs):
            sighting = sightings.get(stream, entity) if entity != NO_ENTITY else None
            if sighting is not None:
                point = sighting.position
                dimensions = frame.dimensions[rows[i]]
                if len(point) != dimensions:
                    if dimensions:  # (not a Node2D/3D at all: reported as that)
                        _report_dimensions(frame.selectors[rows[i]], len(point))
                    found[i] = np.nan
                    continue
                there[i, : len(point)] = point
                there[i, len(point) :] = 0.0
        known = ~np.isnan(there[:, 0])
        found[known] = np.sqrt(((here[known] - there[known]) ** 2).sum(axis=1))
        found[frame.streams[rows] == 0] = np.nan
        return found


class SinceSeenInput(InputSource, icon=icon("SinceSeenInput")):
    """Seconds on the server's clock since the NPC last perceived its target
    (MemoryStream.get_seconds_since_seen)."""

    when_unknown: float = export(FAR, doc="The input while there is no target or it was never perceived.")

    @python_only
    def input_name(self) -> str:
        return "since_seen(target)"

    @python_only
    def gather(self, frame: Frame, rows: np.ndarray) -> np.ndarray:
        sightings, now = frame.mind.sightings, frame.now
        pairs = zip(frame.streams[rows].tolist(), frame.targets[rows].tolist(), strict=True)
        found = np.array([sightings.seconds_since(stream, entity, now) for stream, entity in pairs])
        found[np.isinf(found)] = float(self.when_unknown)
        found[frame.targets[rows] == NO_ENTITY] = float(self.when_unknown)
        found[frame.streams[rows] == 0] = np.nan
        return found


class PropertyInput(InputSource, icon=icon("PropertyInput")):
    """A number read from a property of the NPC or of its target's node.

    The NPC is the selector's parent: `node_path` from that node (empty: the node itself), then
    `property` (a path such as "position:x" works, as Node.get_indexed). A bool reads as 0 or 1."""

    of: str = export(
        "npc",
        hint=PropertyHint.ENUM,
        hint_string="npc,target",
        doc="Whose property: the NPC's or the target's.",
    )
    node_path: NodePath = export(
        NodePath(""), doc="From that node to the one holding the property (empty: itself)."
    )
    property: StringName = export(StringName(""), doc='The property, e.g. "health" or "position:x".')
    when_unknown: float = export(0.0, doc="of target: the input while there is no target node.")

    @python_only
    def input_name(self) -> str:
        path = f"{self.node_path}:" if str(self.node_path) else ""
        return f"property({self.of}:{path}{self.property})"

    @python_only
    def reads_engine(self) -> bool:
        return True

    @python_only
    def reads_memory(self) -> bool:
        return False

    @python_only
    def gather(self, frame: Frame, rows: np.ndarray) -> np.ndarray:
        return np.array([self._read(frame.selectors[row]) for row in rows.tolist()], dtype=np.float64)

    @python_only
    def _read(self, selector: Any) -> float:
        node, base = self._node(selector)
        if base is None:
            return float(self.when_unknown) if self.of == "target" else math.nan
        if node is None:
            mistakes.report(
                selector, f"property_input:path:{self.node_path}",
                f"PropertyInput node_path {str(self.node_path)!r} resolves to nothing from {base.get_name()},"
                " "
                "so the input is the consideration's default_input (or 0).",
                fix="set node_path relative to the NPC (or the target), or clear it to read the node itself",
            )  # fmt: skip
            return math.nan
        value = node.get_indexed(str(self.property)) if str(self.property) else None
        if value is None and not has_property(node, str(self.property)):
            mistakes.report(
                selector, f"property_input:missing:{self.property}",
                f"PropertyInput: {node.get_name()} has no property {str(self.property)!r}, so the input is "
                "the consideration's default_input (or 0).",
                fix="set property to one the node has (see its inspector), e.g. health or position:x",
            )  # fmt: skip
            return math.nan
        return _number(
            selector, value, f"property_input:{self.property}", f"{node.get_name()}.{self.property}"
        )

    @python_only
    def _node(self, selector: Any) -> tuple[Any, Any]:
        """(the node holding the property or None, the node its path starts from or None); the
        NPC's is found once and kept while it exists (a target's, each time: the target changes)."""
        if self.of != "npc":
            base = targets.target_node(selector)
            if base is None or not str(self.node_path):
                return base, base
            return base.get_node_or_null(self.node_path), base
        kept = selector.__dict__.setdefault("_property_nodes", {})
        found = kept.get(id(self))
        if found is None or found[0] is None or not found[0].is_valid:
            base = targets.npc_of(selector)[0]
            node = base.get_node_or_null(self.node_path) if base is not None and str(self.node_path) else base
            found = kept[id(self)] = (node, base)
        return found

    @python_only
    def warnings(self, selector: Any) -> list[str]:
        if not str(self.property):
            return ["A PropertyInput has no property set."]
        if self.of != "npc" or selector.get_parent() is None:
            return []  # the target is known only at run time
        parent = selector.get_parent()
        node = parent.get_node_or_null(self.node_path) if str(self.node_path) else parent
        if node is None:
            return [
                f"PropertyInput node_path {str(self.node_path)!r} resolves to nothing from "
                f"{parent.get_name()}."
            ]
        if not has_property(node, str(self.property)):
            return [f"PropertyInput: {node.get_name()} has no property {str(self.property).split(':')[0]!r}."]
        return []


class Blackboard(dict):
    """A selector's blackboard: a dict that counts the writes to every blackboard (`writes`), so
    the feed reads the boards again only after one. Assigning `blackboard` stores a copy."""

    writes: ClassVar[int] = 0

    @classmethod
    def written(cls) -> None:
        cls.writes += 1

    def __setitem__(self, key: Any, value: Any) -> None:
        Blackboard.written()
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        Blackboard.written()
        super().__delitem__(key)

    def __ior__(self, other: Any) -> Blackboard:  # type: ignore[misc]  # dict's __or__ makes a dict
        Blackboard.written()
        super().update(other)
        return self

    def update(self, *args: Any, **kwargs: Any) -> None:
        Blackboard.written()
        super().update(*args, **kwargs)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        Blackboard.written()
        return super().setdefault(key, default)

    def pop(self, *args: Any) -> Any:
        Blackboard.written()
        return super().pop(*args)

    def popitem(self) -> tuple[Any, Any]:
        Blackboard.written()
        return super().popitem()

    def clear(self) -> None:
        Blackboard.written()
        super().clear()


def blackboard_assigned(selector: Any, value: Any) -> None:
    """`blackboard` was assigned (the inspector, a script, a scene load): it keeps its own copy."""
    selector.__dict__["blackboard"] = Blackboard(value or {})
    Blackboard.written()


class BlackboardInput(InputSource, icon=icon("BlackboardInput")):
    """A number the game writes to the selector's blackboard: the no-code path's door for game state.

    Written with UtilitySelector.set_blackboard_value(key, value), or in its `blackboard`
    Dictionary."""

    key: StringName = export(StringName(""), doc="The blackboard key.")
    when_unknown: float = export(0.0, doc="The input while the blackboard has no value for key.")

    @python_only
    def input_name(self) -> str:
        return f"blackboard({self.key})"

    @python_only
    def reads_memory(self) -> bool:
        return False

    @python_only
    def gather(self, frame: Frame, rows: np.ndarray) -> np.ndarray:
        key, unknown = str(self.key), float(self.when_unknown)
        # boards of plain numbers are read again only after a write to a blackboard
        kept_as = ("blackboard", key, unknown, id(rows))  # (the plan that keeps `frame.kept` holds rows)
        kept = frame.kept.get(kept_as)
        if kept is not None and kept[0] == Blackboard.writes:
            return kept[1].copy()
        writes = Blackboard.writes
        boards = [frame.selectors[row].__dict__.get("blackboard") for row in rows.tolist()]
        values = [board.get(key, unknown) if board else unknown for board in boards]
        if all(type(value) is float or type(value) is int for value in values):  # (a bool is neither)
            found = np.array(values, dtype=np.float64)  # every one a number: as _number reads it
            frame.kept[kept_as] = (writes, found)
            return found.copy()
        # a value that is not a plain number is read (and its mistake counted) every frame
        found = np.empty(rows.size)
        for i, row in enumerate(rows.tolist()):
            selector = frame.selectors[row]
            board = selector.__dict__.get("blackboard")
            value = board.get(key) if board else None
            found[i] = unknown if value is None else _number(selector, value, f"blackboard:{key}", key)
        return found

    @python_only
    def warnings(self, selector: Any) -> list[str]:
        return [] if str(self.key) else ["A BlackboardInput has no key set."]


class IntentInput(InputSource, icon=icon("IntentInput")):
    """1 while the NPC's AsyncLLMDecision (a sibling of the selector, or `decision`) last answered
    `intent` and that answer still steers (younger than the decision's tag_ttl, real seconds as the
    model's latency, not aborted since), else 0: the model's advice as one input among the others,
    so the considerations' vetoes hold whatever it says."""

    intent: StringName = export(StringName(""), doc="The intent (one of the decision's allowed_intents).")
    decision: NodePath = export(
        NodePath(""), doc="The AsyncLLMDecision, from the selector (empty: the NPC's AsyncLLMDecision child)."
    )

    @python_only
    def input_name(self) -> str:
        return f"intent({self.intent})"

    @python_only
    def reads_engine(self) -> bool:
        return True

    @python_only
    def reads_memory(self) -> bool:
        return False

    @python_only
    def gather(self, frame: Frame, rows: np.ndarray) -> np.ndarray:
        decisions, wanted = frame.mind.decisions, str(self.intent)
        found = np.zeros(rows.size)
        for i, row in enumerate(rows.tolist()):
            handle = self._handle(frame.selectors[row])
            if not handle:
                found[i] = np.nan
            elif decisions.fresh_intent(handle) == wanted:
                found[i] = 1.0
        return found

    @python_only
    def _handle(self, selector: Any) -> int:
        """The decision's server handle (0: none, reported once per selector); the node is found
        once and kept while it exists."""
        kept = selector.__dict__.setdefault("_intent_decisions", {})
        decision = kept.get(id(self))
        if decision is None or not decision.is_valid:
            decision = kept[id(self)] = decision_of(selector, self.decision)
        if decision is None:
            mistakes.report(
                selector, "intent_input:no_decision",
                f"IntentInput {str(self.intent)!r} finds no AsyncLLMDecision, so the input is the "
                "consideration's default_input (or 0).",
                fix="give the NPC an AsyncLLMDecision child (a sibling of the selector), or set decision",
            )  # fmt: skip
            return 0
        return int(decision.get_server_id())

    @python_only
    def warnings(self, selector: Any) -> list[str]:
        found = [] if str(self.intent) else ["An IntentInput has no intent set."]
        if selector.get_parent() is not None and decision_of(selector, self.decision) is None:
            found.append("IntentInput: no AsyncLLMDecision (give the NPC one, or set decision).")
        return found


SOURCES = (
    AwarenessInput, RecallInput, DistanceInput, SinceSeenInput, PropertyInput, BlackboardInput, IntentInput,
)  # fmt: skip


def _number(selector: Any, value: Any, cause: str, what: str) -> float:
    if isinstance(value, bool | int | float):
        return float(value)
    mistakes.report(
        selector, cause,
        f"{what} is {type(value).__name__ if value is not None else 'null'}, not a number, so the input is "
        "the consideration's default_input (or 0).",
        fix="read a number or bool property (e.g. health, position:x), or write a number to the blackboard",
    )  # fmt: skip
    return math.nan


def _report_dimensions(selector: Any, dimensions: int) -> None:
    mistakes.report(
        selector, "distance_input:dimensions",
        f"DistanceInput: the target was perceived at a {dimensions}D position but the NPC is not a "
        f"Node{dimensions}D, so the input is the consideration's default_input (or 0).",
        fix="put the selector under the NPC's Node2D or Node3D, and note 2D sightings in 2D, 3D in 3D",
    )  # fmt: skip


def streams_of(selectors: list[Any], nodes: dict[int, Any]) -> np.ndarray:
    """The server handles of the selectors' streams (0: none, reported once a selector)."""
    return np.array([targets.stream_handle(selector, nodes) for selector in selectors], dtype=np.int64)


def targets_of(selectors: list[Any]) -> np.ndarray:
    """The selectors' targets' entities (0: none)."""
    return np.array([targets.target_id(selector) for selector in selectors], dtype=np.int64)


class Frame:
    """What the sources of many selectors read in one frame, each read once and only when asked."""

    def __init__(self, selectors: list[Any], now: float, kept: dict[Any, Any] | None = None) -> None:
        self.selectors = selectors
        self.now = now
        self.mind = server().core
        # the streams and targets as read in an earlier frame, while they hold (`selector_feed.Feed`
        # drops what changed); what this frame reads first is put there
        self.kept = {} if kept is None else kept

    @cached_property
    def streams(self) -> np.ndarray:
        found = self.kept.get("streams")
        if found is None:
            found = self.kept["streams"] = streams_of(self.selectors, server().nodes)
        return found

    def streams_at(self, rows: np.ndarray) -> np.ndarray:
        """The streams of a plan's `rows`, kept with the streams (read-only: the server's handle
        table then keeps their pool groups, `HandleTable.groups`)."""
        kept_as = ("streams at", id(rows))
        found = self.kept.get(kept_as)
        if found is None or found[0] is not rows:
            streams = self.streams[rows]
            streams.flags.writeable = False
            found = self.kept[kept_as] = (rows, streams)
        return found[1]

    @cached_property
    def targets(self) -> np.ndarray:
        found = self.kept.get("targets")
        if found is None:
            found = self.kept["targets"] = targets_of(self.selectors)
        return found

    @cached_property
    def positions(self) -> np.ndarray:
        """The NPCs' global positions as (x, y, z) rows (z 0 in 2D; NaN: not a Node2D/Node3D)."""
        found = np.full((len(self.selectors), 3), np.nan)
        self.dimensions = [0] * len(self.selectors)
        for row, selector in enumerate(self.selectors):
            npc, spatial = targets.npc_of(selector)
            if spatial:
                position = npc.get_global_position()
                found[row, :spatial] = (
                    (position.x, position.y) if spatial == 2 else (position.x, position.y, position.z)
                )
                found[row, spatial:] = 0.0
                self.dimensions[row] = spatial
            else:
                mistakes.report(
                    selector, "distance_input:npc",
                    "DistanceInput needs the NPC (this selector's parent) to be a Node2D or Node3D, so the "
                    "input is the consideration's default_input (or 0).",
                    fix="put the selector under the NPC's CharacterBody2D/3D (or another Node2D/Node3D)",
                )  # fmt: skip
        return found


# --- a selector's sourced considerations -----------------------------------------------------------
def key_of(consideration: Any) -> str:
    """The consideration's key in the definition: input_key, else its source's name."""
    key = str(consideration.input_key)
    source = consideration.source
    return key if key or source is None else source.input_name()


def sourced(selector: Any) -> list[tuple[str, Any]]:
    """(key, source) of the selector's sourced considerations, each key once (the first wins),
    worked out once per definition."""
    found = selector.__dict__.get("_sourced")
    if found is None:
        pairs: dict[str, Any] = {}
        for consideration in _considerations(selector):
            if consideration.source is not None:
                pairs.setdefault(key_of(consideration), consideration.source)
        found = selector.__dict__["_sourced"] = list(pairs.items())
    return found


def sources_of(selector: Any) -> list[Any]:
    return [source for _, source in sourced(selector)]


def _considerations(selector: Any) -> list[Any]:
    return [c for b in selector.behaviors if b is not None for c in b.considerations if c is not None]


def auto_evaluates(selector: Any) -> bool:
    """Whether the selector chooses by itself each frame (see UtilitySelector.auto_evaluate)."""
    mode = str(selector.auto_evaluate)
    if mode == "never" or not sourced(selector):
        return False
    return mode == "always" or all(c.source is not None for c in _considerations(selector))


def sourced_context(selector: Any) -> dict[str, float]:
    """The selector's sourced inputs now, for the Dictionary path (`evaluate`)."""
    frame = Frame([selector], server().core.now())
    row = np.zeros(1, dtype=np.intp)
    fallbacks = selector.__dict__.get("_input_defaults") or {}
    values = {}
    for key, source in sourced(selector):
        value = float(source.gather(frame, row)[0])
        values[key] = fallbacks.get(key, 0.0) if math.isnan(value) else value
    return values


def feed(members: list[tuple[int, Any]], now: float, version: Any, kept: dict[Any, Any]) -> None:
    """Write every auto-evaluating selector's sourced inputs for this frame's batched choice: per
    (key, source resource), one gather over all selectors sharing it and one `set_inputs`. `version`
    changes whenever `members` do; `kept` is the members' `Frame.kept`, while it holds."""
    if not members:
        _plans.clear()  # (the sources it holds are let go)
        return
    plan = _plans.get("members")
    if plan is None or plan[0] != version:
        plan = _plans["members"] = (version, _plan(members), [selector for _, selector in members])
    frame = Frame(plan[2], now, kept)
    mind = frame.mind
    for key, source, rows, handles, fallback in plan[1]:
        values = source.gather(frame, rows)
        missing = np.isnan(values)
        if missing.any():
            values[missing] = fallback[missing]
        mind.set_inputs(handles, key, values)


_plans: dict[str, Any] = {}


def settings_key(source: InputSource) -> tuple[Any, ...]:
    """Sources of one class with the same settings read alike, so they are gathered in one batch
    whether the selectors share one resource (instances of one scene) or each has its own copy."""
    kind = type(source)
    names = _setting_names.get(kind)
    if names is None:
        fields = (item for klass in kind.__mro__ for item in vars(klass).items())
        exported = {name for name, field in fields if isinstance(field, Export)}
        names = _setting_names[kind] = sorted(exported)
    return (kind, *(str(getattr(source, name)) for name in names))


_setting_names: dict[type, list[str]] = {}


def close() -> None:
    """Let go of the plan's sources (the server singleton is being freed: resources are checked next)."""
    _plans.clear()


def _plan(members: list[tuple[int, Any]]) -> list[tuple[str, Any, np.ndarray, np.ndarray, np.ndarray]]:
    groups: dict[tuple[Any, ...], tuple[Any, list[int]]] = {}
    for row, (_, selector) in enumerate(members):
        for key, source in sourced(selector):
            groups.setdefault((key, *settings_key(source)), (source, []))[1].append(row)
    plan = []
    for (key, *_), (source, rows) in groups.items():
        picked = [members[row] for row in rows]
        fallback = [(selector.__dict__.get("_input_defaults") or {}).get(key, 0.0) for _, selector in picked]
        handles = np.array([h for h, _ in picked], dtype=np.int64)
        handles.flags.writeable = False  # (the handle table keeps its groups: `HandleTable.groups`)
        fallbacks = np.array(fallback, dtype=np.float64)
        plan.append((key, source, np.array(rows, dtype=np.intp), handles, fallbacks))
    return plan


def warnings(selector: Any) -> list[str]:
    """Configuration warnings about the selector's sources."""
    found = []
    for consideration in _considerations(selector):
        source = consideration.source
        if source is None:
            continue
        found += [f"{key_of(consideration)!r}: {text}" for text in source.warnings(selector)]
        if consideration.per_target and auto_evaluates(selector):
            found.append(
                f"{key_of(consideration)!r} is per_target: the auto-evaluating (batched) path scores one "
                "value per NPC; set auto_evaluate to never and call evaluate(), or turn per_target off."
            )
    return found
