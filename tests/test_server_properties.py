"""Issue 10: the engine-agnostic server (`MindServer`, what the NpcMindServer singleton wraps) driven by
hypothesis through random interleavings of add / remove (free) / profile change / record / batched
record / request / abort / save / load / advance, valid and invalid arguments alike.

Invariants, after every step:
- no exception but the documented ones (UnknownHandleError or KeyError for a handle that is not
  live, ValueError and its kinds - SaveFormatError, UtilityDefinitionError - for a bad value);
- nothing lost on a rejected call: the stream's memories read the same before and after;
- exactly one terminal decision signal (decision_made or decision_fallback) per request, none for
  an aborted or freed one, and never a signal for a freed handle;
- registries sized to the live objects: streams, selectors and their groups' rows, decisions; the
  handle slots to the most handles live at once (a slot freed in a frame counts until its update).

No endpoint is configured, so every request ends at tier 3 in the update after it: the LLM tiers
themselves are covered by the decision and fault-server tests.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from npc_mind.memory import SaveFormatError
from npc_mind.server import ClockMode, UnknownHandleError
from npc_mind.server.core import MindServer
from npc_mind.server.decisions import DECISION_FALLBACK, DECISION_MADE, DecisionSettings
from npc_mind.server.selectors import MIN_ROWS
from npc_mind.utility import UtilityDefinitionError

GOOD_PROFILES: list[dict[str, Any]] = [{}, {"capacity": 4}, {"capacity": 8, "alpha": 1.5}]
BAD_PROFILES: list[Any] = [{"capacity": 0}, {"capacity": 10**6}, {"alpha": math.nan}, {"curve": "zigzag"}]
SELECTOR = {
    "behaviors": [
        {"name": "patrol", "considerations": [{"input_key": "calm", "curve_type": "linear"}]},
        {"name": "pursue", "considerations": [{"input_key": "threat", "curve_type": "linear"}]},
    ]
}
OTHER_SELECTOR = {**SELECTOR, "momentum": 0.2}
BAD_SELECTORS: list[Any] = [{"behaviors": []}, {"behaviors": [{"name": "x"}]}, {"behaviours": []}]
PERSONAS = ("a guard", "a merchant", "a thief")
ENTITIES = st.integers(min_value=0, max_value=5)
TYPES = st.integers(min_value=-1, max_value=5)  # 0..4 are memory types
SALIENCES = st.sampled_from([0.0, 0.5, 1.0, -0.5, 1.5, math.nan])
STEPS = st.sampled_from([0.0, 0.05, 1.0, 30.0])
NOT_LIVE = (UnknownHandleError, KeyError)


class ServerMachine(RuleBasedStateMachine):
    @initialize()
    def start(self) -> None:
        self.time = [0.0]
        self.server = MindServer(ClockMode.MANUAL, monotonic=lambda: self.time[0])
        self.memories: set[int] = set()
        self.selectors: set[int] = set()
        self.decisions: dict[int, DecisionSettings] = {}
        self.freed: set[int] = set()
        self.owed: dict[int, int] = {}  # decision -> terminal signals owed to its requests
        self.waiting: set[int] = set()  # decisions with a request not yet gone out
        self.saves: list[bytes] = []
        self.freed_this_frame = 0  # freed since the last update: their slots are not reused yet
        self.peak = 0  # the most handles live (or freed this frame) at once

    def teardown(self) -> None:
        if hasattr(self, "server"):
            self.server.close()

    # --- helpers -----------------------------------------------------------------------------
    def pick(self, data: st.DataObject, live: set[int] | dict[int, Any]) -> int:
        """A live handle mostly; sometimes a freed one or one never handed out."""
        choices = sorted(live) or [0]
        return data.draw(st.sampled_from(choices) | st.sampled_from([*sorted(self.freed), 999_999]))

    def snapshot(self) -> dict[int, list[dict[str, Any]]]:
        return {handle: self.server.memories(handle) for handle in sorted(self.memories)}

    def rejected(self, before: dict[int, list[dict[str, Any]]]) -> None:
        assert self.snapshot() == before, "a rejected call changed memories"

    # --- registration ------------------------------------------------------------------------
    @rule(profile=st.sampled_from(GOOD_PROFILES + BAD_PROFILES))
    def add_memory(self, profile: Any) -> None:
        count = len(self.server.memory.entries)
        try:
            handle = self.server.add_memory(dict(profile))
        except (ValueError, TypeError):
            assert profile in BAD_PROFILES
            assert len(self.server.memory.entries) == count
            return
        assert profile in GOOD_PROFILES
        self.memories.add(handle)

    @rule(definition=st.sampled_from([SELECTOR, OTHER_SELECTOR, *BAD_SELECTORS]))
    def add_selector(self, definition: Any) -> None:
        count = len(self.server.selectors.entries)
        try:
            self.selectors.add(self.server.add_selector(definition))
        except UtilityDefinitionError:
            assert definition in BAD_SELECTORS
            assert len(self.server.selectors.entries) == count

    @rule(data=st.data(), persona=st.sampled_from(PERSONAS))
    def add_decision(self, data: st.DataObject, persona: str) -> None:
        selector = data.draw(st.just(0) | st.sampled_from(sorted(self.selectors) or [0]))
        memory = data.draw(st.just(0) | st.sampled_from(sorted(self.memories) or [0]))
        settings = DecisionSettings(persona=persona)
        handle = self.server.add_decision(settings, fallback_selector=selector, memory=memory)
        self.decisions[handle] = settings

    @rule(data=st.data())
    def free(self, data: st.DataObject) -> None:
        handle = self.pick(data, self.memories | self.selectors | set(self.decisions))
        live = handle in self.memories or handle in self.selectors or handle in self.decisions
        try:
            self.server.remove(handle)
        except KeyError:
            assert not live
            return
        assert live
        self.memories.discard(handle)
        self.selectors.discard(handle)
        self.decisions.pop(handle, None)
        self.owed.pop(handle, None)  # a freed decision is owed nothing
        self.waiting.discard(handle)
        self.freed.add(handle)
        self.freed_this_frame += 1

    # --- memory ------------------------------------------------------------------------------
    @rule(data=st.data(), entity=ENTITIES, memory_type=TYPES, salience=SALIENCES)
    def record(self, data: st.DataObject, entity: int, memory_type: int, salience: float) -> None:
        handle = self.pick(data, self.memories)
        before = self.snapshot()
        try:
            self.server.record(handle, entity, memory_type, salience)
        except NOT_LIVE:
            assert handle not in self.memories
            self.rejected(before)
        except ValueError:
            assert not (0 <= memory_type <= 4 and 0.0 <= salience <= 1.0)
            self.rejected(before)

    @rule(data=st.data(), rows=st.integers(min_value=0, max_value=6), mismatched=st.booleans())
    def record_batch(self, data: st.DataObject, rows: int, mismatched: bool) -> None:
        handles = [self.pick(data, self.memories) for _ in range(rows)]
        entities = data.draw(st.lists(ENTITIES, min_size=rows + mismatched, max_size=rows + mismatched))
        before = self.snapshot()
        try:
            self.server.record_batch(handles, entities, [3] * rows, [0.5] * rows)
        except ValueError:
            assert mismatched
            self.rejected(before)
            return
        assert not mismatched  # stale ids are skipped, never an error

    @rule(data=st.data(), profile=st.sampled_from(GOOD_PROFILES + BAD_PROFILES))
    def change_profile(self, data: st.DataObject, profile: Any) -> None:
        handle = self.pick(data, self.memories)
        before = self.snapshot()
        try:
            self.server.set_memory_profile(handle, dict(profile))
        except NOT_LIVE:
            assert handle not in self.memories
            self.rejected(before)
        except (ValueError, TypeError):  # a bad profile, or one too small for what the stream holds
            self.rejected(before)
        else:
            kept = [(m["entity_id"], m["memory_type"]) for m in self.server.memories(handle)]
            assert sorted(kept) == sorted((m["entity_id"], m["memory_type"]) for m in before[handle])

    @rule(data=st.data())
    def save(self, data: st.DataObject) -> None:
        handle = self.pick(data, self.memories)
        try:
            self.saves.append(self.server.save_memory(handle))
        except NOT_LIVE:
            assert handle not in self.memories

    @rule(data=st.data(), damage=st.sampled_from(["none", "truncate", "flip", "garbage"]))
    def load(self, data: st.DataObject, damage: str) -> None:
        handle = self.pick(data, self.memories)
        saved = data.draw(st.sampled_from(self.saves or [b""]))
        if damage == "truncate":
            saved = saved[: len(saved) // 2]
        elif damage == "flip" and saved:
            saved = saved[:8] + bytes([saved[8] ^ 0xFF]) + saved[9:] if len(saved) > 9 else b"\xff"
        elif damage == "garbage":
            saved = b"not a save"
        before = self.snapshot()
        try:
            self.server.load_memory(handle, saved)
        except NOT_LIVE:
            assert handle not in self.memories
            self.rejected(before)
        except ValueError as error:  # SaveFormatError, or a save that does not fit this profile
            assert damage == "none" or isinstance(error, SaveFormatError), error
            self.rejected(before)

    # --- decisions ---------------------------------------------------------------------------
    @rule(data=st.data(), complete=st.booleans())
    def request(self, data: st.DataObject, complete: bool) -> None:
        """Any time, also while one is waiting (it ends as superseded) and without the inputs the
        fallback selector reads (it still ends in its one signal)."""
        handle = self.pick(data, self.decisions)
        context = {"enemy": 7, "calm": 0.5, "threat": 0.2} if complete else {"enemy": 7}
        try:
            self.server.request_decision(handle, context)
        except NOT_LIVE:
            assert handle not in self.decisions
            return
        self.owed[handle] = self.owed.get(handle, 0) + 1
        self.waiting.add(handle)

    @rule(data=st.data())
    def abort(self, data: st.DataObject) -> None:
        handle = self.pick(data, self.decisions)
        try:
            self.server.abort(handle)
        except NOT_LIVE:
            assert handle not in self.decisions
            return
        if handle in self.waiting:  # no signal for the aborted request, ever (a superseded one keeps its)
            self.waiting.discard(handle)
            self.owed[handle] -= 1

    # --- time --------------------------------------------------------------------------------
    @rule(seconds=STEPS)
    def advance(self, seconds: float) -> None:
        self.time[0] += seconds
        events = self.server.advance(seconds)
        live = self.memories | self.selectors | set(self.decisions)
        terminal: dict[int, int] = {}
        for event in events:
            assert event.handle in live, f"{event} for a freed handle"
            if event.signal in (DECISION_MADE, DECISION_FALLBACK):
                terminal[event.handle] = terminal.get(event.handle, 0) + 1
        # No endpoint: every request ends (tier 3) in the update after it, exactly once.
        assert terminal == {handle: owed for handle, owed in self.owed.items() if owed}, (terminal, self.owed)
        self.owed.clear()
        self.waiting.clear()
        self.freed_this_frame = 0

    # --- invariants --------------------------------------------------------------------------
    @invariant()
    def registries_follow_the_live_objects(self) -> None:
        if not hasattr(self, "server"):
            return
        server = self.server
        assert set(server.memory.entries.entries) == self.memories
        assert sum(slot.pool.npc_count for slot in server.memory.pools.values()) == len(self.memories)
        assert set(server.selectors.entries.entries) == self.selectors
        groups = list(server.selectors.groups.values())
        assert sum(group.live for group in groups) == len(self.selectors)
        assert all(group.live > 0 and len(group.rows) <= max(MIN_ROWS, 4 * group.live) for group in groups)
        assert set(server.selectors.by_index) == {group.index for group in groups}
        assert set(server.decisions.entries.entries) == set(self.decisions)
        assert set(server.decisions.hubs) == {settings.hub_key() for settings in self.decisions.values()}
        live = len(self.memories) + len(self.selectors) + len(self.decisions)
        self.peak = max(self.peak, live + self.freed_this_frame)
        assert server.handles.next_slot - 1 == self.peak  # slot 0 is never issued


SETTINGS = settings(
    max_examples=40,
    stateful_step_count=30,
    deadline=None,
    derandomize=True,  # the same interleavings on every run: a failure here is never luck
    suppress_health_check=[HealthCheck.too_slow],
)
ServerMachine.TestCase.settings = SETTINGS
test_server_under_random_interleavings = ServerMachine.TestCase
