"""The per-frame feed of the selectors that read memory or the world: it keeps each
memory-targeting selector's target (`npc_mind_godot.targets`) and each auto-evaluating selector's
sourced inputs (`npc_mind_godot.inputs`) current, and gives `evaluate` its sourced values.

It is one function the server runs each frame before its selectors choose
(`MindServer.before_choosing`): it updates every memory-targeting selector's target in one look
per memory pool, then writes the sourced inputs of the auto-evaluating selectors in one batch per
input (`inputs.feed`). It sits above both modules, which know nothing of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gdbridge import objects
from npc_mind.server.looks import strongest
from npc_mind_godot import inputs, targets
from npc_mind_godot._common import server


def pick_with_sources(selector: Any, entry: Any, pick: Any, context: Any) -> int:
    """`evaluate`'s pick for a selector with sourced inputs or a scoring target: the sourced values
    under the context (a given value wins), then the chosen target's entity."""
    if selector.__dict__.get("_sourced"):
        context = inputs.sourced_context(selector) | context
    chosen = pick(entry, context)
    if str(selector.target_from) == "scoring":
        targets.after_evaluate(selector, entry, context)
    return chosen


class Feed:
    """The selectors that read memory or the world each frame, by server handle. One per server.

    What it reads of them each frame (which are live, which aim at memory and which choose by
    themselves, their streams, looks and targets) is worked out once and kept (`FeedPlan`) until a
    selector joins or leaves the feed or `targets.placement` changes, so a frame costs no Python
    work per selector but for the targets that changed."""

    def __init__(self) -> None:
        self.members: dict[int, Any] = {}
        self.installed_on: Any = None
        self.version = 0  # changes with the members
        self.plan: FeedPlan | None = None

    def join(self, selector: Any, handle: int) -> None:
        mind = server().core
        if self.installed_on is not mind:
            mind.before_choosing.append(self)
            self.installed_on = mind
        self.members[handle] = selector
        self.version += 1
        self.plan = None

    def leave(self, handle: int) -> None:
        if self.members.pop(handle, None) is not None:
            self.version += 1
            self.plan = None  # (it holds the selectors, and through them their resources)

    def __call__(self, now: float) -> None:
        plan = self.plan
        if plan is None or plan.key != (self.version, targets.placement()):
            plan = self.plan = self._planned()
        if plan.aiming:
            self._update_targets(plan, now)
        inputs.feed(plan.auto, now, plan.key, plan.auto_kept)
        plan.fed = True

    def runs_anywhere(self) -> bool:
        """Whether this frame's feed may run on the update thread (NpcMindServer.update_on_thread):
        its plan holds and has fed once (making a plan, and what its first frame keeps, read the
        engine), and none of its sources reads the engine (`InputSource.reads_engine`)."""
        plan = self.plan
        if self.installed_on is None or not self.members:
            return True
        return (
            plan is not None and plan.fed and not plan.reads_engine
            and plan.key == (self.version, targets.placement())
        )  # fmt: skip

    def _planned(self) -> FeedPlan:
        nodes = server().nodes
        live = [(handle, node) for handle, node in self.members.items() if nodes.get(handle) is node]
        if len(live) != len(self.members):
            self.members = dict(live)
            self.version += 1
        aiming = [(handle, node) for handle, node in live if node.__dict__["_memory_target"]]
        auto = [(handle, node) for handle, node in live if node.__dict__["_auto"]]
        looks = [node.__dict__["_target_look"] for _, node in aiming]  # (type mask, R floor)
        auto_row = {handle: row for row, (handle, _) in enumerate(auto)}
        streams = inputs.streams_of([node for _, node in aiming], nodes)
        streams.flags.writeable = False  # (the handle table keeps its groups: `HandleTable.groups`)
        return FeedPlan(
            key=(self.version, targets.placement()),
            aiming=[node for _, node in aiming],
            aiming_handles=[handle for handle, _ in aiming],
            aiming_streams=streams,
            masks=np.array([look[0] for look in looks], dtype=np.int64),
            floors=np.array([look[1] for look in looks], dtype=np.float64),
            aiming_targets=inputs.targets_of([node for _, node in aiming]),
            auto=auto,
            auto_rows=np.array([auto_row.get(handle, -1) for handle, _ in aiming], dtype=np.intp),
            auto_kept={},
            reads_engine=any(source.reads_engine() for _, node in auto for source in inputs.sources_of(node)),
        )

    @staticmethod
    def _update_targets(plan: FeedPlan, now: float) -> None:
        mind = server().core
        found, _, _ = strongest(
            mind.memory, plan.aiming_streams, entities=np.zeros_like(plan.aiming_streams),
            type_masks=plan.masks, floors=plan.floors, now=now,
        )  # fmt: skip
        found = np.asarray(found, dtype=np.int64)
        changed = np.flatnonzero(found != plan.aiming_targets)
        if not changed.size:
            return
        for row in changed.tolist():
            entity = int(found[row])
            plan.aiming[row].__dict__["_target"] = entity
            mind.events.push(plan.aiming_handles[row], targets.TARGET_CHANGED, entity)
        plan.aiming_targets = found
        kept = plan.auto_kept.get("targets")
        if kept is not None:  # the auto-evaluating ones' kept targets: those that changed
            rows = plan.auto_rows[changed]
            auto = rows >= 0
            kept[rows[auto]] = found[changed[auto]]


@dataclass(slots=True)
class FeedPlan:
    """What the feed reads of its selectors each frame, kept while `key` holds (see `Feed`)."""

    key: tuple[int, int]  # (Feed.version, targets.placement()) it was made at
    aiming: list[Any]  # the memory-targeting selectors
    aiming_handles: list[int]
    aiming_streams: np.ndarray  # their streams' server handles (0: none)
    masks: np.ndarray  # their looks' type masks
    floors: np.ndarray  # and R floors
    aiming_targets: np.ndarray  # their targets' entities, as the feed last set them
    auto: list[tuple[int, Any]]  # the auto-evaluating selectors, (handle, node)
    auto_rows: np.ndarray  # each memory-targeting selector's row in `auto` (-1: not there)
    auto_kept: dict[Any, Any]  # what their sources read once, while it holds (`inputs.Frame.kept`)
    reads_engine: bool  # a source of theirs reads the engine each frame (`InputSource.reads_engine`)
    fed: bool = False  # the feed ran with it (what it keeps was read)


feed = Feed()


def wants_feed(selector: Any) -> bool:
    return targets.reads_memory(selector) or inputs.auto_evaluates(selector)


def joined(selector: Any, handle: int) -> None:
    """The selector joined the server (or was reconfigured): it is fed each frame when it needs it,
    and its evaluate reads its sources and sets its scoring target when it has them. What the feed
    asks of each selector each frame is worked out here, once."""
    fields = selector.__dict__
    fields["_reads_more"] = bool(inputs.sourced(selector)) or str(selector.target_from) == "scoring"
    fields["_memory_target"] = targets.reads_memory(selector)
    fields["_target_look"] = (int(selector.target_memory_types), float(selector.target_min_retrievability))
    fields["_auto"] = inputs.auto_evaluates(selector)
    # the binding's key: its set_input calls are queued, and its evaluate is answered from the
    # choice table when it reads its context only (one with sources or a scoring target is never put)
    unanswered = server().core.selectors.unanswered
    (unanswered.add if fields["_reads_more"] else unanswered.discard)(handle)
    objects.queue_calls(selector, handle)
    if fields["_memory_target"] or fields["_auto"]:
        feed.join(selector, handle)
    else:
        feed.leave(handle)


def rejoin(selector: Any) -> None:
    """A fed selector was redefined at run time: it joins its new group now (nobody else calls
    it), so it goes on choosing by itself."""
    if wants_feed(selector):
        selector._handle()


def warnings(selector: Any) -> list[str]:
    """Configuration warnings about the target and the memory it is read from."""
    found = []
    if targets.reads_memory(selector) or _needs_stream(selector):
        if str(selector.memory_stream):
            if targets.stream_of(selector, report=False) is None:
                path = str(selector.memory_stream)
                found.append(f"memory_stream {path!r} does not point at a MemoryStream.")
        elif targets.stream_of(selector, report=False) is None:
            found.append(
                "Targets and memory inputs need a MemoryStream: add one under the NPC (a sibling of "
                "this selector) or set memory_stream."
            )
    return found


def _needs_stream(selector: Any) -> bool:
    return any(source.reads_memory() for source in inputs.sources_of(selector))


def reconfigured(selector: Any, _value: Any) -> None:
    """A target or input setting changed: find the stream again, join or leave the feed. (The
    inspector's type flags are the looks' mask as they are: bit t is type t, 0 any.)"""
    selector.__dict__.pop("_stream", None)
    handle = selector.__dict__.get("_server_handle", 0)
    if handle:
        joined(selector, handle)
