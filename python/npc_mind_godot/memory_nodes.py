"""`MemoryProfile` (a shared Resource) and `MemoryStream` (one NPC's memory, a thin node)."""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from typing import Any

import numpy as np

from gdbridge import classes, objects
from gdbridge.declare import (
    DROP,
    PackedByteArray,
    answered,
    constant,
    converts,
    export,
    export_group,
    python_only,
    queued,
    signal,
)
from gdbridge.types import PackedStringArray, PropertyHint, Vector2, Vector3
from npc_mind.memory import MAX_CAPACITY, Awareness, MemoryParams, MemoryType, params
from npc_mind.server import memories as memory_events
from npc_mind.server.frame_cache import QUEUED_ENTITY, QUEUED_TYPE, FrameAnswers
from npc_mind.server.memories import MemoryProfileSpec
from npc_mind_godot import live, mistakes
from npc_mind_godot._common import MAIN_THREAD, ServerHandle, core, icon, refuse_thread, server, thread_id


def _range(name: str, step: float) -> tuple[float, float, float]:
    """An inspector slider over `MemoryParams`'s own bounds of `name` (an open end moved in a step)."""
    low, high, low_in, high_in = params.bounds(name)
    return (low if low_in else low + step, high if high_in else high - step, step)


_DEFAULT = MemoryParams()  # MemoryProfile's defaults are MemoryParams' (and MemoryProfileSpec's)
_MAX_BASE = _DEFAULT.max_stability  # the slider's end; larger values are typed in ("or_greater")


def _base_stability(kind: MemoryType, what: str) -> Any:
    """A base-stability field of MemoryProfile (one per memory type)."""
    return export(
        _DEFAULT.base_stability[kind],
        range=(0.01, _MAX_BASE, 0.01, "or_greater"),
        doc=f"S0 (seconds) of {what} at salience 0.5.",
    )


class MemoryProfile(classes.Resource, icon=icon("MemoryProfile")):
    """How a kind of NPC remembers and forgets; streams sharing a profile share one memory pool.

    R = e^(-t/S) (or the FSRS-6 power law), S0 = base stability of the type x (0.5 + salience),
    rehearsal S_k = S_(k-1) (1 + alpha ln(1 + k) E). Defaults are the design source's. Share one
    `.tres` between all guards: every MemoryStream with an equal profile lives in the same batched
    pool on the server. A full memory evicts the lowest 0.6 R + 0.4 E, never the least recently used.

    In the inspector (with the npc_mind plugin enabled) the profile shows its forgetting curves: R
    over time (log scale) for a fresh memory of each type at the chosen salience, computed by the
    pool's own curve code, with the awareness thresholds and the forget threshold drawn; an invalid
    profile says why instead. The inspector's ranges are the core's own bounds
    (`npc_mind.memory.params.bounds`, what `MemoryParams` validates), declared once.

    An invalid profile shows as a configuration warning on the streams that use it; assigning it
    (or editing a field of an assigned profile into an invalid value) prints a clear error naming the
    field and changes nothing. Every field edit emits `changed`: the streams using the profile move
    their memories to the new settings at once (see MemoryStream).
    """

    capacity: int = export(
        MemoryProfileSpec().capacity, range=(1, MAX_CAPACITY), doc="Working memories per NPC (a hard bound)."
    )
    curve: str = export(
        _DEFAULT.curve, hint=PropertyHint.ENUM, hint_string="exponential,power", doc="Forgetting curve."
    )
    alpha: float = export(_DEFAULT.alpha, range=_range("alpha", 0.01), doc="Consolidation gain on rehearsal.")
    rehearsal_refractory_s: float = export(
        _DEFAULT.rehearsal_refractory_s,
        range=_range("rehearsal_refractory_s", 0.1),
        doc="A matching event this soon after the last wake only refreshes it.",
    )
    forget_threshold: float = export(
        _DEFAULT.forget_threshold,
        range=_range("forget_threshold", 0.001),
        doc="R at or below it is forgotten.",
    )
    max_stability: float = export(
        _MAX_BASE,
        range=(*_range("max_stability", 1.0)[:2], 1.0, "exp"),
        doc="Seconds: S never grows past it however often a memory is rehearsed (default 30 days).",
    )
    _stabilities = export_group("Base stability (seconds)", "stability_")
    stability_trivia: float = _base_stability(MemoryType.TRIVIA, "a trivia memory (footsteps, a passer-by)")
    stability_observation: float = _base_stability(
        MemoryType.OBSERVATION, "an observation memory (a door opens, a respawn)"
    )
    stability_interaction: float = _base_stability(
        MemoryType.INTERACTION, "an interaction memory (a trade, a quest)"
    )
    stability_hostile: float = _base_stability(MemoryType.HOSTILE, "a hostile memory (attacked, saw a theft)")
    stability_trauma: float = _base_stability(
        MemoryType.TRAUMA, "a trauma memory (home destroyed, kin killed)"
    )
    _awareness = export_group("Awareness thresholds", "awareness_")
    awareness_search: float = export(
        _DEFAULT.awareness_search, range=_range("awareness_search", 0.01), doc="R above it: search."
    )
    awareness_pursue: float = export(
        _DEFAULT.awareness_pursue, range=_range("awareness_pursue", 0.01), doc="R above it: pursue."
    )

    @python_only
    def to_spec(self) -> MemoryProfileSpec:
        """The engine-agnostic profile; invalid values raise a clear ValueError or TypeError."""
        params = MemoryParams(
            alpha=self.alpha,
            rehearsal_refractory_s=self.rehearsal_refractory_s,
            forget_threshold=self.forget_threshold,
            max_stability=self.max_stability,
            base_stability=(
                self.stability_trivia,
                self.stability_observation,
                self.stability_interaction,
                self.stability_hostile,
                self.stability_trauma,
            ),
            awareness_search=self.awareness_search,
            awareness_pursue=self.awareness_pursue,
            curve=str(self.curve),
        )
        return MemoryProfileSpec(self.capacity, params)

    def _fields_changed(self, _value: Any) -> None:
        # every field edit (inspector, GDScript, scene load) emits `changed`: the streams using
        # this profile apply it (MemoryStream.apply_profile)
        self.emit_changed()


PROFILE_FIELDS = (
    "capacity",
    "curve",
    "alpha",
    "rehearsal_refractory_s",
    "forget_threshold",
    "stability_trivia",
    "stability_observation",
    "stability_interaction",
    "stability_hostile",
    "stability_trauma",
    "awareness_search",
    "awareness_pursue",
    "max_stability",
)
for _field in PROFILE_FIELDS:
    MemoryProfile.__dict__[_field].on_change = MemoryProfile._fields_changed


def _spec_of(profile: Any) -> MemoryProfileSpec:
    """The validated spec of a `profile` value (None: the defaults); a clear error otherwise."""
    if profile is None:
        return MemoryProfileSpec()
    if not isinstance(profile, MemoryProfile):
        raise TypeError(f"MemoryStream.profile must be a MemoryProfile or null, got {type(profile).__name__}")
    return profile.to_spec()


class _QueuingStreams(set[int]):
    """`FrameCache.plain` (the streams whose writes may be queued) for the engine: each stream in
    it has its node's record_event calls queued in the binding's C layer (`gdbridge.declare.queued`),
    keyed by the stream's handle, and handed to the frame cache in call order, as bytes (`take_raw`)."""

    def __init__(self, handles: set[int]) -> None:
        super().__init__()
        self.nodes: dict[int, Any] = {}
        for handle in handles:
            self.add(handle)

    def add(self, handle: int) -> None:
        super().add(handle)
        node = server().nodes.get(handle)
        if node is not None:
            self.nodes[handle] = node
            objects.queue_calls(node, handle)

    def discard(self, handle: int) -> None:  # type: ignore[override]  # the bank discards its int handles only
        super().discard(handle)
        node = self.nodes.pop(handle, None)
        if node is not None:
            objects.queue_calls(node, 0)

    def clear(self) -> None:
        for handle in list(self):
            self.discard(handle)


class _EngineAnswers(FrameAnswers):
    """The frame cache's table, published to the binding: MemoryStream.awareness_of answered in C
    (`gdbridge.declare.answered`) for the streams the bank leaves open, kept true by the
    record_event calls the binding queues (`_QueuingStreams`)."""

    wanted = True
    # the table's own methods, set per instance (the bank calls close per stream change: no Python frame)
    publish: Callable[..., None]  # bound, as the base's method is
    close: Callable[[int], None]  # type: ignore[assignment]  # bound, as the base's method is
    clear: Callable[[], None]
    asked_pairs: Callable[[], np.ndarray]

    def __init__(self) -> None:
        self.table = objects.answer_table(MemoryStream.awareness_of)
        self.close = self.table.close
        self.clear = self.table.clear
        self.asked_pairs = self.table.asked_pairs
        self.publish = self.table.set  # the frame cache's columns, as they come


class _FirstUse:
    """Stands for the server's frame cache until the first per-frame call looks it up (through
    `core`, which also refuses other threads) and puts the cache in its place."""

    def __getattr__(self, name: str) -> Any:
        global _cache  # noqa: PLW0603 - once: the hot path then reads a plain module global
        cache = core().memory.cache
        if not isinstance(cache.plain, _QueuingStreams):
            cache.plain = _QueuingStreams(cache.plain)
            cache.answers = _EngineAnswers()
        _cache = cache
        return getattr(_cache, name)


_cache: Any = _FirstUse()  # the singleton's memory FrameCache once a MemoryStream first calls it


def _take_writes(raw: bytes) -> None:
    """The record_event calls the binding queued, in call order, as bytes (see `_QueuingStreams`)."""
    _cache.take_raw(raw)


def _entity_id(stream: Any, value: Any) -> Any:
    """An entity id that is no int, from an untyped call (`converts`): an engine object (a Node
    passed as the id) is taken as its instance id, anything else drops the call; either is said
    once per stream, naming get_instance_id()."""
    if isinstance(value, objects.Object) and value:  # (a freed object is falsy)
        mistakes.report(
            stream,
            "object_as_entity_id",
            f"an entity_id was given as {mistakes.describe(value)} ({value.get_class()}), not an int; "
            "it is taken as its get_instance_id().",
            fix="pass node.get_instance_id() as the entity_id (typed GDScript then checks it).",
            warning=True,
        )
        return int(value.get_instance_id())
    mistakes.report(
        stream,
        "bad_entity_id",
        f"an entity_id must be an int, got {value!r} ({type(value).__name__}); the call is ignored.",
        fix="pass an int id, e.g. node.get_instance_id() of the entity perceived.",
    )
    return DROP


AwarenessTier = IntEnum("Awareness", {f"AWARENESS_{tier.name}": tier.value for tier in Awareness})  # type: ignore[misc]  # members from Awareness's


class MemoryStream(ServerHandle, classes.Node, icon=icon("MemoryStream")):
    """An NPC's working memory: it forgets like a person (R = e^(-t/S)).

    Record what the NPC perceives every frame (the refractory period keeps that honest); recall a
    person with `query_strongest` when the NPC perceives them (a recall wakes the memory); read
    `awareness_of` for the layered response (it only looks). The memories live in the server's pool
    for this node's `profile`; the slot is taken on first entering the tree (or first use) and freed
    with the node, so reparenting or removing a guard from the tree keeps its memories.

    A memory type sets the base stability (MemoryProfile): TRIVIA 5 s, OBSERVATION 30 s, INTERACTION
    120 s, HOSTILE 600 s, TRAUMA 3600 s by default; a new memory gets S0 = base x (0.5 + salience).
    Awareness: AWARENESS_PURSUE while R > 0.8, AWARENESS_SEARCH while R > 0.3, AWARENESS_PUZZLED
    above the forget threshold (the profile's thresholds). The EVENT_ constants are the kinds of
    `NpcMindServer.drain_memory_events()`, the core's `npc_mind.memory.EventKind` codes.

    An `entity_id` is an int (`node.get_instance_id()` of the entity, or the game's own ids). From
    untyped GDScript, a Node given as the id is taken as its instance id, and the stream says so once
    (a warning naming `get_instance_id()`); any other value that is no int (a String, null, a
    fractional float) drops the call, said once, and the call answers 0 (or an empty Dictionary).

    **Every read sees every write.** `record_event` only queues the write: the server folds the
    frame's writes into one batch when it steps, before its clock moves, so they are made at the time
    of the call. From GDScript, `record_event` calls never enter Python once a stream is known to
    write plainly: the binding keeps them in C and hands them to the server in one batch, in call
    order, before any Python code that could read them runs. `awareness_of` sees every write made
    before it in the frame: a pair read every frame is answered from a table the server computes once
    a frame (the binding answers most reads in C from it), and the queue is applied first whenever it
    could change the answer. `query_strongest` costs the most of the three: it wakes the memory and
    returns a six-key Dictionary (`entity_id`, `memory_type`, `retrievability` before the wake,
    `stability`, `salience`, `recall_count`). For hundreds of NPCs `NpcMindServer.record_batch`,
    `awareness_batch` and `query_strongest_batch` cross into Python once for all of them.

    **Signals** are emitted by the server once per frame, after every node has processed (or at once
    by `NpcMindServer.advance()` on a manual clock). Each signal is one engine emission, so a frame
    where a whole crowd's memories form at once costs one emission per memory: for crowds, set
    `emit_signals` off on the streams and read every stream's events in one call a frame with
    `NpcMindServer.drain_memory_events()`.

    **Changing the profile at run time** is transactional: the new profile is validated and the
    memories (working, long-term, links, tags) are written into its pool before the old slot is let
    go, keeping `get_server_id()`; the new parameters apply to what happens from then on (memories
    keep the stability they had). A rejected change prints one error naming why (a capacity out of
    1..65535, a NaN or out-of-bounds parameter, an unknown curve, a capacity smaller than the working
    memories the stream holds, an object that is not a MemoryProfile) and changes nothing: the stream
    keeps its memories and settings, and `profile` reads back the profile it still uses. After a
    rejected field edit the resource holds the rejected value while the stream keeps the last valid
    settings; fixing the field applies it.
    """

    # The core's own codes, so the engine constants can never drift from them. Class enums: the
    # help lists them by name and GDScript can type with them (MemoryStream.MemoryType); their
    # members stay class constants (MemoryStream.TRIVIA, MemoryStream.AWARENESS_PURSUE).
    MemoryType = MemoryType
    Awareness = AwarenessTier
    EVENT_FORMED = constant(memory_events.EVENT_FORMED)
    EVENT_REHEARSED = constant(memory_events.EVENT_REHEARSED)
    EVENT_FORGOTTEN = constant(memory_events.EVENT_FORGOTTEN)
    EVENT_EVICTED = constant(memory_events.EVENT_EVICTED)

    profile: MemoryProfile = export(
        None,
        doc="Shared memory settings; empty: the defaults. A change (or an edit of the profile's fields) "
        "moves the memories to the new settings; a rejected one raises and changes nothing.",
    )

    @profile.setter
    def _profile_changed(self, value: Any) -> None:
        # Validate first, then move: a rejected profile leaves the stream (and the value read back)
        # exactly as it was.
        try:
            self._apply(value)
        except Exception:
            self.__dict__["profile"] = self.__dict__.get("_applied_profile")
            raise

    def apply_profile(self) -> None:
        """Apply the current profile's fields now, memories included. Runs by itself when the profile
        emits `changed` (every MemoryProfile field edit does); a rejected edit raises and the stream
        keeps the settings it had."""
        self._apply(self.profile)

    def _apply(self, profile: Any) -> None:
        spec = _spec_of(profile)
        handle = self.__dict__.get("_server_handle", 0)
        if handle:
            server().core.set_memory_profile(handle, spec)  # transactional: raises or moves
        old = self.__dict__.get("_applied_profile")
        if old is not profile:
            if old is not None and old.changed.is_connected(self, "apply_profile"):
                old.changed.disconnect(self, "apply_profile")
            if profile is not None:
                profile.changed.connect(self, "apply_profile")
        self.__dict__["_applied_profile"] = profile
        self.__dict__["_applied_spec"] = spec

    emit_signals: bool = export(
        True,
        doc="Off (crowds): no memory_* signals; read the events with NpcMindServer.drain_memory_events().",
    )

    @emit_signals.setter  # type: ignore[attr-defined]  # in the class body an export is its Export (the annotation types the value)
    def _emit_signals_changed(self, value: Any) -> None:
        handle = self.__dict__.get("_server_handle", 0)
        if handle:
            server().core.set_memory_signals(handle, bool(value))

    _live = live.group()
    live_memory_count: int = live.live(0, "Memories still remembered.")
    live_strongest: PackedStringArray = live.live(PackedStringArray([]), "The strongest: who, type, R, S.")

    def get_live_memory_count(self) -> int:
        handle = live.handle_of(self)
        return len(server().core.memories(handle)) if handle else 0

    def get_live_strongest(self) -> PackedStringArray:
        handle = live.handle_of(self)
        return live.strongest_memories(handle) if handle else PackedStringArray([])

    memory_formed = signal(entity_id=int, memory_type=int, doc="A new memory.")
    memory_rehearsed = signal(entity_id=int, memory_type=int, doc="A matching event strengthened a memory.")
    memory_forgotten = signal(
        entity_id=int, memory_type=int, doc="R fell to the forget threshold (once, at the analytic time)."
    )
    memory_evicted = signal(entity_id=int, memory_type=int, doc="Dropped to make room in a full memory.")

    def _handle(self) -> int:
        handle = self.__dict__.get("_server_handle", 0)
        if not handle:
            spec = self.__dict__.get("_applied_spec") or MemoryProfileSpec()
            handle = server().core.add_memory(spec)
            server().attach(self, handle)
            self.__dict__["_server_handle"] = handle
            if not self.emit_signals:
                server().core.set_memory_signals(handle, False)
            server().core.memory.cache.join(handle)  # its record_event calls queued from the first
        return handle

    # The per-frame calls go straight to the server's memory frame cache (`FrameCache.write`,
    # `aware`, `recall`), after the main-thread check of `_common.core`, made inline: every Python
    # frame counts at 600 calls a frame.
    @queued(_take_writes, entity_id=QUEUED_ENTITY, memory_type=QUEUED_TYPE)
    @converts(entity_id=_entity_id)
    def record_event(self, entity_id: int, memory_type: int, salience: float) -> None:
        """Remember (or rehearse) an event about `entity_id`; salience in [0, 1]. An id given as a
        Node (untyped GDScript) is taken as its get_instance_id(), said once; another non-int id
        drops the call, said once (as for every entity_id of this node)."""
        if thread_id() != MAIN_THREAD:
            refuse_thread(1)
        _cache.write(self.__dict__.get("_server_handle") or self._handle(), entity_id, memory_type, salience)

    @converts(entity_id=_entity_id)
    def query_strongest(self, entity_id: int) -> dict:
        """Recall the entity's strongest memory (wakes it); empty when forgotten or never seen."""
        if thread_id() != MAIN_THREAD:
            refuse_thread(1)
        return _cache.recall(self.__dict__.get("_server_handle") or self._handle(), entity_id)

    @answered(record_event)
    @converts(entity_id=_entity_id)
    def awareness_of(self, entity_id: int) -> int:
        """0 none, 1 puzzled, 2 search, 3 pursue; only looks."""
        if thread_id() != MAIN_THREAD:
            refuse_thread(1)
        return _cache.aware(self.__dict__.get("_server_handle") or self._handle(), entity_id)

    @converts(entity_id=_entity_id)
    def note_sighting(self, entity_id: int, position: Any) -> None:
        """The NPC perceived `entity_id` at `position` (a Vector2 or Vector3) now: the senses call it
        beside `record_event`; the sourced inputs and move actions read it back."""
        if thread_id() != MAIN_THREAD:
            refuse_thread(1)
        if isinstance(position, Vector2):
            point: tuple[float, ...] = (position.x, position.y)
        elif isinstance(position, Vector3):
            point = (position.x, position.y, position.z)
        else:
            kind = type(position).__name__
            raise TypeError(f"note_sighting: position must be a Vector2 or Vector3, got {kind}")
        server().core.note_sighting(self._handle(), int(entity_id), point)

    @converts(entity_id=_entity_id)
    def get_last_known_position(self, entity_id: int) -> Any:
        """Where `entity_id` was last perceived (a Vector2 or Vector3), or null if never (or long
        dropped: a stream keeps its 256 most recent entities)."""
        sighting = server().core.sightings.get(self._handle(), int(entity_id))
        if sighting is None:
            return None
        point = sighting.position
        return Vector2(*point) if len(point) == 2 else Vector3(*point)

    @converts(entity_id=_entity_id)
    def get_seconds_since_seen(self, entity_id: int) -> float:
        """Seconds on the server's clock since `entity_id` was last perceived (INF: never)."""
        mind = server().core
        return mind.sightings.seconds_since(self._handle(), int(entity_id), mind.now())

    def get_memories(self) -> list:
        """Every memory still remembered, strongest first, as Dictionaries; only looks."""
        return server().core.memories(self._handle())

    def save_state(self) -> PackedByteArray:
        """This NPC's memories as bytes for a game save (ages, so a new session resumes correctly)."""
        import numpy as np

        return np.frombuffer(server().core.save_memory(self._handle()), dtype=np.uint8)

    def load_state(self, data: PackedByteArray) -> None:
        """Replace this NPC's memories with `save_state` bytes; on bad data nothing changes."""
        server().core.load_memory(self._handle(), bytes(data))

    def _get_configuration_warnings(self) -> Any:
        from gdbridge.types import PackedStringArray

        warnings = []
        if self.profile is not None:
            try:
                self.profile.to_spec()
            except (TypeError, ValueError) as error:
                warnings.append(f"The memory profile is invalid: {error}")
        return PackedStringArray(warnings)
