"""UtilitySelector.set_input queued by the binding, in the real engine, against the Python path.

`tests/addon/input_queue.gd` feeds selectors of two definitions every frame, typed and untyped, with
the odd calls the C queue must leave to Python (keys the definition does not read, NaN, a String,
an int, set_inputs() around set_input() of the same keys) and record_event calls of another queued
method between them; it frees one selector and redefines another right after their calls in a
frame, and adds one late. Every frame's `choice`, every behavior_changed signal and the scores read
must be those of a `MindServer` given the same calls one by one (`SelectorBank.set_input_values`, as
the node's Python body writes them), stepped at each frame's end; the String value is reported once
per selector; and the binding must have queued most of the plain calls (`binding/queued_calls`, an
int for a float among them) and answered most of the choice reads (`binding/answered_calls`), so the
comparison covers the C paths. It fails when the queue writes the calls out of order, loses the
last of two calls of a key, applies a queued call after a later Python one, or keeps queuing under
a freed or redefined selector's old handle; or when a choice answered in C is not the server's
last batched one (a stale entry after a redefinition, say).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from npc_mind.server import ClockMode
from npc_mind.server.core import MindServer
from tests.support.godot import run_godot

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.godot
PER_DEFINITION = 4
FRAMES = 40
KEYS = {"threat", "calm", "noise"}


def definition(kind: int, momentum: float) -> dict[str, Any]:
    """The definition a selector of the script hands the server (`UtilitySelector.to_dict`)."""

    def consideration(key: str, curve_type: str = "linear") -> dict[str, Any]:
        return {"input_key": key, "curve_type": curve_type, "curve_params": {}, "weight": 1.0,
                "invert": False, "per_target": False}  # fmt: skip

    def behavior(name: str, key: str, curve_type: str = "linear") -> dict[str, Any]:
        return {"name": name, "considerations": [consideration(key, curve_type)],
                "aggregation": "weighted_sum", "weight": 1.0, "tags": [], "cooldown": 0.0}  # fmt: skip

    return {
        "behaviors": [behavior("patrol", "calm"), behavior("pursue", "threat"),
                      behavior("search", "noise", "saturating")],
        "momentum": momentum, "commitment": 0.0, "interrupt_margin": 0.25, "tie_tolerance": 0.0,
        "top_n": 1, "seed": None,
    }  # fmt: skip


DEFAULTS = {0: {}, 1: {"calm": 0.6}}


def given(value: Any) -> Any:
    if isinstance(value, dict):
        return math.nan if value.get("float") == "nan" else value
    return value


def test_set_input_queued_in_c_is_the_python_path() -> None:
    run = run_godot(ROOT, "--fixed-fps", "30", "-s", "res://tests/addon/input_queue.gd")
    assert run.returncode == 0, run.log
    (line,) = [line for line in run.stdout.splitlines() if line.startswith('{"calls"')]
    data = json.loads(line)
    assert "Traceback" not in run.stdout + run.stderr, run.log

    server = MindServer(ClockMode.MANUAL)
    handles: dict[int, int] = {}  # selector index -> handle (0: redefined, not joined yet)

    def add(index: int, kind: int, momentum: float) -> None:  # as the node joins: defaults preset
        handle = handles[index] = server.add_selector(definition(kind, momentum))
        for key, value in DEFAULTS[kind].items():
            server.selectors.preset(handle, key, value)

    for index in range(2 * PER_DEFINITION):
        add(index, index // PER_DEFINITION, 0.1 * (index // PER_DEFINITION))
    by_frame: dict[int, list[list[Any]]] = {}
    for call in data["calls"]:
        by_frame.setdefault(call[0], []).append(call)
    scores = {(frame, index): value for frame, index, value in data["scores"]}
    expected_changes: list[list[Any]] = []
    plain = 0
    chosen_reads = 0  # reads of a choice the server has made (the binding answers those)
    for frame in range(1, FRAMES + 1):
        names = {index: server.selectors.names(handle) for index, handle in handles.items() if handle}
        read = [  # a freed selector: null; a redefined one not joined yet: "" (no choice)
            (server.selectors.choice(handles[index]) if handles[index] else "") if index in handles else None
            for index in range(len(data["choices"][frame - 1]))
        ]
        assert data["choices"][frame - 1] == read, (frame, data["choices"][frame - 1], read, names)
        chosen_reads += sum(1 for choice in read if choice)
        if frame == 15:
            add(2 * PER_DEFINITION, 0, 0.0)
        redefined = False
        for _, index, key, logged, how in by_frame.get(frame, []):
            if how == "redefined":  # its calls of this frame first, then the new definition
                server.remove(handles[index])
                handles[index], redefined = 0, True
                continue
            if not handles[index]:  # the redefined selector joins at its next call
                add(index, 1, 0.0)
            value = given(logged)
            if isinstance(value, dict):  # a String: reported, the value ignored
                continue
            entry = server.selectors.entry(handles[index])
            server.selectors.set_input_values(entry, {key: value})
            if how != "dict" and key in KEYS and isinstance(value, int | float) and math.isfinite(value):
                plain += 1  # an int for a float is queued as its float
        if frame == 20:  # freed after its calls
            server.remove(handles.pop(2))
        for (at, index), value in scores.items():
            if at == frame:
                assert value == pytest.approx(server.scores(handles[index]), abs=0, rel=0), (frame, index)
        server.clock._now = frame / 30.0
        server.selectors.step(server.clock._now)
        index_of = {handle: index for index, handle in handles.items() if handle}
        expected_changes += [
            [frame, index_of[event.handle], event.args[0]]
            for event in server.events.drain()
            if event.signal == "behavior_changed" and event.handle in index_of
        ]
        assert not redefined or not handles[3]
    got = [change for change in data["changes"] if change[0] < FRAMES]
    assert got == [change for change in expected_changes if change[0] < FRAMES]

    # the String value: one error per selector that was given it, naming the call
    errors = [line for line in run.errors() if "set_input() got 'loud' (str), not a number" in line]
    named = sorted(line.split("npc_mind: ")[1].split(":")[0] for line in errors)
    fed_loud = sorted({f"/root/Selector{call[1]}" for call in data["calls"] if call[3] == {"string": "loud"}})
    assert named == fed_loud, (named, fed_loud)
    # most plain calls were queued in C (the record_event calls between them are queued too)
    record_calls = len({(call[0], call[1]) for call in data["calls"] if call[4] != "redefined"})  # one a feed
    assert 0.9 * plain <= data["queued"] <= plain + record_calls, (data["queued"], plain)
    # most reads of a made choice were answered in C (awareness_of calls may be answered too)
    answered_choices = data["answered"] - data["awareness_reads"]
    assert answered_choices >= 0.9 * chosen_reads, (data["answered"], data["awareness_reads"], chosen_reads)
