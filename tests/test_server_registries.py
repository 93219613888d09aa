"""Issue 10 (5): the server's selector registries follow the live selectors. Freed rows are reused and
a group's rows are compacted when most are free, so after any number of spawn/despawn cycles a
group's arrays (and so its batched choice per frame) are sized to the selectors still alive, and the
survivors keep their inputs, choices and anti-dithering state."""

from __future__ import annotations

from npc_mind.server import ClockMode
from npc_mind.server.core import MindServer
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
