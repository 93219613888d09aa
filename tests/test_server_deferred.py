"""Issue 14: the per-node memory calls' deferred path (writes queued and folded into the frame's
batch, awareness read from a per-frame table, `npc_mind.server.memories`) gives exactly what the
same calls at once give.

Two `MindServer`s, one deferred (`per_frame=True`, the default) and one immediate, are driven by
hypothesis through the same random sequence of add / record / awareness / query_strongest /
memories / save / load (saves of the server's own and crafted ones: pinned, linked, long-term) /
profile change / signals off / free / the batched calls / advance or step. Every result (return
value, or exception type and message) is compared by `repr` (the bits of every float), and so
are the signals and the batched event log of every step and, at the end, every stream's save.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from npc_mind.memory import MemoryParams, MemoryPool
from npc_mind.server import ClockMode
from npc_mind.server.core import MindServer
from npc_mind.server.frame_cache import SCALAR_FLUSH, FrameAnswers, LevelRows
from tests.test_server_properties import BAD_PROFILES, ENTITIES, GOOD_PROFILES, SALIENCES, STEPS, TYPES

# odd arguments the queue must refuse (each then takes the immediate path, for its error or result)
ODD_ENTITIES = st.sampled_from([1.0, True, np.int64(2), -(2**63), 2**63, "3"])
ODD_SALIENCES = st.sampled_from([1, np.float64(0.5), math.inf, "0.5"])
ODD_TYPES = st.sampled_from([3.0, np.int8(2), True])
TRIVIA, HOSTILE = 0, 3


def crafted_saves() -> list[bytes]:
    """Streams the server cannot make by itself: a row full of pinned memories (a new memory is
    refused), linked memories (a write reaches another entity) and long-term memories."""
    pool = MemoryPool(4, MemoryParams())
    pinned, linked, longterm = (int(npc) for npc in pool.add_npcs(3))
    for entity in range(4):
        pool.record(pinned, entity, 3, 0.9, 0.0)
        pool.pin(pinned, entity, 3)
    pool.record(linked, 0, 3, 0.9, 0.0)
    pool.record(linked, 1, 2, 0.9, 0.0)
    pool.link(linked, 0, 1)
    for entity in (2, 3):
        for now in (0.0, 10.0, 30.0, 60.0):
            pool.record(longterm, entity, 4, 1.0, now)
    pool.advance_game_day(1.0, 60.0)
    assert pool.longterm_count(longterm)
    # the linked memories 40 s old: 1's R is 0.79, just under "pursue" (0.8)
    return [pool.export_npc(pinned, 60.0), pool.export_npc(linked, 40.0), pool.export_npc(longterm, 60.0)]


CRAFTED = crafted_saves()


def outcome(call: Any, *args: Any) -> str:
    """What a call gives, as text that holds every bit: its result's repr, or its error's."""
    try:
        result = call(*args)
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    if isinstance(result, np.ndarray):
        return f"array {result.dtype} {result.tolist()!r}"
    if isinstance(result, tuple):
        return repr([part.tolist() if isinstance(part, np.ndarray) else part for part in result])
    return repr(result)


def memory_metrics(server: MindServer) -> str:
    return repr({key: value for key, value in server.metrics().items() if key.startswith("memory/")})


class DeferredMachine(RuleBasedStateMachine):
    @initialize(manual=st.booleans())
    def start(self, manual: bool) -> None:
        mode = ClockMode.MANUAL if manual else ClockMode.PROCESS
        self.deferred = MindServer(mode, per_frame=True)
        self.immediate = MindServer(mode, per_frame=False)
        self.manual = manual
        self.handles: list[int] = []
        self.live: set[int] = set()
        self.saves: list[bytes] = list(CRAFTED)
        for profile in ({}, {"capacity": 4}):  # a small row: writes evict
            self.add_memory(profile)

    def teardown(self) -> None:
        if hasattr(self, "deferred"):
            for handle in self.handles:  # the final state, bit for bit (freed ones: the same error)
                self.same("save_memory", handle)
                self.same("memories", handle)
            got, want = (memory_metrics(server) for server in (self.deferred, self.immediate))
            assert got == want
            self.deferred.close()
            self.immediate.close()

    def same(self, method: str, *args: Any) -> str:
        """Call `method` on both servers; their outcomes must be identical."""
        got = outcome(getattr(self.deferred, method), *args)
        want = outcome(getattr(self.immediate, method), *args)
        assert got == want, f"{method}{args}: deferred {got} != immediate {want}"
        return got

    def pick(self, data: st.DataObject) -> Any:
        """A live handle mostly (the newest ones most often); sometimes a freed one, one never
        handed out, or a float."""
        roll = data.draw(st.integers(0, 15))
        if roll == 7 or not self.live:
            return data.draw(st.sampled_from([*self.handles[:2], 999_999, 1.0]))
        live = sorted(self.live)
        return live[-1 - min(roll % 4, len(live) - 1)]

    def entity(self, data: st.DataObject) -> Any:
        return data.draw(ODD_ENTITIES) if data.draw(st.integers(0, 15)) == 7 else data.draw(ENTITIES)

    # --- streams -----------------------------------------------------------------------------
    @rule(profile=st.sampled_from(GOOD_PROFILES + BAD_PROFILES))
    def add_memory(self, profile: Any) -> None:
        result = self.same("add_memory", dict(profile))
        if result.isdigit():
            self.handles.append(int(result))
            self.live.add(int(result))

    @rule(data=st.data())
    def free(self, data: st.DataObject) -> None:
        handle = self.pick(data)
        if self.same("remove", handle) == "None":
            self.live.discard(handle)

    @rule(data=st.data(), profile=st.sampled_from(GOOD_PROFILES + BAD_PROFILES))
    def change_profile(self, data: st.DataObject, profile: Any) -> None:
        self.same("set_memory_profile", self.pick(data), dict(profile))

    @rule(data=st.data(), enabled=st.booleans())
    def signals(self, data: st.DataObject, enabled: bool) -> None:
        self.same("set_memory_signals", self.pick(data), enabled)

    # --- the per-node calls (most of the sequence) ---------------------------------------------
    @rule(data=st.data(), entity=ENTITIES, memory_type=TYPES, salience=SALIENCES)
    def record(self, data: st.DataObject, entity: int, memory_type: int, salience: float) -> None:
        self.same("record", self.pick(data), entity, memory_type, salience)

    @rule(data=st.data(), entity=ENTITIES, count=st.integers(1, 6))
    def record_many(self, data: st.DataObject, entity: int, count: int) -> None:
        """One stream perceiving several people in a frame (fills a small row: evictions)."""
        handle = self.pick(data)
        for offset in range(count):
            self.same("record", handle, (entity + offset) % 8, data.draw(st.integers(0, 4)), 0.6)

    @rule(data=st.data(), count=st.integers(1, 8))
    def record_rows(self, data: st.DataObject, count: int) -> None:
        """A frame's sense records in one `record_many` (several streams; now and then an odd row,
        whose error stops the batch there as it stops a loop of `record`s)."""
        rows = []
        for _ in range(count):
            odd = data.draw(st.integers(0, 15)) == 7
            memory_type = data.draw(ODD_TYPES if odd else TYPES)
            rows.append((self.pick(data), self.entity(data), memory_type, data.draw(SALIENCES)))
        self.same("record_many", rows)

    @rule(
        data=st.data(), entity=ODD_ENTITIES | ENTITIES, memory_type=ODD_TYPES | TYPES, salience=ODD_SALIENCES
    )
    def record_odd(self, data: st.DataObject, entity: Any, memory_type: Any, salience: Any) -> None:
        self.same("record", self.pick(data), entity, memory_type, salience)

    @rule(data=st.data())
    def awareness(self, data: st.DataObject) -> None:
        self.same("awareness", self.pick(data), self.entity(data))

    @rule(data=st.data(), entity=ENTITIES)
    def awareness_again(self, data: st.DataObject, entity: int) -> None:
        """The same pairs read frame after frame: answered from the per-frame table."""
        for handle in sorted(self.live)[-3:]:
            self.same("awareness", handle, entity)

    @rule(data=st.data())
    def query_strongest(self, data: st.DataObject) -> None:
        self.same("query_strongest", self.pick(data), self.entity(data))

    @rule(data=st.data(), entity=ENTITIES)
    def recall_again(self, data: st.DataObject, entity: int) -> None:
        """The same pairs recalled frame after frame: answered from the per-frame recall table."""
        for handle in sorted(self.live)[-3:]:
            self.same("query_strongest", handle, entity)

    @rule(data=st.data(), suspect=ENTITIES, frames=st.integers(2, 3), seconds=STEPS)
    def recalling_frames(self, data: st.DataObject, suspect: int, frames: int, seconds: float) -> None:
        """Frames in which each stream recalls the same suspect (from the table after the first)
        in every position: before or after its writes (of the suspect or not), before or after its
        awareness read, twice, or followed by a write of the suspect."""
        for _ in range(frames):
            for handle in sorted(self.live)[-4:]:
                order = data.draw(st.permutations(["recall", "record", "aware", "again", "write_suspect"]))
                seen = data.draw(ENTITIES)
                for call in order[: data.draw(st.integers(1, 5))]:
                    if call in {"recall", "again"}:
                        self.same("query_strongest", handle, suspect)
                    elif call == "record":
                        self.same("record", handle, seen, HOSTILE, 0.5)
                    elif call == "aware":
                        self.same("awareness", handle, suspect)
                    else:
                        self.same("record", handle, suspect, TRIVIA, 0.5)
            self.tick(seconds, False)

    @rule(data=st.data(), seconds=STEPS)
    def game_frame(self, data: st.DataObject, seconds: float) -> None:
        """What a game does each frame: every stream records who it sees, reads its awareness of
        someone (who it wrote, or not), sometimes recalls; then the frame steps."""
        plan = data.draw(
            st.lists(st.tuples(ENTITIES, ENTITIES, st.integers(0, 4), st.booleans()), max_size=4)
        )
        for handle, (seen, suspect, memory_type, recall) in zip(sorted(self.live), plan, strict=False):
            self.same("record", handle, seen, memory_type, 0.5)
            self.same("awareness", handle, suspect)
            if recall:
                self.same("query_strongest", handle, suspect)
        self.tick(seconds, False)

    # --- reads and writes of whole streams -----------------------------------------------------
    @rule(data=st.data())
    def memories(self, data: st.DataObject) -> None:
        self.same("memories", self.pick(data))

    @rule(data=st.data())
    def save(self, data: st.DataObject) -> None:
        saved = self.same("save_memory", self.pick(data))
        if saved.startswith("b"):
            self.saves.append(eval(saved))

    @rule(data=st.data())
    def load(self, data: st.DataObject) -> None:
        self.same("load_memory", self.pick(data), data.draw(st.sampled_from(self.saves)))

    # --- the batched calls ---------------------------------------------------------------------
    @rule(data=st.data(), rows=st.integers(0, 4))
    def batches(self, data: st.DataObject, rows: int) -> None:
        handles = [self.pick(data) for _ in range(rows)]
        handles = [handle for handle in handles if type(handle) is int]
        entities = data.draw(st.lists(ENTITIES, min_size=len(handles), max_size=len(handles)))
        call = data.draw(st.sampled_from(["record_batch", "awareness_batch", "query_strongest_batch"]))
        if call == "record_batch":
            self.same(call, handles, entities, [2] * len(handles), [0.7] * len(handles))
        else:
            self.same(call, handles, entities)

    # --- time ----------------------------------------------------------------------------------
    @rule(seconds=STEPS, paused=st.booleans())
    def tick(self, seconds: float, paused: bool) -> None:
        """A frame: the signals and the batched event log must be the same, in the same order."""
        if self.manual:
            self.same("advance", seconds)
        else:
            self.same("step", seconds, 1.0, paused)
        self.same("drain_memory_events")


# --- one sequence per rule of the deferred path: each gives another result if that rule is broken
Script = list[tuple[str, tuple[Any, ...]]]
# a trivia memory (S = 5 s at salience 0.5) read 4 s later: R = e^-0.8 = 0.45, "search"
AGED = [("add_memory", ({},)), ("record", (1, 7, TRIVIA, 0.5)), ("advance", (4.0,)), ("awareness", (1, 7))]


def recall_after_refresh(profile: dict[str, int]) -> Script:
    """A memory refreshed (0.5 s after it formed), another entity written, then the recall."""
    return [
        ("add_memory", (profile,)),
        ("record", (1, 7, HOSTILE, 0.9)),
        ("advance", (0.5,)),
        ("record", (1, 7, HOSTILE, 0.9)),
        ("record", (1, 8, HOSTILE, 0.9)),
        ("query_strongest", (1, 7)),
        ("advance", (0.0,)),
        ("memories", (1,)),
    ]


# a recall in the frame after one of the same pair: answered from the recall table, its wake queued
TABLE_RECALL = [*AGED, ("query_strongest", (1, 7)), ("advance", (0.5,))]


SCRIPTS: dict[str, Script] = {
    # after a queued wake the memory's R is 1 ("pursue"), and a second recall sees k + 1
    "a recall from the table": [
        *TABLE_RECALL,
        ("query_strongest", (1, 7)),
        ("awareness", (1, 7)),
        ("query_strongest", (1, 7)),
        ("memories", (1,)),
    ],
    # a write of the entity after a queued wake: a refresh (the wake went first), not a rehearsal
    "a write after a queued wake": [
        *TABLE_RECALL,
        ("advance", (3.0,)),
        ("query_strongest", (1, 7)),
        ("advance", (3.0,)),
        ("query_strongest", (1, 7)),
        ("record", (1, 7, TRIVIA, 0.5)),
        ("advance", (0.0,)),
        ("drain_memory_events", ()),
        ("memories", (1,)),
    ],
    # a queued write of the entity within the refractory period (0.5 s after the wake) only
    # refreshes the memory: the table's answer with R = 1
    "a recall after a queued refresh of the entity": [
        *TABLE_RECALL,
        ("record", (1, 7, TRIVIA, 0.5)),
        ("query_strongest", (1, 7)),
        ("memories", (1,)),
    ],
    # a queued write of the entity 3.5 s after the wake rehearses it (S and k grow): the answer
    # is not the table's (the pair is in it: read in the frame before)
    "a recall after a queued rehearsal of the entity": [
        *TABLE_RECALL,
        ("awareness", (1, 7)),
        ("advance", (3.0,)),
        ("record", (1, 7, TRIVIA, 0.5)),
        ("query_strongest", (1, 7)),
        ("memories", (1,)),
    ],
    # a refractory period shorter than the frame: the queued write of the entity recalled in the
    # frame before rehearses it (S and k grow), so the recall row's answer does not hold
    "a recall after a queued rehearsal within the frame after the recall": [
        ("add_memory", ({"capacity": 4, "rehearsal_refractory_s": 0.25},)),
        ("record", (1, 7, HOSTILE, 0.8)),
        ("query_strongest", (1, 7)),
        ("advance", (0.5,)),
        ("record", (1, 7, HOSTILE, 0.8)),
        ("query_strongest", (1, 7)),
        ("memories", (1,)),
    ],
    # an advance the clock refuses (a negative time) after the fold applied the queued writes: the
    # fold itself resets the frame's state (no update follows to do it)
    "a refused advance after queued writes": [
        *TABLE_RECALL,
        ("record", (1, 8, TRIVIA, 0.5)),
        ("awareness", (1, 8)),
        ("advance", (-1.0,)),
        ("awareness", (1, 8)),
        ("query_strongest", (1, 7)),
        ("record", (1, 9, TRIVIA, 0.5)),
        ("awareness", (1, 7)),
    ],
    # capacity 1: the queued write of another entity evicts the one recalled: not from the table
    "a recall after a queued eviction": [
        ("add_memory", ({"capacity": 1},)),
        ("record", (1, 7, TRIVIA, 0.5)),
        ("query_strongest", (1, 7)),
        ("advance", (0.5,)),
        ("record", (1, 8, TRIVIA, 0.5)),
        ("query_strongest", (1, 7)),
    ],
    # a load replaces the memories; a write of another entity queued after it must not hide that
    "a recall after a load and a queued write": [
        ("add_memory", ({},)),
        ("save_memory", (1,)),
        ("record", (1, 7, TRIVIA, 0.5)),
        ("query_strongest", (1, 7)),
        ("advance", (0.5,)),
        ("load_saved", (1,)),
        ("record", (1, 8, TRIVIA, 0.5)),
        ("query_strongest", (1, 7)),
    ],
    # a freed stream's handle answers nothing from the table
    "a recall of a freed stream": [*TABLE_RECALL, ("remove", (1,)), ("query_strongest", (1, 7))],
    # enough queued wakes that the fold applies them in one query_strongest_batch
    "wakes folded in a batch": [
        *(("add_memory", ({},)) for _ in range(SCALAR_FLUSH)),
        *(("record", (handle, 7, TRIVIA, 0.5)) for handle in range(1, SCALAR_FLUSH + 1)),
        *(("query_strongest", (handle, 7)) for handle in range(1, SCALAR_FLUSH + 1)),
        ("advance", (1.0,)),
        *(("query_strongest", (handle, 7)) for handle in range(1, SCALAR_FLUSH + 1)),
        ("advance", (1.0,)),
        *(("memories", (handle,)) for handle in range(1, SCALAR_FLUSH + 1)),
    ],
    # the wake makes R 1 ("pursue"): the table's "search" must not answer after it
    "a recall's wake": [*AGED, ("advance", (0.0,)), ("query_strongest", (1, 7)), ("awareness", (1, 7))],
    # the same with a queued write of another entity (the table may answer while writes are queued)
    "a recall's wake beside a queued write": [
        *AGED,
        ("advance", (0.0,)),
        ("awareness", (1, 7)),
        ("advance", (0.0,)),
        ("record", (1, 8, HOSTILE, 0.5)),
        ("query_strongest", (1, 7)),
        ("awareness", (1, 7)),
    ],
    # the queue applied (a save), then a write of another entity queued: the first one still counts
    "a write after the queue was applied": [
        *AGED,
        ("advance", (0.0,)),
        ("record", (1, 7, TRIVIA, 0.5)),
        ("save_memory", (1,)),
        ("record", (1, 8, TRIVIA, 0.5)),
        ("awareness", (1, 7)),
    ],
    # an entity that is not an int but equals the one written (7.0, np.int64(7)): its error, or
    # its answer with the writes applied
    "odd entities after a queued write": [
        ("add_memory", ({},)),
        ("record", (1, 7, TRIVIA, 0.5)),
        ("advance", (0.5,)),
        ("record", (1, 7, TRIVIA, 0.5)),
        ("awareness", (1, 7.0)),
        ("query_strongest", (1, 7.0)),
        ("record", (1, 7, TRIVIA, 0.5)),
        ("awareness", (1, np.int64(7))),
        ("query_strongest", (1, np.int64(7))),
        ("memories", (1,)),
    ],
    "a freed stream": [*AGED, ("advance", (0.0,)), ("remove", (1,)), ("awareness", (1, 7))],
    "a load": [
        ("add_memory", ({},)),
        ("save_memory", (1,)),
        ("record", (1, 7, TRIVIA, 0.5)),
        ("advance", (4.0,)),
        ("awareness", (1, 7)),
        ("advance", (0.0,)),
        ("load_saved", (1,)),
        ("awareness", (1, 7)),
    ],
    "a profile change": [
        *AGED,
        ("advance", (0.0,)),
        ("set_memory_profile", (1, {"awareness_search": 0.5})),
        ("awareness", (1, 7)),
    ],
    "a batched write": [
        *AGED,
        ("advance", (0.0,)),
        ("record_batch", ([1], [7], [0], [0.5])),
        ("awareness", (1, 7)),
    ],
    "a batched recall": [
        *AGED,
        ("advance", (0.0,)),
        ("query_strongest_batch", ([1], [7])),
        ("awareness", (1, 7)),
    ],
    # capacity 1: the second write evicts the first, so the entity written is no longer known
    "an eviction by a queued write": [
        ("add_memory", ({"capacity": 1},)),
        ("record", (1, 7, HOSTILE, 0.5)),
        ("record", (1, 8, HOSTILE, 0.5)),
        ("awareness", (1, 7)),
        ("awareness", (1, 8)),
    ],
    # a recall of a memory refreshed this frame (its write applied ahead of the queue) ...
    "a recall after a refresh": recall_after_refresh({}),
    # ... but not when a queued write evicts it (capacity 1), nor when the write is a rehearsal
    "a recall after a refresh and an eviction": recall_after_refresh({"capacity": 1}),
    "a recall after a rehearsal": [
        ("add_memory", ({},)),
        ("record", (1, 7, HOSTILE, 0.9)),
        ("advance", (30.0,)),
        ("record", (1, 7, HOSTILE, 0.9)),
        ("query_strongest", (1, 7)),
        ("advance", (0.0,)),
        ("drain_memory_events", ()),
    ],
    # a row full of pinned memories refuses a new one at the call, not at the step
    "a row of pinned memories": [
        ("add_memory", ({"capacity": 4},)),
        ("load_memory", (1, CRAFTED[0])),
        ("record", (1, 9, HOSTILE, 0.5)),
        ("advance", (0.0,)),
    ],
    # a rehearsal of 0 consolidates the linked memory of 1 (S grows): 1's R crosses "pursue" at once
    "a linked memory": [
        ("add_memory", ({"capacity": 4},)),
        ("load_memory", (1, CRAFTED[1])),
        ("awareness", (1, 1)),
        ("record", (1, 0, HOSTILE, 0.9)),
        ("awareness", (1, 1)),
    ],
    # one stream forms a memory while another rehearses one, in one frame: the signals' order
    "the order of the frame's events": [
        ("add_memory", ({},)),
        ("add_memory", ({},)),
        ("record", (2, 5, HOSTILE, 0.9)),
        ("advance", (30.0,)),
        ("record", (1, 6, HOSTILE, 0.9)),
        ("record", (2, 5, HOSTILE, 0.9)),
        ("advance", (0.0,)),
        ("drain_memory_events", ()),
    ],
    # the same with enough writes that the frame folds them in one record_batch
    # (one write per stream: one round for the batch, vectorised, every kind logged together)
    "the order of a batch fold's events": [
        *(("add_memory", ({},)) for _ in range(2 * SCALAR_FLUSH)),
        *(("record", (handle, 5, HOSTILE, 0.9)) for handle in range(2, 2 * SCALAR_FLUSH + 1, 2)),
        ("advance", (30.0,)),
        *(("record", (handle, 5, HOSTILE, 0.9)) for handle in range(1, 2 * SCALAR_FLUSH + 1)),
        ("advance", (0.0,)),
        ("drain_memory_events", ()),
    ],
    # a batch fold whose one-pass refresh takes the NPCs that only refresh: stream 1 (full) forms a
    # memory, which evicts its weakest, then refreshes that one (formed again): not a refresh
    "a refresh beside a new memory in a batch fold": [
        *(("add_memory", ({"capacity": 4},)) for _ in range(SCALAR_FLUSH // 2)),
        *(("record", (1, entity, HOSTILE, 1.0)) for entity in (10, 11, 12)),
        ("record", (1, 7, TRIVIA, 0.0)),
        *(("record", (handle, 7, TRIVIA, 0.5)) for handle in range(2, SCALAR_FLUSH // 2 + 1)),
        ("advance", (0.5,)),
        ("record", (1, 20, HOSTILE, 1.0)),
        ("record", (1, 7, TRIVIA, 0.0)),
        *(("record", (handle, 7, TRIVIA, 0.5)) for handle in range(2, SCALAR_FLUSH // 2 + 1) for _ in "ab"),
        ("advance", (0.0,)),
        ("drain_memory_events", ()),
        ("memories", (1,)),
    ],
    # the writes of a frame are made at its `now`, not at the next frame's
    "the time of a queued write": [
        ("add_memory", ({},)),
        ("record", (1, 7, TRIVIA, 0.5)),
        ("advance", (4.0,)),
        ("memories", (1,)),
    ],
}


def play(server: MindServer, script: Script) -> list[str]:
    saved: list[bytes] = []
    out = []
    for step, arguments in script:
        if step == "save_memory":
            saved.append(server.save_memory(*arguments))
            continue
        method, args = ("load_memory", (*arguments, saved[-1])) if step == "load_saved" else (step, arguments)
        out.append(f"{method}{args} -> {outcome(getattr(server, method), *args)}")
    server.close()
    return out


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_rule_of_the_deferred_path(name: str) -> None:
    script = SCRIPTS[name]
    deferred, immediate = (play(MindServer(ClockMode.MANUAL, per_frame=on), script) for on in (True, False))
    assert deferred == immediate


DeferredMachine.TestCase.settings = settings(
    max_examples=100,
    stateful_step_count=60,
    deadline=None,
    derandomize=True,  # the same sequences on every run: a failure here is never luck
    suppress_health_check=[HealthCheck.too_slow],
)
test_deferred_per_node_calls_equal_the_immediate_ones = DeferredMachine.TestCase


def test_the_table_holds_each_pair_read_once_from_its_first_read_and_of_live_streams_only() -> None:
    """A frame with no recall: the table's columns hold each pair read (twice read: once, in the
    order of first reads; a freed stream's: none) at the step's levels, the dict made at a read."""
    server = MindServer(ClockMode.MANUAL)
    first, second, freed = (server.add_memory({}) for _ in range(3))
    for handle, entity in ((first, 7), (second, 8), (first, 7), (second, 5), (freed, 9)):
        server.record(handle, entity, HOSTILE, 0.5)
    server.advance(1.0)
    for handle, entity in ((second, 8), (first, 7), (second, 8), (freed, 9), (first, 6)):
        server.awareness(handle, entity)
    server.remove(freed)
    server.advance(30.0)
    cache = server.memory.cache
    rows = cache.table_rows
    assert isinstance(rows, LevelRows)
    assert rows.streams.tolist() == [second, first, first] and rows.entities.tolist() == [8, 7, 6]
    expected = [
        server.memory.awareness(handle, entity, server.now())
        for handle, entity in ((second, 8), (first, 7), (first, 6))
    ]
    assert rows.levels.tolist() == expected and expected[0] > 0 and expected[2] == 0
    assert rows.get((first, 7)) == (expected[1], False, 0)
    assert cache.table_rows == {
        (second, 8): (expected[0], False, 0),
        (first, 7): (expected[1], False, 0),
        (first, 6): (0, False, 0),
    }


def test_a_pair_read_after_its_write_joins_the_next_frames_table() -> None:
    """A read answered as written (R = 1) is in the next table: a frame that reads the pair with no
    write (the NPC lost sight) is answered from the table, as it is in the binding."""
    server = MindServer(ClockMode.MANUAL)
    handle = server.add_memory({})
    server.record(handle, 7, HOSTILE, 0.5)
    server.advance(1.0)
    server.record(handle, 7, HOSTILE, 0.5)  # queued (the stream writes plainly)
    assert server.memory.cache.queue
    level = server.awareness(handle, 7)
    server.advance(1.0)
    row = server.memory.cache.table_rows.get((handle, 7))
    assert row is not None and row[0] == server.memory.awareness(handle, 7, server.now()) == level


class _ReplayingReader(FrameAnswers):
    """A reader that answers reads without Python (as the binding does): each frame it says it
    answered `pairs`, and keeps what the cache published."""

    wanted = True

    def __init__(self, pairs: list[tuple[int, int]]) -> None:
        self.pairs = pairs
        self.published: dict[str, list[int]] = {}

    def asked_pairs(self) -> np.ndarray:
        return np.array(self.pairs, dtype=np.int64).reshape(-1, 2)

    def publish(  # noqa: PLR0917 - the table's columns
        self,
        pair_streams: np.ndarray,
        pair_entities: np.ndarray,
        levels: np.ndarray,
        streams: np.ndarray,
        rooms: np.ndarray,
        written: np.ndarray,
    ) -> None:
        columns = {"pair_streams": pair_streams, "pair_entities": pair_entities, "levels": levels}
        columns["streams"] = streams
        self.published = {name: np.asarray(column).tolist() for name, column in columns.items()}


def test_the_reader_s_same_pairs_frame_after_frame_get_the_levels_of_now_and_of_the_live_streams() -> None:
    """The table of the reader's pairs, reused from the frame before while they repeat, is still
    each frame's: levels at the new now, and a stream freed or added since taken into account."""
    server = MindServer(ClockMode.MANUAL)
    first, second = server.add_memory({}), server.add_memory({})
    for handle in (first, second):
        server.record(handle, 7, TRIVIA, 0.5)
    reader = _ReplayingReader([(first, 7), (second, 7), (first, 7)])
    server.memory.cache.answers = reader
    seen = []
    for seconds, change in ((0.5, None), (4.0, None), (0.5, "free"), (0.5, "add"), (0.5, None)):
        if change == "free":
            server.remove(second)
        elif change == "add":
            third = server.add_memory({})
            server.record(third, 7, HOSTILE, 0.5)
            reader.pairs = [*reader.pairs, (third, 7)]
        server.advance(seconds)
        published = reader.published
        pairs = list(zip(published["pair_streams"], published["pair_entities"], strict=True))
        live = [pair for pair in dict.fromkeys(reader.pairs) if pair[0] in server.memory.entries]
        assert pairs == live
        assert published["levels"] == [server.memory.awareness(h, e, server.now()) for h, e in live]
        assert sorted(published["streams"]) == sorted(server.memory.cache.plain)
        seen.append(published["levels"])
    assert seen[0] != seen[1]  # the time moved the levels: the same pairs are computed again
