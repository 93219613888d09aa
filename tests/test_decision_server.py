"""The server's decision bank under the cases that used to lose a signal, raise inside `step`, or grow
for ever: exactly one `decision_made` / `decision_fallback` per request, one NPC's failure isolated,
hubs and transports released with their last decision. Driven like the Godot singleton drives it (one
update a frame), against the fault server on 127.0.0.1 where an endpoint is needed."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import pytest

from npc_mind.server import ClockMode
from npc_mind.server.core import MindServer
from npc_mind.server.decisions import DecisionSettings
from tests.support.fault_llm_server import Fault, FaultServer
from tests.test_server_core import GUARD_SELECTOR as SELECTOR
from tests.test_server_core import signals

SAFETY = 20.0  # seconds: a bound on waiting loops, never an assertion
ENDS = ("decision_made", "decision_fallback")


def until_ended(server: MindServer, handles: list[int], count: int = 1) -> dict[int, list[tuple[str, tuple]]]:
    """Update like a game loop until each handle has `count` decision signals; every signal, by handle."""
    got: dict[int, list[tuple[str, tuple]]] = {handle: [] for handle in handles}
    stop = time.monotonic() + SAFETY
    while time.monotonic() < stop:
        events = server.update()
        for handle in handles:
            got[handle] += signals(events, handle)
        if all(sum(name in ENDS for name, _ in got[h]) >= count for h in handles):
            break
        time.sleep(0.005)
    return got


def until(condition: Callable[[], bool]) -> bool:
    """Whether `condition` became true within SAFETY seconds."""
    stop = time.monotonic() + SAFETY
    while not condition() and time.monotonic() < stop:
        time.sleep(0.01)
    return condition()


def ends(received: list[tuple[str, tuple]]) -> list[tuple[str, tuple]]:
    return [(name, args) for name, args in received if name in ENDS]


def test_a_request_made_while_one_is_pending_goes_out_when_that_one_times_out(
    fault_server: FaultServer,
) -> None:
    """It was dropped: the watchdog ended the pending one and nothing sent the waiting one."""
    fault_server.script(Fault("never_ends"), Fault(intent="pursue", urgency=0.25))
    server = MindServer(ClockMode.MANUAL, llm_endpoint=fault_server.base_url)
    settings = DecisionSettings(intents=("patrol", "pursue"), soft_deadline=0.1, hard_deadline=0.3)
    decision = server.add_decision(settings)
    try:
        server.request_decision(decision, {"threat": 0.1})
        assert signals(server.update(), decision) == [("thinking_started", ())]
        server.request_decision(decision, {"threat": 0.9})  # while the first is pending
        got = until_ended(server, [decision], count=2)[decision]
        assert ends(got) == [("decision_fallback", (3, "timeout")), ("decision_made", ("pursue", 0.25, 1))]
        prompts = [seen.body["messages"][1]["content"] for seen in fault_server.seen]
        assert ["threat: 0.9" in prompt for prompt in prompts] == [False, True]  # each its own context
        assert not [prompt for prompt in prompts if "_npc_mind" in prompt]  # and no internal request key
    finally:
        server.close()


def test_a_request_replaced_before_it_went_out_ends_as_superseded(fault_server: FaultServer) -> None:
    server = MindServer(ClockMode.MANUAL, llm_endpoint=fault_server.base_url)
    decision = server.add_decision(DecisionSettings(intents=("patrol",)))
    try:
        server.request_decision(decision, {"threat": 0.1})
        server.request_decision(decision, {"threat": 0.9})  # same frame: the first never left
        assert signals(server.update(), decision) == [
            ("decision_fallback", (3, "superseded")),
            ("thinking_started", ()),
        ]
        assert server.decisions.metrics()["tier3"] == 1
    finally:
        server.close()


def test_a_request_the_transport_refuses_ends_at_once_each_time() -> None:
    """No endpoint (or a saturated one): each request ends in tier 3 at the next step, none waits."""
    server = MindServer(ClockMode.MANUAL)
    decision = server.add_decision(DecisionSettings(intents=("patrol",)))
    server.request_decision(decision, {"threat": 0.1})
    server.request_decision(decision, {"threat": 0.9})
    assert signals(server.update(), decision) == [("decision_fallback", (3, "no_endpoint"))] * 2
    assert server.decisions.metrics()["tier3"] == 2


class _CopyCounting(dict):  # type: ignore[type-arg]
    """A context that counts how often it is read whole (copied)."""

    copies = 0

    def items(self):  # type: ignore[no-untyped-def]
        _CopyCounting.copies += 1
        return super().items()

    def values(self):  # type: ignore[no-untyped-def]
        _CopyCounting.copies += 1
        return super().values()


def test_refused_asks_end_at_the_next_update_in_order_unless_aborted_or_removed() -> None:
    """A frame's refused asks are ended in one pass at the server's step: each still gets its own
    tier-3 signal there, in the order asked, counted in its hub and seen by the observers, with its
    context never copied; an abort or a removal after the ask in the same frame drops its signal."""
    server = MindServer(ClockMode.MANUAL)
    settings = DecisionSettings(intents=("patrol", "attack"))
    a, b, c = (server.add_decision(settings) for _ in range(3))
    observed: list[object] = []
    server.decisions.observers.append(observed.append)
    _CopyCounting.copies = 0
    for handle in (a, b, a, c, b):
        server.request_decision(handle, _CopyCounting(threat=0.5))
        assert not server.decisions.pending(handle)  # ended, not waiting
    server.abort(b)
    server.remove(c)
    events = server.update()
    refused = (a, "decision_fallback", (3, "no_endpoint"))
    assert [(event.handle, event.signal, event.args) for event in events] == [refused] * 2
    seen = [(event.npc, event.reason, event.tier) for event in observed]  # type: ignore[attr-defined]  # DecisionFallback events
    assert seen == [(a, "no_endpoint", 3)] * 2
    assert _CopyCounting.copies == 0
    metrics = server.decisions.metrics()
    assert (metrics["tier3"], metrics["dispatched"]) == (2, 2), metrics
    assert server.decisions.behavior(a) == "patrol"  # the fallback rules' choice, at once
    assert server.update() == []  # each ask ends once


def test_a_decision_whose_memory_stream_was_freed_asks_without_memories() -> None:
    """Its next request raised UnknownHandleError inside the server's step: the frame's whole update
    (every other NPC's signals and memory events) was lost, and the request never ended."""
    server = MindServer(ClockMode.MANUAL)
    memory = server.add_memory()
    other = server.add_memory()
    decision = server.add_decision(DecisionSettings(intents=("patrol",)), memory=memory)
    server.remove(memory)
    server.record(other, 7, 1, 0.9)
    server.request_decision(decision, {"threat": 0.1})
    events = server.update()
    assert signals(events, decision) == [("decision_fallback", (3, "no_endpoint"))]
    assert [event.signal for event in events if event.handle == other] == ["memory_formed"]


def test_a_request_with_no_endpoint_reads_no_memory() -> None:
    """Refused at once (tier 3): it builds no prompt, so its NPC's memories are not read (every such
    request read the top memories, applying the frame's queued writes early)."""
    server = MindServer(ClockMode.MANUAL)
    memory = server.add_memory()
    decision = server.add_decision(DecisionSettings(intents=("patrol",)), memory=memory)
    server.record(memory, 7, 1, 0.9)
    reads: list[tuple] = []
    top_k = server.memory.top_k
    server.memory.top_k = lambda *args: reads.append(args) or top_k(*args)  # type: ignore[method-assign]
    server.request_decision(decision, {"threat": 0.1})
    assert signals(server.update(), decision) == [("decision_fallback", (3, "no_endpoint"))]
    assert reads == []


def test_one_decisions_failure_does_not_abort_the_others(caplog: pytest.LogCaptureFixture) -> None:
    """A context value its selector cannot read (a string where a number goes) raised out of the
    server's step, so no other NPC got its signal that frame; now that request alone ends as
    internal_error, logged with the traceback."""
    server = MindServer(ClockMode.MANUAL)
    selector = server.add_selector(SELECTOR)
    settings = DecisionSettings(intents=("patrol", "pursue"))
    broken, *others = [server.add_decision(settings, fallback_selector=selector) for _ in range(3)]
    server.request_decision(broken, {"threat": "high", "calm": 0.0})
    for handle in others:
        server.request_decision(handle, {"threat": 1.0, "calm": 0.0})
    with caplog.at_level(logging.ERROR, logger="npc_mind.decision"):
        events = server.update()
    assert signals(events, broken) == [("decision_fallback", (3, "internal_error"))]
    for handle in others:
        assert signals(events, handle) == [("decision_fallback", (3, "no_endpoint"))]
        assert server.decisions.behavior(handle) == "pursue"
    (record,) = [r for r in caplog.records if r.name == "npc_mind.decision"]
    assert f"NPC {broken}:" in record.getMessage() and record.exc_info is not None
    assert "input must be a number" in caplog.text  # the traceback names the cause
    server.request_decision(broken, {"threat": 0.5, "calm": 0.0})  # and it works again
    assert signals(server.update(), broken) == [("decision_fallback", (3, "no_endpoint"))]


OTHER = "http://127.0.0.1:9/v1"  # never contacted: only their transports' lives are looked at
OTHER_TOO = "http://127.0.0.1:9/v1,http://127.0.0.1:7/v1"


def llm_threads() -> int:
    return sum(1 for thread in threading.enumerate() if thread.name == "npc_mind-llm")


def test_hubs_and_transports_go_with_their_last_decision(fault_server: FaultServer) -> None:
    """20,000 NPCs with their own persona left 20,000 hubs (+76 MB, a 24.9 ms step with no live NPC);
    every distinct endpoint string kept its thread for ever (spellings of one endpoint list share one)."""
    server = MindServer(ClockMode.MANUAL, llm_endpoint=fault_server.base_url)
    threads = llm_threads()
    try:
        shared = server.add_decision(DecisionSettings(intents=("attack",), persona="a guard"))
        handles = [
            server.add_decision(DecisionSettings(intents=("attack",), persona=f"guard {index}", endpoint=url))
            for index, url in enumerate(
                [
                    fault_server.base_url,
                    f"{fault_server.base_url}/",
                    f" {fault_server.base_url}",
                    OTHER,
                    OTHER_TOO,
                ]
            )
        ]
        bank = server.decisions
        assert len(bank.hubs) == 6 and len(bank.transports) == 3
        assert llm_threads() == threads + 3
        server.request_decision(handles[0], {"threat": 0.5})
        got = until_ended(server, [handles[0]])[handles[0]]
        assert ends(got) == [("decision_made", ("attack", 0.5, 1))]
        for handle in handles:
            server.remove(handle)
        assert list(bank.hubs.values()) == [bank.entries.get(shared).hub]
        assert [key[0] for key in bank.transports] == [fault_server.base_url]
        assert bank.metrics()["dispatched"] == 1  # a released hub's counters are kept
        # Unused transports wait `idle_seconds` for reuse: respawning at once opens nothing.
        assert len(bank.idle) == 2 and llm_threads() == threads + 3
        again = server.add_decision(DecisionSettings(intents=("attack",), endpoint=f"{OTHER}/"))
        assert len(bank.idle) == 1 and llm_threads() == threads + 3
        server.remove(again)
        bank.idle_seconds = 0.0
        server.update()  # closes them, without waiting for their threads
        assert bank.idle == {}
        assert until(lambda: llm_threads() == threads + 1)
        server.remove(shared)
        server.update()
        assert bank.hubs == {} and bank.transports == {} and bank.idle == {}
        assert until(lambda: llm_threads() == threads)
    finally:
        server.close()


def test_a_decisions_response_caps_reach_its_transport(fault_server: FaultServer) -> None:
    fault_server.default = Fault("oversized", size=8_000)
    server = MindServer(ClockMode.MANUAL, llm_endpoint=fault_server.base_url)
    try:
        roomy = server.add_decision(
            DecisionSettings(intents=("attack",), soft_deadline=5.0, hard_deadline=9.0)
        )
        strict = server.add_decision(
            DecisionSettings(
                intents=("attack",), soft_deadline=5.0, hard_deadline=9.0, max_response_bytes=4096
            )
        )
        assert len(server.decisions.transports) == 2  # caps are part of a transport's identity
        for handle in (roomy, strict):
            server.request_decision(handle, {"threat": 0.5})
        got = until_ended(server, [roomy, strict])
        assert ends(got[roomy]) == [("decision_made", ("attack", 0.5, 1))]
        assert ends(got[strict]) == [("decision_fallback", (3, "too_large"))]
    finally:
        server.close()


def test_a_rule_with_tags_given_as_one_string_is_refused() -> None:
    """frozenset("flee") made the tags its letters: the rule matched intents f, l and e."""
    from npc_mind.decision import Rule

    with pytest.raises(ValueError, match="not one string"):
        Rule("run", "threat", 0.5, tags="flee")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-empty strings"):
        Rule("run", "threat", 0.5, tags=frozenset({""}))
    assert Rule("run", "threat", 0.5, tags=frozenset({"flee"})).tags == {"flee"}


def test_in_a_hub_one_npcs_failure_does_not_abort_the_others(caplog: pytest.LogCaptureFixture) -> None:
    """The isolation is the decision's own: a `DecisionHub` ticking many NPCs goes on with the others
    too, and the failed NPC's request ends once, as internal_error."""
    from npc_mind.decision import DecisionConfig, DecisionFallback, DecisionHub, DecisionMade, ThinkingStarted
    from tests.support import decision_world as world
    from tests.support.scripted_transport import FakeClock, ScriptedTransport

    clock = FakeClock()
    hub = DecisionHub(ScriptedTransport(clock), world.SCHEMA, config=DecisionConfig(replan_interval=60.0))
    for npc in range(3):
        hub.add(npc, world.selector())
    boards = {npc: world.board() for npc in range(3)}
    boards[0] = {**world.board(), "threat": "high"}  # its selector cannot read it
    with caplog.at_level(logging.ERROR, logger="npc_mind.decision"):
        hub.tick_all(clock(), boards)
    events = hub.drain_events()
    ended = [e.reason for e in events if e.npc == 0 and isinstance(e, DecisionMade | DecisionFallback)]
    assert ended == ["internal_error"]
    assert all(any(isinstance(e, ThinkingStarted) and e.npc == npc for e in events) for npc in (1, 2))
    assert "input must be a number" in caplog.text


def test_a_hub_goes_on_when_one_npcs_board_is_missing_or_not_numbers() -> None:
    """tick_all itself raised (outside any NPC's tick): KeyError for a due NPC with no board, and
    TypeError when a watched key held a string under `min_change`."""
    from npc_mind.decision import DecisionConfig, DecisionHub, ThinkingStarted
    from npc_mind.llm import Answer
    from tests.support import decision_world as world
    from tests.support.scripted_transport import FakeClock, ScriptedTransport

    clock = FakeClock()
    transport = ScriptedTransport(clock)
    config = DecisionConfig(replan_interval=60.0, watched=("threat", "health"), min_change=0.1)
    hub = DecisionHub(transport, world.SCHEMA, config=config)
    for npc in range(3):
        hub.add(npc, world.rules())
    boards = {npc: world.board() for npc in range(3)}
    hub.tick_all(clock(), boards)
    for key in transport.open_keys():
        transport.finish(key, Answer("patrol", 0.5))
    hub.tick_all(clock.advance(0.1), boards)  # merged: all idle, watching their keys
    hub.drain_events()
    boards = {1: {**world.board(), "threat": "high"}, 2: world.board(threat=0.9)}  # 0 has no board
    hub.tick_all(clock.advance(1.0), boards)
    assert {e.npc for e in hub.drain_events() if isinstance(e, ThinkingStarted)} == {1, 2}
    hub.abort(0)  # due now, still without a board: it waits
    hub.tick_all(clock.advance(1.0), boards)
    assert not [e for e in hub.drain_events() if e.npc == 0]
    hub.tick_all(clock.advance(1.0), {0: world.board()})
    assert {e.npc for e in hub.drain_events() if isinstance(e, ThinkingStarted)} == {0}
