"""`DecisionHub`: many NPCs' decisions behind one transport (one asyncio loop thread, one client),
ticked in one call per frame, with one event queue drained on the main thread and one metrics dict.
This is the engine-side "server" the Godot addon's `AsyncLLMDecision` nodes are thin front ends of.

Per frame, `tick_all` looks at each NPC only long enough to see it has nothing to do (no deadline or
re-plan due, no watched key moved); NPCs whose answer came back are named by the transport's thread in
one shared deque instead of being polled. Every request and cancel of the frame reaches the transport's
thread in one wake-up at the end of `tick_all`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from npc_mind.decision.config import DecisionConfig
from npc_mind.decision.events import Event
from npc_mind.decision.machine import _INF, AsyncDecision, MemorySource, Transport
from npc_mind.decision.metrics import DecisionStats
from npc_mind.decision.rules import Chooser
from npc_mind.llm.breaker import BreakerConfig
from npc_mind.llm.client import LLMSettings
from npc_mind.llm.endpoints import Endpoint
from npc_mind.llm.prompt import PromptConfig, stable_messages
from npc_mind.llm.schema import DecisionSchema
from npc_mind.llm.transport import LLMTransport, TransportConfig


class DecisionHub:
    def __init__(
        self,
        transport: Transport,
        schema: DecisionSchema,
        *,
        config: DecisionConfig | None = None,
        prompt: PromptConfig | None = None,
        memory: MemorySource | None = None,
    ) -> None:
        self.transport = transport
        self.schema = schema
        self.config = config or DecisionConfig()
        self.prompt = prompt or PromptConfig()
        self.memory = memory
        self.stats = DecisionStats()
        self.events: deque[Event] = deque()
        self.decisions: dict[int, AsyncDecision] = {}
        # Decisions that committed an outcome (appended on the transport's thread), seen at the next
        # tick_all, drain_events or metrics: a live one is ticked, a removed one's answers are discarded.
        self._committed: deque[AsyncDecision] = deque()
        self._owned: LLMTransport | None = None
        # Warm the endpoints with this hub's stable prompt prefix now, before the first NPC asks.
        prepare = getattr(transport, "prepare", None)
        self.prepared = prepare(schema, stable_messages(schema, self.prompt)) if prepare else None

    @classmethod
    def connect(
        cls,
        endpoints: Sequence[Endpoint],
        schema: DecisionSchema,
        *,
        settings: LLMSettings | None = None,
        breaker: BreakerConfig | None = None,
        transport_config: TransportConfig | None = None,
        **options: Any,
    ) -> DecisionHub:
        """A hub with its own `LLMTransport` (closed with the hub)."""
        transport = LLMTransport(endpoints, settings, breaker, transport_config)
        hub = cls(transport, schema, **options)
        hub._owned = transport
        return hub

    def add(self, npc: int, selector: Chooser, rules: Chooser | None = None) -> AsyncDecision:
        if npc in self.decisions:
            raise ValueError(f"NPC {npc} is already in the hub")
        decision = AsyncDecision(
            npc, self.transport, self.schema, selector, rules=rules, config=self.config,
            prompt=self.prompt, memory=self.memory, events=self.events, stats=self.stats,
            committed=self._committed,
        )  # fmt: skip
        self.decisions[npc] = decision
        return decision

    def remove(self, npc: int) -> None:
        """Drop the NPC; its pending request is cancelled, and an answer it already committed or that
        still comes back is discarded and counted (`stale_discards`)."""
        decision = self.decisions.pop(npc)
        decision.abort("removed")
        self._discard(decision)

    def abort(self, npc: int, reason: str = "interrupt") -> None:
        self.decisions[npc].abort(reason)

    def _discard(self, decision: AsyncDecision) -> None:
        slot = decision.slot
        while slot:
            slot.popleft()
            self.stats.stale_discards += 1

    def _take_commits(self) -> None:
        committed = self._committed
        decisions = self.decisions
        while committed:
            decision = committed.popleft()
            if decisions.get(decision.npc) is decision:
                decision.wake = -_INF  # its next tick merges the outcome
            else:  # removed (or replaced under the same id): an answer nobody can use
                self._discard(decision)

    def tick_all(self, now: float, boards: Mapping[int, Mapping[str, Any]]) -> list[int]:
        """Tick every NPC with its active board; returns the NPCs whose behavior changed. An NPC with
        no board in `boards` waits for one (it is not ticked this frame)."""
        transport = self.transport
        hold = getattr(transport, "hold", None)
        if hold is None:
            deferred = getattr(transport, "deferred", None)
            if deferred is None:
                return self._tick_all(now, boards)
            with deferred():
                return self._tick_all(now, boards)
        hold()  # all of this frame's requests and cancels reach the loop thread in one wake-up
        try:
            return self._tick_all(now, boards)
        finally:
            transport.flush()  # type: ignore[attr-defined]  # the batching transports have flush(); hold() was taken from it

    def _tick_all(self, now: float, boards: Mapping[int, Mapping[str, Any]]) -> list[int]:
        if self._committed:
            self._take_commits()
        changed = []
        watched = self.config.watched
        # The common frame for an NPC: no deadline reached and not due (`wake`), and no watched key
        # moved, or it is pending or inside its min_gap (`watch_from`). Skip the call. A value still
        # the very object the last request saw is compared by identity, without reading it.
        if len(watched) == 1 and self.config.min_change == 0.0:
            key = watched[0]
            for npc, decision in self.decisions.items():
                asked = decision.asked_first
                try:
                    value = boards[npc][key]  # a subscript is cheaper than .get(); same result
                except KeyError:
                    board = boards.get(npc)
                    if board is None:  # no board this frame: it waits for one
                        continue
                    value = board.get(key)
                if (value is asked or value == asked or now < decision.watch_from) and now < decision.wake:
                    continue
                before = decision.behavior
                if decision.tick(now, boards[npc]) != before:
                    changed.append(npc)
        else:
            for npc, decision in self.decisions.items():
                board = boards.get(npc)
                if board is None or (
                    now < decision.wake and (now < decision.watch_from or not decision.watched_changed(board))
                ):
                    continue
                before = decision.behavior
                if decision.tick(now, board) != before:
                    changed.append(npc)
        return changed

    def drain_events(self) -> list[Event]:
        if self._committed:
            self._take_commits()
        events = self.events
        drained = []
        while events:
            drained.append(events.popleft())
        return drained

    def metrics(self) -> dict[str, Any]:
        """One dict: tier counts, latency p50/p95, timeouts, stale discards, breaker, queue depth."""
        if self._committed:
            self._take_commits()
        metrics = self.stats.snapshot()
        metrics["npcs"] = len(self.decisions)
        metrics["pending"] = sum(1 for d in self.decisions.values() if d.pending)
        metrics["events_queued"] = len(self.events)
        if isinstance(self.transport, LLMTransport):
            endpoints = self.transport.client.pool.states()
            metrics["queue_depth"] = self.transport.queue_depth
            metrics["in_flight"] = sum(int(e["in_flight"]) for e in endpoints)  # type: ignore[call-overload]  # states() values are objects; in_flight is an int
            metrics["rejected"] = dict(self.transport.rejected)
            metrics["endpoints"] = endpoints
            states = {str(e["breaker"]) for e in endpoints}
            metrics["breaker"] = (
                "closed" if states == {"closed"} else "open" if states == {"open"} else "mixed"
            )
        return metrics

    def close(self) -> None:
        for decision in self.decisions.values():
            decision.cancel()
        if self._owned is not None:
            self._owned.close()
            self._owned = None

    def __enter__(self) -> DecisionHub:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
