"""A circuit breaker per endpoint: after `failure_threshold` consecutive failures stop calling it for
`cooldown` seconds, then let one probe through; the probe's result closes or re-opens it.

What counts as a failure is the endpoint's fault only: refused or reset connections, HTTP errors (5xx),
read timeouts, and a missed deadline only when the answer had begun and then stalled, with time enough
by the endpoint's own measured service time (`EndpointPool.hung`): an answer not begun is a slow
endpoint, never a failing one. Any answer, even an invalid one, is a success; a request that waited
in our own queue, was sent with little time left, or was cancelled says nothing (`LLMClient.decide`).

Used from the asyncio loop thread; the main thread only reads `state` for metrics.
"""

from __future__ import annotations

import dataclasses
import enum
import time
from collections.abc import Callable


class BreakerState(enum.Enum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


@dataclasses.dataclass(frozen=True)
class BreakerConfig:
    """failure_threshold: 1..1000 consecutive failures; cooldown: 0.01..3600 s before a probe."""

    failure_threshold: int = 5
    cooldown: float = 5.0

    def __post_init__(self) -> None:
        if not 1 <= self.failure_threshold <= 1000:
            raise ValueError(f"failure_threshold must be in 1..1000, got {self.failure_threshold}")
        if not 0.01 <= self.cooldown <= 3600:
            raise ValueError(f"cooldown must be in 0.01..3600 s, got {self.cooldown}")


class CircuitBreaker:
    def __init__(self, config: BreakerConfig | None = None, clock: Callable[[], float] = time.monotonic):
        self.config = config or BreakerConfig()
        self._clock = clock
        self._failures = 0
        self._opened_at = 0.0
        self._state = BreakerState.CLOSED
        self._probing = False
        self.opened_count = 0

    @property
    def state(self) -> BreakerState:
        if self._state is BreakerState.OPEN and self._clock() - self._opened_at >= self.config.cooldown:
            return BreakerState.HALF_OPEN
        return self._state

    def available(self) -> bool:
        """Whether a call may be made now (closed, or half-open with no probe out yet)."""
        state = self.state
        return state is BreakerState.CLOSED or (state is BreakerState.HALF_OPEN and not self._probing)

    def before_call(self) -> None:
        """Mark the start of a call; in half-open state that call is the one probe."""
        if self.state is BreakerState.HALF_OPEN:
            self._state = BreakerState.HALF_OPEN
            self._probing = True

    def record_success(self) -> None:
        self._failures = 0
        self._probing = False
        self._state = BreakerState.CLOSED

    def record_failure(self) -> None:
        self._failures += 1
        was_probe = self._probing
        self._probing = False
        if was_probe or self._failures >= self.config.failure_threshold:
            if self._state is not BreakerState.OPEN or was_probe:
                self.opened_count += 1
            self._state = BreakerState.OPEN
            self._opened_at = self._clock()

    def record_neutral(self) -> None:
        """A call that ended without telling anything about the endpoint (cancelled): free the probe."""
        self._probing = False
