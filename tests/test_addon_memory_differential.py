"""The per-node memory path in the real engine, against the same calls applied at once: MemoryStream
nodes driven from GDScript as a game's guards drive them (`tests/addon/memory_differential.gd`:
each records its crowd, reads and recalls, plus seeded random calls; fifty seconds, small rows)
answer and signal exactly as a server with no deferral (`MemoryBank.per_frame` off) given the same
calls at the same times. `tests/test_server_deferred.py` proves the deferred bank in Python; this
one covers what lies between GDScript and it (the nodes, the binding's conversions, the frame
hook's fold and step, the signals' delivery), and breaks of the wake ordering or of a refreshed
recall's R = 1 make it fail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from npc_mind.server import ClockMode
from npc_mind.server.core import MindServer
from npc_mind.server.memories import MemoryProfileSpec
from tests.support.godot import run_godot

ROOT = Path(__file__).resolve().parents[1]
SIGNALS = {"memory_formed", "memory_rehearsed", "memory_forgotten", "memory_evicted"}

pytestmark = pytest.mark.godot


def engine_log() -> dict[str, Any]:
    run = run_godot(ROOT, "--fixed-fps", "2", "-s", "res://tests/addon/memory_differential.gd")
    assert run.returncode == 0 and not run.errors(), run.log
    (line,) = [line for line in run.stdout.splitlines() if line.startswith('{"frames"')]
    return json.loads(line)


def replay(log: dict[str, Any]) -> tuple[list[list[Any]], list[list[Any]]]:
    """The engine's calls, frame by frame, on a server that applies each at once; (the calls with
    their results, the signals with their frames), shaped as the engine's log."""
    server = MindServer(ClockMode.PROCESS)
    server.memory.per_frame = False  # every call at once: no queue, no table
    streams = [server.add_memory(MemoryProfileSpec(capacity=4)) for _ in range(12)]
    index = {handle: i for i, handle in enumerate(streams)}
    bank = server.memory
    calls: list[list[Any]] = []
    signals: list[list[Any]] = []
    for number, frame in enumerate(log["frames"], start=1):
        assert server.now() == frame["now"]  # the same times, bit for bit
        done = []
        for stream, op, entity, memory_type, salience, _ in frame["calls"]:
            handle = streams[stream]
            if op == "record":
                result = bank.write(handle, entity, memory_type, salience)
            elif op == "aware":
                result = bank.aware(handle, entity)
            else:
                result = bank.recall(handle, entity)
            done.append([stream, op, entity, memory_type, salience, result])
        calls.append(done)
        for event in server.step(frame["delta"]):
            if event.signal in SIGNALS:
                signals.append([number, index[event.handle], event.signal, *event.args])
    return calls, signals


def test_nodes_answer_and_signal_as_the_calls_applied_at_once() -> None:
    log = engine_log()
    calls, signals = replay(log)
    engine_calls = [frame["calls"] for frame in log["frames"]]
    assert len(engine_calls) == 100
    for number, (got, want) in enumerate(zip(engine_calls, calls, strict=True), start=1):
        assert got == want, f"frame {number}"
    assert log["signals"] == signals
    # what the run covered: each kind of signal and of answer, more than once
    kinds = {signal[2] for signal in signals}
    assert kinds == SIGNALS, kinds
    answers = [call[5] for frame in engine_calls for call in frame if call[1] != "record"]
    assert {0, 1, 2, 3} <= {answer for answer in answers if isinstance(answer, int)}
    assert sum(1 for answer in answers if answer == {}) > 10
    assert sum(1 for answer in answers if isinstance(answer, dict) and answer) > 20
