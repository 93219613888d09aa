"""Every tunable number of the memory model, with documented bounds, validated at construction.

`MemoryParams` is a frozen dataclass: build one with keyword arguments (or `dataclasses.replace`)
and hand it to `MemoryPool(params=...)`. A value outside its bounds raises `ValueError` naming the
field, the value and the bounds.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

DAY_SECONDS = 86_400.0

#: The exponent of R = e^(-t/S) is clamped here; below it R counts as exactly 0 (no denormals).
EXPONENT_FLOOR = -10.0

#: FSRS-6's default decay exponent for the power-law forgetting curve.
FSRS6_DECAY = 0.1542

CURVES = ("exponential", "power")

# (low, high, low inclusive, high inclusive) for each bounded float field.
_BOUNDS: dict[str, tuple[float, float, bool, bool]] = {
    "alpha": (1.2, 1.8, True, True),
    "rehearsal_refractory_s": (0.0, 3600.0, True, True),
    "max_stability": (1.0, 3.2e9, True, True),
    "forget_threshold": (0.001, 0.5, True, True),
    "eviction_weight_r": (0.0, 1.0, True, True),
    "eviction_weight_e": (0.0, 1.0, True, True),
    "awareness_search": (0.0, 1.0, False, False),
    "awareness_pursue": (0.0, 1.0, False, False),
    "consolidation_factor": (0.0, 1.0, True, True),
    "consolidation_min_salience": (0.0, 1.0, True, True),
    "power_decay": (0.01, 2.0, True, True),
    "longterm_min_stability": (1.0, 3.2e9, True, True),
    "longterm_stability_gain": (0.0, 1000.0, True, True),
    "longterm_min_days": (0.01, 36500.0, True, True),
    "topk_recency_weight": (0.0, 10.0, True, True),
    "topk_importance_weight": (0.0, 10.0, True, True),
    "topk_relevance_weight": (0.0, 10.0, True, True),
    "topk_tag_floor": (0.0, 1.0, True, True),
}


def bounds(name: str) -> tuple[float, float, bool, bool]:
    """(low, high, low inclusive, high inclusive) of a bounded `MemoryParams` field: the one
    declaration the validation below, the Godot `MemoryProfile` export ranges and the docs use."""
    return _BOUNDS[name]


@dataclass(frozen=True, slots=True)
class MemoryParams:
    """Parameters of the forgetting model. Times are seconds of real play time unless named otherwise.

    Bounds (validated in `__post_init__`):

    - `alpha` [1.2, 1.8], default 1.35: consolidation gain in S_k = S_(k-1) (1 + alpha ln(1 + k) E).
    - `rehearsal_refractory_s` [0, 3600], default 2: a matching event this soon after the last access
      only refreshes the access time (no k, no S change), so per-frame perception cannot inflate S.
    - `max_stability` [1, 3.2e9] s, default 30 days: S never grows past it.
    - `forget_threshold` [0.001, 0.5], default 0.05: R at or below it counts as forgotten.
    - `base_stability`: five values in (0, max_stability], one per `MemoryType`
      (Trivia 5, Observation 30, Interaction 120, Hostile 600, Trauma 3600 s). S0 = base x (0.5 + E).
    - `eviction_weight_r`, `eviction_weight_e` [0, 1] each, not both 0; defaults 0.6 and 0.4:
      eviction score = w_r R + w_e E (lowest goes first, after forgotten memories).
    - `awareness_search` < `awareness_pursue`, both in (0, 1); defaults 0.3 and 0.8.
    - `consolidation_factor` [0, 1], default 0.25, and `consolidation_min_salience` [0, 1], default 0.7:
      waking a memory with E >= min boosts the same entity's other memories and linked ones by
      S x= 1 + factor x alpha x ln(1 + k) x E.
    - `curve`: "exponential" (default, the source's) or "power" (FSRS-6: R = (1 + F t / S')^(-d)).
    - `power_decay` [0.01, 2], default 0.1542: FSRS-6's d.
    - `age_cap`: None (default: the exponential's forget time, ln(1 / forget_threshold)) or a value in
      (0, 1e6]: the age, in multiples of S, past which the power law counts as forgotten (R = 0).
    - `longterm_min_stability` [1, 3.2e9] s, default 1 day, and `longterm_min_recalls` [1, 2^31),
      default 8: `advance_game_day` promotes a remembered memory whose S or k reaches either bound.
    - `longterm_stability_gain` [0, 1000], default 7, and `longterm_min_days` [0.01, 36500], default 7:
      a promoted memory gets S_lt = max(min_days, gain x S / 86400) game days.
    - `topk_recency_weight`, `topk_importance_weight`, `topk_relevance_weight` [0, 10], default 1:
      top-k score = R^w_r x E^w_i x relevance^w_t.
    - `topk_tag_floor` [0, 1], default 0.1: relevance of a memory sharing no asked tag
      (relevance = floor + (1 - floor) x shared / asked).
    """

    alpha: float = 1.35
    rehearsal_refractory_s: float = 2.0
    max_stability: float = 30 * DAY_SECONDS
    forget_threshold: float = 0.05
    base_stability: tuple[float, float, float, float, float] = (5.0, 30.0, 120.0, 600.0, 3600.0)
    eviction_weight_r: float = 0.6
    eviction_weight_e: float = 0.4
    awareness_search: float = 0.3
    awareness_pursue: float = 0.8
    consolidation_factor: float = 0.25
    consolidation_min_salience: float = 0.7
    curve: str = "exponential"
    power_decay: float = FSRS6_DECAY
    age_cap: float | None = None
    longterm_min_stability: float = DAY_SECONDS
    longterm_min_recalls: int = 8
    longterm_stability_gain: float = 7.0
    longterm_min_days: float = 7.0
    topk_recency_weight: float = 1.0
    topk_importance_weight: float = 1.0
    topk_relevance_weight: float = 1.0
    topk_tag_floor: float = 0.1

    def __post_init__(self) -> None:
        for name, (low, high, low_in, high_in) in _BOUNDS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"MemoryParams.{name} must be a number, got {value!r}")
            value = float(value)
            ok = math.isfinite(value) and (low <= value if low_in else low < value)
            ok = ok and (value <= high if high_in else value < high)
            if not ok:
                lb, hb = "[" if low_in else "(", "]" if high_in else ")"
                raise ValueError(f"MemoryParams.{name} = {value!r} is outside {lb}{low}, {high}{hb}")
            object.__setattr__(self, name, value)
        base = tuple(self.base_stability)
        if len(base) != 5:
            raise ValueError(f"MemoryParams.base_stability needs 5 values (one per MemoryType), got {base!r}")
        for i, value in enumerate(base):
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or not 0.0 < value <= self.max_stability
            ):
                raise ValueError(
                    f"MemoryParams.base_stability[{i}] = {value!r} is outside (0, max_stability]"
                )
        object.__setattr__(self, "base_stability", tuple(float(v) for v in base))
        if self.eviction_weight_r == 0.0 and self.eviction_weight_e == 0.0:
            raise ValueError("MemoryParams.eviction_weight_r and eviction_weight_e cannot both be 0")
        if not self.awareness_search < self.awareness_pursue:
            raise ValueError(
                f"MemoryParams.awareness_search ({self.awareness_search}) must be below "
                f"awareness_pursue ({self.awareness_pursue})"
            )
        if self.curve not in CURVES:
            raise ValueError(f"MemoryParams.curve = {self.curve!r}; choose one of {CURVES}")
        if self.age_cap is not None:
            cap = self.age_cap
            if (
                isinstance(cap, bool)
                or not isinstance(cap, int | float)
                or not math.isfinite(cap)
                or not 0.0 < cap <= 1e6
            ):
                raise ValueError(f"MemoryParams.age_cap = {cap!r} is outside (0, 1e6] (or None)")
            object.__setattr__(self, "age_cap", float(cap))
        k = self.longterm_min_recalls
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k < 2**31:
            raise ValueError(f"MemoryParams.longterm_min_recalls = {k!r} must be an integer in [1, 2^31)")

    # Derived constants -------------------------------------------------------------------------
    @property
    def power_scale(self) -> float:
        """q in R = (1 + q t / S)^(-d): FSRS-6's F t / S' with S' matched so R(S ln 2) = 0.5."""
        return (2.0 ** (1.0 / self.power_decay) - 1.0) / math.log(2.0)

    @property
    def effective_age_cap(self) -> float:
        """The power law's age cap in multiples of S (default: the exponential's forget time)."""
        return self.age_cap if self.age_cap is not None else math.log(1.0 / self.forget_threshold)

    @property
    def forget_factor(self) -> float:
        """Age, in multiples of S, at which R falls to the forget threshold (analytic forget time / S)."""
        if self.curve == "exponential":
            return math.log(1.0 / self.forget_threshold)
        crossing = (self.forget_threshold ** (-1.0 / self.power_decay) - 1.0) / self.power_scale
        return min(crossing, self.effective_age_cap)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["base_stability"] = list(self.base_stability)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemoryParams:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown MemoryParams fields: {unknown}")
        data = dict(data)
        if "base_stability" in data:
            data["base_stability"] = tuple(data["base_stability"])
        return cls(**data)
