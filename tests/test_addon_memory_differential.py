"""The per-node memory path in the real engine, against the same calls applied at once: MemoryStream
nodes driven from GDScript as games drive them (`tests/addon/memory_differential.gd`: crowds of
guards recording, reading and recalling, per guard or all records then all reads; full streams whose
writes evict what they recall next; a second profile whose writes rehearse what was recalled;
streams that only refresh, or refresh beside a new memory; reads first thing after the fold; a read
of all memories between writes; a refused NpcMindServer.advance between records and reads; calls
from a signal handler while the server delivers signals; frames without reads; bad calls; fifty
seconds, small rows) answer, signal and log errors exactly as a server with no deferral
(`MemoryBank.per_frame` off) given the same calls at the same times, through the binding's argument
conversion. The calls go through typed variables (the engine's ptrcall), untyped Object variables
(a Variant call) and a typed node with untyped arguments, in one run; record_event's plain calls
are kept in the binding's C queue and handed to the bank in call order.
`tests/test_server_deferred.py` proves the deferred bank in Python; this one covers what lies
between GDScript and it (the nodes, the binding's conversions and C queue, the frame hook's fold
and step, the signals' delivery), and each of these breaks makes it fail: the
wake ordering, a refreshed recall's R = 1, the recall row's room (`FrameCache.recall`'s check, or
the room `pending_limits` gives) and its count of writes that only refresh, the refresh pass's
exclusion of NPCs whose events are not all refreshes (`_refresh_only`), the frame state's reset
(`MemoryBank._new_frame`: the positions of the writes, or the table, and the fold's own call of
it), a stream whose queued writes were applied read from the table, a queued write the queue should
have refused, and in the C queue a lost row, a missing hand-over before a method call, a wrong
argument check or a wrongly reused boxed number."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npc_mind.memory import kernel
from npc_mind.server import ClockMode
from npc_mind.server.core import MindServer
from npc_mind.server.memories import MemoryBank, MemoryProfileSpec
from tests.support.godot import GodotRun, run_godot
from tests.support.memory_kernel import LEVELS, forced_kernel

ROOT = Path(__file__).resolve().parents[1]
SIGNALS = {"memory_formed", "memory_rehearsed", "memory_forgotten", "memory_evicted"}
# each op: its MemoryStream method and declared parameter types
METHODS = {
    "record": ("record_event", (int, int, float)),
    "aware": ("awareness_of", (int,)),
    "recall": ("query_strongest", (int,)),
    "memories": ("get_memories", ()),
}
REFUSED = "refused"  # the engine refused the call: the GDScript function stopped there
GODOT_TYPE = {float: "float", str: "String", bool: "bool", int: "int", type(None): "Nil"}

pytestmark = pytest.mark.godot


def engine_run(kernel_level: str) -> tuple[GodotRun, dict[str, Any]]:
    run = run_godot(
        ROOT,
        "--fixed-fps",
        "2",
        "-s",
        "res://tests/addon/memory_differential.gd",
        env={kernel.ENV_VAR: kernel_level},
    )
    assert run.returncode == 0, run.log
    (line,) = [line for line in run.stdout.splitlines() if line.startswith('{"profiles"')]
    return run, json.loads(line)


def decoded(value: Any) -> Any:
    """A logged argument as GDScript passed it (JSON holds no NaN: the script tags it)."""
    return math.nan if value == {"float": "nan"} else value


def converted(value: Any, declared: type) -> Any:
    """The binding's conversion of an argument to a declared int or float parameter: bool, int and
    float into each other, a float with a fraction (or not finite) never truncated into an int;
    REFUSED for anything else, null included (the engine refuses the call)."""
    if not isinstance(value, bool | int | float):
        return REFUSED
    if declared is int and isinstance(value, float) and not value.is_integer():
        return REFUSED
    return declared(value)


DROPPED_ZERO = {"record": None, "aware": 0, "recall": {}}  # a dropped call's result
STREAM = re.compile(r"npc_mind: /root/[^:]+: ")  # a stream's path in the line it reports


def dropped_line(value: Any) -> str:
    """What a stream reports, once, for an entity id that is no int (its path as `STREAM` reads)."""
    return (
        f"ERROR: npc_mind: <stream>: an entity_id must be an int, got {value!r} ({type(value).__name__}); "
        "the call is ignored. Fix: pass an int id, e.g. node.get_instance_id() of the entity perceived."
    )


def call_at_once(
    bank: MemoryBank, handle: int, op: str, arguments: list[Any], *, told: set[int], stream: int
) -> tuple[Any, str | None]:
    """(the result GDScript gets, the engine error line the call logs, if any). An entity id the
    binding refuses drops the call (`MemoryStream`'s converter), said once per stream (`told`)."""
    method, declared = METHODS[op]
    values = []
    for position, (logged, kind) in enumerate(zip(arguments, declared, strict=False), start=1):
        value = decoded(logged)
        done = converted(value, kind)
        if done is REFUSED and position == 1:
            first = stream not in told
            told.add(stream)
            return DROPPED_ZERO[op], dropped_line(value) if first else None
        if done is REFUSED:
            name = GODOT_TYPE[type(value)]
            return REFUSED, (
                f"SCRIPT ERROR: Invalid type in function '{method}' in base 'MemoryStream'. "
                f"Cannot convert argument {position} from {name} to {kind.__name__}."
            )
        values.append(done)
    if op == "memories":
        return bank.memories(handle, bank.now()), None
    return outcome({"record": bank.write, "aware": bank.aware, "recall": bank.recall}[op], handle, *values)


def outcome(call: Callable[..., Any], *arguments: Any) -> tuple[Any, str | None]:
    """(the call's result, None), or (None, the error line the engine logs when the Python method
    behind a GDScript call raises: GDScript then gets null)."""
    try:
        return call(*arguments), None
    except Exception as error:
        return None, f"ERROR: Python: {type(error).__name__}: {error}"


class AtOnce:
    """The engine's streams on a server that applies every call at once."""

    def __init__(self, profiles: list[dict[str, Any]]) -> None:
        self.server = MindServer(ClockMode.PROCESS)
        self.server.memory.per_frame = False  # every call at once: no queue, no table
        self.profiles = profiles
        self.streams: list[int] = []  # handle by stream index
        self.index: dict[int, int] = {}  # stream index by live handle
        self.errors: list[str] = []
        self.told: set[int] = set()  # the streams that reported an entity id that is no int

    def add(self) -> None:
        handle = self.server.add_memory(MemoryProfileSpec.from_dict(self.profiles[len(self.streams)]))
        self.index[handle] = len(self.streams)
        self.streams.append(handle)


def play(at_once: AtOnce, rows: list[list[Any]]) -> list[list[Any]]:
    """Logged calls made again, at once, as the engine logs them (the error lines they log go to
    `at_once.errors`)."""
    server, streams, errors = at_once.server, at_once.streams, at_once.errors
    done = []
    for stream, op, entity, memory_type, salience, _, shape in rows:
        arguments = [entity, memory_type, salience]
        result: Any = None
        error = None
        if op == "advance":  # the server's, not a stream's
            result, error = outcome(server.advance, entity)
        elif op == "free":  # the node freed: its stream goes
            server.remove(streams[stream])
        elif op == "profile":  # MemoryStream.profile set
            server.set_memory_profile(streams[stream], entity)
        elif op == "record_batch":  # NpcMindServer's, with its packed arrays' types
            handles = np.array([streams[stream]], np.int32)
            server.record_batch(handles, [entity], np.int32([memory_type]), np.float32([salience]))
        elif op == "recall_batch":
            strength, kinds = server.query_strongest_batch(np.array([streams[stream]], np.int32), [entity])
            result = {
                "retrievability": strength.astype(np.float32).tolist(),
                "memory_type": kinds.astype(np.int32).tolist(),
            }
        elif op == "spawn":
            assert stream == len(streams)
            at_once.add()
        else:
            result, error = call_at_once(
                server.memory, streams[stream], op, arguments, told=at_once.told, stream=stream
            )
        if error is not None:
            errors.append(error)
        done.append([stream, op, *arguments, result, shape])
    return done


def replay(log: dict[str, Any]) -> tuple[list[float], list[list[Any]], list[list[Any]], list[str]]:
    """The engine's calls, frame by frame, on a server that applies each at once; (each frame's
    now before its calls, the calls with their results, the signals with their frames and their
    handlers' calls, the error lines), shaped as the engine's log."""
    at_once = AtOnce(log["profiles"])
    server = at_once.server
    for _ in range(log["streams"]):  # the streams made before the first frame
        at_once.add()
    times: list[float] = []
    calls: list[list[Any]] = []
    signals: list[list[Any]] = []
    for number, frame in enumerate(log["frames"], start=1):
        times.append(server.now())
        calls.append(play(at_once, frame["calls"]))
        for event in server.step(frame["delta"], 1.0, frame["paused"]):
            if event.signal in SIGNALS:
                signal = [number, at_once.index[event.handle], event.signal, *event.args]
                logged = log["signals"][len(signals)] if len(signals) < len(log["signals"]) else []
                if len(logged) > len(signal):  # a handler's calls, made as the signal came
                    signal.append(play(at_once, logged[-1]))
                signals.append(signal)
    return times, calls, signals, at_once.errors


@pytest.mark.parametrize("kernel_level", LEVELS)
def test_nodes_answer_and_signal_as_the_calls_applied_at_once(kernel_level: str) -> None:
    """The engine runs the memory kernel at each level this CPU runs (and numpy); the calls
    applied at once here run numpy."""
    run, log = engine_run(kernel_level)
    with forced_kernel("numpy"):
        times, calls, signals, errors = replay(log)
    # exactly the errors of the bad calls, in their order, and no other
    assert [STREAM.sub("npc_mind: <stream>: ", line.strip()) for line in run.errors()] == errors, run.log
    engine_times = [frame["now"] for frame in log["frames"]]
    assert engine_times == times  # the same times, bit for bit
    assert engine_times[44:48] == [engine_times[44]] * 4  # paused
    engine_calls = [frame["calls"] for frame in log["frames"]]
    assert len(engine_calls) == 100
    for number, (got, want) in enumerate(zip(engine_calls, calls, strict=True), start=1):
        assert got == want, f"frame {number}"
    assert log["signals"] == signals
    # what the run covered: each kind of signal and of answer, more than once, signal handlers' calls
    kinds = Counter(signal[2] for signal in signals)
    assert sum(1 for signal in signals if len(signal) > 5) > 20
    assert set(kinds) == SIGNALS and min(kinds.values()) > 5, kinds
    every = [call for frame in engine_calls for call in frame]
    answers = [call[5] for call in every if call[1] != "record"]
    assert {0, 1, 2, 3} <= {answer for answer in answers if isinstance(answer, int)}
    assert sum(1 for answer in answers if answer == {}) > 10
    assert sum(1 for answer in answers if isinstance(answer, dict) and answer) > 20
    # each op through each call shape, and bad calls refused by the engine and by the server
    shapes = Counter((call[1], call[6]) for call in every)
    per_frame_ops = ("record", "aware", "recall")
    assert all(shapes[op, shape] > 5 for op in per_frame_ops for shape in ("typed", "object")), shapes
    assert {call[6] for call in every if call[5] == REFUSED} == {"object", "typed_variant"}
    assert sum(1 for error in errors if error.startswith("SCRIPT ERROR")) > 5
    assert sum(1 for error in errors if error.startswith("ERROR: Python: ValueError")) > 5
