"""Forgetting curves, evaluated lazily over numpy arrays.

Both are pure elementwise functions of (last access, stability, now), so a value is the same bits
whether it is computed for one memory or inside a batch of a million.

- exponential (the source): R = e^(-t/S), exponent clamped at EXPONENT_FLOOR = -10 where R counts
  as exactly 0 (e^(-inf) is computed instead, so no denormal is ever produced);
- power (FSRS-6): R = (1 + q t/S)^(-d) with q = (2^(1/d) - 1) / ln 2, which puts R = 0.5 at the same
  age as the exponential (t = S ln 2); past `age_cap` x S, R counts as 0.

t = max(now - last, 0): a clock that goes backwards clamps elapsed time to 0.
"""

from __future__ import annotations

import numpy as np

from npc_mind.memory import kernel
from npc_mind.memory.params import EXPONENT_FLOOR, MemoryParams
from npc_mind.memory.rules import exponential_exponent


def retrievability(
    last: np.ndarray,
    stability: np.ndarray,
    now: float,
    params: MemoryParams,
    *,
    out: np.ndarray | None = None,
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """R for arrays of last-access times and stabilities (same shape) at time `now`.

    `out` and `mask` (bool, same shape) are optional scratch buffers; empty slots (last = -inf,
    stability = 1) give exactly 0.
    """
    if out is None:
        out = np.empty(np.shape(last), dtype=np.float64)
    if params.curve == "exponential":
        # in one pass when the compiled kernel runs (the same steps, the same bits)
        if kernel.retrievability(last, stability, now, EXPONENT_FLOOR, out):
            return out
        # x = min(last - now, 0) / S  in [-inf, 0]
        exponential_exponent(last, now, stability, out=out)
        if mask is None:
            mask = np.empty(np.shape(last), dtype=bool)
        np.less_equal(out, EXPONENT_FLOOR, out=mask)
        np.copyto(out, -np.inf, where=mask)
        np.exp(out, out=out)
        return out
    # power law: u = max(now - last, 0) / S in [0, inf]
    if mask is None:
        mask = np.empty(np.shape(last), dtype=bool)
    cap = params.effective_age_cap
    np.subtract(now, last, out=out)
    np.maximum(out, 0.0, out=out)
    np.divide(out, stability, out=out)
    np.greater_equal(out, cap, out=mask)
    np.minimum(out, cap, out=out)
    np.multiply(out, params.power_scale, out=out)
    np.log1p(out, out=out)
    np.multiply(out, -params.power_decay, out=out)
    np.copyto(out, -np.inf, where=mask)
    # the exponent clamp applies to the power law too
    np.less_equal(out, EXPONENT_FLOOR, out=mask)
    np.copyto(out, -np.inf, where=mask)
    np.exp(out, out=out)
    return out


def retrievability_age(age: np.ndarray, stability: np.ndarray, params: MemoryParams) -> np.ndarray:
    """R from ages directly (used by the long-term tier, whose clock is game days)."""
    return retrievability(np.negative(age), stability, 0.0, params)


def curve_points(ages: np.ndarray, stability: float, params: MemoryParams) -> np.ndarray:
    """R over a grid of ages for one stability (plots, docs)."""
    ages = np.asarray(ages, dtype=np.float64)
    return retrievability(-ages, np.full_like(ages, stability), 0.0, params)
