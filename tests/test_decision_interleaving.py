"""Randomized interleavings of ticks, clock jumps, aborts, board changes, answers (in time, late, after a
cancel) and failures over many NPCs, through a deterministic in-process transport and a fake clock, so
hypothesis shrinks any failure to a short story. Never a stale or ghost write; exactly one decision
event per request that was not aborted; tiers always match the measured latency."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from npc_mind.decision import DecisionConfig, DecisionFallback, DecisionHub, DecisionMade, ThinkingStarted
from npc_mind.llm import Answer, DecisionSchema
from tests.support import decision_world as world
from tests.support.scripted_transport import FakeClock, ScriptedTransport

GHOST = "ghost"  # the only intent ever given to a request that was already cancelled
SCHEMA = DecisionSchema((*world.INTENTS, GHOST))
CONFIG = DecisionConfig(
    soft_deadline=0.3, hard_deadline=0.8, tag_ttl=2.0, replan_interval=1.0, watched=("threat",), min_gap=0.1
)
NPCS = 8

operations = st.one_of(
    st.tuples(st.just("advance"), st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.05, 0.15, 0.35]))),
    st.tuples(st.just("tick")),
    st.tuples(st.just("abort"), st.integers(0, NPCS - 1)),
    st.tuples(st.just("threat"), st.integers(0, NPCS - 1), st.sampled_from([0.1, 0.5, 0.9])),
    st.tuples(st.just("answer"), st.integers(0, 50), st.sampled_from(world.INTENTS), st.floats(0.0, 1.0)),
    st.tuples(st.just("fail"), st.integers(0, 50), st.sampled_from(["http_error", "invalid_json"])),
)


@settings(max_examples=400, deadline=None)
@given(st.integers(1, NPCS), st.lists(operations, max_size=80))
def test_no_stale_or_ghost_write_ever(npcs: int, ops: list[tuple]) -> None:
    clock = FakeClock()
    transport = ScriptedTransport(clock)
    hub = DecisionHub(transport, SCHEMA, config=CONFIG)
    for npc in range(npcs):
        hub.add(npc, world.rules())
    boards = {npc: world.board(threat=0.5) for npc in range(npcs)}
    aborted: set[tuple[int, int]] = set()
    delivered_live: dict[tuple[int, int], float] = {}  # answers given to live requests -> when
    events: list[object] = []

    def live_key(npc: int) -> tuple[int, int] | None:
        keys = [k for k in transport.open_keys() if k[0] == npc and k not in transport.cancelled]
        assert len(keys) <= 1, f"more than one live request for NPC {npc}: {keys}"
        return keys[0] if keys else None

    for op in ops:
        kind = op[0]
        if kind == "advance":
            clock.advance(op[1])
        elif kind == "tick":
            hub.tick_all(clock(), boards)
        elif kind == "abort" and op[1] < npcs:
            if hub.decisions[op[1]].pending:  # live, or answered but not merged yet: both end here
                aborted.add(max(k for k in transport.requests if k[0] == op[1]))
            hub.abort(op[1], "interrupt")
        elif kind == "threat" and op[1] < npcs:
            boards[op[1]]["threat"] = op[2]
        elif kind in ("answer", "fail"):
            open_keys = transport.open_keys()
            if not open_keys:
                continue
            key = open_keys[op[1] % len(open_keys)]
            live = key not in transport.cancelled
            if kind == "answer":
                intent = op[2] if live else GHOST
                if live:
                    delivered_live[key] = clock()
                transport.finish(key, Answer(intent, op[3]))
            else:
                transport.finish(key, None, op[2])
        events += hub.drain_events()
        for npc, decision in hub.decisions.items():
            assert GHOST not in (decision.intent, decision.behavior)
            live = live_key(npc) is not None
            # An answer committed but not merged yet still counts as pending until the next tick.
            assert decision.pending == live if not decision.slot else decision.pending or not live

    hub.tick_all(clock(), boards)
    events += hub.drain_events()
    ends: dict[tuple[int, int], list[object]] = {}
    for event in events:
        assert getattr(event, "intent", None) != GHOST
        assert getattr(event, "behavior", None) != GHOST
        if isinstance(event, ThinkingStarted):
            assert (event.npc, event.epoch) in transport.requests
        else:
            ends.setdefault((event.npc, event.epoch), []).append(event)
    for key, ended in ends.items():
        assert len(ended) == 1, f"request {key} ended {len(ended)} times: {ended}"
        assert key not in aborted, f"aborted request {key} produced {ended}"
        end = ended[0]
        if isinstance(end, DecisionMade):
            request, _ = transport.requests[key]
            latency = delivered_live[key] - request.started_at
            assert end.latency == latency
            assert end.tier in (1, 2) and end.tier == CONFIG.classify(latency)
        else:
            assert isinstance(end, DecisionFallback) and end.tier == 3
    still_pending = {live_key(npc) for npc in range(npcs)} - {None}
    for key in transport.requests:
        expected = 0 if key in aborted or key in still_pending else 1
        assert len(ends.get(key, [])) == expected, (key, ends.get(key))
    metrics = hub.metrics()
    assert metrics["dispatched"] == len(transport.requests) + metrics["fallback_reasons"].get("queue_full", 0)
    assert metrics["tier1"] + metrics["tier2"] + metrics["tier3"] == len(ends)


def play(npcs: int, ops: list[tuple], fast: bool, config: DecisionConfig = CONFIG) -> list[object]:
    """Run a story; `fast` ticks through `DecisionHub.tick_all` (which skips idle NPCs), else every NPC's
    `tick` is called every time. Returns everything observable, frame by frame."""
    clock = FakeClock()
    transport = ScriptedTransport(clock)
    hub = DecisionHub(transport, SCHEMA, config=config)
    for npc in range(npcs):
        hub.add(npc, world.rules())
    boards = {npc: world.board(threat=0.5) for npc in range(npcs)}
    trace: list[object] = []
    for op in ops:
        kind = op[0]
        if kind == "advance":
            clock.advance(op[1])
        elif kind == "tick" and fast:
            hub.tick_all(clock(), boards)
        elif kind == "tick":
            for npc, decision in hub.decisions.items():
                decision.tick(clock(), boards[npc])
        elif kind == "abort" and op[1] < npcs:
            hub.abort(op[1])
        elif kind == "threat" and op[1] < npcs:
            boards[op[1]]["threat"] = op[2]
        elif kind in ("answer", "fail") and transport.open_keys():
            keys = transport.open_keys()
            key = keys[op[1] % len(keys)]
            answer = Answer(op[2], op[3]) if kind == "answer" else None
            transport.finish(key, answer, "" if answer else op[2])
        trace.append([(d.behavior, d.intent, d.tier, d.pending) for d in hub.decisions.values()])
        trace.append(hub.drain_events())
    return trace


# Two watched keys and a change threshold: the hub's general path, not its one-key shortcut.
LOOSE = DecisionConfig(replan_interval=1.0, watched=("threat", "health"), min_change=0.3, min_gap=0.1)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, NPCS), st.lists(operations, max_size=60), st.sampled_from([CONFIG, LOOSE]))
def test_tick_all_skipping_idle_npcs_changes_nothing(
    npcs: int, ops: list[tuple], config: DecisionConfig
) -> None:
    assert play(npcs, ops, True, config) == play(npcs, ops, False, config)


def test_answers_for_a_removed_npc_are_discarded_and_counted() -> None:
    """An answer committed before the NPC was removed (not merged yet), and one that comes back after
    its removal, are both stale discards; neither reaches an NPC re-added under the same id."""
    clock = FakeClock()
    transport = ScriptedTransport(clock)
    hub = DecisionHub(transport, SCHEMA, config=CONFIG)
    for npc in (0, 1):
        hub.add(npc, world.rules())
    boards = {npc: world.board(threat=0.5) for npc in (0, 1)}
    hub.tick_all(clock(), boards)
    assert transport.open_keys() == [(0, 1), (1, 1)]
    clock.advance(0.05)
    transport.finish((0, 1), Answer("attack", 0.5))  # committed, not merged yet
    hub.remove(0)
    hub.remove(1)
    assert transport.cancelled == {(0, 1), (1, 1)}
    assert hub.metrics()["stale_discards"] == 1
    again = hub.add(1, world.rules())  # the same id, a new NPC (not ticked: it would reuse epoch 1)
    transport.finish((1, 1), Answer("attack", 0.5))  # the late answer of the removed one
    events = hub.drain_events()
    metrics = hub.metrics()
    assert metrics["stale_discards"] == 2
    assert metrics["aborts"] == 2
    assert not again.slot and again.intent is None
    assert not [e for e in events if isinstance(e, DecisionMade | DecisionFallback)]


JITTERED = DecisionConfig(
    replan_interval=1.0, watched=("threat",), min_gap=0.1, replan_jitter=0.5, soft_deadline=0.3
)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, NPCS), st.lists(operations, max_size=60))
def test_tick_all_skipping_idle_npcs_changes_nothing_with_jitter(npcs: int, ops: list[tuple]) -> None:
    assert play(npcs, ops, True, JITTERED) == play(npcs, ops, False, JITTERED)


def test_replan_jitter_staggers_npcs_that_started_together() -> None:
    clock = FakeClock()
    transport = ScriptedTransport(clock)
    hub = DecisionHub(transport, SCHEMA, config=JITTERED)
    for npc in range(200):
        hub.add(npc, world.rules())
    boards = {npc: world.board(threat=0.5) for npc in range(200)}
    hub.tick_all(clock(), boards)  # all ask in the first frame
    for key in transport.open_keys():
        transport.finish(key, Answer("patrol", 0.5))
    hub.tick_all(clock(), boards)
    asked_at: dict[int, list[float]] = {}
    for _ in range(300):  # 3 s in 10 ms frames
        clock.advance(0.01)
        hub.tick_all(clock(), boards)
        for key in transport.open_keys():
            asked_at.setdefault(key[0], []).append(clock())
            transport.finish(key, Answer("patrol", 0.5))
    first = sorted(times[0] - 1000.0 for times in asked_at.values())
    assert len(first) == 200
    # Each interval is in [0.5, 1.0] s: the second requests spread over that half second.
    assert first[0] >= 0.5 - 1e-9 and first[-1] <= 1.0 + 0.011
    frames = {round(t, 2) for t in first}
    assert len(frames) > 30  # no single frame where everyone asks
    assert max(first.count(t) for t in first) < 20
