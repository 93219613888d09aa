"""LLM decisions behind the server: one `DecisionHub` per distinct (intents, deadlines, prompt), all
sharing one transport (one asyncio thread, one HTTP client) per endpoint list. A hub goes when its last
decision does, a transport (and its thread) `idle_seconds` after its last hub did (a guard despawned and
respawned at once reuses it: opening one costs the main thread milliseconds).

A node asks explicitly (`request`); the server ticks only decisions that have something to do (a
request to send, a watchdog to run, an outcome to merge), so an idle NPC costs nothing per frame and
nothing is ever dispatched that the game did not ask for. Decisions run on real monotonic seconds, since
model latency is real whatever the game clock does.

Every request ends in exactly one `decision_made` or `decision_fallback`, unless aborted: a request made
while another is pending waits for it to end and then goes out; one made while another is still waiting
to go out replaces it, and the replaced one ends as `decision_fallback(3, "superseded")`; a decision
whose tick raises ends its requests as `decision_fallback(3, "internal_error")`, logged with the
traceback, and the other decisions' update goes on.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
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
from npc_mind.decision.blackboard import Describe, describe_type, plain_board
from npc_mind.decision.rules import Chooser
from npc_mind.llm.client import DEFAULT_RESPONSE_CAP, LLMSettings
from npc_mind.llm.endpoints import Endpoint
from npc_mind.llm.errors import RejectedError
from npc_mind.llm.prompt import Example, PromptConfig
from npc_mind.llm.schema import DecisionSchema
from npc_mind.llm.transport import LLMTransport, Request
from npc_mind.server.events import EventQueue, ServerEvent
from npc_mind.server.registry import HandleCounter, Registry, UnknownHandleError

THINKING_STARTED = "thinking_started"
DECISION_MADE = "decision_made"
DECISION_FALLBACK = "decision_fallback"
# The counters `metrics` sums over hubs (a released hub's are kept in `DecisionBank.retired`).
COUNTERS = ("dispatched", "tier1", "tier2", "tier3", "timeouts", "stale_discards", "aborts")


@dataclass(frozen=True)
class DecisionSettings:
    """What one AsyncLLMDecision node configures; equal settings share a hub, equal endpoint and caps
    a transport. max_response_bytes / max_decoded_bytes: `LLMSettings`' caps on one response.
    persona and examples (few-shot, `PromptConfig.examples`) make the hub's stable prompt prefix, so
    NPCs that differ in either are different hubs, each with its own cached prefix."""

    intents: tuple[str, ...] = ("idle",)
    soft_deadline: float = 0.3
    hard_deadline: float = 0.8
    tag_ttl: float = 10.0
    persona: str = "a guard in a game world"
    examples: tuple[Example, ...] = ()
    endpoint: str = ""  # empty: the server's default endpoint
    max_response_bytes: int = DEFAULT_RESPONSE_CAP
    max_decoded_bytes: int = DEFAULT_RESPONSE_CAP

    def hub_key(self) -> tuple[Any, ...]:
        return (
            self.intents,
            self.soft_deadline,
            self.hard_deadline,
            self.tag_ttl,
            self.persona,
            self.examples,
            self.endpoint,
            self.max_response_bytes,
            self.max_decoded_bytes,
        )


class _NoEndpoint:
    """The transport when no endpoint is configured: every request is an immediate tier 3."""

    def release_promises(self) -> None:
        pass

    def refusal(self, *_request: object) -> str:
        """Asked before a request is built: no snapshot, memory query or prompt for a refused one."""
        return "no_endpoint"

    def submit(self, request: Request, on_done: Callable[..., None]) -> Any:
        raise RejectedError("no LLM endpoint configured", reason="no_endpoint")

    def close(self, wait: bool = True) -> None:
        pass


class _MemoryForHub:
    """The hub's MemorySource: a decision's sibling memory stream, top-k without waking anything."""

    def __init__(self, server_top_k: Callable[[int, int], Sequence[Any]], owner: DecisionBank) -> None:
        self._top_k = server_top_k
        self._owner = owner

    def top_k(self, npc: int, now: float, k: int = 5) -> Sequence[Any]:
        entry = self._owner.entries.get(npc)
        if not entry.memory_handle:
            return ()
        try:
            return self._top_k(entry.memory_handle, k)
        except UnknownHandleError:  # the stream was freed: this decision asks without memories now
            entry.memory_handle = 0
            return ()


@dataclass
class DecisionEntry:
    settings: DecisionSettings
    hub: DecisionHub
    machine: AsyncDecision
    memory_handle: int = 0
    board: dict[str, Any] = field(default_factory=dict)
    wants_dispatch: bool = False  # the last request has not gone out yet


@dataclass
class DecisionBank:
    counter: HandleCounter
    events: EventQueue
    default_endpoint: str = ""
    memory_top_k: Callable[[int, int], Sequence[Any]] | None = None
    clock: Callable[[], float] = time.monotonic
    entries: Registry[DecisionEntry] = field(init=False)
    hubs: dict[tuple[Any, ...], DecisionHub] = field(default_factory=dict)
    transports: dict[tuple[str, int, int], Any] = field(default_factory=dict)  # (url, caps)
    idle_seconds: float = 10.0  # how long a transport no decision uses is kept for reuse
    idle: dict[tuple[str, int, int], tuple[Any, float]] = field(default_factory=dict)  # oldest first
    retired: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))
    _active: set[int] = field(default_factory=set)
    _users: dict[int, int] = field(default_factory=dict)  # id(hub) -> its decisions' count
    _dirty: dict[int, DecisionHub] = field(default_factory=dict)  # hubs to drain at the next step
    # Asks refused at once since the last step, ended there in one pass (`_end_refusals`): each the
    # decision's handle, entry, epoch and fallback behavior, and the reason. Flat, with no event made
    # per ask: a crowd on a saturated endpoint is refused hundreds of times a frame.
    _refused: list[tuple[int, DecisionEntry, int, str, str]] = field(default_factory=list)
    # Read-only watchers of every decision event as it happens (the editor's debugger feed).
    observers: list[Callable[[Any], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.entries = Registry("decision", self.counter)

    @property
    def busy(self) -> bool:
        """A decision, a transport (kept idle for reuse too), or work for the next step remains."""
        return bool(
            self.entries or self.transports or self.idle or self._active or self._refused or self._dirty
        )

    def _transport(self, settings: DecisionSettings) -> Any:
        # One transport per endpoint list, however it is spelled ("http://a/v1/", " http://a/v1").
        parts = (settings.endpoint or self.default_endpoint).split(",")
        endpoints = [Endpoint(part.strip()) for part in parts if part.strip()]
        url = ",".join(endpoint.base_url for endpoint in endpoints)
        caps = (settings.max_response_bytes, settings.max_decoded_bytes)
        key = (url, *caps)
        transport = self.transports.get(key)
        if transport is None and key in self.idle:
            transport = self.idle.pop(key)[0]
            self.transports[key] = transport
        if transport is None:
            if endpoints:
                llm = LLMSettings(max_response_bytes=caps[0], max_decoded_bytes=caps[1])
                transport = LLMTransport(endpoints, llm)
            else:
                transport = _NoEndpoint()
            self.transports[key] = transport
        return transport

    def _hub(self, settings: DecisionSettings) -> DecisionHub:
        key = settings.hub_key()
        hub = self.hubs.get(key)
        if hub is None:
            config = DecisionConfig(
                soft_deadline=settings.soft_deadline,
                hard_deadline=settings.hard_deadline,
                tag_ttl=settings.tag_ttl,
                replan_interval=3600.0,  # never on a timer: nodes ask explicitly (`AsyncDecision.ask`)
                min_gap=0.0,
            )
            memory = _MemoryForHub(self.memory_top_k, self) if self.memory_top_k else None
            hub = DecisionHub(
                self._transport(settings),
                DecisionSchema(settings.intents),
                config=config,
                prompt=PromptConfig(persona=settings.persona, examples=settings.examples),
                memory=memory,
            )
            self.hubs[key] = hub
        return hub

    def add(
        self,
        settings: DecisionSettings,
        fallback: Chooser | None = None,
        memory_handle: int = 0,
        priority: int = 0,
    ) -> int:
        """fallback: the selector covering tiers 2 and 3; without one, the first intent is the default.
        priority: see `set_priority`."""
        hub = self._hub(settings)
        chooser = fallback or RuleChooser([], default=settings.intents[0])
        handle = self.counter.take()
        machine = hub.add(handle, chooser)
        machine.priority = priority
        self.entries.entries[handle] = DecisionEntry(settings, hub, machine, memory_handle)
        self._users[id(hub)] = self._users.get(id(hub), 0) + 1
        return handle

    def remove(self, handle: int) -> None:
        """Free a decision (its pending request is dropped, with no signal); its hub goes with its last
        decision, and that hub's transport, thread included, with its last hub."""
        entry = self.entries.pop(handle)
        hub = entry.hub
        hub.remove(handle)
        self._active.discard(handle)
        self.events.discard(handle)
        self._users[id(hub)] -= 1
        if self._users[id(hub)]:
            self._dirty[id(hub)] = hub  # an answer it committed for this decision is discarded at the step
            return
        del self._users[id(hub)]
        self._dirty.pop(id(hub), None)
        self._release_hub(entry.settings, hub)

    def _release_hub(self, settings: DecisionSettings, hub: DecisionHub) -> None:
        hub.drain_events()  # counts what it still held for removed decisions as stale
        metrics = hub.stats.snapshot()
        for key in COUNTERS:
            self.retired[key] += int(metrics[key])  # type: ignore[call-overload]  # the snapshot's counters are ints
        del self.hubs[settings.hub_key()]
        hub.close()
        transport = hub.transport
        if not any(other.transport is transport for other in self.hubs.values()):
            for transport_key in [key for key, known in self.transports.items() if known is transport]:
                del self.transports[transport_key]
                self.idle[transport_key] = (transport, self.clock())

    def _close_idle(self, now: float) -> None:
        """Close the transports idle for `idle_seconds` (oldest first: stops at the first younger one),
        without waiting for their threads."""
        idle = self.idle
        while idle:
            key, (transport, since) = next(iter(idle.items()))
            if now - since < self.idle_seconds:
                return
            del idle[key]
            transport.close(wait=False)

    def request(self, handle: int, context: Mapping[str, Any], describe: Describe = describe_type) -> None:
        """Ask once; the request goes out in the next `step` and ends in exactly one decision signal.
        The context is copied now as plain data (`plain_board`, `describe` making what is not plain
        a description), so nothing the caller owns is read later or on another thread. An ask the
        transport refuses now (a saturated endpoint, an open breaker) is not copied: it ends at once
        in tier 3 (the fallback rules choose from the context now), its signal and counters in the
        next step."""
        entry = self.entries.get(handle)
        if not entry.wants_dispatch:
            machine = entry.machine
            try:
                reason = machine.refuse_now(self.clock(), context)
            except Exception:  # the fallback selector raised on the context: as in a tick
                machine._failed(1)
                self._dirty[id(entry.hub)] = entry.hub  # its event becomes a signal at the next step
                return
            if reason is not None:
                self._refused.append((handle, entry, machine.epoch, machine.behavior or "", reason))
                return
        board = plain_board(context, describe)
        if entry.wants_dispatch:  # the one still waiting to go out is replaced by this one
            self._end(entry, handle, "superseded")
        entry.board = board
        entry.wants_dispatch = True
        entry.machine.ask()
        self._active.add(handle)

    def _end_refusals(self) -> None:
        """The asks refused since the last step, each ended as one `decision_fallback(3, reason)`, in
        the order asked, and counted in its hub (a removed or aborted decision's are dropped)."""
        refused, self._refused = self._refused, []
        live = self.entries.entries
        kept = [refusal for refusal in refused if live.get(refusal[0]) is refusal[1]]  # not removed since
        for (hub, reason), count in Counter((entry.hub, reason) for _, entry, _, _, reason in kept).items():
            stats = hub.stats
            stats.dispatched += count
            stats.tiers[3] += count
            stats.reasons[reason] += count
        if self.observers:
            for handle, _, epoch, behavior, reason in kept:
                self._observe(DecisionFallback(handle, epoch, behavior, 3, 0.0, reason))
        make = ServerEvent._make
        self.events.extend([make((refusal[0], DECISION_FALLBACK, (3, refusal[4]))) for refusal in kept])

    def _end(self, entry: DecisionEntry, handle: int, reason: str) -> None:
        """End a request that never got its answer with a tier-3 `decision_fallback(reason)`."""
        stats = entry.hub.stats
        stats.tiers[3] += 1
        stats.reasons[reason] += 1
        self.events.push(handle, DECISION_FALLBACK, 3, reason)

    def set_priority(self, handle: int, priority: int) -> None:
        """When the endpoints are saturated, a decision's requests go before those of lower priority
        (equal ones: higher last urgency first, then the older); the last in that order are refused
        (`queue_full`) or shed (`shed`) at once. Takes effect from its next request."""
        self.entries.get(handle).machine.priority = int(priority)

    def abort(self, handle: int) -> None:
        """Drop the pending request: no decision signal for it, ever; the late answer is discarded."""
        entry = self.entries.get(handle)
        entry.machine.abort("interrupt")
        entry.wants_dispatch = False
        if self._refused:  # an ask refused this frame: its fallback is not delivered either
            self._refused = [refusal for refusal in self._refused if refusal[0] != handle]

    def pending(self, handle: int) -> bool:
        entry = self.entries.get(handle)
        return entry.wants_dispatch or entry.machine.pending

    def step(self) -> None:
        """Tick the decisions with work to do, then turn their hubs' events into signals. Costs what
        the active decisions cost, whatever the number of idle ones or of hubs."""
        now = self.clock()
        if self.idle:
            self._close_idle(now)
        if self._refused:
            self._end_refusals()
        touched, self._dirty = self._dirty, {}
        for transport in self.transports.values():
            transport.release_promises()  # the requests admitted when asked go out now
        for handle in sorted(self._active):
            entry = self.entries.get(handle)
            machine = entry.machine
            touched[id(entry.hub)] = entry.hub
            if entry.wants_dispatch or machine.pending:
                self._tick(entry, now)
            elif machine.slot:  # a late answer for an aborted request: discarded and counted
                for _ in machine.slot.drain():
                    entry.hub.stats.stale_discards += 1
            if not (entry.wants_dispatch or machine.pending or machine.slot):
                self._active.discard(handle)
        for hub in touched.values():
            for event in hub.drain_events():
                self._signal(event)

    def _tick(self, entry: DecisionEntry, now: float) -> None:
        """One decision's tick (isolated by `AsyncDecision.tick`: a raise ends its requests as
        `internal_error`, logged with the traceback, and the other decisions' update goes on)."""
        entry.machine.tick(now, entry.board)
        # Until it went out (another one was pending, or its watchdog fired this tick) it waits.
        entry.wants_dispatch = entry.machine.asked

    def _observe(self, event: Any) -> None:
        for observer in self.observers:
            try:
                observer(event)
            except Exception:  # a watcher's bug must not cost the game its signals
                logging.getLogger(__name__).exception("npc_mind: a decision observer failed")

    def _signal(self, event: Any) -> None:
        if event.npc not in self.entries:
            return
        self._observe(event)
        if isinstance(event, ThinkingStarted):
            self.events.push(event.npc, THINKING_STARTED)
        elif isinstance(event, DecisionMade):
            urgency = 0.0 if event.urgency is None else float(event.urgency)
            self.events.push(event.npc, DECISION_MADE, event.intent, urgency, event.tier)
        elif isinstance(event, DecisionFallback):
            self.events.push(event.npc, DECISION_FALLBACK, event.tier, event.reason)

    def has_endpoint(self, handle: int) -> bool:
        """False when no endpoint is configured for the decision: its every request ends at once
        as `decision_fallback(3, "no_endpoint")`."""
        return not isinstance(self.entries.get(handle).hub.transport, _NoEndpoint)

    def fresh_intent(self, handle: int) -> str:
        """The intent of the decision's last applied answer while it still steers (younger than its
        tag_ttl on the decisions' wall clock, as the tags, not aborted since), else ""."""
        tags = self.entries.get(handle).machine._fresh_tags(self.clock())
        return tags[0] if tags else ""

    def behavior(self, handle: int) -> str:
        return self.entries.get(handle).machine.behavior or ""

    def metrics(self) -> dict[str, Any]:
        """Summed over every hub, released ones included: the counters the monitors show."""
        total: dict[str, Any] = {"npcs": 0, "pending": 0, **self.retired}
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
        for transport in [*self.transports.values(), *(known for known, _ in self.idle.values())]:
            transport.close()
        self.hubs.clear()
        self.transports.clear()
        self.idle.clear()
        self._users.clear()
        self._dirty.clear()


def _percentile_ms(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))
    return round(ordered[index] * 1000.0, 1)
