"""`AsyncDecision`: one NPC's LLM advisor state machine. `tick` never blocks.

Per request: dispatch on a frozen snapshot (a `thinking` event; the NPC keeps a cover action) ->
an answer before the soft deadline is applied whole (tier 1) -> past it the local selector takes over,
restricted to the last intent's tag while that is fresh, and a late answer contributes only its intent
(tier 2) -> at the hard deadline, or on any error, the request is cancelled and the local AI decides
freely (tier 3). `abort()` bumps the epoch and cancels; whatever comes back for an old epoch is
discarded and counted, never applied.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from npc_mind.decision.blackboard import CommitSlot, freeze
from npc_mind.decision.config import DecisionConfig
from npc_mind.decision.events import DecisionFallback, DecisionMade, ThinkingStarted
from npc_mind.decision.metrics import DecisionStats
from npc_mind.decision.rules import Chooser
from npc_mind.llm.errors import RejectedError
from npc_mind.llm.prompt import PromptConfig, memory_facts
from npc_mind.llm.schema import DecisionSchema
from npc_mind.llm.transport import Outcome, Request

_INF = float("inf")
log = logging.getLogger("npc_mind.decision")


def _unit(npc: int, epoch: int) -> float:
    """A deterministic, well-spread number in [0, 1) for (npc, epoch): the re-plan jitter."""
    x = (hash(npc) * 0x9E3779B1 + epoch * 0x85EBCA77) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x2C1B3C6D) & 0xFFFFFFFF
    x ^= x >> 12
    x = (x * 0x297A2D39) & 0xFFFFFFFF
    x ^= x >> 15
    return x / 4294967296.0


def _differ(new: Any, old: Any) -> bool:
    try:
        return bool(new != old)
    except (TypeError, ValueError):  # no plain answer (an array): count it as a change
        return True


class Cancellable(Protocol):
    def cancel(self) -> None: ...


class Transport(Protocol):
    """`LLMTransport`, or any transport that runs a request and reports its `Outcome` via `on_done`."""

    def submit(self, request: Request, on_done: Callable[[Outcome], None]) -> Cancellable: ...


class MemorySource(Protocol):
    def top_k(self, npc: int, now: float, k: int = 5) -> Sequence[Any]: ...


class AsyncDecision:
    """One NPC's decisions. Main thread only, except `_commit` (called by the transport)."""

    # Slots, with what `DecisionHub.tick_all` reads for every NPC every frame first (one cache line).
    __slots__ = (  # noqa: RUF023 (order is memory layout)
        "wake", "watch_from", "asked_first", "asked_values", "behavior", "npc", "slot", "_committed",
        "_ticket", "_pending_epoch", "_started_at", "_soft_passed", "_next_due", "_earliest", "_intent_at",
        "_refusal", "_asked", "config", "epoch", "events", "intent", "memory", "prompt", "rules", "schema",
        "selector", "stats", "tier", "transport", "priority", "urgency",
    )  # fmt: skip

    def __init__(
        self,
        npc: int,
        transport: Transport,
        schema: DecisionSchema,
        selector: Chooser,
        *,
        rules: Chooser | None = None,
        config: DecisionConfig | None = None,
        prompt: PromptConfig | None = None,
        memory: MemorySource | None = None,
        events: Any = None,
        stats: DecisionStats | None = None,
        committed: Any = None,
    ) -> None:
        """committed: a deque (a `DecisionHub`'s) that gets this object appended, on the transport's
        thread, after each outcome it commits; so the hub need not look at every NPC's slot per frame,
        and counts the late answers of NPCs it no longer has."""
        self.npc = npc
        self.transport = transport
        self.schema = schema
        self.selector = selector
        self.rules = rules or selector
        self.config = config or DecisionConfig()
        self.prompt = prompt or PromptConfig()
        self.memory = memory
        self.events: Any = events if events is not None else []
        self.stats = stats or DecisionStats()
        self.slot = CommitSlot()
        self._committed = committed
        # A transport that can say cheaply (without an exception) that it would refuse a request.
        self._refusal: Callable[..., str | None] | None = getattr(transport, "refusal", None)
        # When the endpoints are saturated, higher priority goes first, then higher urgency (the last
        # tier-1 answer's): the order in which requests beyond capacity are refused or shed.
        self.priority = 0
        self.urgency = 0.0
        # Before `wake`, with an empty slot and (when idle) no watched change, `tick` has nothing to do.
        self.wake = -_INF
        self.watch_from = -_INF  # from then on a watched change asks at once (inf while pending)
        self.epoch = 0
        self.behavior: str | None = None
        self.intent: str | None = None
        self.tier = 0
        self._intent_at = float("-inf")
        self._ticket: Cancellable | None = None
        self._pending_epoch = -1
        self._started_at = 0.0
        self._soft_passed = False
        self._next_due = float("-inf")
        self._earliest = float("-inf")
        self._asked = False  # an `ask()` not dispatched yet
        # The watched keys' values when the last request went out (a tuple: cheap to compare per frame).
        self.asked_values: tuple[Any, ...] = (None,) * len(self.config.watched)
        self.asked_first: Any = None  # asked_values[0], read by `DecisionHub.tick_all` every frame

    def watched_changed(self, board: Mapping[str, Any]) -> bool:
        """Whether a watched key moved by more than `min_change` since the last request (a value that
        is not a number: whether it is different)."""
        threshold = self.config.min_change
        for key, old in zip(self.config.watched, self.asked_values, strict=True):
            new = board.get(key)
            if isinstance(new, int | float) and isinstance(old, int | float):
                if abs(new - old) > threshold:
                    return True
            elif new is not old and _differ(new, old):
                return True
        return False

    @property
    def pending(self) -> bool:
        return self._ticket is not None

    @property
    def asked(self) -> bool:
        """True from `ask()` until that request goes out (or an abort)."""
        return self._asked

    def ask(self) -> None:
        """Request a decision whatever the re-plan policy: it goes out at the next tick, or, while
        one is pending, at the first tick after that one ends (still no sooner than `min_gap`)."""
        self._asked = True
        self.wake = -_INF

    def tick(self, now: float, board: Mapping[str, Any]) -> str:
        """What the NPC should do now. Merges a committed result first (the safe point), then runs the
        watchdog, then dispatches if nothing is pending and the re-plan policy says so.

        `now` must be on the transport's clock (`time.monotonic` for `LLMTransport`): latencies are
        the transport's completion stamps minus dispatch times. Model latency is real time, whatever
        the game's own clock does.

        If it raises (a selector that cannot read the board, a memory source that fails), the NPC's
        requests end as `DecisionFallback(reason="internal_error")`, logged with the traceback, and
        it returns what it did before: a caller ticking many NPCs goes on with the others."""
        mark = len(self.events)
        requests = (self._ticket is not None) + self._asked
        asked, epoch = self._asked, self._pending_epoch
        try:
            return self._tick(now, board)
        except Exception:
            if not asked and self._pending_epoch != epoch:
                requests += 1  # a re-plan began in this tick
            self._failed(requests - self._ends_since(mark))
            return self.behavior or ""

    def _ends_since(self, mark: int) -> int:
        """This NPC's DecisionMade / DecisionFallback events queued after position `mark`."""
        return sum(
            1
            for event in list(self.events)[mark:]
            if isinstance(event, DecisionMade | DecisionFallback) and event.npc == self.npc
        )

    def _failed(self, unended: int) -> None:
        log.exception("NPC %s: its decision update failed; its requests end as internal_error", self.npc)
        self.cancel()
        self._asked = False
        self.epoch += 1  # whatever still comes back belongs to the failed update: discarded
        self._schedule()
        for _ in range(unended):
            self.tier = 3
            self.stats.tiers[3] += 1
            self.stats.reasons["internal_error"] += 1
            self.events.append(
                DecisionFallback(
                    self.npc, self._pending_epoch, self.behavior or "", 3, 0.0, "internal_error"
                )
            )

    def _tick(self, now: float, board: Mapping[str, Any]) -> str:
        if self.slot:
            self._merge(now, board)
        if self._ticket is not None:
            elapsed = now - self._started_at
            if elapsed >= self.config.hard_deadline:
                self._ticket.cancel()
                self._ticket = None
                self.stats.timeouts += 1
                self._fall_back(now, board, elapsed, "timeout")
            elif elapsed >= self.config.soft_deadline and not self._soft_passed:
                # The selector takes over once; its choice holds until the answer or the watchdog.
                self._soft_passed = True
                self.behavior = self.selector.choose(board, now, self._fresh_tags(now))
        elif self._due(now, board):
            self._dispatch(now, board)
        if self.behavior is None:
            self.behavior = self.selector.choose(board, now, None)
        self._schedule()
        return self.behavior

    def _schedule(self) -> None:
        """When `tick` next has work without new input: lets `DecisionHub.tick_all` skip this NPC."""
        if self._ticket is not None:
            deadline = self.config.hard_deadline if self._soft_passed else self.config.soft_deadline
            self.wake = self._started_at + deadline
            self.watch_from = _INF
        else:
            self.wake = self._earliest if self._asked else self._next_due
            self.watch_from = self._earliest if self.config.watched else _INF

    def abort(self, reason: str = "interrupt") -> None:
        """A grenade, a fatal hit: drop the request and everything it was based on. The next `tick`
        (call it in the same frame) lets the local AI react freely; a late answer is discarded, and so
        is the fallback of a request refused at once that was not delivered yet (its caller drops the
        ones of `refuse_now`)."""
        events = self.events
        for event in [e for e in events if isinstance(e, DecisionFallback) and e.npc == self.npc]:
            if event.epoch == self.epoch:
                events.remove(event)
        self.epoch += 1
        self._asked = False
        if self.cancel():
            self.stats.aborts += 1
        # The old intent and behavior belong to the world before the interrupt: ghost state.
        self.behavior = None
        self.intent = None
        self._intent_at = float("-inf")
        self._earliest = float("-inf")
        self._next_due = float("-inf")
        self.wake = -_INF
        self.watch_from = -_INF

    def cancel(self) -> bool:
        """Cancel the pending request, if any, without an event (shutdown); True if there was one."""
        if self._ticket is None:
            return False
        self._ticket.cancel()
        self._ticket = None
        return True

    def _fresh_tags(self, now: float) -> tuple[str, ...] | None:
        if self.intent is not None and now - self._intent_at < self.config.tag_ttl:
            return (self.intent,)
        return None

    def _due(self, now: float, board: Mapping[str, Any]) -> bool:
        if now < self._earliest:
            return False
        return self._asked or now >= self._next_due or self.watched_changed(board)

    def _commit(self, outcome: Outcome) -> None:
        """The transport's callback (on its own thread): into the commit slot, then tell the hub."""
        self.slot.append(outcome)
        committed = self._committed
        if committed is not None:
            committed.append(self)

    def refuse_now(self, now: float, board: Mapping[str, Any]) -> str | None:
        """`ask()` for a decision with nothing pending, waiting or to merge, past its min_gap, when the
        transport would refuse it now: the request ends at once in tier 3, with no snapshot and no
        tick. Returns the reason, with the NPC's state moved on as a refused request moves it (a new
        epoch, the fallback rules' behavior, tier 3); None, doing nothing, in every other case. A
        saturated endpoint refuses most asks of a crowd: this is what each of those costs the NPC, and
        no more. The caller counts the request (`stats.dispatched`, `stats.tiers[3]`, `stats.reasons`)
        and delivers its fallback: a server ends a frame's refusals in one pass (`DecisionBank.step`)."""
        refusal = self._refusal
        if self._ticket is not None or self._asked or self.slot or now < self._earliest or refusal is None:
            return None
        reason = refusal(self.priority, self.urgency, self.config.hard_deadline, True)  # promised if taken
        if reason is None:
            return None
        self._open(now, board)
        self._fallback_behavior(now, board)
        self._schedule()
        return reason

    def _begin(self, now: float, board: Mapping[str, Any]) -> None:
        """A new request: its bookkeeping (`_open`), counted as dispatched."""
        self._open(now, board)
        self.stats.dispatched += 1

    def _open(self, now: float, board: Mapping[str, Any]) -> None:
        """A new request's bookkeeping: its epoch, the watched values it saw, the next re-plan times."""
        self.epoch += 1
        self._asked = False
        config = self.config
        watched = config.watched
        if watched:
            self.asked_values = tuple([board.get(key) for key in watched])
            self.asked_first = self.asked_values[0]
        interval = config.replan_interval
        if config.replan_jitter:
            interval *= 1.0 - config.replan_jitter * _unit(self.npc, self.epoch)
        self._next_due = now + interval
        self._earliest = now + config.min_gap
        self._pending_epoch = self.epoch

    def _dispatch(self, now: float, board: Mapping[str, Any]) -> None:
        self._begin(now, board)
        config = self.config
        # Ask first whether the transport would take it: a refused request costs no snapshot, memory
        # query or exception. The prompt itself is formatted on the transport's thread (`Request.chat`).
        refusal = self._refusal
        reason = refusal(self.priority, self.urgency, config.hard_deadline) if refusal is not None else None
        if reason is None:
            prompt = self.prompt
            memories = (
                memory_facts(self.memory.top_k(self.npc, now, prompt.max_memories), prompt.max_memories)
                if self.memory is not None
                else ()
            )
            request = Request(
                self.npc, self.epoch, (), self.schema, now, config.hard_deadline, freeze(board), memories,
                prompt, self.priority, self.urgency,
            )  # fmt: skip
            try:
                self._ticket = self.transport.submit(request, self._commit)
            except RejectedError as error:
                reason = error.reason
        if reason is not None:
            self._fall_back(now, board, 0.0, reason)
            return
        self._started_at = now
        self._soft_passed = False
        self.events.append(ThinkingStarted(self.npc, self.epoch, now))
        if self.behavior is None:  # the cover action: keep doing what we did, or pick one now
            self.behavior = self.selector.choose(board, now, self._fresh_tags(now))

    def _merge(self, now: float, board: Mapping[str, Any]) -> None:
        for outcome in self.slot.drain():
            if self._ticket is None or outcome.epoch != self._pending_epoch:
                self.stats.stale_discards += 1
                continue
            self._ticket = None
            latency = outcome.finished_at - self._started_at
            answer = outcome.answer
            if answer is None:
                if outcome.detail:  # a bug, not the endpoint: logged here, on the main thread
                    log.error("NPC %s: request failed (%s)\n%s", self.npc, outcome.reason, outcome.detail)
                self._fall_back(now, board, latency, outcome.reason)
                continue
            tier = self.config.classify(latency)
            if tier == 3:  # came back after the hard deadline, before the watchdog looked
                self.stats.timeouts += 1
                self._fall_back(now, board, latency, "timeout")
                continue
            self.stats.latencies.append(latency)
            self.stats.tiers[tier] += 1
            self.intent, self._intent_at, self.tier = answer.intent, now, tier
            if tier == 1:
                self.behavior = answer.intent
                self.urgency = float(answer.urgency or 0.0)
                event = DecisionMade(
                    self.npc, outcome.epoch, answer.intent, answer.intent, answer.urgency,
                    answer.target_id, 1, latency,
                )  # fmt: skip
            else:
                self.behavior = self.selector.choose(board, now, (answer.intent,))
                event = DecisionMade(
                    self.npc, outcome.epoch, answer.intent, self.behavior, None, None, 2, latency, "late"
                )
            self.events.append(event)

    def _fall_back(self, now: float, board: Mapping[str, Any], latency: float, reason: str) -> None:
        self._fallback_behavior(now, board)
        self._record_fallback(latency, reason)

    def _fallback_behavior(self, now: float, board: Mapping[str, Any]) -> None:
        """Tier 3: the fallback rules decide freely."""
        self.behavior = self.rules.choose(board, now, None)
        self.tier = 3

    def _record_fallback(self, latency: float, reason: str) -> None:
        """A tier-3 end counted and its `DecisionFallback` queued (the behavior chosen already)."""
        self.stats.tiers[3] += 1
        self.stats.reasons[reason] += 1
        if latency > 0:
            self.stats.latencies.append(latency)
        self.events.append(
            DecisionFallback(self.npc, self._pending_epoch, self.behavior or "", 3, latency, reason)
        )
