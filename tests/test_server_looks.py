"""Look-only reads for targets and sourced inputs (`npc_mind.server.looks`): the strongest memory
of chosen types above a floor, per stream, in one call, and never a wake."""

from __future__ import annotations

import math

import numpy as np

from npc_mind.memory import MemoryType
from npc_mind.server.core import MindServer
from npc_mind.server.looks import NO_ENTITY, strongest, type_mask

THIEF, PASSER_BY, OTHER = 2**40 + 7, 55, 77


def test_strongest_of_types_above_floor_and_of_one_entity() -> None:
    mind = MindServer("manual")
    guard, idle = mind.add_memory(), mind.add_memory()
    mind.record(guard, PASSER_BY, int(MemoryType.OBSERVATION), 0.9)
    mind.record(guard, THIEF, int(MemoryType.HOSTILE), 0.2)
    mind.advance(1.0)
    views = {view["entity_id"]: view for view in mind.memories(guard)}
    hostile = type_mask([MemoryType.HOSTILE])
    entity, r, level = strongest(
        mind.memory, [guard, guard, guard, idle, guard],
        entities=[NO_ENTITY, NO_ENTITY, PASSER_BY, NO_ENTITY, OTHER],
        type_masks=[0, hostile, hostile, 0, 0], floors=[0.0] * 5, now=mind.now(),
    )  # fmt: skip
    strongest_any = max(views.values(), key=lambda view: view["retrievability"])
    assert entity.tolist() == [strongest_any["entity_id"], THIEF, NO_ENTITY, NO_ENTITY, NO_ENTITY]
    assert math.isclose(r[1], views[THIEF]["retrievability"], rel_tol=1e-12)
    assert level[1] == mind.awareness(guard, THIEF)
    assert r[2] == r[3] == r[4] == 0.0 and level[3] == 0
    # above the floor only
    entity, _, _ = strongest(
        mind.memory, [guard], entities=[THIEF], type_masks=[0], floors=[0.999], now=mind.now()
    )
    assert entity.tolist() == [NO_ENTITY]


def test_streams_of_two_pools_in_one_look_answer_as_each_alone() -> None:
    mind = MindServer("manual")
    small = {"capacity": 4}  # another profile: another pool
    streams = [mind.add_memory(), mind.add_memory(small), mind.add_memory(), mind.add_memory(small)]
    for salience, stream in zip((0.2, 0.9, 0.5, 0.7), streams, strict=True):
        mind.record(stream, THIEF, int(MemoryType.HOSTILE), salience)
        mind.record(stream, PASSER_BY, int(MemoryType.OBSERVATION), 1.0 - salience)
    mind.advance(2.0)
    rows = len(streams)
    together = strongest(
        mind.memory, streams, entities=[NO_ENTITY] * rows, type_masks=[0] * rows, floors=[0.0] * rows,
        now=mind.now(),
    )  # fmt: skip
    alone = [
        strongest(mind.memory, [stream], entities=[NO_ENTITY], type_masks=[0], floors=[0.0], now=mind.now())
        for stream in streams
    ]
    for column, found in enumerate(together):
        assert found.tolist() == [one[column][0] for one in alone]
    assert len(mind.memory.table.groups(np.array(streams))) == 2  # (two pools: the rows are scattered)
    assert THIEF in together[0].tolist()


def test_a_look_never_wakes_and_a_stale_handle_knows_nothing() -> None:
    mind = MindServer("manual")
    guard = mind.add_memory()
    mind.record(guard, THIEF, int(MemoryType.TRIVIA), 0.5)
    mind.advance(3.0)
    before = mind.memories(guard)[0]
    strongest(
        mind.memory, [guard, 12345], entities=[0, 0], type_masks=[0, 0], floors=[0.0, 0.0], now=mind.now()
    )
    assert mind.memories(guard)[0] == before  # same age, same recall count
    entity, r, _ = strongest(mind.memory, [12345], entities=[0], type_masks=[0], floors=[0.0], now=mind.now())
    assert entity.tolist() == [NO_ENTITY] and r.tolist() == [0.0]


def test_feeds_run_before_the_selectors_choose() -> None:
    mind = MindServer("manual")
    selector = mind.add_selector({"behaviors": [
        {"name": "idle", "considerations": [{"input_key": "calm", "curve_type": "linear"}]},
        {"name": "chase", "considerations": [{"input_key": "threat", "curve_type": "linear"}]},
    ]})  # fmt: skip
    seen: list[float] = []

    def feed(now: float) -> None:
        seen.append(now)
        mind.set_input(selector, "threat", 1.0)

    mind.before_choosing.append(feed)
    mind.advance(0.5)
    assert seen == [0.5] and mind.choice(selector) == "chase"
