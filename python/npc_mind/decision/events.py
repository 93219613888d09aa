"""Decision events, queued for the main thread. Each request ends in exactly one `DecisionMade` or
`DecisionFallback`; an aborted request ends in neither."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, slots=True)
class ThinkingStarted:
    """A request went out: time for a "let me think..." gesture or bark."""

    npc: int
    epoch: int
    at: float


@dataclasses.dataclass(frozen=True, slots=True)
class DecisionMade:
    """The model's answer was applied: whole (tier 1: behavior is the intent, urgency and target kept)
    or as a tag only (tier 2: the selector chose the behavior; urgency and target are None)."""

    npc: int
    epoch: int
    intent: str
    behavior: str
    urgency: float | None
    target_id: int | None
    tier: int
    latency: float
    reason: str = "in_time"  # "in_time" (tier 1) or "late" (tier 2: only the intent was used)


@dataclasses.dataclass(frozen=True, slots=True)
class DecisionFallback:
    """No answer was applied (tier 3): the local AI chose `behavior`; `reason` says why: the endpoint
    (timeout, connect_error, connection_error, http_error), its answer (invalid_json, invalid_answer,
    too_large: over the response caps), a refusal (queue_full, breaker_open, no_endpoint), or a bug,
    logged with its traceback (prompt_error: the prompt could not be made from the context;
    internal_error: anything else that went wrong)."""

    npc: int
    epoch: int
    behavior: str
    tier: int
    latency: float
    reason: str


Event = ThinkingStarted | DecisionMade | DecisionFallback
