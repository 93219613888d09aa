"""`UtilityConsideration`, `UtilityBehavior` (inspector Resources) and `UtilitySelector` (a thin node).

The resources' fields are, one to one, the fields of `npc_mind.utility`'s data format, so a designer
adds a behavior in the inspector without writing code, and `to_dict()` is what the server builds.

Why over 600 lines: three engine classes, most of it their exported fields with the doc each shows in the
inspector and the help (the one place those texts are written); the node's logic lives in
`npc_mind.server.selectors`, `targets`, `inputs` and `actions`.
"""

from __future__ import annotations

import difflib
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

from gdbridge import classes, objects
from gdbridge.declare import DROP, apart, chosen, converts, export, export_group, python_only, queued, signal
from gdbridge.interface import ReportedError
from gdbridge.types import NodePath, PackedStringArray, PropertyHint, PropertyUsage, StringName
from npc_mind.server.selectors import ChoiceAnswers
from npc_mind.utility import UtilityDefinitionError, UtilityError, families
from npc_mind.utility import UtilitySelector as CoreSelector
from npc_mind.utility.curves import CURVE_TYPES
from npc_mind.utility.selector import MISSING
from npc_mind_godot import actions, inputs, live, mistakes, selector_feed, targets
from npc_mind_godot._common import (
    MAIN_THREAD,
    NOTIFICATION_PREDELETE,
    ServerHandle,
    icon,
    refuse_thread,
    server,
    thread_id,
)
from npc_mind_godot.debug_feed import selector_state

TABLE_SAMPLES = 33  # a Godot Curve is baked to this many points when it changes


class UtilityConsideration(classes.Resource, icon=icon("UtilityConsideration")):
    __doc__ = f"""One input of a behavior: `input_key` from the context, mapped to 0..1 by a response curve.

    The curve families (`curve_type`; u is the input, normalised when the range is used, and the
    family's parameters by name in parentheses): {families.summary()}. `curve_params` holds the
    family's parameters by name; missing ones take the family's defaults. For `table`, set `curve`
    (a Godot Curve), baked to 33 points when the selector registers and again whenever the curve
    changes, so no engine call per tick. Every score is clamped to 0..1 after `invert`; a NaN input
    scores 0 and is reported once, never propagated.

    The fields map one to one onto `npc_mind.utility`'s data format (`consideration`), with the same
    meaning: **no input range unless one is set** (`use_input_range`), in the inspector as in Python
    and JSON, so `saturating` with k = 2 scores 0.75 for an input of 6 everywhere. The inspector
    lists a consideration by its `input_key`.

    In the inspector (with the npc_mind plugin enabled) the curve is drawn over its input domain (the
    range when used, else 0..1; for `saturating` up to 10 k) by the same code the server scores
    with, with a test-input slider and the score it gives; `curve_params` is edited as one named
    field per parameter of the chosen family, each with a range and a tooltip. An invalid parameter
    is explained under the curve and as a warning on the selector.
    """

    input_key: StringName = export(
        StringName(""), doc="The context key this consideration reads (with a source: optional, see source)."
    )
    source: inputs.InputSource = export(
        None,
        doc="Where the input comes from without code (AwarenessInput, RecallInput, DistanceInput, "
        "SinceSeenInput, PropertyInput, BlackboardInput). Its key is input_key, else the source's name; "
        "a value evaluate()'s context gives for that key wins.",
    )
    curve_type: str = export(
        "linear", hint=PropertyHint.ENUM, hint_string=",".join(CURVE_TYPES), doc="The response curve family."
    )
    curve_params: dict = export({}, doc='The curve family\'s parameters by name, e.g. {"k": 5.0}.')
    curve: classes.Curve = export(None, doc="For curve_type table: a Godot Curve, baked to points.")
    weight: float = export(
        1.0,
        range=(0.0, 10.0, 0.01, "or_greater"),
        doc="weighted_sum: this score's multiplier; product: its exponent (0 ignores it).",
    )
    veto_below: float = export(
        0.0,
        range=(0.0, 1.0, 0.01),
        doc="A curve score below it zeroes the whole behavior (0: never vetoes).",
    )
    use_input_range: bool = export(
        False,
        doc="On: the input is normalised from [input_min, input_max] and clamped to 0..1 before the curve. "
        "Off (the default, as in Python and JSON without a range): the curve reads the raw input.",
    )
    input_min: float = export(0.0, doc="With use_input_range: the input that maps to 0.")
    input_max: float = export(1.0, doc="With use_input_range: the input that maps to 1.")
    invert: bool = export(False, doc="Use 1 - curve(x).")
    per_target: bool = export(False, doc="The input is an array, one value per target.")
    use_default_input: bool = export(
        False,
        doc="On: default_input stands in when the game gives no value for input_key, so a behavior "
        "added in the inspector never stops a game; off: a missing input is an error.",
    )
    default_input: float = export(
        0.0, doc="With use_default_input: the input when the context lacks input_key."
    )

    def to_dict(self) -> dict[str, Any]:
        """This consideration in `npc_mind.utility`'s data format (what the server scores)."""
        data: dict[str, Any] = {
            "input_key": inputs.key_of(self),
            "curve_type": str(self.curve_type),
            "curve_params": {str(k): _number(v) for k, v in dict(self.curve_params or {}).items()},
            "weight": float(self.weight),
            "invert": bool(self.invert),
            "per_target": bool(self.per_target),
        }
        if self.use_input_range:
            data["input_min"] = float(self.input_min)
            data["input_max"] = float(self.input_max)
        if self.veto_below > 0.0:  # 0 (or a negative value saved by older versions): no veto
            data["veto_below"] = float(self.veto_below)
        if data["curve_type"] == "table":
            data["points"] = _bake(self.curve)
        return data

    def _validate_property(self, prop: Any) -> None:
        if prop.name in ("input_min", "input_max") and not self.use_input_range:
            prop.usage = PropertyUsage.STORAGE  # shown only while the range is used
        elif prop.name == "default_input" and not self.use_default_input:
            prop.usage = PropertyUsage.STORAGE


def _range_changed(consideration: UtilityConsideration, _value: Any) -> None:
    # A range away from [0, 1] (typed in, or loaded from a resource saved before use_input_range
    # existed) turns the range on; turning it off resets the range, so what is saved stays consistent.
    fields = consideration.__dict__
    span = (fields.get("input_min", 0.0), fields.get("input_max", 1.0))
    if not fields.get("use_input_range") and span != (0.0, 1.0):
        fields["use_input_range"] = True
        consideration.notify_property_list_changed()


def _use_range_changed(consideration: UtilityConsideration, value: Any) -> None:
    if not value:
        consideration.__dict__["input_min"], consideration.__dict__["input_max"] = 0.0, 1.0
    consideration.notify_property_list_changed()


UtilityConsideration.__dict__["input_min"].on_change = _range_changed
UtilityConsideration.__dict__["input_max"].on_change = _range_changed
UtilityConsideration.__dict__["use_input_range"].on_change = _use_range_changed
UtilityConsideration.__dict__["use_default_input"].on_change = lambda c, _v: c.notify_property_list_changed()


def _show_as(resource: Any, label: Any) -> None:
    # The inspector labels an array element (and a resource picker) with its resource_name, so a
    # behavior shows as its name and a consideration as its input key, not "0 UtilityBehavior".
    resource.set(StringName("resource_name"), str(label))


UtilityConsideration.__dict__["input_key"].on_change = _show_as
UtilityConsideration.__dict__["source"].on_change = lambda c, _v: _show_as(c, inputs.key_of(c))


def _number(value: Any) -> Any:
    """A float when it is one; anything else as given, for the definition check to name it."""
    return float(value) if isinstance(value, int | float) else value


def _bake(curve: Any) -> list[list[float]]:
    """A Godot Curve (cubic Hermite with tangents) sampled into a table, so no engine call per tick."""
    if curve is None:
        return [[0.0, 0.0], [1.0, 1.0]]
    low, high = float(curve.get_min_domain()), float(curve.get_max_domain())
    points = []
    for i in range(TABLE_SAMPLES):
        x = low + (high - low) * i / (TABLE_SAMPLES - 1)
        points.append([(x - low) / (high - low) if high > low else 0.0, float(curve.sample(x))])
    return points


class UtilityBehavior(classes.Resource, icon=icon("UtilityBehavior")):
    """A candidate behavior ("attack", "flee", "patrol") scored from its considerations.

    aggregation: weighted_sum (sum of weight x score) or product (IAUS: scores raised to their weights,
    with the compensation factor). `weight` multiplies after aggregation; `tags` let the LLM decision
    restrict the choice to an intent; `cooldown` seconds before it may run again. The fields map one
    to one onto `npc_mind.utility`'s data format (`behavior`); the inspector lists a behavior by its
    `name`. What it does without code: the MindAction lists `on_enter`, `on_tick` and `on_exit`.
    """

    name: StringName = export(StringName(""), doc="What evaluate() returns when this behavior wins.")
    considerations: list = export(
        [],
        hint=PropertyHint.ARRAY_TYPE,
        hint_string="24/17:UtilityConsideration",
        doc="What it is scored from.",
    )
    aggregation: str = export(
        "weighted_sum",
        hint=PropertyHint.ENUM,
        hint_string="weighted_sum,product",
        doc="weighted_sum: sum of weight x score; product: scores raised to their weights, multiplied "
        "(IAUS, compensated for the number of considerations).",
    )
    weight: float = export(
        1.0, range=(0.0, 10.0, 0.01, "or_greater"), doc="Multiplies the behavior's aggregated score."
    )
    tags: PackedStringArray = export(PackedStringArray([]), doc="Intents this behavior serves.")
    cooldown: float = export(
        0.0, range=(0.0, 3600.0, 0.1, "or_greater"), doc="Seconds after it stops before it may win again."
    )
    on_enter: list = actions.action_list("Actions run once when the selector chooses it (see MindAction).")
    on_tick: list = actions.action_list("Actions run every physics frame while it holds.")
    on_exit: list = actions.action_list("Actions run once when another behavior replaces it.")

    def to_dict(self) -> dict[str, Any]:
        """This behavior in `npc_mind.utility`'s data format (what the server scores)."""
        return {
            "name": str(self.name),
            "considerations": [c.to_dict() for c in self.considerations if c is not None],
            "aggregation": str(self.aggregation),
            "weight": float(self.weight),
            "tags": [str(tag) for tag in self.tags],
            "cooldown": float(self.cooldown),
        }


UtilityBehavior.__dict__["name"].on_change = _show_as
UtilityBehavior.__dict__["on_tick"].on_change = actions.on_tick_changed


def _take_inputs(raw: bytes) -> None:
    """The set_input calls the binding queued, in call order, as bytes (`SelectorBank.take_inputs`):
    the selectors keyed by their handle (`selector_feed.joined`), the keys their definitions read."""
    server().core.selectors.take_inputs(raw, _input_names[0].names)


class UtilitySelector(ServerHandle, classes.Node, icon=icon("UtilitySelector")):
    """Chooses a behavior by utility: every behavior's considerations scored, the best one wins.

    Anti-dithering (all off by default): `momentum` bonus for the running behavior, `commitment`
    seconds before switching unless another is better by `interrupt_margin`, `tie_tolerance`, and a
    seeded weighted random pick among the `top_n`. Selectors with the same definition are scored
    together in one batch by the server. A designer adds a behavior in the inspector without writing
    code.

    **Two paths.** `evaluate(context)` is the Dictionary path: immediate, one NPC. The batched path
    needs no director: each node calls `set_inputs({"threat": t, "calm": c})` (or `set_input` per
    key) in its own `_process`, which writes straight into the server's input arrays for the
    definition, at the node's row; the server chooses for every selector of the definition in one
    batch at the end of that frame (after every node's `_process`, before the frame is drawn), emits
    `behavior_changed` then, in the same frame, and sets `choice`. So a handler of
    `behavior_changed` acts on this frame's inputs; `choice` read in `_process` is the choice made
    from the previous frame's inputs. An input never set counts as 0 (or the consideration's
    `default_input`). A director that already holds packed arrays calls
    `NpcMindServer.set_inputs(ids, &"threat", values)` per input key and
    `NpcMindServer.get_choices(ids)`. The two paths keep their own anti-dithering state.

    **Without code.** A consideration's input can come from an InputSource instead of a key. An
    auto-evaluating selector (`auto_evaluate`) needs no script: each frame, before the server's
    batch chooses, every auto-evaluating selector's sources are read (one source at a time for all
    of them), written with one `set_inputs` per input, and the batch chooses and emits
    `behavior_changed`. On that path a sourced key's `set_input` is overwritten by the source each
    frame; `evaluate(context)` reads the sources too, and a value the context gives wins.
    Per-target considerations are scored on the Dictionary path only, so an auto-evaluating
    selector with one is warned about.

    **Targets.** `target_from` picks the target from memory (an entity is what the senses record: a
    node's instance id; 0: none). The target outlives its node: `get_target_node()` is null once the
    node is freed, while `get_target_id()` and `get_target_position()` (the last known position)
    stay until memory picks another.

    **Warnings.** No behaviors, an empty entry in `behaviors` or in a behavior's `considerations`,
    or a definition the core rejects (unknown curve, a parameter that breaks its curve, a behavior
    without considerations, duplicate behavior names, all weights zero), naming the behavior and
    consideration; targets or memory inputs without a MemoryStream, a `memory_stream` path to
    nothing, a PropertyInput path or property that the NPC lacks. At run time such a mistake is one
    error naming the node and the fix, never one per frame, and the source gives the
    consideration's `default_input` (or 0). With the plugin enabled they refresh on every editor
    action; the inspector also lists the input keys the behaviors read ("Reads: threat, danger"):
    what `evaluate()` must be given. A `behaviors` slot holding something other than a
    UtilityBehavior or null is refused with a TypeError naming the slot, and the property keeps its
    value.

    **Run-time changes.** Assigning `behaviors` or an anti-dithering setting on a registered
    selector moves it to the group of its new definition (its anti-dithering state starts afresh);
    editing a Curve used by a `table` consideration re-bakes it the same way.
    """

    behaviors: list = export(
        [], hint=PropertyHint.ARRAY_TYPE, hint_string="24/17:UtilityBehavior", doc="The candidate behaviors."
    )
    momentum: float = export(
        0.0,
        range=(0.0, 1.0, 0.01, "or_greater"),
        doc="The running behavior's score counts (1 + momentum) times when choosing (0: off).",
    )
    commitment: float = export(
        0.0,
        range=(0.0, 60.0, 0.05, "or_greater"),
        doc="Seconds to keep a new behavior unless a challenger beats it by interrupt_margin or it hits 0.",
    )
    interrupt_margin: float = export(
        0.25,
        range=(0.0, 1.0, 0.01, "or_greater"),
        doc="During commitment, a challenger must beat the running behavior by more than this.",
    )
    tie_tolerance: float = export(
        0.0, range=(0.0, 1.0, 0.001), doc="A challenger must beat the running behavior by more than this."
    )
    top_n: int = export(
        1, range=(1, 16), doc="Above 1: a new choice is a weighted random pick among the n best (see seed)."
    )
    seed: int = export(0, doc="Random seed for top_n > 1 (0: unseeded).")
    _targets = export_group("Target")
    memory_stream: NodePath = export(
        NodePath(""), doc="The NPC's MemoryStream (targets and memory inputs); empty: a sibling MemoryStream."
    )
    target_from: str = export(
        "none",
        hint=PropertyHint.ENUM,
        hint_string=",".join(targets.TARGET_FROM),
        doc="none: set_target() only; memory: each frame, the entity of the strongest memory of "
        "target_memory_types above target_min_retrievability; scoring: the best target of the last "
        "evaluate() with per-target considerations (its entity from the context's target_ids_key array).",
    )
    target_memory_types: int = export(
        0,
        hint=PropertyHint.FLAGS,
        hint_string=targets.MEMORY_TYPE_FLAGS,
        doc="target_from memory: the memory types that make a target (none checked: any type).",
    )
    target_min_retrievability: float = export(
        0.0,
        range=(0.0, 1.0, 0.01),
        doc="target_from memory: a memory makes a target only while its R is above this (and above the "
        "profile's forget threshold; awareness_search 0.3 and awareness_pursue 0.8 by default).",
    )
    target_ids_key: StringName = export(
        StringName("target_ids"),
        doc="target_from scoring: the context key of the targets' entity ids, in per-target input order.",
    )

    behavior_changed = signal(name=StringName, doc="The chosen behavior changed (after behavior_entered).")
    behavior_exited = signal(name=StringName, doc="A behavior ended, after its on_exit actions ran.")
    behavior_entered = signal(name=StringName, doc="A behavior began, after its on_enter actions ran.")
    target_changed = signal(entity_id=int, doc="The target changed (0: none); see target_from.")
    _inputs = export_group("Inputs")
    auto_evaluate: str = export(
        "when_all_sourced",
        hint=PropertyHint.ENUM,
        hint_string=",".join(inputs.AUTO_EVALUATE),
        doc="Choose by itself every frame on the batched path (read choice, or connect behavior_changed): "
        "when_all_sourced (every consideration has a source), always (some have; set_input feeds the "
        "others), never.",
    )
    blackboard: dict = export(
        inputs.Blackboard(),
        doc="Values the game writes for BlackboardInput sources (set_blackboard_value, or a Dictionary "
        "assigned whole: the selector keeps a copy, read at its next choice).",
    )
    choice: StringName = export(
        StringName(""),
        usage=PropertyUsage.NONE,
        doc="The batched path's choice (see set_input), made by the server at the end of each frame in "
        "which inputs were set, after every node's _process and before the frame is drawn; "
        "behavior_changed is emitted then when it changed. Read in _process it is the choice from "
        'the previous frame\'s inputs. "" before the first choice. Read-only.',
    )

    _live = live.group()
    # Set in the instance's dict once joined (`_handle`): read as a plain attribute, which the class's
    # None makes safe before then (no engine property lookup).
    _calls: _Calls | None = None
    _reads_more = False  # True in the instance's dict when evaluate has sources or a scoring target
    live_behavior: StringName = live.live(StringName(""), "The behavior chosen last.")
    live_scores: dict = live.live({}, "Each behavior's score from the last choice.")
    live_target: str = live.live("", "The target's name and entity id (empty: none).")
    live_inputs: dict = live.live({}, "Each sourced input now, by key.")

    def get_live_target(self) -> str:
        return targets.describe_target(self) if live.handle_of(self) else ""

    def get_live_inputs(self) -> dict:
        return inputs.sourced_context(self) if live.handle_of(self) and inputs.sourced(self) else {}

    def get_live_behavior(self) -> StringName:
        handle = live.handle_of(self)
        return StringName(selector_state(server().core, handle)["chosen"] if handle else "")

    def get_live_scores(self) -> dict:
        handle = live.handle_of(self)
        state = selector_state(server().core, handle) if handle else {"names": [], "scores": []}
        return dict(zip(state["names"], state["scores"], strict=True))

    def _redefine(self, _value: Any) -> None:
        # A definition changed at run time: the selector joins the group of its new definition
        # (its anti-dithering state starts afresh).
        for cached in ("_calls", "_stream", "_sourced", "_behaviors_by_name"):
            self.__dict__.pop(cached, None)
        if self.__dict__.get("_server_handle"):
            objects.queue_calls(self, 0)  # no call queued under the old handle: the next one joins
            server().release(self.__dict__.pop("_server_handle"))
            selector_feed.rejoin(self)

    @python_only
    def to_dict(self) -> dict[str, Any]:
        """The definition in `npc_mind.utility`'s data format."""
        return {
            "behaviors": [b.to_dict() for b in self.behaviors if b is not None],
            "momentum": float(self.momentum),
            "commitment": float(self.commitment),
            "interrupt_margin": float(self.interrupt_margin),
            "tie_tolerance": float(self.tie_tolerance),
            "top_n": int(self.top_n),
            "seed": int(self.seed) if self.seed else None,
        }

    def _handle(self) -> int:
        handle = self.__dict__.get("_server_handle", 0)
        if not handle:
            try:
                handle = server().core.add_selector(self.to_dict())
            except UtilityDefinitionError as error:  # every call until the definition changes: said once
                mistakes.report(
                    self, f"definition:{error}", f"its behaviors cannot be used ({error}): it chooses none",
                    fix="correct its behaviors in the inspector (the node's warning names the problem)",
                )  # fmt: skip
                raise ReportedError(str(error)) from error
            server().attach(self, handle)
            self.__dict__["_server_handle"] = handle
            self._watch_curves()
            defaults = self.__dict__["_input_defaults"] = _input_defaults(self.behaviors)
            for key, value in defaults.items():  # the batched path starts from the defaults too
                server().core.selectors.preset(handle, key, value)
            mind = server().core
            # What the per-frame calls need, in one read: the server's per-node methods, bound
            # (one Python call from the node), this selector's entry, and the behaviors'
            # StringNames by index ("" last, for index -1: no choice yet).
            if not isinstance(mind.selectors.answers, _EngineChoices):
                mind.selectors.answers = _EngineChoices(UtilitySelector.evaluate)
                mind.selectors.batch_answers = _EngineChoices(UtilitySelector.get_choice)
            self.__dict__["_calls"] = _Calls(
                mind.selectors.entry(handle), _string_names(mind.selectors.names(handle)), defaults,
                mind.pick, mind.set_input_values, mind.choice_index,
            )  # fmt: skip
            if not _input_names:
                _input_names.append(objects.queued_names(UtilitySelector.set_input))
            # the keys the definition reads: a set_input naming one is queued by the binding
            _input_names[0].number(mind.selectors.entry(handle).group.prototype.scorer.keys)
            selector_feed.joined(self, handle)
        return handle

    def _joined(self) -> _Calls:
        try:
            self._handle()
        except ReportedError:  # a refused definition (said once, each try counted): it chooses none
            return _REFUSED
        return self.__dict__["_calls"]

    def _exit_tree(self) -> None:
        targets.forget_place(self)  # reparented: its NPC and stream are found again

    def _watch_curves(self) -> None:
        # A designer's Curve is baked into the definition; when it changes, bake it again.
        watched = self.__dict__.setdefault("_watched_curves", [])
        owner = weakref.ref(self)  # the curve must not keep its selector (and so itself) alive

        def rebake() -> None:
            selector = owner()
            if selector is not None:
                selector._redefine(None)

        for behavior in self.behaviors:
            for consideration in behavior.considerations if behavior is not None else ():
                curve = consideration.curve if consideration is not None else None
                if curve is not None and curve.get_instance_id() not in watched:
                    watched.append(curve.get_instance_id())
                    curve.changed.connect(rebake)

    @apart  # reads no memory: the frame's queued record_event calls may wait
    @chosen  # a repeated choice is answered in C from the frame's table (`_EngineChoices`)
    def evaluate(self, context: dict) -> StringName:
        """The behavior to run now for this context (a Dictionary of input key -> number). An input
        the context lacks reads as its consideration's default_input (use_default_input), else as 0;
        when it lacks one with no default, or gives one as no number, that is reported once per
        selector and key, naming the fix, and a behavior is still chosen (0, or the default).

        A call that repeats the selector's last choice (the same numbers as its last call, with no
        commitment, cooldown or top_n above 1, which would make time or chance matter) is answered
        by the binding without entering Python, with the same behavior. So is a call with other
        finite numbers (an awareness fading, a distance shrinking) for which the compiled kernel's
        check finds the running behavior chosen again by a clear margin; `get_scores()` then gives
        the scores of the newest numbers."""
        if thread_id() != MAIN_THREAD:  # `core()`'s thread rule, inline: a call less
            refuse_thread(1)  # WrongThreadError, naming this method
        entry, names, defaults, pick, _, _ = self._calls or self._joined()
        # The context as it came: its keys are str or StringName (a str), found by the same lookups.
        if defaults:
            context = defaults | context  # a given value wins
        if self._reads_more:  # sourced inputs, or a target from the scoring
            pick_filled = _filling(self, pick, defaults)
            return names[selector_feed.pick_with_sources(self, entry, pick_filled, context)]
        try:
            return names[pick(entry, context)]
        except UtilityError:  # a missing input or no number: the user's mistake, said once
            filled = _usable_context(self, entry.group.prototype, context, defaults)
            if filled is None:
                raise
        return names[pick(entry, filled)]

    # Queued by the binding (a key the definition reads, a finite float, the main thread): the
    # calls reach `_take_inputs` in order, before any Python code that reads the inputs (a call
    # that runs here comes after them: a queued method that is apart reads its own calls).
    @apart  # reads no memory: the frame's queued record_event calls may wait
    @queued(_take_inputs)
    @converts(value=lambda selector, value: _not_a_number(selector, "set_input()", None, value))
    def set_input(self, key: StringName, value: float) -> None:
        """The batched path, fed by the node itself: input `key` for this frame's choice, written
        straight into the server's arrays for this selector's definition (one number at this
        node's row; no Dictionary). Every selector of the definition is chosen for in one batch at
        the end of the frame; read the result as `choice` or from `behavior_changed`. An input never
        set reads as 0 (or the consideration's default_input); a key no selector of the definition
        ever sets is a warning once per selector.

        A call with a key the definition reads and a finite number is queued by the binding
        without entering Python, and written with the frame's other such calls in one batch (the
        same inputs, in the same order)."""
        if thread_id() != MAIN_THREAD:
            refuse_thread(1)
        calls = self._calls or self._joined()
        calls.put(calls.entry, {key: value})

    @apart(reads=set_input)  # after the queued set_input calls; record_event's may wait
    def set_inputs(self, inputs: dict) -> None:
        """`set_input` for several keys in one call (a Dictionary of input key -> number): one
        crossing into the server instead of one per key."""
        if thread_id() != MAIN_THREAD:
            refuse_thread(1)
        entry, _, _, _, put, _ = self._calls or self._joined()
        try:
            put(entry, inputs)
        except TypeError:  # a value that is no number: said once, the others still written
            for key, value in dict(inputs).items():
                try:
                    put(entry, {key: value})
                except TypeError:
                    _not_a_number(self, "set_inputs()", key, value)

    @apart
    @chosen  # answered in C from the server's table of batched choices (`_EngineChoices`)
    def get_choice(self) -> StringName:
        """The batched path's last choice for this node (see the `choice` property). Answered by
        the binding without entering Python once the server has made a batched choice for it."""
        if thread_id() != MAIN_THREAD:
            refuse_thread(1)
        calls = self._calls
        return calls.names[calls.choice(calls.entry)] if calls is not None else _NO_CHOICE

    def set_choice(self, _value: StringName) -> None:
        """Refused: `choice` is set by the server's end-of-frame step only."""
        raise AttributeError("UtilitySelector.choice is read-only: the server sets it each frame")

    def get_target_id(self) -> int:
        """The target's entity id (a node's instance id, as the senses record it); 0: none."""
        return targets.target_id(self)

    def has_target(self) -> bool:
        """True while there is a target (get_target_id() is not 0)."""
        return targets.target_id(self) != 0

    def get_target_node(self) -> Any:
        """The target's node while it exists; null when there is none or it was freed."""
        return targets.target_node(self)

    def get_target_position(self) -> Any:
        """Where the NPC last perceived its target (MemoryStream.get_last_known_position: a Vector2
        or Vector3, kept after the target's node is freed), or null (no target, never perceived)."""
        return targets.target_position(self)

    def set_target(self, entity_id: int) -> None:
        """Set the target (0: none), emitting target_changed when it changed. With target_from memory
        or scoring, the next choice of target replaces it."""
        targets.set_target(self, entity_id)

    def get_sourced_inputs(self) -> dict:
        """Each sourced consideration's input now, by key (what evaluate() and the next automatic
        choice read; a source that cannot answer gives its fallback)."""
        self._joined()
        return inputs.sourced_context(self)

    def set_blackboard_value(self, key: StringName, value: Any) -> None:
        """Write a value BlackboardInput sources read (a number or bool), without copying the
        blackboard (reading `blackboard` from GDScript gives a copy: write through this)."""
        self.blackboard[str(key)] = value  # a Blackboard (the default's copy, or one assigned): counted

    def get_blackboard_value(self, key: StringName, default: Any = None) -> Any:
        """A blackboard value, or `default` when the key was never written."""
        return (self.__dict__.get("blackboard") or {}).get(str(key), default)

    def get_scores(self) -> dict:
        """Each behavior's score from the last choice."""
        return server().core.scores(self._handle())

    def _notification(self, what: int) -> None:
        if what == NOTIFICATION_PREDELETE and self.__dict__.get("_server_handle"):
            # the feed keeps no wrapper past its node (it pruned freed ones only when a frame ran,
            # so a selector freed at exit leaked with its resources)
            selector_feed.feed.leave(self.__dict__["_server_handle"])
        ServerHandle._notification(self, what)
        actions.notified(self, what)

    def get_recent_actions(self) -> list:
        """The last actions run, oldest first: {time, behavior, phase, index, action, ok, times} (an
        on_tick action: one entry per run of its behavior, `times` counting its frames)."""
        return actions.recent(self)

    def get_behavior_names(self) -> PackedStringArray:
        """Behavior names in definition order (what the batched choices index)."""
        return PackedStringArray(list(server().core.selectors.names(self._handle())))

    def _get_configuration_warnings(self) -> PackedStringArray:
        if not self.behaviors:
            return PackedStringArray(["Add at least one UtilityBehavior to 'behaviors'."])
        behaviors = list(self.behaviors)
        warnings = [f"behaviors[{i}] is empty (it is skipped)." for i, b in enumerate(behaviors) if b is None]
        warnings += [
            f"Behavior {str(b.name)!r}: considerations[{i}] is empty (it is skipped)."
            for b in behaviors
            if b is not None
            for i, c in enumerate(b.considerations)
            if c is None
        ]
        try:
            CoreSelector.from_dict(self.to_dict())
        except UtilityError as error:
            warnings.append(str(error))
        warnings += selector_feed.warnings(self) + inputs.warnings(self)
        return PackedStringArray(warnings + actions.configuration_warnings(self))


for _field in ("behaviors", "momentum", "commitment", "interrupt_margin", "tie_tolerance", "top_n", "seed"):
    UtilitySelector.__dict__[_field].on_change = UtilitySelector._redefine
for _field in targets.SETTINGS:
    UtilitySelector.__dict__[_field].on_change = selector_feed.reconfigured
UtilitySelector.__dict__["blackboard"].on_change = inputs.blackboard_assigned


def only_resources(owner: Any, field: str, items: Any, kind: type) -> None:
    """A resource array holds `kind` or null (an empty slot, skipped); anything else is refused
    with a TypeError naming the slot, and the property keeps the value it had."""
    for index, item in enumerate(items or ()):
        if item is not None and not isinstance(item, kind):
            got = item.get_class() if isinstance(item, objects.Object) and item else type(item).__name__
            raise TypeError(
                f"{type(owner).__name__}.{field}[{index}] must be a {kind.__name__} or null, got {got} "
                f"({item!r}): put a {kind.__name__} resource there, or remove the slot"
            )


def _behaviors_changed(selector: UtilitySelector, value: Any) -> None:
    only_resources(selector, "behaviors", value, UtilityBehavior)
    selector._redefine(value)


def _considerations_changed(behavior: UtilityBehavior, value: Any) -> None:
    only_resources(behavior, "considerations", value, UtilityConsideration)


UtilitySelector.__dict__["behaviors"].on_change = _behaviors_changed
UtilityBehavior.__dict__["considerations"].on_change = _considerations_changed


_DEFAULT_INPUT_FIX = (
    "or turn on use_default_input (and set default_input) on the UtilityConsideration reading it."
)


def _filling(node: UtilitySelector, pick: Callable[[Any, Any], int], defaults: dict[str, float]) -> Any:
    """`pick` with evaluate()'s fallback for unusable inputs (`_usable_context`), for the sourced path."""

    def pick_filled(entry: Any, context: Any) -> int:
        try:
            return pick(entry, context)
        except UtilityError:
            filled = _usable_context(node, entry.group.prototype, context, defaults)
            if filled is None:
                raise
        return pick(entry, filled)

    return pick_filled


def _usable_context(
    node: UtilitySelector, selector: CoreSelector, context: Any, defaults: dict[str, float]
) -> dict[str, Any] | None:
    """evaluate()'s fallback for a context that lacks inputs the definition reads, or gives one as
    no number: each reads as its default, else 0, reported once per node and key (later calls are
    counted: `mistakes`). None: the inputs were not the trouble."""
    unusable = selector.unusable_inputs(context)
    for key, given in unusable.items():
        missing = given is MISSING
        cause = f"missing_input:{key}" if missing else f"bad_input:{key}"
        if mistakes.times(node, cause):  # said already: only counted (no message made per call)
            mistakes.report(node, cause, "")
            continue
        where = f"evaluate(): {selector.first_use(key)} reads input {key!r}"
        value = defaults.get(key, 0.0)
        if missing:
            mistakes.report(
                node,
                cause,
                f"{where}, which the context does not give{did_you_mean(key, context)}; it reads as "
                f"{value} (every call goes on choosing a behavior).",
                fix=f"pass {key!r} in the Dictionary given to evaluate(), {_DEFAULT_INPUT_FIX}",
            )
        else:
            mistakes.report(
                node,
                cause,
                f"{where}, which the context gives as {given!r} ({type(given).__name__}), not a "
                f"number; it reads as {value} (every call goes on choosing a behavior).",
                fix=f"pass a number (a float or an int) for {key!r}.",
            )
    return selector.with_inputs(context, unusable, defaults) if unusable else None


def _not_a_number(node: UtilitySelector, call: str, key: Any, value: Any) -> Any:
    """A batched input given as no number: said once per selector and call, the value dropped."""
    named = f" for {str(key)!r}" if key is not None else ""
    mistakes.report(
        node,
        f"not_a_number:{call}",
        f"{call} got {value!r} ({type(value).__name__}){named}, not a number; that value is ignored "
        "(the input keeps its last value).",
        fix="pass a number (a float or an int).",
    )
    return DROP


def did_you_mean(key: str, given: Any) -> str:
    """" (it gives 'hunger': a typo?)" when a key given is close to `key`, else "" (a message's part)."""
    close = difflib.get_close_matches(key, [str(name) for name in given], n=1)
    return f" (it gives {close[0]!r}: a typo?)" if close else ""


def batched_input_missing(handle: int, key: str, where: str) -> None:
    """The server's `on_missing_input` for the batched path: a warning once per selector and key."""
    node = server().nodes.get(handle)
    cause = f"unset_input:{key}"
    if node is None or mistakes.times(node, cause):
        if node is not None:
            mistakes.report(node, cause, "")  # counted
        return
    columns = server().core.selectors.entries.get(handle).group.inputs
    mistakes.report(
        node,
        cause,
        f"the batched choice: {where} reads input {key!r}, which no set_input() or set_inputs() call "
        f"gave{did_you_mean(key, columns)}; it reads as 0.0.",
        fix=f"call set_input({key!r}, value) (or NpcMindServer.set_inputs) each frame, {_DEFAULT_INPUT_FIX}",
        warning=True,  # an input never set reads as 0 (documented): likely, not surely, a mistake
    )


def _input_defaults(behaviors: list) -> dict[str, float]:
    """input key -> default_input of the considerations that have one (the first one wins)."""
    defaults: dict[str, float] = {}
    for behavior in behaviors:
        for consideration in behavior.considerations if behavior is not None else ():
            if consideration is not None and consideration.use_default_input:
                defaults.setdefault(inputs.key_of(consideration), float(consideration.default_input))
    return defaults


class _EngineChoices(ChoiceAnswers):
    """A choice table of the server, put into the binding (`gdbridge.declare.chosen`) for the
    selectors keyed by their handle (`selector_feed.joined`): UtilitySelector.evaluate answered in
    C (for those whose evaluate reads the context only), or get_choice (the batched choice)."""

    wanted = True
    checks = True  # a new number (awareness fading) is answered in C too when the kernel's check holds
    # the table's own methods, set per instance (the bank closes a selector per Python choice)
    put: Callable[..., None]  # bound, as the base's method is
    close: Callable[[int], None]  # type: ignore[assignment]  # bound, as the base's method is
    moved: Callable[[int], tuple[float, ...] | None]  # type: ignore[assignment]  # bound, as the base's is
    clear: Callable[[], None]

    def __init__(self, read: Callable[..., Any]) -> None:
        self.table = objects.choice_table(read)
        self.table.clear()  # a new server's handles: nothing an earlier server put holds for them
        self.put = self.table.put
        self.close = self.table.close
        self.moved = self.table.moved
        self.clear = self.table.clear


class _Calls(NamedTuple):
    """What a node's per-frame calls use (see `UtilitySelector._handle`)."""

    entry: Any  # the server's SelectorEntry of the node's handle
    names: tuple[StringName, ...]
    defaults: dict[str, float]
    pick: Callable[[Any, Any], int]
    put: Callable[[Any, Any], None]
    choice: Callable[[Any], int]


_NO_CHOICE = StringName("")
# The calls of a selector whose definition is refused: no choice (index -1 is the "" last in
# `names`), its inputs dropped; never kept, so each call tries its definition again.
_REFUSED = _Calls(
    None, (_NO_CHOICE,), {}, lambda _entry, _context: -1, lambda _entry, _values: None, lambda _entry: -1
)
_input_names: list[Any] = []  # set_input's queued names (`objects.queued_names`), once registered
_names_by_definition: dict[tuple[str, ...], tuple[StringName, ...]] = {}


def _string_names(names: tuple[str, ...]) -> tuple[StringName, ...]:
    """The behaviors' StringNames by index, then "" (index -1), made once per list of names
    rather than on every call."""
    found = _names_by_definition.get(names)
    if found is None:
        found = _names_by_definition[names] = (*(StringName(name) for name in names), _NO_CHOICE)
    return found
