"""Counters shared by all of a hub's NPCs, read as one dict (the Godot side shows them as monitors)."""

from __future__ import annotations

from collections import Counter, deque

import numpy as np

LATENCY_WINDOW = 1024  # the last N request latencies feed p50/p95


class DecisionStats:
    __slots__ = ("aborts", "dispatched", "latencies", "reasons", "stale_discards", "tiers", "timeouts")

    def __init__(self) -> None:
        self.dispatched = 0
        self.tiers = [0, 0, 0, 0]  # index = tier
        self.timeouts = 0
        self.stale_discards = 0
        self.aborts = 0
        self.reasons: Counter[str] = Counter()
        self.latencies: deque[float] = deque(maxlen=LATENCY_WINDOW)

    def snapshot(self) -> dict[str, object]:
        latency: dict[str, float | None]
        if self.latencies:
            p50, p95 = np.percentile(np.fromiter(self.latencies, float), [50, 95])
            latency = {
                "latency_p50_ms": round(float(p50) * 1000, 1),
                "latency_p95_ms": round(float(p95) * 1000, 1),
            }
        else:
            latency = {"latency_p50_ms": None, "latency_p95_ms": None}
        return {
            "dispatched": self.dispatched,
            "tier1": self.tiers[1],
            "tier2": self.tiers[2],
            "tier3": self.tiers[3],
            "timeouts": self.timeouts,
            "stale_discards": self.stale_discards,
            "aborts": self.aborts,
            "fallback_reasons": dict(self.reasons),
            **latency,
        }
