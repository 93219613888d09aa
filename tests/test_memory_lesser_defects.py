"""The lesser memory defects of issue 10 (item 11): unequal batch lengths, ids given as Strings or
floats, a rejected call moving the pool's clock, tags given as a string. Each gets a clear error (or
the documented behavior) and changes nothing."""

from __future__ import annotations

import numpy as np
import pytest

from npc_mind.memory import MemoryPool, MemoryType, PoolFullError
from npc_mind.server import ClockMode
from npc_mind.server.core import MindServer
from tests.test_memory_bad_input import snapshot

HOSTILE = int(MemoryType.HOSTILE)


def server_with_stream() -> tuple[MindServer, int]:
    server = MindServer(ClockMode.MANUAL)
    handle = server.add_memory({"capacity": 4})
    server.record(handle, 1, HOSTILE, 0.9)
    return server, handle


def pool_state(server: MindServer, handle: int) -> bytes:
    return server.save_memory(handle)


@pytest.mark.parametrize(
    ("call", "args"),
    [
        ("awareness_batch", ([0], [1, 2])),
        ("query_strongest_batch", ([0, 0], [1])),
        ("record_batch", ([0], [1, 2], [HOSTILE, HOSTILE], [0.5, 0.5])),
    ],
)
def test_batched_calls_refuse_unequal_lengths(call: str, args: tuple) -> None:
    """They paired rows by position: a longer entity list was silently cut, a shorter one raised an
    IndexError from numpy."""
    server, handle = server_with_stream()
    handles = [handle] * len(args[0])
    before = pool_state(server, handle)
    with pytest.raises(ValueError, match="must match"):
        getattr(server, call)(handles, *args[1:])
    assert pool_state(server, handle) == before


@pytest.mark.parametrize(
    ("what", "call"),
    [
        ("a String entity", lambda s, h: s.record(h, "12", HOSTILE, 0.5)),
        ("a float entity", lambda s, h: s.record(h, 1.5, HOSTILE, 0.5)),
        ("a float memory type", lambda s, h: s.record(h, 7, 3.7, 0.5)),
        ("a String salience", lambda s, h: s.record(h, 7, HOSTILE, "0.5")),
        ("a String handle", lambda s, h: s.record(str(h), 7, HOSTILE, 0.5)),
        ("a float handle", lambda s, h: s.record(float(h), 7, HOSTILE, 0.5)),
        ("a String recall", lambda s, h: s.query_strongest(h, "1")),
        ("a float awareness", lambda s, h: s.awareness(h, 1.0)),
        ("float entities in a batch", lambda s, h: s.record_batch([h], [1.5], [HOSTILE], [0.5])),
        ("String entities in a batch", lambda s, h: s.awareness_batch([h], ["1"])),
        ("float handles in a batch", lambda s, h: s.query_strongest_batch([float(h)], [1])),
        ("float types in a batch", lambda s, h: s.record_batch([h], [7], [3.0], [0.5])),
        ("String saliences in a batch", lambda s, h: s.record_batch([h], [7], [HOSTILE], ["0.5"])),
        (
            "a mixed object array",
            lambda s, h: s.record_batch(
                [h, h], np.array([2**64 - 1, "12"], dtype=object), [0, 0], [0.5, 0.5]
            ),
        ),
    ],
)
def test_string_or_float_ids_are_refused_not_coerced(what: str, call) -> None:
    """The String "12" became the id 12 and 1.5 became 1, silently."""
    server, handle = server_with_stream()
    before = pool_state(server, handle)
    with pytest.raises(TypeError):
        call(server, handle)
    assert pool_state(server, handle) == before, what
    assert [m["entity_id"] for m in server.memories(handle)] == [1]


def test_a_rejected_record_does_not_move_the_pools_clock() -> None:
    pool = MemoryPool(1)
    npc = pool.add_npc()
    pool.record(npc, 1, HOSTILE, 0.9, 5.0)
    pool.pin(npc, 1, HOSTILE)
    before = snapshot(pool)
    rejected = [
        lambda: pool.record(npc, 2, HOSTILE, 0.5, 100.0),  # every slot pinned: PoolFullError
        lambda: pool.record_batch([npc, npc], [3, 4], HOSTILE, 0.5, 100.0),
        lambda: pool.record(npc, 2, HOSTILE, float("nan"), 100.0),
        lambda: pool.record(npc + 1, 2, HOSTILE, 0.5, 100.0),
        lambda: pool.record_batch([npc], [2], [9], [0.5], 100.0),
    ]
    for call in rejected:
        with pytest.raises((PoolFullError, ValueError, KeyError, TypeError)):
            call()
        assert pool.clock == 5.0
    assert snapshot(pool) == before
    # the save's default time is that clock: it must not have jumped to the rejected call's time
    assert pool.memories(npc, pool.clock)[0].age == 0.0


def test_tags_given_as_a_string() -> None:
    """`record(..., tags="stall")` is one tag (documented); a batch's tags must be one list per
    event: a string used to be split into one letter per event."""
    pool = MemoryPool()
    npc = pool.add_npc()
    pool.record(npc, 1, HOSTILE, 0.9, 0.0, tags="stall")
    assert pool.memories(npc, 0.0)[0].tags == frozenset({"stall"})
    before = snapshot(pool)
    with pytest.raises(TypeError, match="one tag list per event"):
        pool.record_batch([npc, npc, npc], [2, 3, 4], HOSTILE, 0.5, 1.0, tags="abc")
    assert snapshot(pool) == before
    pool.record_batch([npc, npc], [2, 3], HOSTILE, 0.5, 1.0, tags=["market", ["gate", "night"]])
    by_entity = {view.entity: view.tags for view in pool.memories(npc, 1.0)}
    assert by_entity[2] == frozenset({"market"}) and by_entity[3] == frozenset({"gate", "night"})
