"""LLM decisions behind the server: one `DecisionHub` per distinct (intents, deadlines, prompt), all
sharing one transport (one asyncio thread, one HTTP client) per endpoint list.

A node asks explicitly (`request`); the server ticks only decisions that have something to do (a
request to send, a watchdog to run, an outcome to merge), so an idle NPC costs nothing per frame and
nothing is ever dispatched that the game did not ask for. Decisions run on real monotonic seconds, since
model latency is real whatever the game clock does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from npc_mind.decision import (
    AsyncDecision,
    DecisionConfig,
    DecisionFallback,
    DecisionHub,
    DecisionMade,
    RuleChooser,
    ThinkingStarted,
)
from npc_mind.decision.rules import Chooser
from npc_mind.llm.endpoints import Endpoint
from npc_mind.llm.errors import RejectedError
from npc_mind.llm.prompt import PromptConfig
from npc_mind.llm.schema import DecisionSchema
from npc_mind.llm.transport import LLMTransport, Request
from npc_mind.server.events import EventQueue
from npc_mind.server.registry import HandleCounter, Registry

THINKING_STARTED = "thinking_started"
DECISION_MADE = "decision_made"
DECISION_FALLBACK = "decision_fallback"
REQUEST_KEY = "_npc_mind_request"  # a watched blackboard key: bumping it is how a node asks


@dataclass(frozen=True)
class DecisionSettings:
    """What one AsyncLLMDecision node configures; equal settings share a hub."""

    intents: tuple[str, ...] = ("idle",)
    soft_deadline: float = 0.3
    hard_deadline: float = 0.8
    tag_ttl: float = 10.0
    persona: str = "a guard in a game world"
    endpoint: str = ""  # empty: the server's default endpoint

    def hub_key(self) -> tuple[Any, ...]:
        return (
            self.intents,
            self.soft_deadline,
            self.hard_deadline,
            self.tag_ttl,
            self.persona,
            self.endpoint,
        )


class _NoEndpoint:
    """The transport when no endpoint is configured: every request is an immediate tier 3."""

    def submit(self, request: Request, on_done: Callable[..., None]) -> Any:
        raise RejectedError("no LLM endpoint configured", reason="no_endpoint")

    def close(self) -> None:
        pass


class _MemoryForHub:
    """The hub's MemorySource: a decision's sibling memory stream, top-k without waking anything."""

    def __init__(self, server_top_k: Callable[[int, int], Sequence[Any]], owner: DecisionBank) -> None:
        self._top_k = server_top_k
        self._owner = owner

    def top_k(self, npc: int, now: float, k: int = 5) -> Sequence[Any]:
        stream = self._owner.entries.get(npc).memory_handle
        return self._top_k(stream, k) if stream else ()


@dataclass
class DecisionEntry:
    settings: DecisionSettings
    hub: DecisionHub
    machine: AsyncDecision
    memory_handle: int = 0
    board: dict[str, Any] = field(default_factory=dict)
    requests: int = 0
    wants_dispatch: bool = False


@dataclass
class DecisionBank:
    counter: HandleCounter
    events: EventQueue
    default_endpoint: str = ""
    memory_top_k: Callable[[int, int], Sequence[Any]] | None = None
    clock: Callable[[], float] = time.monotonic
    entries: Registry[DecisionEntry] = field(init=False)
    hubs: dict[tuple[Any, ...], DecisionHub] = field(default_factory=dict)
    transports: dict[str, Any] = field(default_factory=dict)
    _active: set[int] = field(default_factory=set)
    # Read-only watchers of every decision event as it happens (the editor's debugger feed).
    observers: list[Callable[[Any], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.entries = Registry("decision", self.counter)

    def _transport(self, endpoint: str) -> Any:
        url = endpoint or self.default_endpoint
        transport = self.transports.get(url)
        if transport is None:
            urls = [part.strip() for part in url.split(",") if part.strip()]
            transport = LLMTransport([Endpoint(part) for part in urls]) if urls else _NoEndpoint()
            self.transports[url] = transport
        return transport

    def _hub(self, settings: DecisionSettings) -> DecisionHub:
        key = settings.hub_key()
        hub = self.hubs.get(key)
        if hub is None:
            config = DecisionConfig(
                soft_deadline=settings.soft_deadline,
                hard_deadline=settings.hard_deadline,
                tag_ttl=settings.tag_ttl,
                replan_interval=3600.0,  # never on a timer: nodes ask explicitly
                watched=(REQUEST_KEY,),
                min_gap=0.0,
            )
            memory = _MemoryForHub(self.memory_top_k, self) if self.memory_top_k else None
            hub = DecisionHub(
                self._transport(settings.endpoint),
                DecisionSchema(settings.intents),
                config=config,
                prompt=PromptConfig(persona=settings.persona),
                memory=memory,
            )
            self.hubs[key] = hub
        return hub

    def add(self, settings: DecisionSettings, fallback: Chooser | None = None, memory_handle: int = 0) -> int:
        """fallback: the selector covering tiers 2 and 3; without one, the first intent is the default."""
        hub = self._hub(settings)
        chooser = fallback or RuleChooser([], default=settings.intents[0])
        handle = self.counter.take()
        machine = hub.add(handle, chooser)
        self.entries.entries[handle] = DecisionEntry(settings, hub, machine, memory_handle)
        return handle

    def remove(self, handle: int) -> None:
        entry = self.entries.pop(handle)
        entry.hub.remove(handle)
        self._active.discard(handle)
        self.events.discard(handle)

    def request(self, handle: int, context: Mapping[str, Any]) -> None:
        """Ask once; the request goes out in the next `step` and ends in exactly one decision signal."""
        entry = self.entries.get(handle)
        entry.requests += 1
        entry.board = {**context, REQUEST_KEY: entry.requests}
        entry.wants_dispatch = True
        self._active.add(handle)

    def abort(self, handle: int) -> None:
        """Drop the pending request: no decision signal for it, ever; the late answer is discarded."""
        entry = self.entries.get(handle)
        entry.machine.abort("interrupt")
        entry.wants_dispatch = False

    def pending(self, handle: int) -> bool:
        entry = self.entries.get(handle)
        return entry.wants_dispatch or entry.machine.pending

    def step(self) -> None:
        """Tick the decisions with work to do, then turn the hubs' events into signals."""
        now = self.clock()
        for handle in sorted(self._active):
            entry = self.entries.get(handle)
            machine = entry.machine
            if entry.wants_dispatch or machine.pending:
                entry.wants_dispatch = False
                machine.tick(now, entry.board)
            elif machine.slot:  # a late answer for an aborted request: discarded and counted
                for _ in machine.slot.drain():
                    entry.hub.stats.stale_discards += 1
            if not (entry.wants_dispatch or machine.pending or machine.slot):
                self._active.discard(handle)
        for hub in self.hubs.values():
            for event in hub.drain_events():
                self._signal(event)

    def _signal(self, event: Any) -> None:
        if event.npc not in self.entries:
            return
        for observer in self.observers:
            observer(event)
        if isinstance(event, ThinkingStarted):
            self.events.push(event.npc, THINKING_STARTED)
        elif isinstance(event, DecisionMade):
            urgency = 0.0 if event.urgency is None else float(event.urgency)
            self.events.push(event.npc, DECISION_MADE, event.intent, urgency, event.tier)
        elif isinstance(event, DecisionFallback):
            self.events.push(event.npc, DECISION_FALLBACK, event.tier, event.reason)

    def behaviour(self, handle: int) -> str:
        return self.entries.get(handle).machine.behaviour or ""

    def metrics(self) -> dict[str, Any]:
        """Summed over every hub: the counters the monitors show."""
        total: dict[str, Any] = {
            "npcs": 0, "pending": 0, "dispatched": 0, "tier1": 0, "tier2": 0, "tier3": 0,
            "timeouts": 0, "stale_discards": 0, "aborts": 0,
        }  # fmt: skip
        latencies: list[float] = []
        for hub in self.hubs.values():
            metrics = hub.metrics()
            for key in total:
                total[key] += int(metrics.get(key) or 0)
            latencies.extend(hub.stats.latencies)
        total["latency_p50_ms"] = _percentile_ms(latencies, 50)
        total["latency_p95_ms"] = _percentile_ms(latencies, 95)
        return total

    def close(self) -> None:
        for hub in self.hubs.values():
            hub.close()
        for transport in self.transports.values():
            transport.close()
        self.hubs.clear()
        self.transports.clear()


def _percentile_ms(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))
    return round(ordered[index] * 1000.0, 1)
