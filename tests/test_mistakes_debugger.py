"""Issue 22 (11): malformed `npc_mind` debugger messages from the peer are refused with one clear
error per message name, through Godot's remote debugger protocol, and the feed goes on (it raised
bare ValueError / TypeError / OverflowError with a traceback on each)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.support.remote_debugger import DebuggerEndpoint
from tests.test_debugger_feed import play, snapshots

pytestmark = pytest.mark.godot
MALFORMED: list[list[Any]] = [
    ["x"], [None], [math.inf], [math.nan], [1.5], [[1]], [{"id": 1}], [1, 2], [True],
]  # fmt: skip


def test_malformed_messages_are_refused_once_and_the_feed_goes_on() -> None:
    sent = []

    def attack_then_select(endpoint: DebuggerEndpoint, message: str, data: list[Any]) -> None:
        if message != "npc_mind:npcs" or sent:
            return
        for payload in MALFORMED:
            endpoint.send("npc_mind:select", payload)
            sent.append(payload)
        endpoint.send("npc_mind:nonsense", [1])
        ids, _paths, names, _freed = data
        endpoint.send("npc_mind:select", [ids[names.index("Aldric")]])

    with DebuggerEndpoint() as endpoint:
        endpoint.on_message(attack_then_select)
        run = play("--remote-debug", endpoint.uri)
    assert sent == MALFORMED, run.log
    text = run.stdout + run.stderr
    assert "Traceback" not in text, run.log
    assert endpoint.messages("debug_enter") == [], run.log
    refused = [line for line in run.errors() if "refused a malformed debugger message" in line]
    assert len(refused) == 2, run.log  # one for select, one for the unknown name
    assert "npc_mind:select with ['x']: it takes one NPC id, an int (0: none)" in refused[0], refused
    assert "npc_mind:unknown" in refused[1] and "select, refresh or forget_freed" in refused[1], refused
    # nothing else (but the engine's line for the feed's look-up of a plain entity id as an object,
    # which the feed test's run prints too)
    assert [line for line in run.errors() if "slot >= slot_max" not in line] == refused, run.log
    live = snapshots(endpoint)
    assert live and {snap["name"] for snap in live} == {"Aldric"}, run.log  # the valid select worked
