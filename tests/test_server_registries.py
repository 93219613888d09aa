"""Issue 10 (5): the server's selector registries follow the live selectors. Freed rows are reused and
a group's rows are compacted when most are free, so after any number of spawn/despawn cycles a
group's arrays (and so its batched choice per frame) are sized to the selectors still alive, and the
survivors keep their inputs, choices and anti-dithering state."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import numpy as np
import pytest

import npc_mind.server
from npc_mind.server import ClockMode, TooManyHandlesError
from npc_mind.server.core import MindServer
from npc_mind.server.registry import GENERATIONS, SLOT_MASK, HandleCounter, slot_of
from npc_mind.server.selectors import MIN_ROWS, SelectorGroup
from tests.test_server_core import GUARD_SELECTOR, signals


def only_group(server: MindServer) -> SelectorGroup:
    (group,) = server.selectors.groups.values()
    return group


def test_spawn_despawn_cycles_reuse_one_row() -> None:
    server = MindServer(ClockMode.MANUAL)
    keeper = server.add_selector(GUARD_SELECTOR)
    server.set_inputs([keeper], "threat", [1.0])
    assert signals(server.update(), keeper) == [("behavior_changed", ("pursue",))]
    for _ in range(5000):
        server.remove(server.add_selector(GUARD_SELECTOR))
    assert len(only_group(server).rows) == MIN_ROWS  # was 5,001 rows, each scored every frame
    assert server.chosen([keeper]).tolist() == [1]
    server.set_inputs([keeper], "threat", [0.9])
    assert signals(server.update(), keeper) == []  # its state survived: still pursuing


def test_a_crowd_that_leaves_shrinks_its_group_and_the_survivors_keep_their_rows() -> None:
    server = MindServer(ClockMode.MANUAL)
    crowd = [server.add_selector(GUARD_SELECTOR) for _ in range(1000)]
    threat = [float(i % 2) for i in range(1000)]
    server.set_inputs(crowd, "threat", threat)
    server.set_inputs(crowd, "calm", [0.5] * 1000)
    server.update()
    before = server.chosen(crowd).tolist()
    survivors = crowd[7::100]  # 10 of them, spread over the rows
    for handle in crowd:
        if handle not in survivors:
            server.remove(handle)
    group = only_group(server)
    assert group.live == 10 and len(group.rows) <= max(MIN_ROWS, 4 * 10)
    assert len(server.selectors.entries) == 10
    assert server.chosen(survivors).tolist() == [before[crowd.index(h)] for h in survivors]
    server.set_inputs(survivors, "calm", [0.5] * 10)  # the same inputs again: nobody switches
    assert server.update() == []
    server.set_inputs(survivors, "threat", [1.0] * 10)  # the inputs moved with their rows
    changed = {event.handle for event in server.update()}
    assert changed == {h for h in survivors if threat[crowd.index(h)] == 0.0}
    for handle in survivors:
        server.remove(handle)
    assert server.selectors.groups == {} and server.selectors.by_index == {}
    assert len(server.selectors.entries) == 0


def test_a_stale_id_in_a_batch_skips_its_row_and_never_fails_the_others() -> None:
    """Issue 10 (11): one NPC freed this frame used to fail the whole batched call for everyone."""
    server = MindServer(ClockMode.MANUAL)
    streams = [server.add_memory() for _ in range(3)]
    guards = [server.add_selector(GUARD_SELECTOR) for _ in range(3)]
    server.remove(streams[1])
    server.remove(guards[1])
    never = 10_000  # an id never handed out
    server.record_batch([*streams, never], [7, 7, 7, 7], [3, 3, 3, 3], [0.9] * 4)
    assert server.awareness_batch([*streams, never], [7] * 4).tolist() == [3, 0, 3, 0]
    strength, kinds = server.query_strongest_batch([*streams, never], [7] * 4)
    assert kinds.tolist() == [3, -1, 3, -1] and strength[1] == strength[3] == 0.0 and strength[0] > 0.9
    server.set_inputs([*guards, never], "threat", [1.0, 1.0, 1.0, 1.0])
    changed = {event.handle for event in server.update() if event.signal == "behavior_changed"}
    assert changed == {guards[0], guards[2]}
    assert server.chosen([*guards, never]).tolist() == [1, -1, 1, -1]
    assert server.metrics()["server/stale_rows"] == 2 + 2 + 2 + 2 + 2


def test_freed_handles_are_reused_so_the_tables_stay_bounded_over_hours_of_churn() -> None:
    """Issue 14: the handle tables grew 16 bytes per handle ever issued. A freed handle's slot is
    reused under a new generation: the tables follow the handles live at once, and a handle value is
    not issued twice before its slot's generation wraps (2,048 reuses of that slot)."""
    server = MindServer(ClockMode.MANUAL)
    keepers = [server.add_memory(), server.add_selector(GUARD_SELECTOR)]
    issued = set(keepers)
    for cycle in range(GENERATIONS - 1):
        crowd = [server.add_memory() for _ in range(3)] + [server.add_selector(GUARD_SELECTOR)]
        issued.update(crowd)
        server.record_batch(crowd[:3], [cycle] * 3, [3] * 3, [0.9] * 3)
        server.update()
        for handle in crowd:
            server.remove(handle)
    assert len(issued) == 2 + (GENERATIONS - 1) * 4  # no value issued twice
    assert max(issued) < 2**31  # still fits the batched calls' PackedInt32Array ids
    for table in (server.memory.table, server.selectors.table):
        assert table.owner.size == 64  # the first allocation; was one entry per handle ever issued
    assert len(server.handles.generation) == 1 + 2 + 4 * 2  # slot 0, keepers, a crowd live + freed
    assert server.memories(keepers[0]) == []  # the keeper never got a crowd's memory


def test_a_stale_id_is_skipped_in_its_frame_and_after_its_slot_is_reused() -> None:
    """The game frees an NPC and spawns another in one frame: the new one does not get the freed slot
    in that frame, and the old id still in the game's packed arrays reaches nothing, in that frame
    and after its slot went to an NPC spawned later."""
    server = MindServer(ClockMode.MANUAL)
    old_stream, old_guard = server.add_memory(), server.add_selector(GUARD_SELECTOR)
    server.remove(old_stream)
    server.remove(old_guard)
    same_frame = [server.add_memory(), server.add_selector(GUARD_SELECTOR)]
    assert {slot_of(handle) for handle in same_frame}.isdisjoint({slot_of(old_stream), slot_of(old_guard)})
    server.update()
    stream, guard = server.add_memory(), server.add_selector(GUARD_SELECTOR)  # the next frame
    assert (slot_of(stream), slot_of(guard)) == (slot_of(old_stream), slot_of(old_guard))
    assert stream != old_stream and guard != old_guard
    server.record_batch([old_stream, stream], [7, 8], [3, 3], [0.9, 0.9])
    assert server.awareness_batch([old_stream, stream, stream], [8, 7, 8]).tolist() == [0, 0, 3]
    assert [memory["entity_id"] for memory in server.memories(stream)] == [8]
    server.set_inputs([old_guard, guard], "threat", [1.0, 0.0])
    server.set_inputs([guard], "calm", [1.0])
    events = server.update()
    assert {event.handle for event in events}.isdisjoint({old_stream, old_guard})
    assert signals(events, guard) == [("behavior_changed", ("patrol",))]
    assert server.chosen([old_guard, guard]).tolist() == [-1, 0]
    assert server.metrics()["server/stale_rows"] == 1 + 1 + 1 + 1
    assert not server.owns(old_stream) and not server.owns(old_guard)


def test_a_read_only_handle_array_passed_each_frame_answers_as_a_fresh_one_through_frees_and_reuse() -> None:
    """The groups of a read-only handle array (a per-frame plan's) are kept between calls: they
    follow every free and every reuse of a slot, and its stale rows are counted each call."""
    server = MindServer(ClockMode.MANUAL)
    streams = [server.add_memory() for _ in range(3)]
    planned = np.array(streams, dtype=np.int64)
    planned.flags.writeable = False
    server.record_batch(streams, [7, 7, 7], [3, 3, 3], [0.9] * 3)
    for _ in range(2):
        assert server.awareness_batch(planned, [7] * 3).tolist() == [3, 3, 3]
    kept = server.memory.table.groups(planned)
    assert server.memory.table.groups(planned) is kept  # (kept: the same groups, not made again)
    server.remove(streams[1])
    for _ in range(2):
        assert server.awareness_batch(planned, [7] * 3).tolist() == [3, 0, 3]
    assert server.metrics()["server/stale_rows"] == 2
    server.update()
    reused = server.add_memory()  # the freed slot, under a new generation
    assert slot_of(reused) == slot_of(streams[1])
    server.record_batch([reused], [7], [3], [0.9])
    assert server.awareness_batch(planned, [7] * 3).tolist() == [3, 0, 3]
    assert server.awareness_batch([streams[0], reused], [7, 7]).tolist() == [3, 3]
    assert server.metrics()["server/stale_rows"] == 3


def test_more_live_handles_than_a_handle_can_number_is_a_clear_error() -> None:
    counter = HandleCounter(next_slot=SLOT_MASK, generation=[0] * SLOT_MASK)  # all but one slot taken
    last = counter.take()
    assert slot_of(last) == SLOT_MASK and 0 < last < 2**31
    with pytest.raises(TooManyHandlesError, match="handles are live"):
        counter.take()
    counter.release(last)
    counter.settle()
    assert slot_of(counter.take()) == SLOT_MASK  # a freed slot is there again


def test_every_per_subsystem_registry_is_a_bank() -> None:
    """Issue 14 (4): one name per kind of registry. Each subsystem's registry of the server (a class
    keeping its front ends in a `Registry`) is a ...Bank; DecisionHub is the LLM request loop."""
    found = {}
    for module in pkgutil.iter_modules(npc_mind.server.__path__, "npc_mind.server."):
        for value in vars(importlib.import_module(module.name)).values():
            if dataclasses.is_dataclass(value) and isinstance(value, type):
                fields = {field.name: str(field.type) for field in dataclasses.fields(value)}
                if fields.get("entries", "").startswith("Registry["):
                    found[value.__name__] = value.__module__
    assert set(found) >= {"MemoryBank", "SelectorBank", "DecisionBank"}, found
    assert all(name.endswith("Bank") for name in found), found
