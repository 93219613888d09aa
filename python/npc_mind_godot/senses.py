"""Senses that write memory: sight, hearing and touch, in 2D and 3D, wired in the inspector.

Each sense is a child of an NPC beside its `MemoryStream`; what it perceives it records through that
stream (`record_event` semantics) and notes where it perceived it (`MemoryStream.note_sighting`, read
back by `get_last_known_position`). The nodes are thin: they register with `Sensing`, the one
coordinator the `NpcMindServer` owns and runs once a frame (before its step), which queries the
physics world for the senses that are due (each at `rate_hz`, each at its own phase so many senses
spread over the period; the due checks in `BATCHES_HZ` batches a second) and queues every record of
the frame on the memory bank, which folds them with the frame's other writes in the step's one batch.
The rules themselves (field of view, attenuation, rate, phase) are Godot-free: `npc_mind.senses`.

- `SenseRule` (Resource): a group (and/or a class) of the perceived node -> a memory type and a
  salience, optionally only while a property or meta of that node is true. Every rule that holds is
  recorded (a thief in "people" who is stealing is an observation and a hostile memory).
- `SightSense2D` / `SightSense3D`: range, field of view, line of sight (`occluder_mask`).
- `HearingSense2D` / `HearingSense3D`: hear what `Stimulus2D` / `Stimulus3D` or
  `NpcMindServer.emit_stimulus` emit, salience attenuated by distance and occluders.
- `TouchSense2D` / `TouchSense3D`: an `Area2D` / `Area3D`: bodies entering, and staying (at the rate).

Why one file of over 600 lines: its nine classes (eight nodes and SenseRule) are thin (their
exports and docs), and they and `Sensing` share one private protocol (the slots, the due times,
the engine script `WORLD_SOURCE` that casts every sense's rays in one call); split, that protocol
would become public between modules. A next split would put the exports in a module of their own.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from gdbridge import classes, interface, objects
from gdbridge.declare import export, python_only, signal
from gdbridge.types import NodePath, PackedStringArray, PropertyHint, StringName, Vector2, Vector3
from npc_mind.memory import MemoryType
from npc_mind.senses import RateGate, cos_half_fov, heard_salience, in_view, memory_type_of, phase
from npc_mind_godot import mistakes
from npc_mind_godot._common import engine_script, entity_name, icon, server

RECENT_SECONDS = 1.0  # get_recent_perceptions: what the sense perceived this long ago or less
RECENT_KEPT = 128  # perceptions kept per sense for it (the oldest go first)
MAX_OCCLUDER_HITS = 4  # hearing: occluders counted on one path at most (each a ray)
# The due sights and touch checks run in at most this many batches a second of the server's clock
# (or the fastest sense's rate_hz when higher): every other frame at 60 fps. Each batch has a fixed
# cost (a pose read, a group read, a ray call, the array set-up), so fewer, larger batches: at 200
# guards halving them saved about 0.3 ms a frame. Each sense keeps its rate, a check at most one
# batch late. The price: a batch frame carries two frames' checks, so at 60 fps frame times alternate
# heavier and lighter (the benchmark's median frame interval rose while the mean fell); a constant
# above the frame rate checks in every frame again.
BATCHES_HZ = 30.0
# Senses at their own phases make the due sets cycle (at 10 Hz, three batches): this many due sets
# keep their split and their sights' gathered settings, so a cycle of sets is read once, not every
# batch (a sense that comes or goes empties them; a longer cycle reads each set again).
KEPT_DUE_SETS = 64
RULES_HINT = "24/17:SenseRule"
NOTIFICATION_PREDELETE = 1
log = logging.getLogger(__name__)


class SenseRule(classes.Resource, icon=icon("SenseRule")):
    """What a sense records of a node it perceives: a group (or a class) -> a memory type and salience.

    A rule holds for a node in `group` (and of `node_class`, when set), and, when `when` names a
    property or a meta of that node, only while it is true (false with `when_false`): for example
    group "people", `when` "is_stealing", type HOSTILE, salience 0.9. A sight finds its candidates by
    group; a touch sense may match by class alone. Every rule of a sense that holds is recorded: a
    thief in "people" who is stealing gives an OBSERVATION and a HOSTILE memory, each with its own
    per-target rate. One resource type for every sense: share one `.tres` between NPCs. The
    inspector labels a rule as "group (when) -> type".

    A rule with neither a group nor a class (for a sight: with no group), or an empty slot in a
    sense's `rules`, is a configuration warning in the editor and, at run time, one error naming the
    sense and the fix; the sense skips it and keeps working on the other rules.
    """

    group: StringName = export(StringName(""), doc="The perceived node's group (sight needs one).")
    node_class: str = export(
        "", doc="Optional: the perceived node must also be of this engine class (e.g. CharacterBody2D)."
    )
    memory_type: MemoryType = export(MemoryType.OBSERVATION, doc="The memory type recorded.")
    salience: float = export(0.5, range=(0.0, 1.0, 0.01), doc="The salience recorded (0..1).")
    when: StringName = export(
        StringName(""),
        doc="Optional: record only while this property (or meta) of the perceived node is true; a node "
        "with neither (a meta set only while true) does not match.",
    )
    when_false: bool = export(False, doc="With `when`: record only while it is false instead.")

    @python_only
    def problem(self, needs_group: bool) -> str:
        """What is wrong with this rule ("" when nothing): a rule that can never hold."""
        if str(self.group) or (str(self.node_class) and not needs_group):
            return ""
        if needs_group:
            return "has no group (a sight finds what it sees by group)"
        return "has neither a group nor a class"


def _show_rule(rule: SenseRule, _value: Any) -> None:
    # the inspector labels an array element with its resource_name: "people -> hostile"
    label = str(rule.group) or str(rule.node_class) or "?"
    if str(rule.when):
        label += f" ({'not ' if rule.when_false else ''}{rule.when})"
    rule.set(StringName("resource_name"), f"{label} -> {MemoryType(int(rule.memory_type)).name.lower()}")


# bumped by any edit of a rule, or of a sense's rules or settings: the senses read them again
_rules_version = [0]


def _rule_changed(rule: SenseRule, value: Any) -> None:
    _rules_version[0] += 1
    _show_rule(rule, value)


for _field in ("group", "node_class", "memory_type", "salience", "when", "when_false"):
    SenseRule.__dict__[_field].on_change = _rule_changed


class Rule(NamedTuple):
    """A SenseRule as the coordinator reads it (plain values, read once a check)."""

    number: int  # its index in the sense's rules
    group: str
    node_class: str
    memory_type: int
    salience: float
    when: str
    when_false: bool


class Perceived(NamedTuple):
    time: float
    entity: int
    memory_type: int
    salience: float
    recorded: bool
    point: tuple[float, ...]  # where it was perceived (a stimulus: where it was emitted)


# --- the senses' shared front end -------------------------------------------------------------

if TYPE_CHECKING:
    _OnANode = classes.Node  # the mixins' methods run on the engine nodes deriving from them
else:
    _OnANode = object


class _Sense(_OnANode):
    """The lifecycle and bookkeeping every sense shares (a plain mixin: gdbridge registers its
    methods on each node): registration with `Sensing` while in the tree, the sibling MemoryStream,
    the rules, the per-target rate and the recent perceptions."""

    _NEEDS_RULES = True
    _NEEDS_GROUP = True
    _DIMENSION = 2

    def _enter_tree(self) -> None:
        sensing().add(self)

    def _exit_tree(self) -> None:
        sensing().remove(self)

    def _notification(self, what: int) -> None:
        if what == NOTIFICATION_PREDELETE:
            mistakes.forget(self)

    @python_only
    def state(self) -> dict[str, Any]:
        """This sense's run-time state (not exported): its stream, rate gate, recent perceptions."""
        found = self.__dict__.get("_state")
        if found is None:
            found = self.__dict__["_state"] = {
                "stream": None,
                "handle": 0,
                "gate": RateGate(),
                "recent": deque(maxlen=RECENT_KEPT),
            }
        return found

    @python_only
    def stream_handle(self) -> int:
        """The sibling MemoryStream's server id, or 0 (reported once) when there is none."""
        state = self.state()
        stream = state["stream"]
        if stream is not None and stream.is_valid:  # found again when the sense re-enters the tree
            return state["handle"]
        stream = _sibling_stream(self)
        state["stream"] = stream
        state["handle"] = stream.get_server_id() if stream is not None else 0
        if stream is None:
            mistakes.report(
                self,
                "no_memory_stream",
                "this sense has no MemoryStream sibling, so it perceives but remembers nothing.",
                fix="add a MemoryStream node under the same parent (the NPC).",
            )
        return state["handle"]

    @python_only
    def compiled_rules(self) -> list[Rule]:
        """The rules that can hold (read again after any rule or `rules` changed); a null or
        impossible rule is reported once (its repeats counted) and skipped."""
        state = self.state()
        cached = state.get("rules")
        if cached is None or cached[0] != _rules_version[0]:
            cached = state["rules"] = (_rules_version[0], *self._compile())
        for cause, message, fix in cached[2]:
            mistakes.report(self, cause, message, fix=fix)
        return cached[1]

    @python_only
    def _compile(self) -> tuple[list[Rule], list[tuple[str, str, str]]]:
        rules, problems = [], []
        for index, rule in enumerate(getattr(self, "rules", ())):
            if rule is None:
                problems.append(
                    (f"null_rule:{index}", f"rule {index} is empty.", "set a SenseRule or remove it.")
                )
                continue
            problem = rule.problem(self._NEEDS_GROUP)
            if problem:
                fix = "set the rule's group (the group the nodes to notice are in)."
                problems.append((f"bad_rule:{index}", f"rule {index} {problem}; it is skipped.", fix))
                continue
            rules.append(
                Rule(
                    index,
                    str(rule.group),
                    str(rule.node_class),
                    int(rule.memory_type),
                    min(max(float(rule.salience), 0.0), 1.0),
                    str(rule.when),
                    bool(rule.when_false),
                )
            )
        return rules, problems

    def get_recent_perceptions(self) -> list:
        """What this sense perceived in the last second, oldest first: Dictionaries with `entity`
        (the instance id), `name`, `type` (the memory type), `salience`, `time` (the server's clock),
        `position` (where, a Vector2 or Vector3) and `recorded` (false when the per-target rate let
        it pass without a record)."""
        return [
            {
                "entity": seen.entity,
                "name": entity_name(seen.entity),
                "type": seen.memory_type,
                "salience": seen.salience,
                "time": seen.time,
                "position": Vector2(*seen.point) if len(seen.point) == 2 else Vector3(*seen.point),
                "recorded": seen.recorded,
            }
            for seen in self.recent_perceptions()
        ]

    @python_only
    def recent_perceptions(self) -> list[Perceived]:
        """`get_recent_perceptions` as the Python side keeps them (the NPC Mind debugger tab reads it)."""
        now = server().core.now()
        return [Perceived(*seen) for seen in self.state()["recent"] if now - seen[0] <= RECENT_SECONDS]

    @python_only
    def common_warnings(self) -> list[str]:
        warnings = []
        if _sibling_stream(self) is None:
            warnings.append(
                "No MemoryStream sibling: add one under the same parent, or nothing is remembered."
            )
        if self._NEEDS_RULES:
            rules = list(getattr(self, "rules", ()))
            if not rules:
                warnings.append("No rules: add a SenseRule (a group -> a memory type and salience).")
            for index, rule in enumerate(rules):
                problem = "is empty" if rule is None else rule.problem(self._NEEDS_GROUP)
                if problem:
                    warnings.append(f"Rule {index} {problem}.")
        parent = self.get_parent()
        base = "Node2D" if self._DIMENSION == 2 else "Node3D"
        if parent is not None and not parent.is_class(base):
            warnings.append(f"The parent (the NPC) must be a {base}: the sense reads its position from it.")
        return warnings

    def _get_configuration_warnings(self) -> Any:
        return PackedStringArray(self.common_warnings())


def senses_of(npc: Any) -> list[Any]:
    """The senses among the NPC's children (in the tree's order)."""
    return [child for child in npc.get_children() if isinstance(child, _Sense)]


def _sibling_stream(sense: Any) -> Any:
    from npc_mind_godot.memory_nodes import MemoryStream

    parent = sense.get_parent()
    if parent is None:
        return None
    for child in parent.get_children():
        if isinstance(child, MemoryStream):
            return child
    return None


def _rules_changed(sense: Any, _value: Any) -> None:
    _rules_version[0] += 1
    sense.update_configuration_warnings()


def _rules() -> Any:
    return export(
        [], hint=PropertyHint.ARRAY_TYPE, hint_string=RULES_HINT,
        doc="What to record of what it perceives: each SenseRule maps a group to a memory type and salience.",
    )  # fmt: skip


def _rate() -> Any:
    return export(
        10.0, range=(0.1, 60.0, 0.1, "or_greater"),
        doc="Checks a second (the physics world is queried at this rate, not every frame).",
    )  # fmt: skip


def _recall_on_spot() -> Any:
    return export(
        False,
        doc="On: a target coming into view (not seen at the previous check) is first recalled, as "
        "MemoryStream.query_strongest does (the recall wakes the memory), before this sighting is "
        "recorded; `recalled` tells what was remembered.",
    )


def _recalled() -> Any:
    return signal(
        entity_id=int, memory_type=int, retrievability=float,
        doc="recall_on_spot: a target came into view and its strongest memory was recalled (R before "
        "the recall's wake); not emitted when nothing was remembered of it.",
    )  # fmt: skip


def _record_interval() -> Any:
    return export(
        1.0, range=(0.0, 60.0, 0.05, "or_greater"),
        doc="Seconds between two records of one target by one rule; the last-seen position is noted at "
        "every check. The memory's refractory period also keeps repeats honest.",
    )  # fmt: skip


_SIGHT_DOC = """A sense that sees: what is in range, in the field of view and not hidden by an occluder.

Child of the NPC (the parent gives the eyes' position and facing: {facing}) beside its MemoryStream.
At `rate_hz` it looks at the nodes in its rules' groups: one within `view_range` and half of
`field_of_view` of the facing, with no body of `occluder_mask` on the ray between the two (the NPC's
own body and the target's are left out), is seen: every rule that holds for it is recorded through
the MemoryStream (at most once per `record_interval` per target and rule) and its position is noted
(`MemoryStream.get_last_known_position`, `get_seconds_since_seen`). The entity id is the seen
node's instance id. A target on the occluder layer still sees and is seen.

**How it runs.** The sense never runs `_process`: it registers with the server's coordinator
(`npc_mind_godot.senses.Sensing`), which `NpcMindServer` runs once a frame, after every node's
`_process` and before its own step. Each sense is due at its own phase of its period (the
golden-ratio sequence: 200 sights at 10 Hz check about 67 at a time, never 200 in one), on the
server's clock (a paused game, or a manual clock that does not move, checks nothing). The due checks
run in 30 batches a second of that clock (more when a sense's `rate_hz` is higher): every other
frame at 60 fps. A batch has a fixed cost, so fewer, larger batches cost less; each sense keeps its
rate, a check at most one batch (33 ms) late. The due NPCs' poses are read in one call to the
binding; the engine side is one GDScript object the coordinator builds at start: it reads each
group's instance ids, positions, collision layers and the rules' `when`s and classes in one call a
batch, and casts every ray of the batch in one call per physics space. The due sights are
tested against their groups in one array operation (range and field of view,
`npc_mind.senses.in_view`), a ray is cast only for a pair that passes and whose rules hold, and every
record of the frame is queued on the memory bank as `record_event`'s are, folded into the server's
one batch. An edit of a rule or of a sense's settings is read at the next check.

**Mistakes.** The editor warns of a sense with no MemoryStream sibling, no rules, an empty rule or
one with no group, and a parent that is not a {parent}. At run time each is one error naming the
node and the fix (repeats are counted in `NpcMindServer.get_metrics()`); a sense with no stream
still perceives (`get_recent_perceptions`) and remembers nothing.
"""


class _Sight(_Sense):
    def _ready(self) -> None:
        self.update_configuration_warnings()


class SightSense2D(_Sight, classes.Node, icon=icon("SightSense2D")):
    __doc__ = _SIGHT_DOC.format(facing="its global rotation, +X forward", parent="Node2D")
    _DIMENSION = 2

    rules: list = _rules()
    view_range: float = export(
        400.0, range=(0.0, 10000.0, 1.0, "or_greater", "suffix:px"), doc="How far it sees, in pixels."
    )
    field_of_view: float = export(
        120.0, range=(0.0, 360.0, 1.0, "degrees"), doc="Degrees, centred on the facing (360: all around)."
    )
    occluder_mask: int = export(
        1, hint=PropertyHint.LAYERS_2D_PHYSICS, doc="Physics layers that block the view (walls, crates)."
    )
    rate_hz: float = _rate()
    record_interval: float = _record_interval()
    recall_on_spot: bool = _recall_on_spot()
    recalled = _recalled()

    @rules.setter  # type: ignore[attr-defined]  # in the class body an export is its Export (the annotation types the value)
    def _on_rules(self, value: Any) -> None:
        _rules_changed(self, value)


class SightSense3D(_Sight, classes.Node, icon=icon("SightSense3D")):
    __doc__ = _SIGHT_DOC.format(facing="its global basis, -Z forward", parent="Node3D") + (
        "\nThe ray runs `eye_height` above both origins (an origin at the feet would graze the floor).\n"
    )
    _DIMENSION = 3

    rules: list = _rules()
    view_range: float = export(
        20.0, range=(0.0, 1000.0, 0.1, "or_greater", "suffix:m"), doc="How far it sees, in metres."
    )
    field_of_view: float = export(
        120.0, range=(0.0, 360.0, 1.0, "degrees"), doc="Degrees of the cone, centred on -Z (360: all around)."
    )
    occluder_mask: int = export(
        1, hint=PropertyHint.LAYERS_3D_PHYSICS, doc="Physics layers that block the view (walls, crates)."
    )
    eye_height: float = export(
        1.0, range=(-10.0, 10.0, 0.01, "or_greater", "or_less", "suffix:m"),
        doc="The ray starts and ends this far above the NPC's and the target's origins.",
    )  # fmt: skip
    rate_hz: float = _rate()
    record_interval: float = _record_interval()
    recall_on_spot: bool = _recall_on_spot()
    recalled = _recalled()

    @rules.setter  # type: ignore[attr-defined]  # in the class body an export is its Export (the annotation types the value)
    def _on_rules(self, value: Any) -> None:
        _rules_changed(self, value)


_HEARING_DOC = """A sense that hears the stimuli the game emits (`{stimulus}`, or
`NpcMindServer.emit_stimulus`), once each.

A stimulus of radius r and salience s emitted at distance d < r of the NPC (the parent) is recorded
through the MemoryStream sibling as the stimulus' memory type with salience s x (1 - d / r) (linear to
the edge) x `occlusion_factor` for each body of `occlusion_mask` between the two (at most 4; mask 0:
sound goes through walls), unless that is below `min_salience`. The entity is the stimulus' source
(a node's instance id, or the id given) and the stimulus' position is noted as where it was heard
(`MemoryStream.get_last_known_position`). An NPC does not hear its own stimuli (source = the
NPC). The occluders are counted by rays (`npc_mind.senses.heard_salience`). Stimuli are heard at
the end of the frame they are emitted in, in the frame's one batch of records.

`get_recent_perceptions()` as on the sight senses. The editor warns of a hearing sense with no
MemoryStream sibling or a parent that is not a Node2D / Node3D.
"""


def _settings_changed(sense: Any, _value: Any) -> None:
    _rules_version[0] += 1


for _sight in (SightSense2D, SightSense3D):
    for _field in ("view_range", "field_of_view", "occluder_mask", "record_interval", "recall_on_spot"):
        _sight.__dict__[_field].on_change = _settings_changed
SightSense3D.__dict__["eye_height"].on_change = _settings_changed


class _Hearing(_Sense):
    _NEEDS_RULES = False

    def _ready(self) -> None:
        self.update_configuration_warnings()


def _occlusion_factor() -> Any:
    return export(
        0.5, range=(0.0, 1.0, 0.01), doc="The salience is multiplied by this for each occluder on the way."
    )


def _min_salience() -> Any:
    return export(0.01, range=(0.0, 1.0, 0.01), doc="Quieter than this (after attenuation): not recorded.")


class HearingSense2D(_Hearing, classes.Node, icon=icon("HearingSense2D")):
    __doc__ = _HEARING_DOC.format(stimulus="Stimulus2D")
    _DIMENSION = 2

    occlusion_mask: int = export(
        0, hint=PropertyHint.LAYERS_2D_PHYSICS, doc="Physics layers that muffle sound (0: none)."
    )
    occlusion_factor: float = _occlusion_factor()
    min_salience: float = _min_salience()


class HearingSense3D(_Hearing, classes.Node, icon=icon("HearingSense3D")):
    __doc__ = _HEARING_DOC.format(stimulus="Stimulus3D")
    _DIMENSION = 3

    occlusion_mask: int = export(
        0, hint=PropertyHint.LAYERS_3D_PHYSICS, doc="Physics layers that muffle sound (0: none)."
    )
    occlusion_factor: float = _occlusion_factor()
    min_salience: float = _min_salience()


_TOUCH_DOC = """A sense of touch and proximity: an `{area}` (give it a collision shape) on the NPC.

A body entering the area is recorded at once per the rules (group, or class, of the body), and a body
that stays is recorded again at `rate_hz` checks, at most once per `record_interval` per body and rule;
its position is noted (`MemoryStream.get_last_known_position`). The NPC's own body is left out.

Give the area a `collision_mask` for the bodies it feels; a rule may match by class alone.
`get_recent_perceptions()`, the editor's warnings and the run-time errors are those of the sight
senses; the area's own warning (no collision shape) is the engine's.
"""


class _Touch(_Sense):
    _NEEDS_GROUP = False

    def _ready(self) -> None:
        self.body_entered.connect(self._entered)
        self.update_configuration_warnings()

    @python_only
    def _entered(self, body: Any) -> None:
        sensing().touched.append((self, body))


class TouchSense2D(_Touch, classes.Area2D, icon=icon("TouchSense2D")):
    __doc__ = _TOUCH_DOC.format(area="Area2D")
    _DIMENSION = 2

    rules: list = _rules()
    rate_hz: float = _rate()
    record_interval: float = _record_interval()

    @rules.setter  # type: ignore[attr-defined]  # in the class body an export is its Export (the annotation types the value)
    def _on_rules(self, value: Any) -> None:
        _rules_changed(self, value)


class TouchSense3D(_Touch, classes.Area3D, icon=icon("TouchSense3D")):
    __doc__ = _TOUCH_DOC.format(area="Area3D")
    _DIMENSION = 3

    rules: list = _rules()
    rate_hz: float = _rate()
    record_interval: float = _record_interval()

    @rules.setter  # type: ignore[attr-defined]  # in the class body an export is its Export (the annotation types the value)
    def _on_rules(self, value: Any) -> None:
        _rules_changed(self, value)


# --- stimuli ------------------------------------------------------------------------------------

_STIMULUS_DOC = """A sound (or any one-off stimulus) the game emits once, on a thrower or a projectile.

`emit()` (or `emit_on_ready`, for a projectile that sounds where it lands) calls
`NpcMindServer.emit_stimulus(global_position, radius, kind, salience, source)` with the source node
(`source`, default the parent: the thrower's instance id is the entity the listeners remember):
every {hearing} within `radius` records it. A `source` path that resolves to nothing is one error
naming the node and the fix; the stimulus is then its own source.

`NpcMindServer.emit_stimulus(position, radius, kind, salience, source)` does the same from code:
`position` a Vector2 (2D listeners) or Vector3 (3D), `radius` >= 0, `kind` a memory type code or
name (`"hostile"`), `salience` 0..1, `source` a node or an entity id >= 0. A bad argument raises a
clear error and queues nothing.
"""


class _Stimulus(_OnANode):
    def _ready(self) -> None:
        if self.emit_on_ready:
            self.emit()

    def emit(self) -> None:
        """Emit the stimulus now, at this node's global position."""
        source = self.get_node_or_null(self.source) if str(self.source) else None
        if source is None:
            mistakes.report(
                self,
                "no_source",
                f"source '{self.source}' resolves to nothing: the stimulus is its own source.",
                fix="set source to the node that makes the sound (default: the parent).",
            )  # fmt: skip
            source = self
        server().emit_stimulus(self.get_global_position(), self.radius, int(self.kind), self.salience, source)

    def _get_configuration_warnings(self) -> Any:
        if str(self.source) and self.get_node_or_null(self.source) is not None:
            return PackedStringArray()
        return PackedStringArray([
            f"source '{self.source}' resolves to nothing: the stimulus would be its own source. Set it to "
            "the node that makes the sound (default: the parent, '..')."
        ])  # fmt: skip


def _radius(default: float, suffix: str) -> Any:
    return export(
        default, range=(0.0, default * 100, 0.1, "or_greater", f"suffix:{suffix}"), doc="How far it carries."
    )


class Stimulus2D(_Stimulus, classes.Node2D, icon=icon("Stimulus2D")):
    __doc__ = _STIMULUS_DOC.format(hearing="HearingSense2D")

    radius: float = _radius(300.0, "px")
    kind: MemoryType = export(MemoryType.TRIVIA, doc="The memory type a listener records.")
    salience: float = export(0.5, range=(0.0, 1.0, 0.01), doc="The salience at the source (0 at the radius).")
    source: NodePath = export(NodePath(".."), doc="The node that makes it (its instance id is the entity).")
    emit_on_ready: bool = export(False, doc="Emit once when this node is ready (a projectile's impact).")


class Stimulus3D(_Stimulus, classes.Node3D, icon=icon("Stimulus3D")):
    __doc__ = _STIMULUS_DOC.format(hearing="HearingSense3D")

    radius: float = _radius(15.0, "m")
    kind: MemoryType = export(MemoryType.TRIVIA, doc="The memory type a listener records.")
    salience: float = export(0.5, range=(0.0, 1.0, 0.01), doc="The salience at the source (0 at the radius).")
    source: NodePath = export(NodePath(".."), doc="The node that makes it (its instance id is the entity).")
    emit_on_ready: bool = export(False, doc="Emit once when this node is ready (a projectile's impact).")


for _stimulus in (Stimulus2D, Stimulus3D):
    _stimulus.__dict__["source"].on_change = lambda stimulus, _value: stimulus.update_configuration_warnings()


# --- the coordinator -----------------------------------------------------------------------------


class Stimulus(NamedTuple):
    """One emitted stimulus, heard at the next frame."""

    point: tuple[float, ...]
    radius: float
    memory_type: int
    salience: float
    source: int
    source_layer: int  # the source's collision layer when it is a physics body (left out of the rays), else 0


# The senses' engine side: the group reads and rays of a frame go through this GDScript object, in
# a few calls a frame (one call per group, one ray batch per physics space), so the loops over nodes
# and rays run at the engine's own cost and Python crosses with packed arrays (an engine call from
# Python costs about ten times GDScript's: more than the ray). The NPCs' poses are read by the
# binding in one crossing (`interface.node_poses`). A ray's excluded bodies come as instance ids
# (`counts[i]` per ray); a ray that hits has the body it hit excluded and is cast again, up to
# `max_hits` (hearing counts occluders; sight needs one).
WORLD_SOURCE = """extends RefCounted


func group(name: StringName, dimension: int, whens: PackedStringArray, kinds: PackedStringArray) -> Array:
	var ids := PackedInt64Array()
	var points := PackedFloat32Array()
	var layers := PackedInt32Array()
	var flags := PackedByteArray()
	var tree := Engine.get_main_loop() as SceneTree
	for node in tree.get_nodes_in_group(name):
		if dimension == 2:
			if not node is Node2D:
				continue
			var at: Vector2 = node.global_position
			points.append(at.x)
			points.append(at.y)
			layers.append(node.collision_layer if node is CollisionObject2D else 0)
		else:
			if not node is Node3D:
				continue
			var at: Vector3 = node.global_position
			points.append(at.x)
			points.append(at.y)
			points.append(at.z)
			layers.append(node.collision_layer if node is CollisionObject3D else 0)
		ids.append(node.get_instance_id())
		for when in whens:
			var value: Variant = node.get(when)
			if value == null and node.has_meta(when):
				value = node.get_meta(when)
			flags.append(1 if value else 0)
		for kind in kinds:
			flags.append(1 if node.is_class(kind) else 0)
	return [ids, points, layers, flags]


func cast_2d(space: PhysicsDirectSpaceState2D, starts: PackedVector2Array, ends: PackedVector2Array,
		masks: PackedInt32Array, counts: PackedInt32Array, excluded: PackedInt64Array,
		max_hits: int) -> PackedInt32Array:
	var query := PhysicsRayQueryParameters2D.new()
	var hits := PackedInt32Array()
	hits.resize(starts.size())
	var at := 0
	var excluding := false
	for i in starts.size():
		query.from = starts[i]
		query.to = ends[i]
		query.collision_mask = masks[i]
		var exclude: Array[RID] = []
		for j in counts[i]:
			var body := instance_from_id(excluded[at + j]) as CollisionObject2D
			if body != null:
				exclude.append(body.get_rid())
		at += counts[i]
		if excluding or not exclude.is_empty():
			query.exclude = exclude
			excluding = not exclude.is_empty()
		var found := 0
		while found < max_hits:
			var hit := space.intersect_ray(query)
			if hit.is_empty():
				break
			found += 1
			exclude.append(hit.rid)
			query.exclude = exclude
			excluding = true
		hits[i] = found
	return hits


func cast_3d(space: PhysicsDirectSpaceState3D, starts: PackedVector3Array, ends: PackedVector3Array,
		masks: PackedInt32Array, counts: PackedInt32Array, excluded: PackedInt64Array,
		max_hits: int) -> PackedInt32Array:
	var query := PhysicsRayQueryParameters3D.new()
	var hits := PackedInt32Array()
	hits.resize(starts.size())
	var at := 0
	var excluding := false
	for i in starts.size():
		query.from = starts[i]
		query.to = ends[i]
		query.collision_mask = masks[i]
		var exclude: Array[RID] = []
		for j in counts[i]:
			var body := instance_from_id(excluded[at + j]) as CollisionObject3D
			if body != null:
				exclude.append(body.get_rid())
		at += counts[i]
		if excluding or not exclude.is_empty():
			query.exclude = exclude
			excluding = not exclude.is_empty()
		var found := 0
		while found < max_hits:
			var hit := space.intersect_ray(query)
			if hit.is_empty():
				break
			found += 1
			exclude.append(hit.rid)
			query.exclude = exclude
			excluding = true
		hits[i] = found
	return hits
"""


class Group(NamedTuple):
    """One group's nodes in one dimension this frame, read in one call: their instance ids,
    positions, collision layers (0: not a body) and, per node, the flags of the `when`s then the
    classes asked."""

    ids: list[int]
    points: np.ndarray  # (nodes, dimension)
    layers: list[int]
    flags: np.ndarray  # (nodes, whens + classes)
    whens: dict[str, int]  # `when` -> its column in flags
    kinds: dict[str, int]  # class -> its column in flags


class Sensing:
    """Every sense in the game, run once a frame by `NpcMindServer.frame` (before the server's step):
    the due sights and touch senses (in `BATCHES_HZ` batches a second), the frame's stimuli for every
    hearing sense, then the frame's records (queued for the step's batch) and its sightings. Owned by
    the server singleton (`sensing()`)."""

    def __init__(self) -> None:
        self.periodic: list[Any] = []  # sights and touch senses by slot (None: a free slot)
        self.free_slots: list[int] = []
        self.due = np.full(16, math.inf)  # server-clock second at which each slot next checks
        self.period = np.full(16, 0.1)  # each slot's seconds between checks (1 / rate_hz)
        self.registered = 0  # senses registered so far: the phase of the next one
        self.batch = -1  # the last batch that ran: floor(clock x batches a second)
        self.listeners: dict[int, Any] = {}  # hearing senses by instance id
        self._listeners_of: dict[int, tuple[list[Any], np.ndarray]] = {}  # dimension -> senses, pose slots
        # bumped when a sense comes or goes: the sights' gathered settings (`_Looking`) are made again
        self.placements = 0
        # dimension -> the due sights' gathered settings, by the id of their list (`_split_due`'s)
        self._looking: dict[int, dict[int, _Looking]] = {}
        # the due slots split by kind (`_split_due`), by (placements, the slots): touches, sights
        self._due_sets: dict[tuple[int, bytes], tuple[list[Any], dict[int, list[Any]]]] = {}
        self.poses = 0  # pose slots handed out
        self.free_poses: list[int] = []
        self.pose_ids = np.zeros(16, dtype=np.uint64)  # each pose slot's NPC (instance id; 0: none)
        self.stimuli: list[Stimulus] = []
        self.touched: list[tuple[Any, Any]] = []  # (touch sense, body) entered this frame
        self.rows: list[tuple[int, int, int, float]] = []  # (stream, entity, type, salience)
        self.noted: list[tuple[int, int, tuple[float, ...]]] = []  # (stream, entity, position)
        self._world: Any = None  # the engine side (`WORLD_SOURCE`), made on first use
        self.totals = {"checks": 0, "rays": 0, "records": 0, "stimuli": 0}

    def idle(self) -> bool:
        """No sense to run and nothing of one waiting: a frame's `run` would do nothing."""
        return (
            len(self.free_slots) == len(self.periodic) and not self.listeners
            and not (self.stimuli or self.touched or self.rows or self.noted)
        )  # fmt: skip

    def world(self) -> Any:
        if self._world is None:
            self._world = engine_script(WORLD_SOURCE)
        return self._world

    # --- registration (the nodes) ------------------------------------------------------------
    def add(self, sense: Any) -> None:
        mind_server = server()
        if not mind_server.ticking:
            mind_server._start_ticking()
        state = sense.state()
        self.placements += 1
        # what the sense reads every check, found again wherever it now is in the tree
        parent = sense.get_parent()
        body = _body_of(parent)
        state["parent"], state["stream"], state["space"], state["look"] = parent, None, None, None
        state["layer"] = body[1] if body is not None else 0
        if "pose" not in state:
            state["pose"] = self.free_poses.pop() if self.free_poses else self.poses
            self.poses = max(self.poses, state["pose"] + 1)
            if self.poses > self.pose_ids.size:
                self.pose_ids = np.concatenate([self.pose_ids, np.zeros_like(self.pose_ids)])
        self.pose_ids[state["pose"]] = parent._id
        if isinstance(sense, _Hearing):
            self.listeners[sense._id] = sense
            self._listeners_of.clear()
            return
        if "slot" in state:
            return
        slot = self.free_slots.pop() if self.free_slots else len(self.periodic)
        if slot == len(self.periodic):
            self.periodic.append(None)
            if slot >= self.due.size:
                self.due = np.concatenate([self.due, np.full(self.due.size, math.inf)])
                self.period = np.concatenate([self.period, np.full(self.period.size, 0.1)])
        self.periodic[slot] = sense
        state["slot"] = slot
        period = self.period[slot] = _period(sense)
        self.due[slot] = mind_server.core.now() + phase(self.registered, period)
        self.registered += 1

    def remove(self, sense: Any) -> None:
        state = sense.state()
        self.placements += 1
        self._looking.clear()  # it holds the senses: a freed one is not kept alive
        self._due_sets.clear()  # (as does this)
        if self.listeners.pop(sense._id, None) is not None:
            self._listeners_of.clear()
        pose = state.pop("pose", None)
        if pose is not None:
            self.pose_ids[pose] = 0
            self.free_poses.append(pose)
        slot = state.pop("slot", None)
        if slot is not None:
            self.periodic[slot] = None
            self.due[slot] = math.inf
            self.period[slot] = math.inf  # (the batch clock runs at the live senses' rates)
            self.free_slots.append(slot)

    def emit(self, position: Any, radius: float, kind: Any, salience: float, source: Any) -> None:
        """Queue a stimulus for the next frame; a clear error for a bad argument (nothing queued)."""
        if isinstance(position, Vector2):
            point: tuple[float, ...] = (position.x, position.y)
        elif isinstance(position, Vector3):
            point = (position.x, position.y, position.z)
        else:
            kind_name = type(position).__name__
            raise TypeError(f"emit_stimulus: position must be a Vector2 or Vector3, got {kind_name}")
        if not all(math.isfinite(value) for value in point):
            raise ValueError(f"emit_stimulus: position must be finite, got {position}")
        if not _number(radius) or not 0.0 <= radius < math.inf:
            raise ValueError(f"emit_stimulus: radius must be a finite number >= 0, got {radius!r}")
        memory_type = memory_type_of(str(kind) if isinstance(kind, str) else kind)
        if not _number(salience) or not 0.0 <= salience <= 1.0:
            raise ValueError(f"emit_stimulus: salience must be a number in [0, 1], got {salience!r}")
        if isinstance(source, objects.Object):
            if not source.is_valid:
                raise ValueError("emit_stimulus: the source was freed")
            body = _body_of(source)
            entity, layer = source._id, body[1] if body is not None else 0
        elif isinstance(source, int) and not isinstance(source, bool) and source >= 0:
            entity, layer = source, 0
        else:
            raise TypeError(f"emit_stimulus: source must be a node or an entity id >= 0, got {source!r}")
        self.stimuli.append(Stimulus(point, float(radius), memory_type, float(salience), entity, layer))
        self.totals["stimuli"] += 1

    # --- once a frame --------------------------------------------------------------------------
    def run(self, tree: Any, now: float) -> None:
        """Run what is due at `now` and write the frame's records (before the server steps). A
        failure is reported once (its repeats counted) and never stops the server's step."""
        try:
            self._run(now)
        except Exception as error:  # the clock, forgetting and signals go on regardless
            self.rows, self.noted, self.stimuli, self.touched = [], [], [], []
            reported = mistakes.report(
                "NpcMindServer",
                f"senses_failed:{type(error).__name__}",
                f"the senses failed this frame ({error}).",
                fix="see the traceback below; please report it if a node's settings do not explain it.",
            )
            if reported:  # its traceback once, with its one message (repeats are counted)
                log.exception("npc_mind: the senses failed this frame")

    def _run(self, now: float) -> None:
        if self.touched:
            touched, self.touched = self.touched, []
            for sense, body in touched:
                if sense.is_valid and body.is_valid and "slot" in sense.state():
                    self._feel(sense, [body], now)
        count = len(self.periodic)
        if count > len(self.free_slots):  # a live sight or touch sense
            rate = max(BATCHES_HZ, 1.0 / float(self.period[:count].min()))
            batch = math.floor(now * rate + 1e-6)  # (a clock of summed frame times lands just short)
            if batch != self.batch:
                self.batch = batch
                slots = np.flatnonzero(self.due[:count] <= now)
                if slots.size:
                    self._run_due(slots, now)
        if self.stimuli:
            self._hear(now)
        self._write(now)

    def _run_due(self, at: np.ndarray, now: float) -> None:
        due, period = self.due, self.period[at]
        due[at] += period
        late = at[due[at] <= now]  # a long frame (or a changed rate): start again from now
        due[late] = now + self.period[late]
        touches, sights = self._split_due(at)
        for sense in touches:
            self._feel(sense, list(sense.get_overlapping_bodies()), now)
        self.totals["checks"] += at.size
        for dimension, senses in sights.items():
            if senses:
                self._look(senses, dimension, now)

    def _split_due(self, at: np.ndarray) -> tuple[list[Any], dict[int, list[Any]]]:
        """The due slots' touch senses and sights by dimension; the same lists as the last time the
        same slots were due, while no sense came or went (`KEPT_DUE_SETS`)."""
        key = (self.placements, at.tobytes())
        split = self._due_sets.get(key)
        if split is not None:
            return split
        touches: list[Any] = []
        sights: dict[int, list[Any]] = {2: [], 3: []}
        periodic = self.periodic
        for slot in at.tolist():
            sense = periodic[slot]
            if isinstance(sense, _Touch):
                touches.append(sense)
            else:
                sights[sense._DIMENSION].append(sense)
        if len(self._due_sets) >= KEPT_DUE_SETS:
            self._due_sets.clear()
        self._due_sets[key] = (touches, sights)
        return touches, sights

    def _listening(self, dimension: int) -> tuple[list[Any], np.ndarray]:
        """The hearing senses of a dimension and their pose slots (kept until one comes or goes)."""
        found = self._listeners_of.get(dimension)
        if found is None:
            senses = [sense for sense in self.listeners.values() if dimension == sense._DIMENSION]
            slots = np.asarray([sense.__dict__["_state"]["pose"] for sense in senses], dtype=np.int32)
            found = self._listeners_of[dimension] = (senses, slots)
        return found

    def _poses(self, senses: list[Any], dimension: int, slots: np.ndarray | None = None) -> np.ndarray:
        """(senses, 2 x dimension): each NPC's position then unit facing (2D +X, 3D -Z), in one call;
        a row of NaN (reported once a sense) when the NPC is not a Node2D / Node3D. `slots`: the
        senses' pose slots, when the caller holds them."""
        if slots is None:
            slots = np.asarray([sense.state()["pose"] for sense in senses], dtype=np.int32)
        poses = np.empty((len(senses), 2 * dimension))
        interface.node_poses(self.pose_ids[slots], dimension, poses)
        for row in np.flatnonzero(np.isnan(poses[:, 0])).tolist():
            _report_parent(senses[row], dimension)
        return poses

    # --- sight ---------------------------------------------------------------------------------
    def _look(self, senses: list[Any], dimension: int, now: float) -> None:
        """The due sights of one dimension: every sense against every node of its groups in one
        array operation, then one ray batch for the pairs in range and view whose rules hold."""
        version, placements = _rules_version[0], self.placements
        kept = self._looking.setdefault(dimension, {})
        gathered = kept.get(id(senses))
        # the same due sights, unedited: read once (the same list is the same sights: `_split_due`;
        # a gathered one holds its list, so no other list can have that id meanwhile)
        if gathered is None or gathered.senses is not senses or gathered.key[:2] != (version, placements):
            key = (version, placements, *map(id, senses))
            slots = np.asarray([sense.state()["pose"] for sense in senses], dtype=np.int32)
            gathered = _Looking.gather(key, senses, slots, dimension, None)
            gathered.senses = senses
            if len(kept) >= KEPT_DUE_SETS:
                kept.clear()
            kept[id(senses)] = gathered
        poses = self._poses(senses, dimension, gathered.slots)
        if np.isnan(poses[gathered.rows, 0]).any():  # an NPC not placed this frame: it sits out
            placed = ~np.isnan(poses[:, 0])
            gathered = _Looking.gather(gathered.key, senses, gathered.slots, dimension, placed)
        for sense in gathered.badly_ruled:  # bad rules: their one report, repeats counted
            sense.compiled_rules()
        looking = gathered.looking
        if not looking:
            return
        rows = gathered.rows
        eyes, facing = poses[rows, :dimension], poses[rows, dimension:]
        ranges, cos_half, masks, lifts, owners, own_blocks = gathered.settings
        spaces = gathered.spaces
        # The pairs in range and view whose rules hold, a ray each: the sense's position (`at`) and
        # per ray the rules that hold, with the ray's end, the node's id and its layer.
        holding_rules: list[list[Rule]] = []
        at_parts, end_parts, entity_parts, layer_parts = [], [], [], []
        for group_name, index, group_rules, asked, plain in gathered.groups:
            group = self._group(group_name, dimension, *asked)
            if not group.ids:
                continue
            seen = in_view(eyes[index], facing[index], ranges[index], cos_half[index], group.points)
            found_rows, columns = np.nonzero(seen)
            positions = index[found_rows]
            ids = np.asarray(group.ids, dtype=np.int64)
            keep = ids[columns] != owners[positions]  # not itself
            positions, columns = positions[keep], columns[keep]
            if plain:  # every rule of the group holds
                helds = [group_rules[position] for position in positions.tolist()]
            else:
                helds = [
                    _held(group_rules[position], group, column)
                    for position, column in zip(positions.tolist(), columns.tolist(), strict=True)
                ]
                holding = np.asarray([bool(held) for held in helds], dtype=bool)
                positions, columns = positions[holding], columns[holding]
                helds = [held for held in helds if held]
            holding_rules += helds
            at_parts.append(positions)
            end_parts.append(group.points[columns])
            entity_parts.append(ids[columns])
            layer_parts.append(np.asarray(group.layers, dtype=np.int64)[columns])
        if not holding_rules:
            self._spotted(looking, gathered.recalling, [], [])
            return
        at = np.concatenate(at_parts)
        starts = eyes[at].copy()
        ends = np.concatenate(end_parts)
        targets = np.concatenate(entity_parts)
        target_blocks = np.concatenate(layer_parts) & masks[at]
        if dimension == 3:  # the ray runs eye_height above both origins
            starts[:, 1] += lifts[at]
            ends[:, 1] += lifts[at]
        counts = (own_blocks[at] != 0).astype(np.int32) + (target_blocks != 0)
        lookers = at.tolist()
        excluded: list[int] = []
        for row in np.flatnonzero(counts).tolist():  # only bodies on the occluder mask are left out
            position = lookers[row]
            excluded += [int(owners[position])] if own_blocks[position] else []
            excluded += [int(targets[row])] if target_blocks[row] else []
        hits = self._cast_batch(spaces, at, dimension, (starts, ends, masks[at], counts), excluded, 1)
        visible = np.flatnonzero(hits == 0).tolist()
        entities = targets[visible].tolist()
        self._spotted(looking, gathered.recalling, [lookers[row] for row in visible], entities)
        if not visible:
            return
        points = np.concatenate(end_parts)[visible].tolist()  # the targets' own points (no eye lift)
        streams = server().core.memory.entries.entries  # (a plain dict: one lookup a sighting)
        states, intervals = gathered.states, gathered.intervals
        for row, entity, point in zip(visible, entities, points, strict=True):
            position = lookers[row]
            state = states[position]
            handle = state["handle"]
            if handle not in streams:  # (no stream yet, or it left: found again, or reported once)
                handle = looking[position].stream_handle()
            self._perceive(state, handle, entity, tuple(point), holding_rules[row], now, intervals[position])

    def _spotted(
        self, looking: list[Any], recalling: list[int], positions: list[int], entities: list[int]
    ) -> None:
        """recall_on_spot (`recalling`: the positions in `looking` of the sights that have it): each
        such sight's targets seen now and not at its previous check are recalled (before this
        check's records, which are written after), and `recalled` emitted."""
        if not recalling:
            return
        seen: dict[int, set[int]] = {}
        for position, entity in zip(positions, entities, strict=True):
            seen.setdefault(position, set()).add(entity)
        for position in recalling:
            sense = looking[position]
            state = sense.__dict__["_state"]
            now_seen = seen.get(position, set())
            before, state["in_view"] = state.get("in_view", set()), now_seen
            stream = state["stream"] if sense.stream_handle() else None
            if stream is None:
                continue
            for entity in sorted(now_seen - before):
                remembered = stream.query_strongest(entity)
                if remembered:
                    sense.emit_signal(
                        StringName("recalled"), entity, int(remembered["memory_type"]),
                        float(remembered["retrievability"]),
                    )  # fmt: skip

    def _group(self, name: str, dimension: int, whens: list[str], kinds: list[str]) -> Group:
        """The group's nodes this frame, with the flags of the `when`s and classes asked of them
        (`_asked`), in one call."""
        found = self.world().call(
            "group", StringName(name), dimension, PackedStringArray(whens), PackedStringArray(kinds)
        )
        ids = np.asarray(found[0]).tolist()
        points = np.asarray(found[1], dtype=np.float64).reshape(len(ids), dimension)
        layers = np.asarray(found[2]).tolist()
        flags = np.asarray(found[3], dtype=np.uint8).reshape(len(ids), len(whens) + len(kinds))
        columns = {when: index for index, when in enumerate(whens)}
        classes_at = {kind: len(whens) + index for index, kind in enumerate(kinds)}
        return Group(ids, points, layers, flags, columns, classes_at)

    # --- touch ---------------------------------------------------------------------------------
    def _feel(self, sense: Any, bodies: list[Any], now: float) -> None:
        state = sense.state()
        own = state["parent"]._id if state["parent"] is not None else 0
        rules = sense.compiled_rules()
        if not rules or not bodies:
            return
        handle = sense.stream_handle()
        for body in bodies:
            if body._id == own:
                continue
            held = [
                rule
                for rule in rules
                if (not rule.group or body.is_in_group(rule.group))
                and (not rule.node_class or body.is_class(rule.node_class))
                and (not rule.when or _condition(body, rule.when) != rule.when_false)
            ]
            if held:
                point = _xyz(body.get_global_position())
                self._perceive(state, handle, body._id, point, held, now, _between_records(sense))

    # --- hearing -------------------------------------------------------------------------------
    def _hear(self, now: float) -> None:
        stimuli, self.stimuli = self.stimuli, []
        heard: dict[int, tuple[list[Any], np.ndarray]] = {}
        for dimension in {len(stimulus.point) for stimulus in stimuli}:
            senses, slots = self._listening(dimension)
            points = self._poses(senses, dimension, slots)[:, :dimension]
            heard[dimension] = (senses, points)
        heard_by: list[tuple[Any, Stimulus, float, int]] = []  # (sense, stimulus, distance, its ray or -1)
        rays: dict[int, list[tuple[Any, tuple, tuple, int, list[int]]]] = {2: [], 3: []}
        for stimulus in stimuli:
            dimension = len(stimulus.point)
            senses, points = heard[dimension]
            if not senses:
                continue
            distances = np.sqrt(((points - np.asarray(stimulus.point)) ** 2).sum(axis=1))
            for position in np.flatnonzero(distances < stimulus.radius).tolist():  # NaN: never
                sense = senses[position]
                state = sense.state()
                if state["parent"]._id == stimulus.source:
                    continue  # its own noise
                mask, ray = int(sense.occlusion_mask), -1
                if mask:
                    exclude = [state["parent"]._id] if state["layer"] & mask else []
                    if stimulus.source_layer & mask:
                        exclude.append(stimulus.source)
                    ray = len(rays[dimension])
                    listener = tuple(points[position].tolist())
                    rays[dimension].append(
                        (_space(state, dimension), stimulus.point, listener, mask, exclude)
                    )
                heard_by.append((sense, stimulus, float(distances[position]), ray))
        hits = {dimension: self._cast(rays[dimension], dimension, MAX_OCCLUDER_HITS) for dimension in rays}
        for sense, stimulus, distance, ray in heard_by:
            occluders = hits[len(stimulus.point)][ray] if ray >= 0 else 0
            factor = float(sense.occlusion_factor)
            salience = heard_salience(stimulus.salience, distance, stimulus.radius, occluders, factor)
            if salience <= 0.0 or salience < float(sense.min_salience):
                continue
            rule = Rule(-1, "", "", stimulus.memory_type, min(salience, 1.0), "", False)
            handle = sense.stream_handle()
            self._perceive(sense.state(), handle, stimulus.source, stimulus.point, [rule], now, None)

    # --- shared ----------------------------------------------------------------------------------
    def _perceive(  # noqa: PLR0917 - one perception's fields
        self,
        state: dict[str, Any],
        handle: int,
        entity: int,
        point: tuple[float, ...],
        held: list[Rule],
        now: float,
        interval: float | None,
    ) -> None:
        """Record what the rules say of one perceived entity (at most once per `interval` seconds per
        target and rule; None: every time) and note where."""
        recent = state["recent"]
        rate: RateGate = state["gate"]
        for rule in held:
            recorded = bool(handle) and (
                interval is None or rate.passes((entity, rule.number), now, interval)
            )
            if recorded:
                self.rows.append((handle, entity, rule.memory_type, rule.salience))
            # kept as a plain tuple of numbers, which the garbage collector stops tracking (a sense
            # keeps RECENT_KEPT: as NamedTuples, 1,000 sights made every full collection a long hitch)
            recent.append((now, entity, rule.memory_type, rule.salience, recorded, point))
        if handle:
            self.noted.append((handle, entity, point))

    def _cast(
        self, rays: list[tuple[Any, tuple, tuple, int, list[int]]], dimension: int, max_hits: int
    ) -> list[int]:
        """How many bodies each (space, start, end, mask, excluded ids) segment hits, up to `max_hits`."""
        if not rays:
            return []
        starts = np.asarray([ray[1] for ray in rays], dtype=np.float64).reshape(len(rays), dimension)
        ends = np.asarray([ray[2] for ray in rays], dtype=np.float64).reshape(len(rays), dimension)
        masks = np.asarray([ray[3] for ray in rays], dtype=np.int64)
        counts = np.asarray([len(ray[4]) for ray in rays], dtype=np.int32)
        excluded = [entity for ray in rays for entity in ray[4]]
        at = np.arange(len(rays))
        columns = (starts, ends, masks, counts)
        return self._cast_batch([ray[0] for ray in rays], at, dimension, columns, excluded, max_hits).tolist()

    def _cast_batch(  # noqa: PLR0917 - the batch and its columns
        self,
        spaces: list[Any],
        at: np.ndarray,
        dimension: int,
        columns: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
        excluded: list[int],
        max_hits: int,
    ) -> np.ndarray:
        """Hits per ray (ray i in `spaces[at[i]]`; columns: starts, ends, masks, counts of excluded
        ids): every ray in one call per physics space."""
        starts, ends, masks, counts = columns
        method = "cast_2d" if dimension == 2 else "cast_3d"
        space_ids = np.asarray([spaces[position]._id for position in at.tolist()], dtype=np.int64)
        hits = np.zeros(len(at), dtype=np.int32)
        firsts = (np.cumsum(counts) - counts).tolist()  # each ray's first excluded id
        excluded_array = np.asarray(excluded, dtype=np.int64)
        for space_id in dict.fromkeys(space_ids.tolist()):
            chosen = np.flatnonzero(space_ids == space_id)
            part = excluded_array
            if chosen.size != len(at):  # the excluded ids of the chosen rays, in order
                ranges = [excluded_array[firsts[i] : firsts[i] + int(counts[i])] for i in chosen.tolist()]
                part = np.concatenate([np.zeros(0, np.int64), *ranges])
            found = self.world().call(
                method, spaces[int(at[chosen[0]])], starts[chosen].astype(np.float32),
                ends[chosen].astype(np.float32), masks[chosen].astype(np.int32),
                counts[chosen].astype(np.int32), part, max_hits,
            )  # fmt: skip
            hits[chosen] = np.asarray(found, dtype=np.int32)
        self.totals["rays"] += len(at)
        return hits

    def _write(self, now: float) -> None:
        """The frame's records and sightings. Each record takes the path of `MemoryStream.record_event`
        (`MindServer.record_many`: `record` of each row, queued, then folded with the frame's other
        writes in the step's one batch, at the time it was made); a row of a stream freed this frame
        is skipped."""
        if not (self.rows or self.noted):  # (most frames of a game without senses)
            return
        mind = server().core
        streams = mind.memory.entries.entries  # (a plain dict: two lookups a record)
        rows, self.rows = self.rows, []
        mind.record_many([row for row in rows if row[0] in streams])
        self.totals["records"] += len(rows)
        noted, self.noted = self.noted, []
        if noted:
            mind.sightings.note_many((row for row in noted if row[0] in streams), now)

    def close(self) -> None:
        """Drop the engine objects it holds (the server singleton is being freed)."""
        self._world = None
        self._due_sets.clear()
        self._looking.clear()
        self.periodic, self.listeners, self.stimuli, self.touched = [], {}, [], []

    def metrics(self) -> dict[str, float]:
        return {
            "senses/count": float(len(self.listeners) + len(self.periodic) - len(self.free_slots)),
            **{f"senses/{name}": float(value) for name, value in self.totals.items()},
        }


def _space(state: dict[str, Any], dimension: int) -> Any:
    """The physics space the sense's NPC is in (found once while it is in the tree)."""
    space = state.get("space")
    if space is None:
        parent = state["parent"]
        world = parent.get_world_2d() if dimension == 2 else parent.get_world_3d()
        space = state["space"] = world.get_direct_space_state()
    return space


def _condition(node: Any, name: str) -> bool:
    """A rule's `when` on a node: its property, else its meta, else false."""
    value = node.get(name)
    if value is None and node.has_meta(name):
        value = node.get_meta(name)
    return bool(value)


def _between_records(sense: Any) -> float | None:
    """A sense's `record_interval` as `_perceive` takes it: None (record at every check) for 0, which
    a rate gate would let through every time anyway."""
    interval = float(sense.record_interval)
    return interval if interval > 0.0 else None


def _period(sense: Any) -> float:
    return 1.0 / max(float(sense.rate_hz), 0.01)


def _rate_changed(sense: Any, _value: Any) -> None:
    slot = sense.__dict__.get("_state", {}).get("slot")
    if slot is not None:
        sensing().period[slot] = _period(sense)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _body_of(node: Any) -> tuple[Any, int] | None:
    """(RID, collision layer) of a physics body, else None."""
    if isinstance(node, classes.CollisionObject2D | classes.CollisionObject3D):
        return node.get_rid(), int(node.get_collision_layer())
    return None


def _xyz(vector: Any) -> tuple[float, ...]:
    return (vector.x, vector.y) if isinstance(vector, Vector2) else (vector.x, vector.y, vector.z)


def _held(rules: list[Rule], group: Group, column: int) -> list[Rule]:
    """The rules (of this group) that hold for its node now (class and `when` read in the group's call)."""
    held = []
    flags = group.flags[column]
    for rule in rules:
        if rule.node_class and not flags[group.kinds[rule.node_class]]:
            continue
        if rule.when and bool(flags[group.whens[rule.when]]) == rule.when_false:
            continue
        held.append(rule)
    return held


class _Looking:
    """What one dimension's due sights read each check, gathered from their settings in one pass and
    kept while the same sights are due unedited (`key`: the rules' version, the senses' placements,
    the senses): the senses that look (those with rules on a placed NPC), their settings as arrays,
    and per group the lookers and the rules they ask of it."""

    __slots__ = (
        "badly_ruled",
        "groups",
        "intervals",
        "key",
        "looking",
        "recalling",
        "rows",
        "senses",
        "settings",
        "slots",
        "spaces",
        "states",
    )
    key: tuple
    senses: list[Any] | None  # the due list it was last checked against (kept: `Sensing.remove` drops it)
    slots: np.ndarray  # each sense's pose slot
    rows: np.ndarray  # each looking sense's row among the senses
    looking: list[Any]
    recalling: list[int]  # the positions in `looking` of the sights with recall_on_spot
    badly_ruled: list[Any]
    settings: tuple[np.ndarray, ...]  # reach, cos of half the view, mask, eye lift, NPC id, own block
    spaces: list[Any]
    states: list[dict[str, Any]]  # each looking sense's run-time state (`_Sense.state`)
    intervals: list[float | None]  # and the seconds between records (`_between_records`)
    # per group: its name, the lookers' positions, each one's rules for it, what they ask of its
    # nodes (`_asked`), whether they ask nothing (every rule holds)
    groups: list[tuple[str, np.ndarray, dict[int, list[Any]], tuple[list[str], list[str]], bool]]

    @classmethod
    def gather(
        cls, key: tuple, senses: list[Any], slots: np.ndarray, dimension: int, placed: np.ndarray | None
    ) -> _Looking:
        """`placed`: per sense, whether its NPC has a pose this frame (None: every one has)."""
        gathered = cls()
        gathered.key, gathered.slots, gathered.senses = key, slots, None
        version = key[0]
        looking, rule_sets, rows, settings, spaces, badly_ruled = [], [], [], [], [], []
        for row, sense in enumerate(senses):
            state = sense.__dict__["_state"]
            look = state.get("look")
            if look is None or look[0] != version:  # read again after an edit (or a move in the tree)
                look = state["look"] = _look_settings(sense, state, dimension, version)
            if not look[1] or (placed is not None and not placed[row]):  # no rules, or not placed
                continue
            if look[4]:
                badly_ruled.append(sense)
            looking.append(sense)
            rule_sets.append(look[1])
            rows.append(row)
            settings.append(look[2])
            spaces.append(look[3])
        gathered.looking, gathered.badly_ruled, gathered.spaces = looking, badly_ruled, spaces
        gathered.states = [sense.__dict__["_state"] for sense in looking]
        gathered.intervals = [_between_records(sense) for sense in looking]
        gathered.recalling = [position for position, sense in enumerate(looking) if sense.recall_on_spot]
        gathered.rows = np.asarray(rows, dtype=np.intp)
        columns = zip(*settings, strict=True) if settings else ((),) * 6
        gathered.settings = tuple(np.asarray(values) for values in columns)
        by_group: dict[str, list[int]] = {}
        for position, rules in enumerate(rule_sets):
            for group in dict.fromkeys(rule.group for rule in rules):
                by_group.setdefault(group, []).append(position)
        gathered.groups = []
        for group_name, members in by_group.items():
            group_rules = {
                position: [rule for rule in rule_sets[position] if rule.group == group_name]
                for position in members
            }
            whens, kinds = asked = _asked(rule for rules in group_rules.values() for rule in rules)
            plain = not (whens or kinds)  # every rule holds: no check
            gathered.groups.append((group_name, np.asarray(members), group_rules, asked, plain))
        return gathered


def _asked(rules: Iterable[Rule]) -> tuple[list[str], list[str]]:
    """The `when`s and the node classes these rules ask of a node, each once, in order (read with
    the group's nodes every check: gathered once, not from every looker's rules each frame)."""
    whens: dict[str, None] = {}
    kinds: dict[str, None] = {}
    for rule in rules:
        if rule.when:
            whens[rule.when] = None
        if rule.node_class:
            kinds[rule.node_class] = None
    return list(whens), list(kinds)


def _look_settings(sense: Any, state: dict[str, Any], dimension: int, version: int) -> tuple:
    """(version, rules, (reach, cos of half the view, mask, eye lift, NPC id, mask & own layer),
    space, whether rules were skipped): what a sight's check reads, kept until an edit."""
    rules = sense.compiled_rules()
    mask = int(sense.occluder_mask)
    lift = float(sense.eye_height) if dimension == 3 else 0.0
    reach, cos = max(float(sense.view_range), 0.0), cos_half_fov(sense.field_of_view)
    settings = (reach, cos, mask, lift, state["parent"]._id, mask & state["layer"])
    base = classes.Node2D if dimension == 2 else classes.Node3D
    space = _space(state, dimension) if isinstance(state["parent"], base) else None  # else never looks
    return version, rules, settings, space, bool(state["rules"][2])


def _report_parent(sense: Any, dimension: int) -> None:
    """A sense whose parent is not a Node2D / Node3D perceives nothing: once, repeats counted."""
    name = "Node2D" if dimension == 2 else "Node3D"
    mistakes.report(
        sense, "parent_not_spatial",
        f"the parent must be a {name} (the NPC): this sense reads its position from it, so it "
        "perceives nothing.",
        fix=f"move the sense under the NPC's {name} (a CharacterBody, an Area, a {name}).",
    )  # fmt: skip


def sensing() -> Sensing:
    """The server singleton's coordinator."""
    return server().sensing


for _periodic in (SightSense2D, SightSense3D, TouchSense2D, TouchSense3D):
    _periodic.__dict__["rate_hz"].on_change = _rate_changed
