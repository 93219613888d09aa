"""Run-time MemoryProfile changes are transactional (issue 10, defect 2), in the real engine and in
the engine-agnostic server core: a rejected profile raises and leaves the stream exactly as it was;
a valid one moves every memory and keeps the stream's handle; edits to the assigned profile apply."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from npc_mind.memory import MAX_CAPACITY, MemoryParams, MemoryType, params
from npc_mind.server import ClockMode
from npc_mind.server.core import MindServer
from npc_mind.server.memories import MemoryProfileSpec
from tests.support.godot import run_godot

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.godot
def test_a_rejected_profile_changes_nothing_and_a_valid_one_moves_every_memory() -> None:
    run = run_godot(ROOT, "-s", "res://tests/addon/memory_profile_change.gd")
    assert run.returncode == 0, run.log
    assert run.json_lines()[-1] == {"done": True}, run.log
    checks = run.checks()
    assert len(checks) == 18, checks
    assert {name for name, check in checks.items() if not check["ok"]} == set(), checks
    # one engine error per rejection, each naming why, and no other error
    errors = [line for line in run.errors() if line.startswith("ERROR: Python:")]
    assert errors == run.errors(), run.log
    expected = [
        "capacity must be an integer in [1, 65535], got 0",
        "alpha = nan is outside",
        "curve = 'linear'",
        "holds 5 working memories; a profile of capacity 3 cannot hold them",
        "TypeError: MemoryStream.profile must be a MemoryProfile or null, got Node",
        "holds 7 working memories; a profile of capacity 2 cannot hold them",
        "capacity must be an integer in [1, 65535], got 0",
    ]
    assert len(errors) == len(expected), run.log
    for line, wanted in zip(errors, expected, strict=True):
        assert wanted in line, (line, wanted)
    # issue 14 item 4: the inspector's ranges are MemoryParams' own bounds (declared once)
    hints = next(line["hints"] for line in run.json_lines() if "hints" in line)
    assert hints["capacity"] == f"1,{MAX_CAPACITY}"
    for name, step in (
        ("alpha", 0.01),
        ("rehearsal_refractory_s", 0.1),
        ("forget_threshold", 0.001),
        ("awareness_search", 0.01),
        ("awareness_pursue", 0.01),
    ):
        low, high, low_in, high_in = params.bounds(name)
        ends = (low if low_in else low + step, high if high_in else high - step)
        assert [float(x) for x in hints[name].split(",")] == [*ends, step], (name, hints[name])
        for end in ends:  # every value the slider offers is one the core accepts
            assert (low <= end if low_in else low < end) and (end <= high if high_in else end < high)


def test_the_core_moves_a_stream_transactionally() -> None:
    server = MindServer(ClockMode.MANUAL)
    small = MemoryProfileSpec(4)
    handle = server.add_memory(small)
    other = server.add_memory(small)
    for entity in range(3):
        server.record(handle, entity, MemoryType.HOSTILE, 0.9)
    server.advance(1.0)
    before = server.save_memory(handle)
    target = server.memory.targets[handle]
    with pytest.raises(ValueError, match="capacity 2 cannot hold them"):
        server.set_memory_profile(handle, MemoryProfileSpec(2))
    with pytest.raises(ValueError, match="capacity"):
        server.set_memory_profile(handle, {"capacity": 0})
    with pytest.raises(ValueError, match="capacity"):
        server.set_memory_profile(handle, {"capacity": 8.5})  # not read as 8
    with pytest.raises(ValueError, match="alpha"):
        server.set_memory_profile(handle, {"alpha": math.nan})
    with pytest.raises(TypeError, match="MemoryProfileSpec or a mapping"):
        server.set_memory_profile(handle, 12)  # type: ignore[arg-type]
    assert server.save_memory(handle) == before
    assert server.memory.targets[handle] == target
    assert len(server.memory.pools) == 1  # nothing half-made for a rejected profile
    # an event not yet announced, then a valid profile: the same handle and memories, new settings
    server.record(handle, 9, MemoryType.TRIVIA, 0.5)
    server.set_memory_profile(handle, MemoryProfileSpec(8, MemoryParams(alpha=1.5)))
    assert server.memory.targets[handle][0].params.alpha == 1.5
    assert sorted(m["entity_id"] for m in server.memories(handle)) == [0, 1, 2, 9]
    events = server.advance(0.1)
    assert [(e.handle, e.signal, e.args) for e in events] == [(handle, "memory_formed", (9, 0))]
    # batched calls find the moved stream in its new pool
    server.record_batch([handle, other], [7, 7], [0, 0], [0.5, 0.5])
    assert sorted(m["entity_id"] for m in server.memories(handle)) == [0, 1, 2, 7, 9]
    assert [m["entity_id"] for m in server.memories(other)] == [7]
    # moved, then removed before the frame: nothing is announced for it
    server.record(handle, 10, MemoryType.TRIVIA, 0.5)
    server.set_memory_profile(handle, MemoryProfileSpec(16))
    server.remove(handle)
    assert all(e.handle != handle for e in server.advance(0.1))


def test_pools_left_empty_by_moves_or_frees_are_dropped() -> None:
    """Every edit of a shared profile is a new spec, so a designer dragging a slider made a new pool
    per value, each drained every frame for ever. A pool whose last stream left goes at the next
    update (after its last events are read); its index is reused."""
    server = MindServer(ClockMode.MANUAL)
    stream = server.add_memory()
    server.record(stream, 1, MemoryType.HOSTILE, 0.9)
    for step in range(50):
        server.set_memory_profile(stream, MemoryProfileSpec(64, MemoryParams(alpha=1.3 + step * 0.005)))
    events = server.advance(0.1)
    assert [(e.signal, e.args) for e in events] == [("memory_formed", (1, MemoryType.HOSTILE))]
    assert len(server.memory.pools) == 1
    assert [m["entity_id"] for m in server.memories(stream)] == [1]
    size = len(server.memory.slots)
    gone = server.add_memory({"capacity": 3})
    server.remove(gone)
    server.advance(0.1)
    assert len(server.memory.pools) == 1
    assert sum(slot is not None for slot in server.memory.slots) == 1
    again = server.add_memory({"capacity": 3})
    assert len(server.memory.slots) == size  # indices reused, not one per pool ever made
    server.record_batch([stream, again], [5, 6], [0, 0], [0.5, 0.5])
    assert [m["entity_id"] for m in server.memories(again)] == [6]
