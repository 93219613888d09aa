"""The memory model's rules, each written once.

Every function takes Python floats or numpy arrays (of one shape, or broadcastable) and is called
by every path: the batch rounds with arrays, the single-call fast paths with floats. Contract:
**bit-for-bit**. A rule is one sequence of IEEE operations; numpy applies the same operations
elementwise to float64, so one memory gives the same bits whether it is computed alone or inside
a batch. The only operation whose bits could differ between Python and numpy is the logarithm:
`log1p_count` takes it from numpy on both paths (for floats through a table made by numpy).

The formulas (design source: docs/memory.md; FSRS for the power curve):

- initial stability  S0 = min(base[type] x (0.5 + E), max_stability)
- rehearsal           a matching event rehearses iff (now - last) >= refractory; then
                      k' = k + 1, E' = max(E, E_event),
                      S' = min(S x (1 + alpha ln(1 + k') E'), max_stability)
- consolidation       the entity's other memories get S x f, capped, with
                      f = 1 + c alpha ln(1 + k') E'
- retrievability      `npc_mind.memory.curves` (e^(-t/S) or the power curve)
- eviction key        w_r R + w_e E (defaults 0.6, 0.4); free slot -2, forgotten -1, pinned +inf
- awareness level     0 unless R > forget threshold; then 1 + [R > search] + [R > pursue]
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

Num = TypeVar("Num", float, np.ndarray)

# ln(1 + k) for k = 0, 1, ... as Python floats, computed by numpy's log so a float path has the
# bits an array path's np.log gives; grown on demand up to _LN1P_TABLE entries (a recall count
# can reach millions: beyond, one numpy log per call).
_ln1p_k: list[float] = []
_LN1P_TABLE = 1 << 16


def log1p_count(k: Any) -> Any:
    """ln(1 + k) of a recall count (int, or an int array), with numpy's bits either way."""
    if isinstance(k, np.ndarray):
        return np.log(1.0 + k)
    if k >= len(_ln1p_k):
        if k >= _LN1P_TABLE:
            return float(np.log(np.array([1.0 + k]))[0])
        size = max(4096, 1 << int(k).bit_length())
        _ln1p_k[:] = np.log(1.0 + np.arange(size, dtype=np.int64)).tolist()
    return _ln1p_k[k]


def capped(value: Num, upper: float) -> Num:
    """min(value, upper): np.minimum for arrays, the same choice for floats."""
    if isinstance(value, np.ndarray):
        return np.minimum(value, upper, out=value)
    return value if value < upper else upper


def larger(a: Num, b: Num) -> Num:
    """max(a, b) as np.maximum picks it (the first one on equal values)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.maximum(a, b)
    return a if a > b else b


def clip_salience(e: float) -> float:
    """E clipped into [0, 1] as np.clip does (-0.0 and in-range values kept)."""
    if 0.0 <= e <= 1.0:
        return e
    return 0.0 if e < 0.0 else 1.0


def initial_stability(base: Num, salience: Num, max_stability: float) -> Num:
    """S0 = min(base x (0.5 + E), max_stability): `base` is the memory type's base stability."""
    return capped(base * (0.5 + salience), max_stability)


def rehearses(now: float, last: Num, refractory: float) -> Any:
    """Does a matching event rehearse (else it only refreshes the last access)? The refractory
    predicate: at least `refractory` seconds since the last access."""
    return (now - last) >= refractory


def rehearsed_stability(stability: Num, k: Any, salience: Num, alpha: float, max_stability: float) -> Num:
    """S' = min(S x (1 + alpha ln(1 + k) E), max_stability), with k and E already updated."""
    return capped(stability * (1.0 + alpha * log1p_count(k) * salience), max_stability)


def consolidation_factor(c: float, alpha: float, k: Any, salience: Num) -> Num:
    """f = 1 + c alpha ln(1 + k) E: what the woken memory's sibling memories' S is multiplied by."""
    return 1.0 + (c * alpha) * log1p_count(k) * salience


def consolidated(c: float, min_salience: float, salience: Num) -> Any:
    """Does a woken memory of salience E consolidate its siblings?"""
    return (
        (salience >= min_salience) & (c != 0.0)
        if isinstance(salience, np.ndarray)
        else (salience >= min_salience and c != 0.0)
    )


def exponential_exponent(
    last: Num, now: float, stability: Num, clamp: bool = True, *, out: np.ndarray | None = None
) -> Num:
    """x = min(last - now, 0) / S, the exponent of the exponential curve's R = e^x (t = now - last
    clamped at 0: a clock that goes backwards). `clamp=False` when no last access lies after `now`
    (then min(., 0) changes nothing and is skipped). `out`: a buffer for arrays."""
    if isinstance(last, np.ndarray):
        x = np.subtract(last, now, out=out)
        if clamp:
            np.minimum(x, 0.0, out=x)
        x /= stability
        return x
    d = last - now
    if clamp and d > 0.0:
        d = 0.0
    return d / stability


def eviction_key(
    r: Num | float,
    salience: Num,
    w_r: float,
    w_e: float,
    *,
    out: np.ndarray | None = None,
    scratch: np.ndarray | None = None,
) -> Num:
    """w_r R + w_e E, the value a full row evicts the lowest of (free -2, forgotten -1 and
    pinned +inf are set by the caller). `out`/`scratch`: buffers for arrays, both or neither
    (scratch may be R's)."""
    if out is None or scratch is None:
        return r * w_r + salience * w_e
    np.multiply(r, w_r, out=out)
    np.multiply(salience, w_e, out=scratch)
    np.add(out, scratch, out=out)
    return out  # type: ignore[return-value]  # `out` is given for arrays only (no cast: a call)


def fresh_eviction_key(salience: Num, w_r: float, w_e: float) -> Num:
    """The eviction key of a memory accessed just now (R = 1 exactly): w_r + w_e E."""
    return eviction_key(1.0, salience, w_r, w_e)


def awareness_level(r: Any, forget: float, search: float, pursue: float) -> Any:
    """0 (none) unless R > forget; then 1 (puzzled) + [R > search] + [R > pursue]. An int for a
    float, an int8 array for an array."""
    if isinstance(r, np.ndarray):
        level = (r > search).astype(np.int8)
        level += r > pursue
        level += 1
        level[~(r > forget)] = 0
        return level
    if not r > forget:
        return 0
    return 1 + (r > search) + (r > pursue)
