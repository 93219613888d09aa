"""The NPC Mind debugger tab's data, end to end with the real engine: a game started with
`--remote-debug tcp://127.0.0.1:<port>` against a debugger endpoint in the test (Godot's remote
debugger protocol) sends its NPC list and, for the NPC the "editor" selects, live memories (R matching
e^(-t/S)), the selector's scores and the LLM decisions; without a debugger it sends nothing."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from tests.support.godot import GodotRun, run_godot
from tests.support.remote_debugger import DebuggerEndpoint

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "res://tests/addon/debug_feed.gd"
MONITOR_TYPE_QUANTITY, MONITOR_TYPE_TIME = 0, 2  # Performance.MONITOR_TYPE_*

pytestmark = pytest.mark.godot


def play(*args: str) -> GodotRun:
    run = run_godot(ROOT, *args, "-s", SCRIPT, timeout=60, env={"NPC_MIND_LLM_URL": ""})
    assert run.returncode == 0, run.log
    return run


def line_with(run: GodotRun, key: str) -> dict[str, Any]:
    return next(line for line in run.json_lines() if key in line)


def select_aldric(endpoint: DebuggerEndpoint, message: str, data: list[Any]) -> None:
    if message == "npc_mind:npcs":
        ids, _paths, names = data
        if "Aldric" in names:
            endpoint.send("npc_mind:select", [ids[names.index("Aldric")]])


@pytest.fixture(scope="module")
def attached() -> tuple[GodotRun, DebuggerEndpoint]:
    with DebuggerEndpoint() as endpoint:
        endpoint.on_message(select_aldric)
        run = play("--remote-debug", endpoint.uri)
    assert endpoint.messages("debug_enter") == [], run.log  # no script error broke into the debugger
    return run, endpoint


def snapshots(endpoint: DebuggerEndpoint) -> list[dict[str, Any]]:
    return [data[0] for data in endpoint.messages("npc_mind:npc")]


def test_the_npc_list_arrives(attached: tuple[GodotRun, DebuggerEndpoint]) -> None:
    run, endpoint = attached
    ids, paths, names = endpoint.messages("npc_mind:npcs")[-1]
    guard = line_with(run, "guard")["guard"]
    assert list(zip(ids, paths, names, strict=True)) == [(guard, "/root/Aldric", "Aldric")]


def test_memories_fade_as_e_to_the_minus_t_over_s(attached: tuple[GodotRun, DebuggerEndpoint]) -> None:
    run, endpoint = attached
    ids = line_with(run, "guard")
    live = snapshots(endpoint)
    assert len(live) >= 3, run.log
    assert {snap["id"] for snap in live} == {ids["guard"]} and live[0]["name"] == "Aldric"
    for snap in live:
        assert snap["memories"], snap
        for memory in snap["memories"]:
            assert memory["r"] == pytest.approx(math.exp(-memory["age"] / memory["s"]), rel=1e-6), memory
            assert 0 <= memory["awareness"] <= 3 and memory["recalls"] >= 1 and memory["pinned"] is False
        assert snap["profile"] == {"curve": "exponential", "forget": 0.05, "search": 0.3, "pursue": 0.8}
    thief = [next(m for m in snap["memories"] if m["entity"] == ids["thief"]) for snap in live]
    assert {(m["entity_name"], m["type_name"]) for m in thief} == {("Tam", "hostile")}
    assert thief[-1]["r"] < thief[0]["r"] and thief[-1]["age"] > thief[0]["age"]  # it fades, untouched
    plain = [m for m in live[-1]["memories"] if m["entity"] == ids["plain"]]
    assert plain and plain[0]["entity_name"] == "" and plain[0]["type_name"] == "trivia"


def test_selector_scores_arrive_with_the_chosen_behavior(
    attached: tuple[GodotRun, DebuggerEndpoint],
) -> None:
    _run, endpoint = attached
    chosen = []
    for snap in snapshots(endpoint):
        selector = snap["selector"]
        assert selector["names"] == ["attack", "idle"]
        scores = dict(zip(selector["names"], selector["scores"], strict=True))
        assert selector["chosen"] == max(scores, key=scores.get), selector
        chosen.append(selector["chosen"])
    assert chosen[0] == "idle" and chosen[-1] == "attack"  # the threat rose during the run


def test_llm_decisions_arrive_on_the_timeline(attached: tuple[GodotRun, DebuggerEndpoint]) -> None:
    _run, endpoint = attached
    last = snapshots(endpoint)[-1]
    outcomes = [entry for entry in last["decisions"] if entry["kind"] != "thinking"]
    assert len(outcomes) >= 2, last["decisions"]
    for entry in outcomes:
        assert (entry["kind"], entry["tier"], entry["reason"]) == ("fallback", 3, "no_endpoint")
        assert entry["intent"] in ("attack", "idle") and entry["latency_ms"] >= 0.0
    times = [entry["t"] for entry in last["decisions"]]
    assert times == sorted(times) and times[-1] <= last["now"]


def test_every_message_the_feed_sent_arrived(attached: tuple[GodotRun, DebuggerEndpoint]) -> None:
    run, endpoint = attached
    state = line_with(run, "feed")
    ours = [name for name, _ in endpoint.received if name.startswith("npc_mind:")]
    assert state == {"active": True, "feed": True, "capture": True, "sent": len(ours)}
    assert endpoint.undecoded == 0


def test_nothing_is_sent_without_a_debugger() -> None:
    run = play()
    assert line_with(run, "feed") == {"active": False, "feed": False, "capture": False, "sent": 0}
    assert not run.errors(), run.log
    # The monitors are there anyway (registered by the server, not by the plugin's autoload, which a
    # script run like this one does not have); times are TIME monitors (seconds, shown in ms).
    monitors = line_with(run, "monitor_types")
    kinds = monitors["monitor_types"]
    assert kinds["npc_mind/server/step_ms"] == MONITOR_TYPE_TIME
    assert kinds["npc_mind/decision/latency_p50_ms"] == MONITOR_TYPE_TIME
    assert kinds["npc_mind/memory/streams"] == MONITOR_TYPE_QUANTITY
    assert monitors["step_ms"] > 0.0 and monitors["step_s"] == pytest.approx(monitors["step_ms"] / 1000.0)
