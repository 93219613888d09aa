"""The server's batched read of memory events (`drain_memory_events`) and per-stream signals off,
without an engine: quiet streams queue no signals, every stream's events are in the read, once."""

from __future__ import annotations

from npc_mind.server import ClockMode
from npc_mind.server.core import MindServer
from npc_mind.server.memories import EVENT_FORGOTTEN, EVENT_FORMED, EVENT_REHEARSED


def rows(server: MindServer) -> list[tuple[int, int, int, int]]:
    log = server.drain_memory_events()
    return list(
        zip(
            log.code.tolist(), log.handle.tolist(), log.entity.tolist(), log.memory_type.tolist(), strict=True
        )
    )


def test_quiet_streams_queue_no_signals_and_every_event_is_read_once() -> None:
    server = MindServer(ClockMode.MANUAL)
    loud, quiet = server.add_memory(), server.add_memory()
    server.set_memory_signals(quiet, False)
    server.record(loud, 7, 0, 0.0)
    server.record(quiet, 7, 0, 0.0)
    server.record(quiet, 8, 3, 0.9)
    events = server.advance(0.1)
    assert [(event.handle, event.signal, event.args) for event in events] == [(loud, "memory_formed", (7, 0))]
    assert rows(server) == [
        (EVENT_FORMED, loud, 7, 0),
        (EVENT_FORMED, quiet, 7, 0),
        (EVENT_FORMED, quiet, 8, 3),
    ]
    assert rows(server) == []
    server.advance(5.0)
    assert rows(server) == []
    server.record(quiet, 8, 3, 0.9)  # past the refractory period: a rehearsal
    events = server.advance(5.0)  # trivia at salience 0 (S 2.5 s) is forgotten at 7.49 s
    assert [(event.handle, event.signal, event.args) for event in events] == [
        (loud, "memory_forgotten", (7, 0))
    ]
    assert rows(server) == [
        (EVENT_REHEARSED, quiet, 8, 3),
        (EVENT_FORGOTTEN, loud, 7, 0),
        (EVENT_FORGOTTEN, quiet, 7, 0),
    ]


def test_unread_events_of_a_removed_stream_are_dropped() -> None:
    server = MindServer(ClockMode.MANUAL)
    kept, gone = server.add_memory(), server.add_memory()
    server.record(kept, 1, 0, 0.5)
    server.record(gone, 2, 0, 0.5)
    server.advance(0.1)
    server.remove(gone)
    assert rows(server) == [(EVENT_FORMED, kept, 1, 0)]


def test_the_server_and_the_core_share_one_table_of_event_codes() -> None:
    """Issue 14 item 4: 2 meant RECALLED in the core and FORGOTTEN in the server. Every code of the
    batched read now names, in the core's EventKind, the very event its signal reports."""
    from npc_mind.memory import EventKind
    from npc_mind.server import memories

    for name in ("FORMED", "REHEARSED", "FORGOTTEN", "EVICTED"):
        assert getattr(memories, f"EVENT_{name}") == EventKind[name]
    server = MindServer(ClockMode.MANUAL)
    stream = server.add_memory({"capacity": 1})
    signals, rows_read = [], []
    for entity, seconds in ((7, 0.1), (8, 0.1), (None, 60.0)):  # 8 evicts 7, then 8 is forgotten
        if entity is not None:
            server.record(stream, entity, 0, 0.0)
        signals += [(event.signal, event.args[0]) for event in server.advance(seconds)]
        rows_read += [(f"memory_{EventKind(code).name.lower()}", ent) for code, _, ent, _ in rows(server)]
    expected = [("memory_formed", 7), ("memory_evicted", 7), ("memory_formed", 8), ("memory_forgotten", 8)]
    assert signals == expected
    assert rows_read == signals
