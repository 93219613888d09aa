"""The server's one clock: what "now" means for every memory, selector and decision.

Working memory runs on play seconds, never on the day/night game clock: fast-forwarding a night
(`Engine.time_scale`) must not wipe every guard's memory, so the default mode ignores the scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum


class ClockMode(StrEnum):
    """How `ServerClock.step` moves time."""

    PROCESS = "process"  # play seconds: stopped while paused, not scaled by the engine's time scale
    SCALED_PROCESS = "scaled_process"  # play seconds times the engine's time scale, stopped while paused
    MANUAL = "manual"  # moved only by `advance(seconds)`: tests and replays


def _finite_non_negative(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value) or value < 0.0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return value


@dataclass
class ServerClock:
    """Seconds since the server started, as float64 so long sessions keep their precision."""

    mode: ClockMode = ClockMode.PROCESS
    _now: float = 0.0

    def __post_init__(self) -> None:
        self.mode = ClockMode(self.mode)

    def now(self) -> float:
        return self._now

    def step(self, delta: float, time_scale: float = 1.0, paused: bool = False) -> float:
        """Move time by one engine frame; returns the seconds that passed on this clock."""
        delta = _finite_non_negative("delta", delta)
        time_scale = _finite_non_negative("time_scale", time_scale)
        if paused or self.mode is ClockMode.MANUAL:
            return 0.0
        passed = delta * time_scale if self.mode is ClockMode.SCALED_PROCESS else delta
        self._now += passed
        return passed

    def advance(self, seconds: float) -> float:
        """Move a manual clock; refused in the other modes, where the engine owns time."""
        if self.mode is not ClockMode.MANUAL:
            raise RuntimeError(f"advance() needs clock mode 'manual', the clock is '{self.mode}'")
        seconds = _finite_non_negative("seconds", seconds)
        self._now += seconds
        return seconds

    def set_mode(self, mode: ClockMode | str) -> None:
        """Switching keeps the current time: memories never jump."""
        self.mode = ClockMode(mode)
