"""The watchdog and tiers end to end: `DecisionHub` -> `LLMTransport` -> a real fault-injecting HTTP
server on 127.0.0.1. Tiers are asserted both as the nominal tier and as `classify(measured latency)`,
so a slow machine shifts both together instead of making the test flaky."""

from __future__ import annotations

import time

import pytest

from npc_mind.decision import DecisionConfig, DecisionFallback, DecisionHub, DecisionMade, ThinkingStarted
from npc_mind.llm import BreakerConfig, Endpoint, LLMSettings, TransportConfig
from npc_mind.llm.local_server import free_port
from npc_mind.memory import MemoryPool, MemoryType
from tests.support import decision_world as world
from tests.support.fault_llm_server import Fault, FaultServer

CONFIG = DecisionConfig(soft_deadline=0.3, hard_deadline=0.8, replan_interval=60.0, min_gap=0.0)
SAFETY = 20.0  # seconds: a bound on loops waiting for something, never an assertion


def make_hub(url: str, **options: object) -> DecisionHub:
    return DecisionHub.connect([Endpoint(url, max_in_flight=4)], world.SCHEMA, config=CONFIG, **options)  # type: ignore[arg-type]


def run_until_decided(hub: DecisionHub, boards: dict[int, dict[str, float]]) -> list[object]:
    """Tick like a game loop (~200 Hz) until every NPC's request has ended; returns all events."""
    events: list[object] = []
    hub.tick_all(time.monotonic(), boards)
    stop = time.monotonic() + SAFETY
    while any(d.pending for d in hub.decisions.values()) and time.monotonic() < stop:
        time.sleep(0.005)
        hub.tick_all(time.monotonic(), boards)
        events += hub.drain_events()
    return events + hub.drain_events()


def only_decision(events: list[object]) -> DecisionMade | DecisionFallback:
    ends = [e for e in events if isinstance(e, DecisionMade | DecisionFallback)]
    assert len(ends) == 1, ends
    return ends[0]


@pytest.mark.parametrize(("latency", "nominal"), [(0.05, 1), (0.55, 2), (2.0, 3)])
def test_answer_latency_decides_the_tier(fault_server: FaultServer, latency: float, nominal: int) -> None:
    fault_server.script(Fault(latency=latency, intent="take_cover", urgency=0.7, target_id=12))
    with make_hub(fault_server.base_url) as hub:
        decision = hub.add(1, world.selector())
        events = run_until_decided(hub, {1: world.board()})
    assert isinstance(events[0], ThinkingStarted)
    end = only_decision(events)
    assert end.tier == nominal
    assert end.tier == CONFIG.classify(end.latency)
    assert decision.tier == end.tier
    if nominal == 1:
        assert isinstance(end, DecisionMade)
        assert end.reason == "in_time"
        assert (end.intent, end.behavior, end.urgency, end.target_id) == (
            "take_cover",
            "take_cover",
            0.7,
            12,
        )
        assert decision.behavior == "take_cover"
    elif nominal == 2:
        # Only the intent survives, as a tag: the selector picked a behavior tagged take_cover.
        assert isinstance(end, DecisionMade)
        assert (end.intent, end.urgency, end.target_id, end.reason) == ("take_cover", None, None, "late")
        assert end.behavior == decision.behavior == "crouch_behind_wall"
    else:
        assert isinstance(end, DecisionFallback)
        assert end.reason == "timeout"
        assert decision.behavior == end.behavior
        # The cancelled request's connection is closed: the server sees it before its 2 s are up.
        stop = time.monotonic() + SAFETY
        while fault_server.closed_by_client() == 0 and time.monotonic() < stop:
            time.sleep(0.01)
        assert fault_server.closed_by_client() == 1


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("http_500", "http_error"),
        ("malformed_json", "invalid_json"),
        ("bad_intent", "invalid_answer"),
        ("missing_field", "invalid_answer"),
        ("reset", "connection_error"),
        ("never_ends", "timeout"),
    ],
)
def test_every_fault_ends_in_one_tier3_fallback(fault_server: FaultServer, kind: str, reason: str) -> None:
    fault_server.script(Fault(kind, latency=0.02))
    with make_hub(fault_server.base_url) as hub:
        decision = hub.add(7, world.selector(), rules=world.rules())
        events = run_until_decided(hub, {7: world.board(threat=0.9)})
        metrics = hub.metrics()
    end = only_decision(events)
    assert isinstance(end, DecisionFallback)
    assert (end.tier, end.reason) == (3, reason)
    # Tier 3: the deterministic rules decide freely.
    assert decision.behavior == end.behavior == "crouch_behind_wall"
    assert metrics["tier3"] == 1 and metrics["fallback_reasons"] == {reason: 1}
    assert decision.intent is None


def test_grenade_during_a_pending_request(fault_server: FaultServer) -> None:
    fault_server.script(Fault(latency=0.6, intent="attack"))
    fault_server.default = Fault(latency=5.0, intent="patrol")  # keeps the re-plan after the abort pending
    with make_hub(fault_server.base_url) as hub:
        decision = hub.add(3, world.selector(), rules=world.rules())
        boards = {3: world.board(threat=0.7)}
        hub.tick_all(time.monotonic(), boards)
        assert decision.pending
        stop = time.monotonic() + SAFETY
        while not fault_server.seen and time.monotonic() < stop:
            time.sleep(0.005)
            hub.tick_all(time.monotonic(), boards)
        # The grenade lands: abort, and in the same frame the NPC reacts through the local AI.
        boards[3] = world.board(threat=0.7, grenade=1.0)
        hub.abort(3, "grenade")
        assert hub.tick_all(time.monotonic(), boards) == [3]
        assert decision.behavior == world.GRENADE_REACTION
        # The server sees the connection close; the late answer, were it sent, could not apply.
        while fault_server.closed_by_client() == 0 and time.monotonic() < stop:
            time.sleep(0.005)
        assert fault_server.closed_by_client() == 1
        for _ in range(30):
            time.sleep(0.01)
            hub.tick_all(time.monotonic(), boards)
        events = hub.drain_events()
        metrics = hub.metrics()
    assert not [e for e in events if isinstance(e, DecisionMade) and e.intent == "attack"]
    assert metrics["aborts"] == 1
    assert decision.intent != "attack"


def test_late_answer_after_abort_is_discarded_and_counted(fault_server: FaultServer) -> None:
    """Abort right after the answer is on the wire: it reaches the commit slot with an old epoch."""
    fault_server.script(Fault(latency=0.0, intent="attack"))
    fault_server.default = Fault(latency=5.0, intent="patrol")
    with make_hub(fault_server.base_url) as hub:
        decision = hub.add(4, world.selector(), rules=world.rules())
        boards = {4: world.board()}
        hub.tick_all(time.monotonic(), boards)
        stop = time.monotonic() + SAFETY
        while not decision.slot and time.monotonic() < stop:  # the answer is committed, not yet merged
            time.sleep(0.002)
        hub.abort(4, "fatal_hit")
        hub.tick_all(time.monotonic(), boards)
        events = hub.drain_events()
        metrics = hub.metrics()
    assert metrics["stale_discards"] == 1
    assert not [e for e in events if isinstance(e, DecisionMade)]
    assert decision.intent is None and decision.behavior != "attack"


def test_dead_endpoint_falls_back_opens_the_breaker_and_closes_it_when_back() -> None:
    port = free_port()  # nothing listens here yet
    breaker = BreakerConfig(failure_threshold=3, cooldown=0.3)
    with make_hub(f"http://127.0.0.1:{port}/v1", breaker=breaker) as hub:
        decision = hub.add(9, world.selector(), rules=world.rules())
        reasons = []
        for _ in range(5):
            events = run_until_decided(hub, {9: world.board()})
            end = only_decision(events)
            assert end.tier == 3  # refused or failed, not a watchdog timeout (see the reasons)
            reasons.append(end.reason)
            decision.abort("next")  # let the next tick ask again
        assert reasons == ["connect_error"] * 3 + ["breaker_open"] * 2
        assert hub.metrics()["breaker"] == "open"
        with FaultServer(port=port, default=Fault(intent="patrol")):
            stop = time.monotonic() + SAFETY
            end = None
            while time.monotonic() < stop:
                end = only_decision(run_until_decided(hub, {9: world.board()}))
                if isinstance(end, DecisionMade):
                    break
                assert end.reason == "breaker_open"  # still cooling down: refused without a call
                decision.abort("next")
                time.sleep(0.05)
            assert isinstance(end, DecisionMade) and end.intent == "patrol"
            assert hub.metrics()["breaker"] == "closed"


def test_full_queue_is_an_immediate_tier3(fault_server: FaultServer) -> None:
    fault_server.default = Fault(latency=0.4)
    endpoint = Endpoint(fault_server.base_url, max_in_flight=1)
    hub = DecisionHub.connect(
        [endpoint], world.SCHEMA, config=CONFIG, transport_config=TransportConfig(max_queue=1)
    )
    with hub:
        for npc in range(3):
            hub.add(npc, world.selector(), rules=world.rules())
        hub.tick_all(time.monotonic(), {npc: world.board() for npc in range(3)})
        events = hub.drain_events()
        fallbacks = [e for e in events if isinstance(e, DecisionFallback)]
        assert [(e.npc, e.tier, e.reason) for e in fallbacks] == [(2, 3, "queue_full")]
        assert hub.metrics()["rejected"]["queue_full"] == 1
        assert hub.transport.outstanding == 2  # type: ignore[attr-defined]  # one in flight, one queued


def test_api_key_is_sent_but_never_shown(fault_server: FaultServer, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-5b1e0c0ffee"
    monkeypatch.setenv("NPC_MIND_API_KEY", secret)
    fault_server.script(Fault("http_500"))
    with make_hub(fault_server.base_url) as hub:
        hub.add(1, world.selector())
        events = run_until_decided(hub, {1: world.board()})
        shown = repr(events) + repr(hub.metrics()) + repr(hub.transport) + repr(hub.transport.client)  # type: ignore[attr-defined]
    assert fault_server.seen[0].headers["authorization"] == f"Bearer {secret}"
    assert secret not in shown


def test_streaming_off_uses_plain_completions(fault_server: FaultServer) -> None:
    fault_server.script(Fault(intent="flee", urgency=1.0))
    with make_hub(fault_server.base_url, settings=LLMSettings(stream=False, max_tokens=32)) as hub:
        hub.add(1, world.selector())
        end = only_decision(run_until_decided(hub, {1: world.board()}))
    body = fault_server.seen[0].body
    assert body["stream"] is False and body["max_tokens"] == 32
    assert body["response_format"]["json_schema"]["schema"]["properties"]["intent"]["enum"] == list(
        world.INTENTS
    )
    assert isinstance(end, DecisionMade) and end.intent == "flee"


def test_prompt_carries_the_memory_pools_top_k_without_waking_it(fault_server: FaultServer) -> None:
    pool = MemoryPool()
    guard = pool.add_npc()
    pool.record(guard, 42, MemoryType.HOSTILE, 0.9, now=time.monotonic() - 60.0)
    before = pool.top_k(guard, time.monotonic(), k=5)
    with make_hub(fault_server.base_url, memory=pool) as hub:
        hub.add(guard, world.selector())
        only_decision(run_until_decided(hub, {guard: world.board()}))
    prompt = fault_server.seen[0].body["messages"][-1]["content"]
    assert "You remember: hostile (vivid)." in prompt
    after = pool.top_k(guard, time.monotonic(), k=5)
    assert [m.recall_count for m in after] == [m.recall_count for m in before]


def test_answer_arriving_after_removal_is_counted_as_stale(fault_server: FaultServer) -> None:
    """The race of a real transport: the NPC is removed while its answer is on the wire (the cancel
    is held back, as inside a `tick_all`, until the answer has arrived). The answer is discarded and
    counted, never applied, and no event is raised for it."""
    fault_server.script(Fault(latency=0.1, intent="attack"))
    with make_hub(fault_server.base_url) as hub:
        decision = hub.add(5, world.selector(), rules=world.rules())
        hub.tick_all(time.monotonic(), {5: world.board()})
        hub.drain_events()
        stop = time.monotonic() + SAFETY
        while not fault_server.seen and time.monotonic() < stop:  # the request is on the wire
            time.sleep(0.002)
        transport = hub.transport
        transport.hold()  # type: ignore[attr-defined]
        hub.remove(5)
        while not decision.slot and time.monotonic() < stop:  # the answer reaches the removed NPC
            time.sleep(0.005)
        transport.flush()  # type: ignore[attr-defined]
        assert decision.slot
        while hub.metrics()["stale_discards"] == 0 and time.monotonic() < stop:
            time.sleep(0.002)  # the transport's thread names the NPC right after committing
        metrics = hub.metrics()
        events = hub.drain_events()
    assert metrics["stale_discards"] == 1
    assert metrics["aborts"] == 1
    assert not decision.slot
    assert events == []
    assert decision.intent is None and decision.behavior is None


def test_answer_committed_before_removal_is_counted_as_stale(fault_server: FaultServer) -> None:
    fault_server.script(Fault(latency=0.0, intent="attack"))
    with make_hub(fault_server.base_url) as hub:
        decision = hub.add(6, world.selector(), rules=world.rules())
        hub.tick_all(time.monotonic(), {6: world.board()})
        stop = time.monotonic() + SAFETY
        while not decision.slot and time.monotonic() < stop:  # committed, not merged yet
            time.sleep(0.002)
        hub.remove(6)
        hub.tick_all(time.monotonic(), {})
        metrics = hub.metrics()
        events = hub.drain_events()
    assert metrics["stale_discards"] == 1
    assert not [e for e in events if isinstance(e, DecisionMade | DecisionFallback)]
