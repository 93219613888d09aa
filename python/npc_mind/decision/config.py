"""The watchdog's deadlines and the re-plan policy, with the design source's defaults."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class DecisionConfig:
    """soft_deadline: 0.001..60 s, an answer before it is applied whole (tier 1); after it the local
    selector takes over and an answer contributes only its intent (tier 2).
    hard_deadline: soft..120 s, the request is cancelled and the local AI decides freely (tier 3).
    tag_ttl: 0..3600 s, how long the last intent still restricts the selector's choice.
    replan_interval: 0.01..3600 s between requests; watched: blackboard keys whose change (by more than
    min_change, 0..1e9) asks at once; min_gap: 0..60 s, the least time between two requests.
    replan_jitter: 0..1, staggering: each re-plan interval is shortened by up to this fraction (an
    amount fixed by NPC and request number, so runs repeat), so NPCs that started together drift apart
    instead of all asking in the same frame every interval. 0 (the default): exact intervals."""

    soft_deadline: float = 0.3
    hard_deadline: float = 0.8
    tag_ttl: float = 10.0
    replan_interval: float = 3.0
    watched: tuple[str, ...] = ()
    min_change: float = 0.0
    min_gap: float = 0.25
    replan_jitter: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "watched", tuple(self.watched))
        if not 0.001 <= self.soft_deadline <= 60:
            raise ValueError(f"soft_deadline must be in 0.001..60 s, got {self.soft_deadline}")
        if not self.soft_deadline < self.hard_deadline <= 120:
            raise ValueError(f"hard_deadline must be in (soft_deadline, 120] s, got {self.hard_deadline}")
        if not 0 <= self.tag_ttl <= 3600:
            raise ValueError(f"tag_ttl must be in 0..3600 s, got {self.tag_ttl}")
        if not 0.01 <= self.replan_interval <= 3600:
            raise ValueError(f"replan_interval must be in 0.01..3600 s, got {self.replan_interval}")
        if not 0 <= self.min_change <= 1e9:
            raise ValueError(f"min_change must be in 0..1e9, got {self.min_change}")
        if not 0 <= self.min_gap <= 60:
            raise ValueError(f"min_gap must be in 0..60 s, got {self.min_gap}")
        if not 0.0 <= self.replan_jitter <= 1.0:
            raise ValueError(f"replan_jitter must be in 0..1, got {self.replan_jitter}")
        if any(not isinstance(key, str) for key in self.watched):
            raise ValueError("watched must be blackboard key names")

    def classify(self, latency: float) -> int:
        """The tier an answer that took `latency` seconds earns: 1, 2 or 3."""
        if latency < self.soft_deadline:
            return 1
        if latency < self.hard_deadline:
            return 2
        return 3
