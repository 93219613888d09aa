"""The NPC Mind debugger tab's data, end to end with the real engine: a game started with
`--remote-debug tcp://127.0.0.1:<port>` against a debugger endpoint in the test (Godot's remote
debugger protocol) sends its NPC list and, for the NPC the "editor" selects, live memories (R matching
e^(-t/S)), the selector's scores and the LLM decisions; without a debugger it sends nothing. A second
game is stopped at a break while an NPC is selected (answered at once), frees a remembered entity
and an NPC (both marked, their names kept), lists NPCs by scene path, and drops freed ones on request;
the panel itself is fed those messages headless."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from tests.support.godot import GodotRun, run_check_script, run_godot
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
        ids, _paths, names, _freed = data
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
    ids, paths, names, freed = endpoint.messages("npc_mind:npcs")[-1]
    guard = line_with(run, "guard")["guard"]
    assert list(zip(ids, paths, names, freed, strict=True)) == [(guard, "/root/Aldric", "Aldric", False)]


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
    assert {(m["entity_name"], m["entity_path"], m["entity_freed"], m["type_name"]) for m in thief} == {
        ("Tam", "/root/Tam", False, "hostile")  # alive, outside any current scene: its absolute path
    }
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
    # The frame's time by part: the step's parts, the senses and the signals are pieces of the frame
    # callback, one after another, and the step's parts are pieces of the step.
    parts = {name[len("server/") : -len("_ms")]: value for name, value in monitors["parts"].items()}
    step_parts = ("fold", "inputs", "choose", "decide", "memory")
    assert set(parts) == {"step", "frame", "senses", "signals", "update_wait", *step_parts}, parts
    assert parts["update_wait"] == 0.0  # the update runs on the main thread here
    assert all(kinds[f"npc_mind/server/{part}_ms"] == MONITOR_TYPE_TIME for part in parts)
    assert all(value >= 0.0 for value in parts.values()), parts
    assert sum(parts[part] for part in step_parts) <= parts["step"] <= parts["frame"]
    assert parts["senses"] + parts["step"] + parts["signals"] <= parts["frame"]


LIFECYCLE = "res://tests/addon/debug_feed_lifecycle.gd"


class Lifecycle:
    """The editor's side of debug_feed_lifecycle.gd: once the thief is freed, stop the game at a
    break and select the first NPC; continue once its snapshot arrived; ask for that NPC to be freed
    once a snapshot came after the break; drop the freed NPCs once the list marks it; then quit."""

    def __init__(self) -> None:
        self.selected = 0
        self.stage = "wait_thief"

    def __call__(self, endpoint: DebuggerEndpoint, message: str, data: list[Any]) -> None:
        lists = endpoint.messages("npc_mind:npcs")
        if self.stage == "wait_thief" and message == "test:thief_freed" and lists:
            self.selected = lists[-1][0][0]
            self.stage = "break"
            endpoint.send("break", [])
        elif self.stage == "break" and message == "debug_enter":
            self.stage = "paused"
            endpoint.send("npc_mind:select", [self.selected])
        elif self.stage == "paused" and message == "npc_mind:npc":
            self.stage = "running"
            endpoint.send("continue", [])
        elif self.stage == "running" and message == "npc_mind:npc" and endpoint.messages("debug_exit"):
            self.stage = "freeing"
            endpoint.send("test:free", [])
        elif self.stage == "freeing" and message == "npc_mind:npcs" and True in data[3]:
            self.stage = "forgetting"
            endpoint.send("npc_mind:forget_freed", [])
        elif self.stage == "forgetting" and message == "npc_mind:npcs" and True not in data[3]:
            self.stage = "done"
            endpoint.send("test:quit", [])


@pytest.fixture(scope="module")
def lifecycle() -> tuple[GodotRun, DebuggerEndpoint, Lifecycle]:
    driver = Lifecycle()
    with DebuggerEndpoint(continue_breaks=False) as endpoint:
        endpoint.on_message(driver)
        run = run_godot(
            ROOT, "--remote-debug", endpoint.uri, "-s", LIFECYCLE, timeout=60, env={"NPC_MIND_LLM_URL": ""}
        )
    assert run.returncode == 0, run.log
    assert driver.stage == "done", f"stopped at {driver.stage}\n{run.log}"
    return run, endpoint, driver


def test_a_selection_is_answered_while_the_game_is_stopped_at_a_break(
    lifecycle: tuple[GodotRun, DebuggerEndpoint, Lifecycle],
) -> None:
    _run, endpoint, driver = lifecycle
    names = [name for name, _ in endpoint.received]
    assert names.count("debug_enter") == 1 and names.count("debug_exit") == 1
    stopped, resumed = names.index("debug_enter"), names.index("debug_exit")
    during = [data[0] for name, data in endpoint.received[stopped:resumed] if name == "npc_mind:npc"]
    assert [snap["id"] for snap in during] == [driver.selected]
    assert during[0]["memories"], during[0]


def test_npcs_named_by_the_engine_are_told_apart_by_their_scene_path(
    lifecycle: tuple[GodotRun, DebuggerEndpoint, Lifecycle],
) -> None:
    run, endpoint, _driver = lifecycle
    started = line_with(run, "mobs")
    ids, paths, names, freed = endpoint.messages("npc_mind:npcs")[0]
    assert sorted(names) == sorted(started["names"])
    assert all(name.startswith("@CharacterBody3D@") for name in names)
    by_id = dict(zip(ids, paths, strict=True))
    assert [by_id[mob] for mob in started["mobs"]] == [f"Mobs/{name}" for name in started["names"]]
    assert freed == [False, False]


def test_a_freed_entity_keeps_its_name_marked_freed(
    lifecycle: tuple[GodotRun, DebuggerEndpoint, Lifecycle],
) -> None:
    run, endpoint, driver = lifecycle
    thief = line_with(run, "thief")["thief"]
    live = [data[0] for data in endpoint.messages("npc_mind:npc") if not data[0].get("freed")]
    assert live, run.log
    for snap in live:  # Tam was freed before its NPC was first selected: the feed learned the name
        row = next(m for m in snap["memories"] if m["entity"] == thief)
        assert (row["entity_name"], row["entity_path"], row["entity_freed"]) == ("Tam", "", True), row
    assert {snap["id"] for snap in live} == {driver.selected}


def test_a_freed_npc_is_marked_then_dropped_on_request(
    lifecycle: tuple[GodotRun, DebuggerEndpoint, Lifecycle],
) -> None:
    run, endpoint, driver = lifecycle
    started = line_with(run, "mobs")
    other = next(mob for mob in started["mobs"] if mob != driver.selected)
    lists = endpoint.messages("npc_mind:npcs")
    marked = next(entry for entry in lists if True in entry[3])
    assert dict(zip(marked[0], marked[3], strict=True)) == {driver.selected: True, other: False}
    assert lists[-1][0] == [other] and lists[-1][3] == [False]
    gone = [data[0] for data in endpoint.messages("npc_mind:npc") if data[0].get("freed")]
    name = started["names"][started["mobs"].index(driver.selected)]
    assert gone == [{"id": driver.selected, "name": name, "path": f"Mobs/{name}", "freed": True}]
    assert not run.errors(), run.log


def test_the_tab_lists_paths_and_marks_what_was_freed() -> None:
    _run, checks = run_check_script(ROOT, "res://tests/addon/mind_panel.gd")
    assert len(checks) == 11


SENSES = "res://tests/addon/debug_feed_senses.gd"
STONE_SALIENCE = 0.8 * (1.0 - math.hypot(100.0, 50.0) / 300.0)  # heard at d = |(100, -50)| of a 300 px radius


class SensesDriver:
    """The editor's side of debug_feed_senses.gd: select Aldric when listed; once the game says it
    paused, select him again (answered at once, the game paused) and note where that answer is."""

    def __init__(self) -> None:
        self.selected = 0
        self.paused_at = -1  # index in endpoint.received of the game's "test:paused"

    def __call__(self, endpoint: DebuggerEndpoint, message: str, data: list[Any]) -> None:
        if message == "npc_mind:npcs" and not self.selected:
            ids, _paths, names, _freed = data
            if "Aldric" in names:
                self.selected = ids[names.index("Aldric")]
                endpoint.send("npc_mind:select", [self.selected])
        elif message == "test:paused":
            self.paused_at = len(endpoint.received) - 1
            endpoint.send("npc_mind:select", [self.selected])


@pytest.fixture(scope="module")
def sensing() -> tuple[GodotRun, DebuggerEndpoint, SensesDriver]:
    driver = SensesDriver()
    with DebuggerEndpoint() as endpoint:
        endpoint.on_message(driver)
        run = run_godot(
            ROOT, "--remote-debug", endpoint.uri, "-s", SENSES, timeout=60, env={"NPC_MIND_LLM_URL": ""}
        )
    assert run.returncode == 0, run.log
    assert endpoint.messages("debug_enter") == [], run.log
    assert driver.selected and driver.paused_at >= 0, run.log
    return run, endpoint, driver


def sensing_snapshots(endpoint: DebuggerEndpoint) -> list[dict[str, Any]]:
    return [snap for snap in snapshots(endpoint) if snap.get("perceptions")]


def test_the_tab_gets_what_each_sense_perceived_in_the_last_second(
    sensing: tuple[GodotRun, DebuggerEndpoint, SensesDriver],
) -> None:
    run, endpoint, _driver = sensing
    ids = line_with(run, "tam")
    live = sensing_snapshots(endpoint)
    assert len(live) >= 3, run.log
    names_seen = set()
    for snap in live:
        listed = [(sense["name"], sense["class"]) for sense in snap["senses"]]
        assert listed == [("Eyes", "SightSense2D"), ("Ears", "HearingSense2D")]
        rows = snap["perceptions"]
        assert len(rows) <= 24 and snap["perception_count"] >= len(rows)
        assert [row["time"] for row in rows] == sorted((row["time"] for row in rows), reverse=True)
        for row in rows:
            assert 0.0 <= row["age"] <= 1.0 and row["age"] == pytest.approx(snap["now"] - row["time"])
            assert row["entity"] != ids["bo"], row  # behind the wall: never seen
            assert 1 <= row["count"] <= 11 and 0 <= row["recorded"] <= row["count"], row  # 10 Hz at most
            names_seen.add((row["sense"], row["entity_name"], row["type_name"]))
            if row["sense"] == "Eyes":
                assert row["entity"] == ids["tam"] and row["where"] == pytest.approx([200.0, 30.0]), row
                assert row["salience"] == {"observation": 0.3, "hostile": 0.9}[row["type_name"]]
            else:  # the stone
                heard = (row["entity"], row["entity_name"], row["type_name"])
                assert heard == (ids["stone"], "Stone", "hostile"), row
                assert row["where"] == pytest.approx([100.0, -50.0]), row
                assert row["salience"] == pytest.approx(STONE_SALIENCE, rel=1e-6), row
        counted = {sense["name"]: sense["perceived"] for sense in snap["senses"]}
        for name in ("Eyes", "Ears"):
            assert counted[name] == sum(row["count"] for row in rows if row["sense"] == name)
    expected = {("Eyes", "Tam", "observation"), ("Eyes", "Tam", "hostile"), ("Ears", "Stone", "hostile")}
    assert names_seen == expected


def test_the_tab_gets_which_actions_ran_with_their_phase_and_result(
    sensing: tuple[GodotRun, DebuggerEndpoint, SensesDriver],
) -> None:
    run, endpoint, _driver = sensing
    last = [snap for snap in snapshots(endpoint) if snap.get("actions")][-1]
    entries = last["actions"]
    times = [entry["time"] for entry in entries]
    assert len(entries) <= 16 and times == sorted(times)
    ran = [(entry["behavior"], entry["phase"], entry["action"], entry["ok"]) for entry in entries]
    assert ran == [
        ("idle", "on_enter", "SetPropertyAction modulate:a", True),
        ("idle", "on_tick", "SetPropertyAction rotation", True),
        ("idle", "on_exit", "CallMethodAction no_such_method", False),  # skipped: reported once
        ("attack", "on_enter", "EmitSignalAction alarm", True),
    ], entries
    assert entries[1]["times"] >= 2 and all(entry["times"] == 1 for entry in entries[::2])
    assert all(entry["time"] <= last["now"] for entry in entries)
    assert sum("no_such_method" in line for line in run.errors()) == 1, run.log


def test_perceptions_and_actions_are_shown_while_the_game_is_paused(
    sensing: tuple[GodotRun, DebuggerEndpoint, SensesDriver],
) -> None:
    _run, endpoint, driver = sensing
    paused_clock = endpoint.received[driver.paused_at][1][0]
    after = [data[0] for name, data in endpoint.received[driver.paused_at :] if name == "npc_mind:npc"]
    assert len(after) >= 2  # the answer to the select, then the 5 Hz snapshots go on
    for snap in after:
        assert snap["now"] == pytest.approx(paused_clock)  # the clock stands still...
        # ...and so does the last second of what was perceived
        assert {row["sense"] for row in snap["perceptions"]} == {"Eyes", "Ears"}
        assert snap["actions"][-1]["action"] == "EmitSignalAction alarm"
