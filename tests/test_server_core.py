"""The engine-agnostic server behind `NpcMindServer`: clock, pools per profile, selector groups,
decisions, and the signals it owes, driven the way the Godot singleton drives it (one step a frame)."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

from npc_mind.memory import MemoryType
from npc_mind.server import ClockMode, ServerClock, ServerEvent, WrongThreadError
from npc_mind.server.core import MindServer
from npc_mind.server.decisions import DecisionSettings
from npc_mind.server.registry import UnknownHandleError

# A game's frame between two updates: a loop that spins on update() starves the transport thread
# (its first request imports the HTTP stack lazily, a few thousand GIL hand-overs)
FRAME = 0.002
THIEF = 2**40 + 7  # Godot instance ids exceed 2^32
STONE_THROWER = 99
GUARD_SELECTOR = {
    "behaviors": [
        {"name": "patrol", "considerations": [{"input_key": "calm", "curve_type": "linear"}]},
        {"name": "pursue", "considerations": [{"input_key": "threat", "curve_type": "linear"}]},
    ]
}


def signals(events: list[ServerEvent], handle: int) -> list[tuple[str, tuple]]:
    return [(event.signal, event.args) for event in events if event.handle == handle]


# --- the clock ---------------------------------------------------------------------------------
def test_process_clock_ignores_time_scale_and_stops_while_paused() -> None:
    clock = ServerClock(ClockMode.PROCESS)
    clock.step(0.5, time_scale=8.0)  # fast-forwarding a night must not wipe memories
    clock.step(0.5, paused=True)
    assert clock.now() == 0.5


def test_scaled_clock_follows_time_scale() -> None:
    clock = ServerClock(ClockMode.SCALED_PROCESS)
    clock.step(0.5, time_scale=4.0)
    assert clock.now() == 2.0


def test_manual_clock_moves_only_by_advance() -> None:
    clock = ServerClock(ClockMode.MANUAL)
    clock.step(1.0)
    assert clock.now() == 0.0
    clock.advance(90.0)
    assert clock.now() == 90.0
    with pytest.raises(ValueError, match="finite"):
        clock.advance(-1.0)
    with pytest.raises(RuntimeError, match="manual"):
        ServerClock(ClockMode.PROCESS).advance(1.0)
    with pytest.raises(ValueError):
        ServerClock("sundial")


# --- memory through the server -----------------------------------------------------------------
def test_theft_awareness_falls_on_the_exponential_schedule_and_is_forgotten_once() -> None:
    server = MindServer(ClockMode.MANUAL)
    guard = server.add_memory()
    server.record(guard, THIEF, MemoryType.HOSTILE, 0.9)
    assert signals(server.update(), guard) == [("memory_formed", (THIEF, int(MemoryType.HOSTILE)))]
    stability = 600.0 * (0.5 + 0.9)
    pursue_until = stability * math.log(1 / 0.8)  # R = e^(-t/S) falls to 0.8
    search_until = stability * math.log(1 / 0.3)
    forget_at = stability * math.log(1 / 0.05)

    server.advance(90.0)  # hidden behind a tree for 90 s: still vivid
    assert server.awareness(guard, THIEF) == 3
    server.advance(pursue_until - 90.0 - 1.0)
    assert server.awareness(guard, THIEF) == 3
    server.advance(2.0)
    assert server.awareness(guard, THIEF) == 2
    server.advance(search_until - server.now() + 1.0)
    assert server.awareness(guard, THIEF) == 1
    assert signals(server.advance(forget_at - server.now() - 1.0), guard) == []
    forgotten = []
    for _ in range(5):  # asking every frame neither stops forgetting nor repeats the signal
        server.awareness(guard, THIEF)
        forgotten += signals(server.advance(1.0), guard)
    assert forgotten == [("memory_forgotten", (THIEF, int(MemoryType.HOSTILE)))]
    assert server.awareness(guard, THIEF) == 0
    assert server.query_strongest(guard, THIEF) == {}


def test_a_stone_is_forgotten_within_ten_seconds() -> None:
    server = MindServer(ClockMode.MANUAL)
    guard = server.add_memory()
    server.record(guard, STONE_THROWER, MemoryType.TRIVIA, 0.1)
    server.update()
    forgotten_at = None
    while server.now() < 12.0 and forgotten_at is None:
        if signals(server.advance(0.1), guard):
            forgotten_at = server.now()
    assert forgotten_at is not None and forgotten_at <= 10.0


def test_query_wakes_and_reports_r_before_the_wake_while_awareness_and_memories_only_look() -> None:
    server = MindServer(ClockMode.MANUAL)
    guard = server.add_memory()
    server.record(guard, THIEF, MemoryType.HOSTILE, 0.9)
    server.advance(90.0)
    before = server.memories(guard)
    assert server.memories(guard) == before  # looking twice changes nothing
    recalled = server.query_strongest(guard, THIEF)
    assert set(recalled) == {
        "entity_id",
        "memory_type",
        "retrievability",
        "stability",
        "salience",
        "recall_count",
    }
    assert recalled["retrievability"] == pytest.approx(math.exp(-90.0 / 840.0))
    assert recalled["recall_count"] == 2  # the recall itself counts
    assert server.memories(guard)[0]["retrievability"] == pytest.approx(1.0)  # woken


def test_profiles_share_pools_and_batches_match_single_calls() -> None:
    server = MindServer(ClockMode.MANUAL)
    default_a, default_b = server.add_memory(), server.add_memory()
    forgetful = server.add_memory({"capacity": 8, "base_stability": [1, 3, 10, 60, 600]})
    assert len(server.memory.pools) == 2
    handles = np.array([default_a, forgetful, default_b, default_a], dtype=np.int64)
    entities = np.array([THIEF, THIEF, 5, 5], dtype=np.int64)
    types = np.array([3, 3, 0, 1], dtype=np.int32)
    saliences = np.array([0.9, 0.9, 0.1, 0.4], dtype=np.float32)
    server.record_batch(handles, entities, types, saliences)
    single = MindServer(ClockMode.MANUAL)
    twins = {default_a: single.add_memory(), default_b: single.add_memory()}
    twins[forgetful] = single.add_memory({"capacity": 8, "base_stability": [1, 3, 10, 60, 600]})
    for handle, entity, kind, salience in zip(handles, entities, types, saliences, strict=True):
        single.record(twins[int(handle)], int(entity), int(kind), float(salience))
    server.advance(40.0)
    single.advance(40.0)
    batch = server.awareness_batch(handles, entities)
    assert batch.tolist() == [
        single.awareness(twins[int(h)], int(e)) for h, e in zip(handles, entities, strict=True)
    ]
    assert batch.tolist()[:2] == [3, 2]  # the forgetful profile's thief memory is already fading
    strength, kinds = server.query_strongest_batch(handles[:2], entities[:2])
    assert kinds.tolist() == [3, 3] and strength[0] > strength[1] > 0.3


def test_save_and_load_a_stream_and_unknown_handles_are_refused() -> None:
    server = MindServer(ClockMode.MANUAL)
    guard, other = server.add_memory(), server.add_memory()
    server.record(guard, THIEF, MemoryType.HOSTILE, 0.9)
    server.advance(30.0)
    data = server.save_memory(guard)
    server.load_memory(other, data)
    assert server.memories(other) == server.memories(guard)
    server.remove(guard)
    with pytest.raises(UnknownHandleError, match="never added, or removed"):
        server.awareness(guard, THIEF)
    server.record_batch([guard], [THIEF], [3], [0.9])  # batched: the stale row is skipped, counted
    assert server.metrics()["server/stale_rows"] == 1


def test_a_freed_stream_gets_no_more_signals() -> None:
    server = MindServer(ClockMode.MANUAL)
    guard = server.add_memory()
    server.record(guard, STONE_THROWER, MemoryType.TRIVIA, 0.1)
    server.remove(guard)
    assert server.advance(30.0) == []


# --- selectors ---------------------------------------------------------------------------------
def test_selectors_sharing_a_definition_are_scored_in_one_group() -> None:
    server = MindServer(ClockMode.MANUAL)
    guards = [server.add_selector(GUARD_SELECTOR) for _ in range(3)]
    assert len(server.selectors.groups) == 1
    server.set_inputs(guards, "calm", [1.0, 0.0, 1.0])
    server.set_inputs(guards, "threat", [0.0, 1.0, 0.2])
    events = server.update()
    assert [signals(events, g) for g in guards] == [
        [("behavior_changed", ("patrol",))],
        [("behavior_changed", ("pursue",))],
        [("behavior_changed", ("patrol",))],
    ]
    assert server.chosen(guards).tolist() == [0, 1, 0]
    assert server.scores(guards[1]) == {"patrol": 0.0, "pursue": 1.0}
    server.set_inputs(guards[2:], "threat", [0.9])
    server.set_inputs(guards[2:], "calm", [0.1])
    events = server.update()
    assert [signals(events, g) for g in guards] == [[], [], [("behavior_changed", ("pursue",))]]
    late = server.add_selector(GUARD_SELECTOR)  # joins the group, keeps the others' state
    assert server.chosen([*guards, late]).tolist() == [0, 1, 1, -1]


def test_inputs_set_per_node_make_the_choices_packed_arrays_make() -> None:
    # The same crowd fed two ways: one set_inputs call per key over every handle, or one
    # set_input call per node and key; same choices, same signals, and each node reads its own.
    rng = np.random.default_rng(5)
    arrays, nodes = MindServer(ClockMode.MANUAL), MindServer(ClockMode.MANUAL)
    crowd = [arrays.add_selector(GUARD_SELECTOR) for _ in range(40)]
    assert [nodes.add_selector(GUARD_SELECTOR) for _ in range(40)] == crowd
    assert [nodes.choice(h) for h in crowd] == [""] * 40  # before any step
    for frame in range(6):
        calm, threat = rng.uniform(0.0, 1.0, 40), rng.uniform(0.0, 1.0, 40)
        arrays.set_inputs(crowd, "calm", calm)
        arrays.set_inputs(crowd, "threat", threat)
        for handle, c, t in zip(crowd, calm.tolist(), threat.tolist(), strict=True):
            nodes.set_input(handle, "calm", c)
            nodes.set_input(handle, "threat", t)
        assert nodes.advance(0.5) == arrays.advance(0.5), frame
        assert nodes.chosen(crowd).tolist() == arrays.chosen(crowd).tolist()
        expected = [("patrol", "pursue")[i] for i in arrays.chosen(crowd).tolist()]
        assert [nodes.choice(h) for h in crowd] == expected
    assert {nodes.choice(h) for h in crowd} == {"patrol", "pursue"}
    with pytest.raises(TypeError, match=r"set_input\('calm'\): the value must be a number, got 'high'"):
        nodes.set_input(crowd[0], "calm", "high")
    with pytest.raises(UnknownHandleError):
        nodes.set_input(99_999, "calm", 1.0)


def test_the_dictionary_path_evaluates_at_once() -> None:
    server = MindServer(ClockMode.MANUAL)
    guard = server.add_selector(GUARD_SELECTOR)
    assert server.evaluate(guard, {"calm": 0.2, "threat": 0.7}) == "pursue"
    assert server.evaluate(guard, {"calm": 0.2, "threat": 0.7}) == "pursue"
    assert signals(server.update(), guard) == [("behavior_changed", ("pursue",))]
    assert server.scores(guard) == pytest.approx({"patrol": 0.2, "pursue": 0.7})


def test_the_per_node_calls_on_an_entry_answer_as_the_handle_calls_and_refuse_a_removed_one() -> None:
    # What the node calls (on the entry it looked up once) against the handle API, on two servers.
    by_entry, by_handle = MindServer(ClockMode.MANUAL), MindServer(ClockMode.MANUAL)
    guard = by_entry.add_selector(GUARD_SELECTOR)
    assert by_handle.add_selector(GUARD_SELECTOR) == guard
    entry = by_entry.selectors.entry(guard)
    names = by_entry.selectors.names(guard)
    for tick, (calm, threat) in enumerate([(0.9, 0.1), (0.2, 0.7), (0.2, 0.7), (0.8, 0.3)]):
        context = {"calm": calm, "threat": threat}
        assert names[by_entry.pick(entry, context)] == by_handle.evaluate(guard, context), tick
        by_entry.set_input_values(entry, {"calm": threat, "threat": calm})
        by_handle.set_input(guard, "calm", threat)
        by_handle.set_input(guard, "threat", calm)
        assert signals(by_entry.advance(0.1), guard) == signals(by_handle.advance(0.1), guard), tick
        assert names[by_entry.choice_index(entry)] == by_handle.choice(guard), tick
    assert by_entry.scores(guard) == by_handle.scores(guard)
    by_entry.remove(guard)
    again = by_entry.add_selector(GUARD_SELECTOR)  # may reuse the handle: the old entry stays refused
    with pytest.raises(UnknownHandleError):
        by_entry.pick(entry, {"calm": 0.1, "threat": 0.1})
    with pytest.raises(UnknownHandleError):
        by_entry.set_input_values(entry, {"calm": 0.1})
    with pytest.raises(UnknownHandleError):
        by_entry.choice_index(entry)
    assert by_entry.evaluate(again, {"calm": 0.9, "threat": 0.1}) == "patrol"  # a fresh state


# --- decisions ---------------------------------------------------------------------------------
def test_without_an_endpoint_every_request_is_one_tier_3_fallback() -> None:
    server = MindServer(ClockMode.MANUAL)
    selector = server.add_selector(GUARD_SELECTOR)
    decision = server.add_decision(DecisionSettings(intents=("patrol", "pursue")), fallback_selector=selector)
    server.request_decision(decision, {"calm": 0.0, "threat": 1.0})
    assert signals(server.update(), decision) == [("decision_fallback", (3, "no_endpoint"))]
    assert server.decisions.behavior(decision) == "pursue"  # the selector covered
    assert signals(server.update(), decision) == []  # nothing unasked
    server.request_decision(decision, {"calm": 0.0, "threat": 1.0})
    server.abort(decision)
    assert signals(server.update(), decision) == []  # an aborted request ends in no signal


@pytest.mark.timeout(60)
def test_a_real_answer_is_applied_and_a_late_one_after_abort_is_discarded(fault_server) -> None:
    from tests.support.fault_llm_server import Fault

    server = MindServer(ClockMode.MANUAL, llm_endpoint=fault_server.base_url)
    settings = DecisionSettings(intents=("patrol", "pursue"), soft_deadline=5.0, hard_deadline=10.0)
    memory = server.add_memory()
    server.record(memory, THIEF, MemoryType.HOSTILE, 0.9)
    decision = server.add_decision(settings, memory=memory)
    try:
        fault_server.script(Fault("ok", latency=0.0, intent="pursue", urgency=0.9))
        server.request_decision(decision, {"threat": 1.0})
        received = []
        while not any(signal != "thinking_started" for signal, _ in received):
            time.sleep(FRAME)
            received += signals(server.update(), decision)
        assert received == [("thinking_started", ()), ("decision_made", ("pursue", 0.9, 1))]

        fault_server.script(Fault("ok", latency=0.3, intent="patrol"))
        server.request_decision(decision, {"threat": 0.0})
        assert signals(server.update(), decision) == [("thinking_started", ())]
        server.abort(decision)  # the grenade
        while server.decisions.metrics()["stale_discards"] == 0 and fault_server.closed_by_client == 0:
            time.sleep(FRAME)
            assert signals(server.update(), decision) == []
        assert server.decisions.metrics()["aborts"] == 1
        assert server.memories(memory)[0]["recall_count"] == 1  # the prompt's top-k never woke it
    finally:
        server.close()


def test_one_step_a_frame_moves_the_clock_and_removal_is_final() -> None:
    server = MindServer(ClockMode.PROCESS)
    guard = server.add_memory()
    selector = server.add_selector(GUARD_SELECTOR)
    decision = server.add_decision(DecisionSettings(intents=("patrol",)), fallback_selector=selector)
    server.step(0.5, time_scale=10.0)  # a fast-forwarded night: play seconds only
    server.step(0.5, paused=True)
    assert server.now() == 0.5 and server.frames == 2
    assert all(server.owns(handle) for handle in (guard, selector, decision))
    for handle in (guard, selector, decision):
        server.remove(handle)
        assert not server.owns(handle)
    assert server.selectors.groups == {} and server.step(1.0) == []
    with pytest.raises(KeyError):
        server.remove(guard)


def test_a_server_whose_nodes_all_left_moves_its_clock_only_until_one_joins() -> None:
    """Issue 21: a game whose NPCs are all gone pays next to nothing a frame: once one update has
    read what the last nodes left, a step moves the clock and counts the frame, nothing else (no feed
    runs); a node that joins later is updated from its first frame."""
    server = MindServer(ClockMode.PROCESS)
    fed: list[float] = []
    server.before_choosing.append(fed.append)
    guard, selector = server.add_memory(), server.add_selector(GUARD_SELECTOR)
    server.record(guard, THIEF, int(MemoryType.HOSTILE), 0.9)
    assert ("memory_formed", (THIEF, int(MemoryType.HOSTILE))) in signals(server.step(0.1), guard)
    server.remove(guard)
    server.remove(selector)
    server.step(0.1)  # the update that reads what they left
    fed.clear()
    for _ in range(5):
        assert server.step(0.1) == []
    assert fed == [] and server.frames == 7 and math.isclose(server.now(), 0.7)
    assert server.last_step_seconds == 0.0 and set(server.part_seconds.values()) == {0.0}
    assert server.memory.pools == {} and server.selectors.groups == {}
    stream = server.add_memory()
    server.record(stream, THIEF, int(MemoryType.HOSTILE), 0.9)
    events = server.step(0.1)
    assert fed == [server.now()]
    assert ("memory_formed", (THIEF, int(MemoryType.HOSTILE))) in signals(events, stream)
    assert server.awareness(stream, THIEF) > 0
    guard = server.add_selector(GUARD_SELECTOR)
    server.set_input(guard, "threat", 1.0)
    assert ("behavior_changed", ("pursue",)) in signals(server.step(0.1), guard)


def test_each_step_times_its_parts_and_a_slow_part_is_named() -> None:
    # The monitors server/<part>_ms say where a step's time went: a feed that takes 5 ms (a game's
    # input source) shows in `inputs`, and the parts are pieces of the step, one after another.
    server = MindServer(ClockMode.PROCESS)
    guard = server.add_memory()
    server.add_selector(GUARD_SELECTOR)
    server.before_choosing.append(lambda now: time.sleep(0.005))
    server.record(guard, THIEF, MemoryType.HOSTILE, 0.9)
    server.step(FRAME)
    metrics = server.metrics()
    parts = {part: metrics[f"server/{part}_ms"] for part in ("fold", "inputs", "choose", "decide", "memory")}
    assert all(value >= 0.0 for value in parts.values()), parts
    assert parts["inputs"] >= 5.0  # (a sleep lasts at least as long as asked)
    assert sum(parts.values()) <= metrics["server/step_ms"]


def test_rehearsal_and_eviction_are_signalled_to_their_stream() -> None:
    server = MindServer(ClockMode.MANUAL)
    small = server.add_memory({"capacity": 2})
    other = server.add_memory({"capacity": 2})
    server.record(small, 1, MemoryType.TRIVIA, 0.1)
    server.record(small, 2, MemoryType.HOSTILE, 0.9)
    server.update()
    server.advance(5.0)  # past the refractory period: a repeat rehearses
    server.record(small, 2, MemoryType.HOSTILE, 0.9)
    server.record(small, 3, MemoryType.TRAUMA, 1.0)  # full: the faded trivia goes, never the hostile
    events = server.update()
    assert signals(events, small) == [
        ("memory_rehearsed", (2, int(MemoryType.HOSTILE))),
        ("memory_evicted", (1, int(MemoryType.TRIVIA))),
        ("memory_formed", (3, int(MemoryType.TRAUMA))),
    ]
    assert signals(events, other) == []


def test_a_server_refuses_registration_and_steps_from_another_thread() -> None:
    """Issue 10 (3): a server belongs to the thread that made it; nothing changes on a refused call."""
    server = MindServer(ClockMode.MANUAL)
    handle = server.add_memory()
    refused: list[BaseException] = []

    def intruder() -> None:
        for call in (server.add_memory, lambda: server.remove(handle), lambda: server.step(0.1),
                     lambda: server.advance(0.1)):  # fmt: skip
            try:
                call()
            except WrongThreadError as error:
                refused.append(error)

    worker = threading.Thread(target=intruder)
    worker.start()
    worker.join()
    assert len(refused) == 4 and "another thread" in str(refused[0])
    assert server.owns(handle) and len(server.memory.entries) == 1 and server.now() == 0.0


def test_a_memory_pool_refuses_every_change_from_another_thread() -> None:
    """Issue 10 (3) and issue 22 (13): a pool belongs to the thread that made it. `record` from two
    plain threads drifted the slot counter (1 of 400 rounds): the per-NPC calls were not checked.
    Every call that changes the pool now refuses another thread before touching anything, with a
    `ConcurrentUseError` that is a `WrongThreadError`, as the server's refusals are."""
    from npc_mind.memory import ConcurrentUseError, MemoryPool, MemoryType

    pool = MemoryPool(4)
    npc = pool.add_npc()
    pool.record(npc, 1, MemoryType.HOSTILE, 0.9, 0.0)
    calls = {
        "record": lambda: pool.record(npc, 7, MemoryType.TRIVIA, 0.5, 1.0),
        "query_strongest": lambda: pool.query_strongest(npc, 1, 1.0),
        "recall_fields": lambda: pool.recall_fields(npc, 1, 1.0),
        "record_batch": lambda: pool.record_batch([npc], [7], [3], [0.9], 1.0),
        "add_npc": pool.add_npc,
        "remove_npc": lambda: pool.remove_npc(npc),
        "link": lambda: pool.link(npc, 1, 7),
        "pin": lambda: pool.pin(npc, 1, MemoryType.HOSTILE),
    }
    refused: dict[str, BaseException] = {}

    def intruder() -> None:
        for name, call in calls.items():
            try:
                call()
            except ConcurrentUseError as error:
                refused[name] = error

    worker = threading.Thread(target=intruder)
    worker.start()
    worker.join()
    assert sorted(refused) == sorted(calls)
    assert all(isinstance(error, WrongThreadError) for error in refused.values())
    assert "MemoryPool.record() called from another thread" in str(refused["record"])
    assert "claim()" in str(refused["record"])
    # nothing changed: one NPC, its one memory, never recalled, unpinned
    assert pool.npc_count == 1 and pool.memory_count(npc) == 1 and pool.links(npc) == []
    (memory,) = pool.memories(npc, 1.0)
    assert memory.recall_count == 1 and not memory.pinned  # formed (k = 1), never recalled
    pool.record(npc, 7, MemoryType.TRIVIA, 0.5, 1.0)  # the owner's calls work
    assert pool.memory_count(npc) == 2

    handed: list[int] = []

    def new_owner() -> None:  # a pool handed over: the claiming thread owns it, the old one not
        pool.claim()
        pool.record(npc, 8, MemoryType.TRIVIA, 0.5, 2.0)
        handed.append(pool.memory_count(npc))

    worker = threading.Thread(target=new_owner)
    worker.start()
    worker.join()
    assert handed == [3]
    with pytest.raises(ConcurrentUseError, match=r"record\(\) called from another thread"):
        pool.record(npc, 9, MemoryType.TRIVIA, 0.5, 3.0)
    pool.claim()
    pool.record(npc, 9, MemoryType.TRIVIA, 0.5, 3.0)
    assert pool.memory_count(npc) == 4


def test_the_step_begun_here_and_ended_on_an_update_thread_is_the_step() -> None:
    """Issue 21 (3): `begin_step` with its rest on an `UpdateThread` (the fold and the inputs there
    too, or here) does what `step` does; while the rest runs the pools are the thread's, after it the
    server's again; a rest that raises is raised by `join`, and the thread goes on."""
    from npc_mind.server.update_thread import UpdateThread

    fed_on: list[set[tuple[int, bool]]] = [set(), set(), set()]  # per server: (thread, owns the pools)

    def feed(server: MindServer) -> None:  # a feed that reads memory: the threat is the awareness
        me = threading.get_ident()
        owned = all(slot.pool._owner == me for slot in server.memory.pools.values())
        fed_on[servers.index(server)].add((me, owned))
        aware = server.awareness_batch(streams[id(server)], [THIEF] * 4)
        server.set_inputs(guards[id(server)], "threat", aware / 3.0)

    servers = [MindServer() for _ in range(3)]
    guards: dict[int, list[int]] = {}
    streams: dict[int, list[int]] = {}
    for server in servers:
        server.before_choosing.append(lambda now, server=server: feed(server))
        guards[id(server)] = [server.add_selector(GUARD_SELECTOR) for _ in range(4)]
        streams[id(server)] = [server.add_memory() for _ in range(4)]
    busy: list[bool] = []
    worker = UpdateThread(on_busy=busy.append)
    logs: list[list[list[tuple[str, tuple]]]] = [[], [], []]
    for frame in range(30):
        for server in servers:
            for row, stream in enumerate(streams[id(server)]):
                if (frame + row) % 7 == 0:
                    server.record(stream, THIEF, int(MemoryType.HOSTILE), 0.9)
            server.set_input(guards[id(server)][frame % 4], "calm", (frame % 5) / 4)
        logs[0].append([(e.signal, e.args) for e in servers[0].step(1 / 60)])
        for index, inputs_here in ((1, True), (2, False)):
            worker.start(servers[index].begin_step(1 / 60, inputs_here=inputs_here))
            logs[index].append([(e.signal, e.args) for e in worker.join()])
    assert logs[1] == logs[0] and logs[2] == logs[0] and any(logs[0])
    for server in servers[1:]:
        assert server.now() == servers[0].now() and server.frames == 30
        memories = [[one.memories(s) for s in streams[id(one)]] for one in (server, servers[0])]
        assert memories[0] == memories[1]
        server.record(streams[id(server)][0], THIEF, int(MemoryType.HOSTILE), 0.5)  # main-thread pools again
        server.memory.fold()
    main = threading.get_ident()
    assert fed_on == [{(main, True)}, {(main, True)}, {(worker.ident, True)}] and worker.ident != main
    assert busy == [True, False] * 60

    def broken() -> None:
        raise KeyError("lost")

    worker.start(broken)
    with pytest.raises(KeyError, match="lost"):
        worker.join()
    worker.start(lambda: 7)
    with pytest.raises(RuntimeError, match="join it first"):
        worker.start(lambda: 8)
    assert worker.join() == 7 and worker.join() is None
    worker.close()
    with pytest.raises(RuntimeError, match="closed"):
        worker.start(lambda: 9)
