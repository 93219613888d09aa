"""`NpcMindServer`: the engine singleton that owns every pool, selector and decision state.

It is the only per-frame Python entry: the engine main loop's frame callback (`ticker.start`, hooked
the first time a front-end node registers; no node carries it) calls `frame` once per frame, after
every game node has processed; the server does all batched work there and emits the signals owed to
each node.
"""

from __future__ import annotations

import os
import time
from collections import deque
from typing import Any

import numpy as np

from gdbridge import classes, objects
from gdbridge.declare import (
    PackedFloat32Array,
    PackedInt32Array,
    PackedInt64Array,
    export,
    python_only,
)
from gdbridge.objects import HandedFrame
from gdbridge.types import PackedStringArray, PropertyHint, StringName
from npc_mind.server import ClockMode, ServerEvent
from npc_mind.server.core import MindServer
from npc_mind.server.selectors import BEHAVIOR_CHANGED
from npc_mind_godot import actions, inputs, mistakes, selector_feed, targets, ticker
from npc_mind_godot._common import core, emit_signals, installed, on_main_thread, project_setting
from npc_mind_godot.threaded import ThreadedUpdate

SINGLETON = "NpcMindServer"
CLOCK_SETTING = "npc_mind/memory/clock"
UPDATE_THREAD_SETTING = "npc_mind/server/update_on_thread"
ENDPOINT_SETTING = "npc_mind/llm/endpoint"
# Start the bundled local model with the game (also when playing from the editor); off by default, and
# in an export only useful if the game ships llama-server and the model (their paths: the next two).
START_LOCAL_MODEL_SETTING = "npc_mind/llm/start_local_model"
LOCAL_SERVER_SETTING = "npc_mind/llm/local_server_path"
LOCAL_MODEL_SETTING = "npc_mind/llm/local_model_path"
START_LOCAL_MODEL_ENV = "NPC_MIND_START_LOCAL_MODEL"  # 1 / 0: overrides the setting (any game, tests)
NOTIFICATION_PREDELETE = 1


class NpcMindServer(classes.Object):
    """The npc_mind server: one clock, every memory pool, selector group and LLM decision.

    It owns every memory pool (one per distinct MemoryProfile), selector group (one per distinct
    definition) and LLM decision, and is the **only per-frame Python entry**: the nodes register with
    it and never override `_process`. Once a frame, after every game node has processed, it moves its
    clock, runs all batched work (senses, forgetting, batched utility choices, decision watchdogs and
    merges) and emits the signals owed to each node. The per-frame hook is the engine main loop's own
    frame callback, not a node: game code that frees or removes root's children cannot stop the
    server. Reach it as `NpcMindServer` in GDScript.

    **The clock.** `clock` (project setting `npc_mind/memory/clock`) is `process` (play seconds:
    stopped while the tree is paused, not scaled by `Engine.time_scale`, so fast-forwarding a night
    does not wipe memories), `scaled_process` (follows `Engine.time_scale`), or `manual` (moved only
    by `advance()`, which also runs the batched update at once, for tests and replays). `now()` is
    the time every memory and selector sees.

    **Batched methods** take and return packed arrays over node ids (`get_server_id()` of each
    node); the nodes' own Dictionary methods are the convenient, slower path. An id in a batch that is
    stale (its node was freed) or unknown never fails the call: its row is skipped by the writes
    (`record_batch`, `set_inputs`) and answered as "knows nothing" by the reads (awareness 0,
    retrievability 0 with memory_type -1, choice -1); the monitor `server/stale_rows` counts such
    rows. A freed node's id is not handed out again: the server reuses its slot, not its value (a
    new node gets a new id, never in the frame the old one was freed), so its tables stay the size of
    the most nodes alive at once, and a kept stale id never reaches the new node. Ids are below 2^31
    and fit a PackedInt32Array.

    `drain_memory_events()` is the crowd's alternative to per-node memory signals: with
    `MemoryStream.emit_signals` off a stream emits none, and its events are only here (streams with
    signals on are here too). Call it once a frame from `_process`: it returns the events of the
    update at the end of the previous frame (or of the last `advance()`), each handed over once.

    **The local model.** With the project setting `npc_mind/llm/start_local_model` on (off by
    default; `NPC_MIND_START_LOCAL_MODEL=1` / `0` overrides it), the server starts a local
    llama-server with the game, also when playing from the editor, and stops it when the game quits
    (on Linux also if the game is killed). It is used only when no endpoint is configured (neither
    `npc_mind/llm/endpoint` nor `NPC_MIND_LLM_URL`). Its files, first found:
    `npc_mind/llm/local_server_path` and `npc_mind/llm/local_model_path` (absolute, `res://`,
    `user://` or relative to the project), else `NPC_MIND_LLAMA_SERVER` / `NPC_MIND_LLM_MODEL_FILE`,
    else the addon's own `bin/llama/` (from `scripts/package --with-model` or the addon's
    `-with-model` zip), else, in an npc_mind checkout, `.deps/llama/`. An exported game uses the
    `llama/` folder beside its executable, which the export preset's option
    `npc_mind/ship_local_model` (off by default) copies there from `bin/llama/`. If it cannot start,
    an error in the game's log says which file and how to ship it, and every decision takes the
    fallback tiers (`no_endpoint`). Starting adds about half a second to the game's start.

    **Monitors.** `get_monitor_names()`, `get_monitor(name)` and `get_metrics()`: pool statistics
    (`memory/pools`, `memory/streams`, `memory/memories`), selectors (`selectors/groups`,
    `selectors/count`, `selectors/rows`), decision metrics (`decision/tier1..3`,
    `decision/timeouts`, `decision/stale_discards`, `decision/aborts`, latency p50/p95, pending),
    `server/step_ms`, the last frame's time by part (`server/frame_ms`: the whole frame callback;
    of it `server/senses_ms`, the step's `server/fold_ms`, `server/inputs_ms`, `server/choose_ms`,
    `server/decide_ms`, `server/memory_ms`, and `server/signals_ms`: the signals emitted and the
    actions they run), `server/stale_rows`, the senses' totals (`senses/count`, `senses/checks`,
    `senses/rays`, `senses/records`, `senses/stimuli`; `get_metrics()` only) and the mistakes
    (`mistakes/reported`, `mistakes/repeats`). They appear under the debugger's Monitors tab as
    `npc_mind/...`, registered by the server itself when its first node enters the tree (the plugin
    adds no autoload); the `*_ms` ones are time monitors.

    **The NPC Mind debugger tab.** While a debugger session is attached (the editor's Run, or
    `--remote-debug tcp://host:port`) in a debug build, the server adds an internal node that sends
    the editor's NPC Mind tab its data over `EngineDebugger` (capture `npc_mind`): the NPC list when
    it changes, and five times a second a snapshot of the NPC the tab selected (memories, the
    selector's scores and choice, the recent LLM outcomes, what each of its senses perceived in the
    last second and the actions its behaviors ran; see `npc_mind_godot.debug_feed`). The clock stands
    still while the game is paused, so a paused game's tab keeps its last second of perceptions.
    Without a debugger nothing is registered or sent.

    **Threads.** npc_mind is main-thread only: nothing in it is locked. Every method of the nodes
    and of the server called from another thread (a GDScript `Thread`, a `WorkerThreadPool` task) is
    refused before it touches anything, with one engine error naming the method (`WrongThreadError`).
    From a thread, use `call_deferred("record_event", ...)` or `call_thread_safe(...)`. A node freed
    on a thread is released on the main thread before the next update.

    **The update on a thread.** With `update_on_thread` on (project setting
    `npc_mind/server/update_on_thread`; off by default), the batched update (the queued writes
    folded, the sourced inputs, the choices, the LLM decisions' bookkeeping, forgetting) runs on a
    worker thread of the server's while the game's next frame runs its physics and scripts: on a
    multi-core CPU its cost leaves the main thread. Its signals (behavior_changed, the memory
    signals, decision signals) arrive one frame later, at the start of the next frame callback,
    with the actions they run. Every call into npc_mind from the main thread while the update runs
    waits for it first (MemoryStream.record_event does not: it is queued in C), so a game that
    reads its NPCs by signals gains the most; awareness_of, evaluate and get_choice are answered in
    Python meanwhile (their C answer tables are off). The inputs are still read on the main thread
    for a selector with a DistanceInput, PropertyInput or IntentInput (they read the engine), and in
    the frame after its selectors change. `server/update_wait_ms` is the last frame's wait of the
    main thread for it: near 0 when the overlap works.

    **Rejected calls.** A property assignment that is rejected (`clock = "sundial"`) prints an error
    and leaves the property as it was. `advance()` from a handler of one of the server's own signals
    is refused (an update cannot run inside another); `call_deferred("advance", seconds)` instead.
    """

    clock: str = export(
        "process",
        hint=PropertyHint.ENUM,
        hint_string="process,scaled_process,manual",
        doc="What drives time: process, scaled_process or manual.",
    )

    @clock.setter  # type: ignore[attr-defined]  # in the class body an export is its Export (the annotation types the value)
    def _set_clock(self, value: str) -> None:
        if "mind" in self.__dict__:
            self.core.clock.set_mode(ClockMode(str(value)))

    update_on_thread: bool = export(
        False,
        doc="Run the batched update on a worker thread, beside the game's next frame; its signals "
        "come one frame later (see the class description).",
    )

    @update_on_thread.setter  # type: ignore[attr-defined]  # in the class body an export is its Export
    def _set_update_on_thread(self, value: bool) -> None:
        if "mind" in self.__dict__:
            self._thread_update(bool(value))

    @property
    def core(self) -> MindServer:
        """The engine-agnostic server, through the one thread check (`_common.core`)."""
        return core()

    @python_only
    def setup(self) -> None:
        endpoint = _default_endpoint()
        self.local_model: Any = None
        if not endpoint and _start_local_model_wanted():
            self.local_model = _start_local_model()
            endpoint = self.local_model.base_url if self.local_model is not None else ""
        self.mind = MindServer(
            str(project_setting(CLOCK_SETTING, "process")),
            llm_endpoint=endpoint,
        )
        self.__dict__["clock"] = self.mind.clock.mode.value
        from npc_mind_godot.utility_nodes import batched_input_missing

        self.mind.selectors.on_missing_input = batched_input_missing  # reported once per node and key
        self.nodes: dict[int, Any] = {}
        self._released: deque[int] = deque()  # handles of nodes freed on another thread
        self.ticking = False
        self._delivering = False  # inside _deliver: a signal handler is running
        # decisions aborted by the actions run while a frame's signals are gathered (`_deliver`)
        self.aborted_in_delivery: set[int] | None = None
        self.owed_in_delivery: set[int] = set()  # decisions with a signal in the delivery under way
        self._engine = objects.singleton("Engine")
        self._tree: Any = None
        self._root: Any = None
        self._last_wall = time.monotonic()
        self._frame_scale = float(self._engine.get_time_scale())
        from npc_mind_godot.senses import Sensing

        self.sensing = Sensing()  # every sense, run each frame before the step (npc_mind_godot.senses)
        # the last frame's main-thread times outside the step: senses, signals (with the actions
        # they run) and the waits for the update (the metrics server/<name>_ms; server/frame_ms,
        # the whole frame callback, is the binding's clock: `_server_metrics`)
        self.frame_parts = {"senses": 0.0, "signals": 0.0, "update_wait": 0.0}
        self._waited_outside = 0.0
        # the update thread (`update_on_thread`) and the signals its last update owes while none runs
        self.threaded: ThreadedUpdate | None = None
        self._owed: list[ServerEvent] = []
        self._unsent: list[tuple[Any, ...]] = []  # signals an update could not arm the binding with
        self.update_on_thread = bool(project_setting(UPDATE_THREAD_SETTING, False))

    # --- time ----------------------------------------------------------------------------------
    def now(self) -> float:
        """Seconds on the server's clock."""
        return self.core.now()

    def advance(self, seconds: float) -> None:
        """Manual clock only: move time by `seconds` and run the batched update now, emitting signals.
        Refused from a handler of a signal the server is delivering (use `call_deferred`)."""
        core = self.core
        if self._delivering:
            raise RuntimeError(
                "NpcMindServer.advance() called from a handler of one of its own signals: an update "
                'cannot run inside another; use NpcMindServer.call_deferred("advance", seconds)'
            )
        self._release_queued()
        owed = self._take_owed()
        self._deliver(owed + core.advance(seconds))

    @python_only
    def frame(self) -> None:
        """Once per frame, from the main loop's frame callback: clock, batched updates, signals."""
        tree = self._tree
        if tree is None:
            return
        # the main thread's waits for the update since the last frame, outside this callback
        self._waited_outside = self.threaded.take_waited() if self.threaded is not None else 0.0
        delta = float(self._root.get_process_delta_time())  # this frame's (scaled) _process delta
        unscaled, scale = self._clocked(delta, float(self._engine.get_time_scale()), time.monotonic())
        owed = self._take_owed()  # the last threaded update's signals, before this frame's senses
        signals_start = time.perf_counter()
        self._deliver(owed)
        signals = time.perf_counter() - signals_start
        threaded = self.threaded  # (a handler may have turned it on or off)
        self._release_queued()
        senses_start = time.perf_counter()
        self.sensing.run(tree, self.mind.now())  # the senses' records join this frame's batch
        step_start = time.perf_counter()
        paused = bool(tree.is_paused())
        if threaded is None:
            events = self.mind.step(unscaled, scale, paused)
            signals_start = time.perf_counter()
            self._deliver(events)
            signals += time.perf_counter() - signals_start
        else:
            threaded.start(unscaled, scale, paused, inputs_here=not selector_feed.feed.runs_anywhere())
        waited = self._waited_outside + (threaded.take_waited() if threaded is not None else 0.0)
        self.frame_parts = {
            "senses": step_start - senses_start, "signals": signals, "update_wait": waited,
        }  # fmt: skip
        if threaded is None and self._rest_wanted([]):  # (with the thread, its update decides)
            objects.frame_rest(self._rested)

    def _clocked(self, delta: float, time_scale: float, wall: float) -> tuple[float, float]:
        """(unscaled delta, its time scale) of a frame whose (scaled) process delta is `delta`, the
        time scale `time_scale` at its end, at monotonic second `wall`. The engine scaled this
        frame's delta by the time scale in force when the frame began, which is the one seen at the
        end of the previous frame (game code may change it since); at scale 0, wall time."""
        scale, self._frame_scale = self._frame_scale, time_scale
        unscaled = delta / scale if scale > 0.0 else wall - self._last_wall
        self._last_wall = wall
        return unscaled, scale

    def _take_owed(self) -> list[ServerEvent]:
        """The signals an update on the thread owes, once it is done (and the reports it left). The
        signals an update armed the binding with, that no frame emitted, go first."""
        owed, self._owed = self._owed, []
        if self.threaded is not None:
            try:
                owed += self.threaded.join()
            except Exception:
                self._owed = owed  # the signals owed before the failed update still go, next frame
                raise
        mistakes.flush()
        self._delivering = True
        try:
            objects.emit_prepared()
            unsent, self._unsent = self._unsent, []
            if unsent:
                emit_signals(unsent)
        finally:
            self._delivering = False
        return owed

    # --- a frame run whole on the update thread (the binding's side: native/fast_frame.c) ----------
    def _frame_apart(self, events: list[ServerEvent]) -> bool:
        """On the update thread, at an update's end: whether the next frame needs nothing of the
        main thread's Python, then the binding armed with the events' signals (True). Nothing
        waits for the main thread's frame: no sense, release, report or earlier signal; the frame
        callback runs the server's hook only; no C answer table is in use; the inputs' feed may run
        on this thread; every signal's delivery is data (no decision's, and a behavior change's
        only where no action runs: `actions.changes_apart`). Any main-thread Python before the
        frame makes it Python's again (the binding disarms). A server with nothing to do rests
        instead (`_rest_wanted`): False, nothing armed, and the next frames run no Python at all."""
        threaded, nodes = self.threaded, self.nodes
        if self._rest_wanted(events):
            objects.frame_rest(self._rested)
            return False
        if not (
            threaded is not None and self._nothing_waits() and self.mind.clock.mode is not ClockMode.MANUAL
            and not threaded.answers_wanted() and selector_feed.feed.runs_anywhere()
        ):  # fmt: skip
            return False
        for event in events:
            if event.signal in _DECISION_SIGNALS:
                return False
            node = nodes.get(event.handle)
            if event.signal == BEHAVIOR_CHANGED and node is not None and not actions.changes_apart(node):
                return False
        calls = self._calls(events)  # (the behavior changes' books kept here: the main thread waits)
        try:
            objects.frame_arm(calls)
        except Exception:  # a signal's value the binding cannot hold: the main thread emits them
            self._unsent = calls
        return True

    def _nothing_waits(self) -> bool:
        """Nothing waits for the main thread's frame: no sense, release, report or earlier signal,
        and the frame callback runs the server's hook only."""
        return (
            self._tree is not None and not self._owed and not self._unsent and not self._released
            and not self._delivering and objects.only_frame_hook(self.frame) and self.sensing.idle()
            and not mistakes.waiting()
        )  # fmt: skip

    # --- a resting server: no node, nothing under way (the binding's side: native/fast_frame.c) ----
    def _rest_wanted(self, events: list[ServerEvent]) -> bool:
        """At a frame's or an update's end: whether the next frames only move the clock (no node,
        no signal owed, the step idle), so the binding keeps them in C (`objects.frame_rest`) and the
        main thread runs no Python for them, until its next entry hands them to `_rested`."""
        return not events and not self.nodes and self.mind.resting() and self._nothing_waits()

    def _rested(self, frames: list[HandedFrame]) -> None:
        """The frames a resting server's binding kept, at the next main-thread entry, before it: each
        one's clock rule and step, in order, as `frame` would have run them."""
        mind = self.mind
        for handed in frames:
            unscaled, scale = self._clocked(handed.delta, handed.time_scale, handed.wall)
            mind.step(unscaled, scale, handed.paused)
        self.frame_parts = dict.fromkeys(self.frame_parts, 0.0)

    def _frame_here(self, handed: HandedFrame) -> list[ServerEvent]:
        """A frame run whole on the update thread, its signals emitted in C: the clock's rule, then
        the whole step (its inputs fed here), as `frame` would run them; returns its events."""
        waited = self.threaded.take_waited() if self.threaded is not None else 0.0
        unscaled, scale = self._clocked(handed.delta, handed.time_scale, handed.wall)
        mind = self.mind
        with mind.lent():
            events = mind.begin_step(unscaled, scale, handed.paused, inputs_here=False)()
        self.frame_parts = {"senses": 0.0, "signals": handed.signals, "update_wait": waited}
        return events

    def _thread_update(self, on: bool) -> None:
        """`update_on_thread` set: the thread starts, or the last update is joined (its signals
        are delivered at the next frame) and the thread ends."""
        if on == (self.threaded is not None):
            return
        if on:
            self.threaded = ThreadedUpdate(self.mind, arm=self._frame_apart, run_frame=self._frame_here)
            return
        threaded, self.threaded = self.threaded, None
        self._owed += threaded.close()  # type: ignore[union-attr]  # (not None: checked above)

    # --- registration (Python side, from the nodes) ----------------------------------------------
    @python_only
    def attach(self, node: Any, handle: int) -> None:
        self.nodes[handle] = node
        targets.placement_changed()
        if not self.ticking:
            self._start_ticking()

    @python_only
    def release(self, handle: int) -> None:
        """A node is gone. Freed on another thread (allowed for nodes outside the tree), its slot is
        released on the main thread, before the next update."""
        self.nodes.pop(handle, None)
        targets.placement_changed()
        if not on_main_thread():
            self._released.append(handle)
            objects.frame_disarm()  # the next frame is Python's, which releases it
            return
        mind = self.mind
        if mind.owns(handle):
            mind.remove(handle)

    def _release_queued(self) -> None:
        while self._released:
            self.release(self._released.popleft())

    def _start_ticking(self) -> None:
        tree = self._engine.get_main_loop()
        if tree is None or not hasattr(tree, "get_root"):
            return  # no SceneTree (yet): the next node to register tries again
        self._tree = tree
        self._root = tree.get_root()  # a SceneTree's root Window is made with it and lives as long
        objects.frame_setup(self._root, self._engine, tree)  # what a frame on the update thread reads
        ticker.start(self.frame)
        self.ticking = True
        from npc_mind_godot import debug_feed, monitors

        monitors.register(self)
        debug_feed.start(tree)  # only while a debugger is attached

    def _deliver(self, events: list[ServerEvent]) -> None:
        """The frame's signals, in order, emitted in one crossing (a freed node's are skipped)."""
        if not events:  # (most frames)
            return
        calls = self._calls(events)
        if not calls:
            return
        self._delivering = True
        try:
            emit_signals(calls)
        finally:
            self._delivering = False

    def _calls(self, events: list[ServerEvent]) -> list[tuple[Any, ...]]:
        """The events' signals as emit_signals takes them, in order, the behavior changes' actions
        run (with their behavior_exited and _entered) and the decisions they aborted left out."""
        nodes = self.nodes
        calls: list[tuple[Any, ...]] = []
        handles: list[int] = []
        aborted: set[int] = set()
        self.aborted_in_delivery = aborted
        self.owed_in_delivery = {event.handle for event in events if event.signal in _DECISION_SIGNALS}
        held = actions.hold_signals()  # behavior_exited and _entered go in this crossing too
        try:
            for event in events:
                node = nodes.get(event.handle)
                if node is not None:
                    if event.signal == BEHAVIOR_CHANGED:  # its actions and entered/exited come first
                        self._run_actions(node, event.args[0])
                    # decision_fallback's reason is a String, every other text a StringName
                    names = event.signal != "decision_fallback"
                    args = [StringName(arg) if names and isinstance(arg, str) else arg for arg in event.args]
                    signal = _SIGNAL_NAMES.get(event.signal)
                    if signal is None:  # one StringName per signal: the binding converts it from its cache
                        signal = _SIGNAL_NAMES[event.signal] = StringName(event.signal)
                    calls.append((node._id, signal, *args))
                    handles.append(event.handle)
        finally:
            actions.release_signals()
        self.aborted_in_delivery, self.owed_in_delivery = None, set()
        if aborted:  # an action aborted a decision: none of its signals of this frame is emitted
            calls = [
                call for call, handle in zip(calls, handles, strict=True)
                if handle not in aborted or call[1] not in _DECISION_SIGNALS
            ]  # fmt: skip
        return held + calls  # (held: those no action's run emitted first)

    def _run_actions(self, selector: Any, behavior: str) -> None:
        self._delivering = True
        try:
            actions.change(selector, behavior)
        finally:
            self._delivering = False

    # --- batched entry points ------------------------------------------------------------------
    def record_batch(
        self,
        ids: PackedInt32Array,
        entities: PackedInt64Array,
        memory_types: PackedInt32Array,
        saliences: PackedFloat32Array,
    ) -> None:
        """Record one event per row: MemoryStream ids, entity ids, MemoryStream types, saliences."""
        self.core.record_batch(ids, entities, memory_types, saliences)

    def awareness_batch(self, ids: PackedInt32Array, entities: PackedInt64Array) -> PackedInt32Array:
        """Awareness (0 none .. 3 pursue) per (MemoryStream id, entity); only looks."""
        return self.core.awareness_batch(ids, entities).astype(np.int32)

    def query_strongest_batch(self, ids: PackedInt32Array, entities: PackedInt64Array) -> dict:
        """Recall per row (wakes): {retrievability: floats, memory_type: ints (-1: none)}."""
        strength, kinds = self.core.query_strongest_batch(ids, entities)
        return {"retrievability": strength.astype(np.float32), "memory_type": kinds.astype(np.int32)}

    def emit_stimulus(self, position: Any, radius: float, kind: Any, salience: float, source: Any) -> None:
        """A sound (or any one-off stimulus) at `position` (Vector2: 2D, Vector3: 3D): every hearing
        sense within `radius` records it at the end of this frame, as memory type `kind` (a
        MemoryStream.MemoryType code or name, e.g. "hostile") with `salience` (0..1) attenuated by
        distance (x (1 - d / radius)) and occluders; the entity is `source` (a node: its instance id;
        or an id). A bad argument raises a clear error and emits nothing."""
        self.sensing.emit(position, radius, kind, salience, source)

    def drain_memory_events(self) -> dict:
        """Every MemoryStream's memory events of the last batched update, once (a second read is empty):
        {kind: MemoryStream.EVENT_*, id: stream ids, entity_id, memory_type}, one row per event."""
        log = self.core.drain_memory_events()
        return {
            "kind": log.code.astype(np.int32),
            "id": log.handle.astype(np.int32),
            "entity_id": log.entity.astype(np.int64),
            "memory_type": log.memory_type.astype(np.int32),
        }

    def set_inputs(self, ids: PackedInt32Array, key: StringName, values: PackedFloat32Array) -> None:
        """One input key for many UtilitySelectors, chosen for in batches at the end of the frame."""
        self.core.set_inputs(ids, str(key), values)

    def get_choices(self, ids: PackedInt32Array) -> PackedInt32Array:
        """The last batched choice per UtilitySelector id: an index into its behaviors (-1 before any)."""
        return self.core.chosen(ids).astype(np.int32)

    @python_only
    def free(self) -> None:
        """gdbridge's shutdown frees its singletons with `free()`, which engine Objects do not expose
        through the API; destroy the object directly."""
        if self._ptr is not None:
            objects._iface["object_destroy"](self._ptr)

    def _notification(self, what: int) -> None:
        if what == NOTIFICATION_PREDELETE and "mind" in self.__dict__:
            if self.threaded is not None:
                self._thread_update(False)
            self.sensing.close()  # its reused ray queries are engine objects
            actions.close()  # the actions' engine side is an engine object
            inputs.close()  # the feed's plan holds the input sources (resources)
            self.mind.close()  # stops the LLM transport's thread
            if self.__dict__.get("local_model") is not None:
                self.local_model.stop()

    # --- monitors ------------------------------------------------------------------------------
    def get_monitor_names(self) -> PackedStringArray:
        """The names of the server's statistics (the Debugger's npc_mind/... monitors)."""
        return PackedStringArray(sorted(self._server_metrics()))

    def get_monitor(self, name: str) -> float:
        """One statistic by name (0 for an unknown name)."""
        return float(self._server_metrics().get(str(name), 0.0))

    def get_metrics(self) -> dict:
        """Every statistic by name, as a Dictionary: the server's, and how many per-node calls the
        binding took in C since start (`binding/queued_calls`: MemoryStream.record_event;
        `binding/answered_calls`: awareness_of, and UtilitySelector.evaluate repeating its last
        choice; `binding/checked_calls`: those evaluate calls among them whose numbers changed,
        answered by the kernel's check of the repeated choice; `binding/thread_frames`: the frames
        run whole on the update thread, no Python on the main thread; `binding/rested_frames`: the
        frames of a server with no node that ran no Python at all), and the user mistakes reported once
        and repeated (`mistakes/reported`, `mistakes/repeats`: see `npc_mind_godot.mistakes`), and
        the senses' totals (`senses/count`, `senses/checks`, `senses/rays`, `senses/records`,
        `senses/stimuli`)."""
        return {
            **self._server_metrics(),
            "binding/queued_calls": float(objects.queued_total()),
            "binding/answered_calls": float(objects.answered_total()),
            "binding/checked_calls": float(objects.checked_total()),
            "binding/thread_frames": float(objects.fast_frames()),
            "binding/rested_frames": float(objects.rested_frames()),
            **mistakes.metrics(),
            **self.sensing.metrics(),
        }

    def _server_metrics(self) -> dict[str, float]:
        """The core's statistics and the last frame's main-thread times outside its step."""
        frame = {f"server/{name}_ms": seconds * 1000.0 for name, seconds in self.frame_parts.items()}
        # the whole callback as the binding timed it (the queued calls' hand-over and the GIL's wait
        # come before the hook: at 1,000 NPCs a sixth of it), and the waits for the update between
        # the callbacks (those in it are in its time)
        frame["server/frame_ms"] = (objects.frame_seconds() + self._waited_outside) * 1000.0
        return {**self.core.metrics(), **frame}


_SIGNAL_NAMES: dict[str, StringName] = {}
_DECISION_SIGNALS = {StringName(name) for name in ("thinking_started", "decision_made", "decision_fallback")}


def _default_endpoint() -> str:
    configured = str(project_setting(ENDPOINT_SETTING, ""))
    return configured or os.environ.get("NPC_MIND_LLM_URL", "")


def _start_local_model_wanted() -> bool:
    """For a running game only: the editor itself (and its headless --import / --export runs) never
    starts a model server; playing from the editor does, in the game's own process."""
    if objects.singleton("Engine").is_editor_hint():
        return False
    override = os.environ.get(START_LOCAL_MODEL_ENV, "").strip().lower()
    if override:
        return override in ("1", "true", "yes", "on")
    return bool(project_setting(START_LOCAL_MODEL_SETTING, False))


def _start_local_model() -> Any:
    """The local model server the project settings name (paths: absolute, `res://`/`user://`, or
    relative to the project; in an exported game `res://` and relative paths are beside its
    executable), else `NPC_MIND_LLAMA_SERVER` / `NPC_MIND_LLM_MODEL_FILE`, else the shipped
    `llama/` folder beside the extension library (the addon's `bin/llama/` from
    `scripts/package --with-model`; in an export, beside the executable, shipped by the preset option
    `npc_mind/ship_local_model`), else, outside an export, the provisioned ones (this checkout's or
    the project's `.deps/llama/`). None, with an error in the game's log, if it cannot start: the
    game then plays on the fallback tiers."""
    from pathlib import Path

    from gdbridge.editor import bin_dir
    from npc_mind.llm import local_server as local

    settings = objects.singleton("ProjectSettings")
    engine_os = objects.singleton("OS")
    # res:// is a real folder only when run from the editor binary; an export's files sit beside it.
    exported = not engine_os.has_feature("editor")
    project = (
        Path(str(engine_os.get_executable_path())).parent
        if exported
        else Path(str(settings.globalize_path("res://")))
    )
    shipped_server, shipped_model = local.shipped(bin_dir() / local.SHIPPED_DIR)

    def path(setting: str, env: str, shipped: Path, provisioned: Path) -> Path:
        value = str(project_setting(setting, ""))
        if value:
            if exported and value.startswith("res://"):
                value = value.removeprefix("res://")  # beside the executable
            return local.resolve_path(str(settings.globalize_path(value)), env, provisioned, base=project)
        if os.environ.get(env):
            return local.resolve_path(None, env, provisioned)
        if exported or shipped.is_file():  # an export has nothing else
            return shipped
        in_project = project / provisioned.relative_to(local.REPO)  # the addon copied into another game
        found = [candidate for candidate in (provisioned, in_project) if candidate.is_file()]
        return found[0] if found else shipped  # none: the error names the addon's own place

    launcher = path(LOCAL_SERVER_SETTING, local.SERVER_ENV, shipped_server, local.LAUNCHER)
    model = path(LOCAL_MODEL_SETTING, local.MODEL_FILE_ENV, shipped_model, local.MODEL)
    missing = [
        file for file in (shipped_server, shipped_model) if file in (launcher, model) and not file.is_file()
    ]
    if missing:
        how = (
            "export it with the preset option npc_mind/ship_local_model (after scripts/package --with-model)"
            if exported
            else "unzip the addon's -with-model zip, or run scripts/package --with-model (or "
            f"scripts/provision llm) in an npc_mind checkout, or set {LOCAL_SERVER_SETTING} and "
            f"{LOCAL_MODEL_SETTING}"
        )
        objects.utility.push_error(
            f"npc_mind: {START_LOCAL_MODEL_SETTING} is on but this game ships no local model "
            f"({missing[0]} is missing): {how}, or set {ENDPOINT_SETTING}; fallback tiers only"
        )
        return None
    try:
        server = local.LocalLlamaServer(launcher=launcher, model=model).start()  # one thread, 2 slots
    except (local.LocalServerError, OSError, ValueError) as error:
        objects.utility.push_error(f"npc_mind: the local model did not start ({error}); fallback tiers only")
        return None
    objects.utility.print(f"npc_mind: local model {model.name} at {server.base_url} ({server.launcher})")
    return server


def install() -> None:
    """Create the singleton once and register it with the engine."""
    if installed:
        return
    from gdbridge import classdb

    classdb.register_pending()
    server = NpcMindServer()
    server.setup()
    installed.append(server)
    objects.register_singleton(SINGLETON, server)  # unregistered and freed by gdbridge at shutdown
