"""`MindServer`: the one object behind the `NpcMindServer` singleton.

It owns the clock, every memory pool (one per profile), every selector group (one per definition)
and every decision hub, and does all per-frame work in one `step` call: the front end crosses into
Python once a frame, not once per NPC. Nodes are handles; their signals are `ServerEvent`s drained
after each step (or after `advance` on a manual clock).

Threads: a `MindServer` takes no lock. Every call must come from the thread that created it (the
game loop's); registration, `step` and `advance` check that and raise `WrongThreadError`. The
per-call methods do not check (one comparison each would tax the hot path twice in Godot, where
`npc_mind_godot._common.core` already refuses other threads for every node and singleton call, and
MemoryStream's per-frame methods, which call `memory` directly, make the same comparison inline).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

from npc_mind.decision.blackboard import Describe, describe_type
from npc_mind.server.clock import ClockMode, ServerClock
from npc_mind.server.decisions import DecisionBank, DecisionSettings
from npc_mind.server.events import EventQueue, ServerEvent
from npc_mind.server.memories import MemoryBank, MemoryLog, MemoryProfileSpec
from npc_mind.server.registry import HandleCounter
from npc_mind.server.selectors import SelectorBank
from npc_mind.server.sightings import Sightings
from npc_mind.threads import WrongThreadError

# The step's parts, in order, each timed at every step (`MindServer.part_seconds`, the metrics
# server/<part>_ms): the frame's queued writes applied; the inputs fed from memory and the world;
# the selectors' batched choices; the LLM decisions' watchdogs and merges; forgetting, the memory
# events and the frame's awareness table.
STEP_PARTS = ("fold", "inputs", "choose", "decide", "memory")


class MindServer:
    def __init__(
        self,
        clock: ClockMode | str = ClockMode.PROCESS,
        *,
        llm_endpoint: str = "",
        monotonic: Callable[[], float] = time.monotonic,
        per_frame: bool = True,
    ) -> None:
        """per_frame: the per-node memory calls are queued and folded into the frame's batch, and
        awareness is read from a per-frame table (exact: `npc_mind.server.memories`); off, each
        runs at once (the reference the deferred path is tested against)."""
        self.clock = ServerClock(ClockMode(clock))
        self.events = EventQueue()
        counter = self.handles = HandleCounter()
        self.memory = MemoryBank(counter, self.events, now=self.clock.now, per_frame=per_frame)
        # the per-node memory calls, bound straight to the bank (a MemoryStream calls the bank's
        # own methods): record(handle, entity, memory_type, salience), awareness(handle, entity)
        # -> level, query_strongest(handle, entity) -> the memory's Dictionary (wakes it), at now
        self.record = self.memory.write
        self.record_many = self.memory.write_many  # record of each (handle, entity, type, salience), in order
        self.awareness = self.memory.aware
        self.query_strongest = self.memory.recall
        self.selectors = SelectorBank(counter, self.events, now=self.clock.now)
        self.sightings = Sightings()  # where and when each memory stream last perceived each entity
        # the per-node utility calls, bound straight to the bank (one Python call from the node),
        # on a selector's entry (`selectors.entry(handle)`, looked up once): pick(entry, context) ->
        # the chosen index into its names, at the clock's now (`evaluate` by index);
        # set_input_values(entry, {key: number}); choice_index(entry)
        self.pick = self.selectors.pick
        self.set_input_values = self.selectors.set_input_values
        self.choice_index = self.selectors.choice_index
        self.decisions = DecisionBank(
            counter, self.events, llm_endpoint, memory_top_k=self._top_k_now, clock=monotonic
        )
        self.frames = 0
        self.last_step_seconds = 0.0
        self.part_seconds = dict.fromkeys(STEP_PARTS, 0.0)  # the last update's, part by part
        # called with `now` in each update before the selectors choose: front ends that feed
        # inputs read from memory and the world (npc_mind_godot.inputs) write them here
        self.before_choosing: list[Callable[[float], None]] = []
        self._owner_thread = threading.get_ident()
        self._drained = False  # the last update found the server empty (`_empty`)

    def _check_thread(self, call: str) -> None:
        if threading.get_ident() != self._owner_thread:
            raise WrongThreadError(
                f"MindServer.{call}() called from another thread: a server belongs to the thread that made it"
            )

    @contextmanager
    def lent(self) -> Iterator[None]:
        """The calling thread owns the server (its pools too) until the block ends, then the owner
        again: a whole frame run on the update thread (`NpcMindServer._frame_apart`), while the
        owner thread, which handed it over, calls nothing."""
        owner = self._owner_thread
        self._owner_thread = threading.get_ident()
        self.memory.claim()
        try:
            yield
        finally:
            self._owner_thread = owner
            self.memory.claim(owner)

    def now(self) -> float:
        return self.clock.now()

    # --- registration --------------------------------------------------------------------------
    def add_memory(self, profile: MemoryProfileSpec | Mapping[str, Any] | None = None) -> int:
        self._check_thread("add_memory")
        return self.memory.add(MemoryProfileSpec.of(profile))

    def set_memory_profile(self, handle: int, profile: MemoryProfileSpec | Mapping[str, Any] | None) -> None:
        """Move a stream to another profile, memories included; a rejected profile raises and
        changes nothing (`MemoryBank.set_profile`)."""
        self._check_thread("set_memory_profile")
        self.memory.set_profile(handle, MemoryProfileSpec.of(profile), self.now())

    def add_selector(self, definition: Mapping[str, Any]) -> int:
        self._check_thread("add_selector")
        return self.selectors.add(definition)

    def add_decision(
        self,
        settings: DecisionSettings,
        fallback_selector: int = 0,
        memory: int = 0,
        priority: int = 0,
        *,
        input_defaults: Mapping[str, float] | None = None,
        on_bad_input: Callable[[str, str, Any], None] | None = None,
    ) -> int:
        """fallback_selector: a selector handle whose definition covers tiers 2 and 3 (0: none);
        priority: its requests' rank when the endpoints are saturated (`DecisionBank.set_priority`).
        on_bad_input(key, where, given): given, an input the request's context lacks (or gives as
        no number) reads as its `input_defaults` value, else 0, and the call is told
        (`InputFallback`); not given, the selector raises and the request ends as `internal_error`."""
        self._check_thread("add_decision")
        chooser: Any = None
        if fallback_selector:
            from npc_mind.utility import InputFallback, UtilitySelector

            definition = self.selectors.entries.get(fallback_selector).group.prototype.to_dict()
            chooser = UtilitySelector.from_dict(definition)  # its own state: decisions run on real time
            if on_bad_input is not None:
                chooser = InputFallback(chooser, input_defaults or {}, on_bad_input)
        return self.decisions.add(settings, chooser, memory, priority)

    def owns(self, handle: int) -> bool:
        """True while `handle` is registered (of any kind)."""
        return any(handle in bank.entries for bank in (self.memory, self.selectors, self.decisions))

    def remove(self, handle: int) -> None:
        """Free a handle of any kind; no signal is ever delivered for it afterwards."""
        self._check_thread("remove")
        for bank in (self.memory, self.selectors, self.decisions):
            if handle in bank.entries:
                bank.remove(handle)
                self.events.discard(handle)
                self.sightings.drop(handle)
                return
        raise KeyError(f"no handle {handle}")

    # --- sightings ------------------------------------------------------------------------------
    def note_sighting(self, handle: int, entity: int, position: Any) -> None:
        """A memory stream's NPC perceived `entity` at `position` (2 or 3 numbers) now."""
        if handle not in self.memory.entries:
            raise KeyError(f"no memory stream {handle}")
        self.sightings.note(handle, entity, position, self.now())

    # --- time ----------------------------------------------------------------------------------
    def step(self, delta: float, time_scale: float = 1.0, paused: bool = False) -> list[ServerEvent]:
        """The once-a-frame entry: move the clock, do every batched update, return the signals owed."""
        return self.begin_step(delta, time_scale, paused)()  # (it checks the thread)

    def begin_step(
        self, delta: float, time_scale: float = 1.0, paused: bool = False, *, inputs_here: bool = True
    ) -> Callable[[], list[ServerEvent]]:
        """The step in two: what runs now, on the server's thread, and the rest, returned, which
        returns the signals owed. `step` runs both at once; a front end with an update thread runs
        the rest there (`npc_mind.server.update_thread`), while nothing else calls the server.

        inputs_here: the queued writes are folded, the clock moved and the inputs fed now (feeds
        that read the engine must run on its thread); else all of it is in the rest. The rest makes
        the thread that runs it the pools' owner (`MemoryBank.claim`) until it returns."""
        self._check_thread("step")
        if self.resting():  # nothing to update: the clock only
            self.clock.step(delta, time_scale, paused)
            return self._idle_rest
        started = time.perf_counter()
        here = self._moved(started, delta, time_scale, paused) - started if inputs_here else 0.0

        def rest() -> list[ServerEvent]:
            begun = time.perf_counter()
            self.memory.claim()
            try:
                events = self._chosen(begun if inputs_here else self._moved(begun, delta, time_scale, paused))
            finally:
                self.memory.claim(self._owner_thread)
            self.frames += 1
            self.last_step_seconds = here + time.perf_counter() - begun  # its parts, here and there
            return events

        return rest

    def _idle_rest(self) -> list[ServerEvent]:
        self.frames += 1
        self.last_step_seconds = 0.0
        if self.part_seconds["memory"]:  # the monitors show an update that did nothing
            self.part_seconds = dict.fromkeys(STEP_PARTS, 0.0)
        return []

    def resting(self) -> bool:
        """Whether a step only moves the clock (`_empty`, after one whole update so)."""
        return self._drained and self._empty()

    def _empty(self) -> bool:
        """No node joined, and nothing of those that left is still queued or owed. After one whole
        update so (its tables emptied, its events read: `_drained`), a step moves the clock only,
        so a game whose NPCs are all gone pays next to nothing a frame."""
        memory = self.memory
        return not (
            memory.entries or memory.pools or memory.moved or memory.cache.queue or self.selectors.entries
            or self.selectors.groups or self.decisions.busy or self.events
            or self.handles.freed
        )  # fmt: skip

    def _moved(self, started: float, delta: float, time_scale: float, paused: bool) -> float:
        """The step up to the choices: the queued writes folded, the clock moved, the inputs fed."""
        self._fold(started)
        self.clock.step(delta, time_scale, paused)
        return self._fed(time.perf_counter())

    def advance(self, seconds: float) -> list[ServerEvent]:
        """Manual clock only: move time and run the batched update at once (tests, replays)."""
        self._check_thread("advance")
        self._fold(time.perf_counter())
        self.clock.advance(seconds)
        return self.update()

    def _fold(self, started: float) -> None:
        self.memory.fold()  # the frame's queued writes, at the `now` they were made
        self._timed("fold", started)

    def update(self) -> list[ServerEvent]:
        return self._chosen(self._fed(time.perf_counter()))

    def _fed(self, mark: float) -> float:
        now = self.clock.now()
        for feed in self.before_choosing:
            feed(now)
        return self._timed("inputs", mark)

    def _chosen(self, mark: float) -> list[ServerEvent]:
        """The update after the inputs: the choices, the decisions, forgetting; the signals owed."""
        now = self.clock.now()
        self.selectors.step(now)
        mark = self._timed("choose", mark)
        self.decisions.step()
        mark = self._timed("decide", mark)
        self.memory.step(now)
        self.handles.settle()  # the slots freed before this update may be reused from now on
        self._timed("memory", mark)
        events = self.events.drain()
        self._drained = self._empty()
        return events

    def _timed(self, part: str, since: float) -> float:
        """The part of the step that ran from `since` until now (`part_seconds`); now."""
        now = time.perf_counter()
        self.part_seconds[part] = now - since
        return now

    # --- memory --------------------------------------------------------------------------------
    def memories(self, handle: int) -> list[dict[str, Any]]:
        return self.memory.memories(handle, self.now())

    def save_memory(self, handle: int) -> bytes:
        return self.memory.save(handle, self.now())

    def load_memory(self, handle: int, data: bytes) -> None:
        self.memory.load(handle, data, self.now())

    def record_batch(
        self, handles: npt.ArrayLike, entities: npt.ArrayLike, types: npt.ArrayLike, saliences: npt.ArrayLike
    ) -> None:
        self.memory.record_batch(handles, entities, types, saliences, self.now())

    def awareness_batch(self, handles: npt.ArrayLike, entities: npt.ArrayLike) -> np.ndarray:
        return self.memory.awareness_batch(handles, entities, self.now())

    def query_strongest_batch(
        self, handles: npt.ArrayLike, entities: npt.ArrayLike
    ) -> tuple[np.ndarray, np.ndarray]:
        return self.memory.query_strongest_batch(handles, entities, self.now())

    def set_memory_signals(self, handle: int, enabled: bool) -> None:
        """Off: the stream's events appear only in `drain_memory_events`, never as its signals."""
        self.memory.set_signals(handle, enabled)

    def drain_memory_events(self) -> MemoryLog:
        """Every stream's memory events of the last update (codes `memories.EVENT_*`), once."""
        return self.memory.drain_log()

    def _top_k_now(self, handle: int, k: int) -> list[Any]:
        return self.memory.top_k(handle, k, self.now())

    # --- utility -------------------------------------------------------------------------------
    def evaluate(self, handle: int, context: Mapping[str, Any]) -> str:
        """The behavior to run now for one selector (the per-node path: `pick`, by index)."""
        return self.selectors.evaluate(handle, context, self.clock.now())

    def scores(self, handle: int) -> dict[str, float]:
        return self.selectors.scores(handle)

    def set_inputs(self, handles: npt.ArrayLike, key: str, values: npt.ArrayLike) -> None:
        self.selectors.set_inputs(handles, key, values)

    def chosen(self, handles: npt.ArrayLike) -> np.ndarray:
        return self.selectors.chosen(handles)

    def set_input(self, handle: int, key: str, value: float) -> None:
        """One selector's input for the next step's batched choice (read it with `choice`)."""
        self.selectors.set_input(handle, key, value)

    def choice(self, handle: int) -> str:
        """One selector's batched choice from the last step ("" before any)."""
        return self.selectors.choice(handle)

    # --- decisions -----------------------------------------------------------------------------
    def request_decision(
        self, handle: int, context: Mapping[str, Any], describe: Describe = describe_type
    ) -> None:
        """`DecisionBank.request`: describe makes a context value that is not plain data a description
        (only for a request that is taken: a refused one is never copied)."""
        self.decisions.request(handle, context, describe)

    def abort(self, handle: int) -> None:
        self.decisions.abort(handle)

    def set_decision_priority(self, handle: int, priority: int) -> None:
        self.decisions.set_priority(handle, priority)

    # --- monitors ------------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        """Flat numbers for the engine's monitors: pool statistics and decision metrics."""
        flat = {f"memory/{key}": value for key, value in self.memory.stats(self.now()).items()}
        flat["selectors/groups"] = float(len(self.selectors.groups))
        flat["selectors/count"] = float(len(self.selectors.entries))
        # rows the groups score each frame (live ones plus the free rows kept for reuse)
        flat["selectors/rows"] = float(sum(len(group.rows) for group in self.selectors.groups.values()))
        for key, value in self.decisions.metrics().items():
            flat[f"decision/{key}"] = float(value)
        flat["memory/sightings"] = float(len(self.sightings))
        flat["server/step_ms"] = self.last_step_seconds * 1000.0
        for part, seconds in self.part_seconds.items():
            flat[f"server/{part}_ms"] = seconds * 1000.0
        # batched rows skipped for a stale or unknown id (an NPC freed while its id was still in use)
        flat["server/stale_rows"] = float(self.memory.table.skipped + self.selectors.table.skipped)
        return flat

    def close(self) -> None:
        self.decisions.close()
