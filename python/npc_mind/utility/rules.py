"""The response curves' rules, each written once.

Every function here takes Python floats or numpy arrays (of one shape, or broadcastable: the batch
passes (M, L) inputs with (M, 1) parameter columns) and is the one definition of its step:

- the batch (`curves.CurveStack`) runs numpy code made from these functions (`codegen.ArrayCode`:
  the same operations, written into reused buffers), and calling one with arrays gives its numbers;
- one curve on one number (`Curve.__call__`) and a selector's per-NPC scoring run generated
  straight-line Python made *from these functions*: `codegen.inline` copies each one's body with the
  curve's parameters as literals (a call per consideration would double the per-NPC cost), so a
  rule changed here changes every path;
- the anti-dithering rules (at the end) are the same for the batch's `selector.decide` (arrays)
  and the per-NPC decision `selector.one_decision_code` generates (floats);
- with NPC_MIND_NO_CODEGEN=1 every path calls these functions instead (`codegen.GENERATE`), so a
  breakpoint set here is hit (docs/contributing.md).

The family functions are straight-line: assignments, then one `return`, using arithmetic and the
primitives below. A primitive is numpy's function for arrays and one conditional expression for a
float (`FLOAT_FORMS`, also the text the generator inlines) that gives numpy's answer: inf on
overflow instead of Python's OverflowError, NaN kept where numpy keeps it.

Contract: the float path and the array path give the same number to 1e-12 (tested once per rule
in tests/test_utility_rules.py). Arithmetic (+ - * /, comparisons, clip) is the same IEEE
operations in the same order on both, bit for bit; numpy's exp, log, sin and power may differ from
the C library's in the last bit, and the batch's weighted sum is a matrix product with its own
summation order.

The pipeline of one curve (see `curves.py` for the families' parameters):
1. `normalised`: an input range maps x onto [0, 1], clamped (skipped without a range);
2. `clamped`: the family's input domain (saturating: [0, 1e30], so negative counts as 0);
3. the family's shape of u;
4. `inverted`: 1 - y, as y * -1 + 1 (the batch's sign and shift per row, exactly 1 - y);
5. `finished`: y clamped to [0, 1], NaN -> 0.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from npc_mind.utility.sources import compile_function

if TYPE_CHECKING:
    from npc_mind.utility.selector import AntiDithering

HUGE = 1e30  # saturating inputs are clamped here (float32 too), so +inf gives 1, not inf / inf
LOGIT_EPSILON = 1e-9  # keeps the logit's z strictly inside (0, 1)
_INF = math.inf


def _exp_big(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return _INF


def _pow(base: float, exponent: float) -> float:
    """base ** exponent with numpy's overflow to +-inf instead of OverflowError."""
    try:
        return base**exponent
    except OverflowError:
        odd = exponent % 2.0 == 1.0
        return -_INF if base < 0.0 and odd else _INF


def _interp(v: float, xp: Sequence[float], fp: Sequence[float], slopes: Sequence[float]) -> float:
    """np.interp(v, xp, fp) for one float, with the segments' slopes precomputed."""
    if math.isnan(v):
        return math.nan
    j = bisect.bisect_right(xp, v) - 1
    end = len(xp) - 1
    if j >= end:
        return fp[end]
    if j < 0:
        return fp[0]
    if v == xp[j]:
        return fp[j]
    return slopes[j] * (v - xp[j]) + fp[j]


def _reached_array(u: np.ndarray, threshold: Any, out: np.ndarray | None = None) -> np.ndarray:
    missing = np.isnan(u)  # a comparison would turn NaN into "not reached"; keep it NaN
    out = np.greater_equal(u, threshold, out=np.empty_like(u) if out is None else out)
    out[missing] = np.nan
    return out


def _interp_array(v: np.ndarray, xp: Any, fp: Any, _slopes: Any, out: np.ndarray | None = None) -> np.ndarray:
    if out is None:
        out = np.empty_like(v)
    out[...] = np.interp(v, xp, fp)
    return out


def _unit_array(y: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    out = np.fmax(y, 0.0, out=out)
    return np.fmin(out, 1.0, out=out)


# The names the float forms use (and the generated code's namespace holds).
FLOAT_NAMES: dict[str, Any] = {
    "_exp": math.exp,
    "_exp_big": _exp_big,
    "_log": math.log,
    "_sin": math.sin,
    "_pow": _pow,
    "_interp": _interp,
    "_INF": _INF,
    "_NAN": math.nan,
}

# Each primitive: its parameters, its float form (one expression over them), its array form.
# In a float form each parameter appears as given; the generator binds non-trivial arguments to a
# variable first, so an argument used twice is computed once.
_PRIMITIVES: dict[str, tuple[tuple[str, ...], str, Callable[..., Any]]] = {
    # np.clip for one float: NaN stays NaN
    "clip": (("x", "low", "high"), "(low if x < low else (high if x > high else x))", np.clip),
    # np.maximum(x, floor) for one float (NaN stays NaN)
    "at_least": (("x", "floor"), "(floor if x < floor else x)", np.maximum),
    "exp": (("x",), "(_exp(x) if x < 700.0 else _exp_big(x))", np.exp),
    "log": (("x",), "_log(x)", np.log),  # only on z / (1 - z) > 0 or NaN: never raises
    "sin": (("x",), "(_sin(x) if -_INF < x < _INF else _NAN)", np.sin),
    # x ** k with inf on overflow (Python raises there; |x| <= 1 cannot overflow for k > 0, and a
    # negative x only meets a whole k); the generator writes x for k = 1
    "power": (("x", "k"), "(x ** k if -1.0 <= x <= 1.0 else _pow(x, k))", np.power),
    # 1.0 once u reaches the threshold, 0.0 below it, NaN for NaN
    "reached": (("u", "threshold"), "(1.0 if u >= threshold else (0.0 if u == u else _NAN))", _reached_array),
    "interp": (("v", "xp", "fp", "slopes"), "_interp(v, xp, fp, slopes)", _interp_array),
    # fmax(y, 0) then fmin(y, 1): NaN -> 0
    "unit": (("y",), "((y if y <= 1.0 else 1.0) if y >= 0.0 else 0.0)", _unit_array),
}
FLOAT_FORMS: dict[str, tuple[tuple[str, ...], str]] = {
    name: (p, form) for name, (p, form, _) in _PRIMITIVES.items()
}
# Each primitive's array form: numpy's function, taking out= (the batch writes into its buffers).
ARRAY_FORMS: dict[str, Callable[..., Any]] = {name: array for name, (_, _, array) in _PRIMITIVES.items()}


def _primitive(name: str) -> Callable[..., Any]:
    params, form, array = _PRIMITIVES[name]
    source = f"def {name}({', '.join(params)}):\n    return {form}\n"  # our own text
    scalar = compile_function(source, dict(FLOAT_NAMES), name, f"rules: {name} for one float")

    def apply(*args: Any) -> Any:
        if any(isinstance(arg, np.ndarray) for arg in args[:1]):
            return array(*args)
        return scalar(*args)

    apply.__name__ = name
    return apply


clip = _primitive("clip")
at_least = _primitive("at_least")
exp = _primitive("exp")
log = _primitive("log")
sin = _primitive("sin")
power = _primitive("power")
reached = _primitive("reached")
interp = _primitive("interp")
unit = _primitive("unit")
PRIMITIVES: dict[str, Callable[..., Any]] = {
    "clip": clip, "at_least": at_least, "exp": exp, "log": log, "sin": sin, "power": power,
    "reached": reached, "interp": interp, "unit": unit,
}  # fmt: skip


# --- the pipeline steps ---------------------------------------------------------------------------
def normalised(x: Any, low: Any, scale: Any, floor: Any, ceiling: Any) -> Any:
    """An input range: (x - input_min) / (input_max - input_min), clamped to [floor, ceiling]
    ([0, 1]; a batch row without a range passes through with 0, 1 and -inf, +inf)."""
    return clip((x - low) * scale, floor, ceiling)


def clamped(u: Any, low: Any, high: Any) -> Any:
    """A family's input domain (saturating: [0, 1e30])."""
    return clip(u, low, high)


def inverted(y: Any, sign: Any, shift: Any) -> Any:
    """invert: 1 - y, written y * -1 + 1 (bit for bit the same) so a batch row that does not
    invert passes through with sign 1 and shift 0."""
    return y * sign + shift


def finished(y: Any) -> Any:
    """The score: y clamped to [0, 1], NaN -> 0 (after inverting: a missing value is no full score)."""
    return unit(y)


# --- the families' shapes (u: the input after the range and the domain; parameters by name) -------
def saturating(u: Any, *, k: Any) -> Any:
    """u / (u + k): the design source's diminishing returns (u >= 0)."""
    return u / (u + k)


def polynomial(u: Any, *, m: Any, k: Any, c: Any, b: Any, floor: Any) -> Any:
    """m (u - c)^k + b; floor 0 for a fractional k (a negative base counts as 0), else -inf."""
    t = at_least(u - c, floor)
    return power(t, k) * m + b


def logistic(u: Any, *, m: Any, k: Any, c: Any, b: Any) -> Any:
    """k / (1 + e^(-m (u - c))) + b."""
    return k / (exp((u - c) * -m) + 1.0) + b


def logit(u: Any, *, m: Any, c: Any, b: Any) -> Any:
    """m ln(z / (1 - z)) + b with z = u - c kept inside (0, 1)."""
    z = clip(u - c, LOGIT_EPSILON, 1.0 - LOGIT_EPSILON)
    return log(z / (1.0 - z)) * m + b


def normal(u: Any, *, m: Any, inverse_k: Any, c: Any, b: Any) -> Any:
    """m e^(-(u - c)^2 / (2 k^2)) + b, with inverse_k = 1 / k."""
    t = (u - c) * inverse_k
    return exp(t * t * -0.5) * m + b


def sine(u: Any, *, m: Any, frequency: Any, c: Any, b: Any) -> Any:
    """m sin(pi k (u - c)) + b, with frequency = pi k."""
    return sin((u - c) * frequency) * m + b


def step(u: Any, *, threshold: Any, span: Any, low: Any) -> Any:
    """high once u reaches the threshold, else low (span = high - low; NaN stays NaN)."""
    return reached(u, threshold) * span + low


def table(
    u: Any, *, first: Any, last: Any, inverse_span: Any, shift: Any, xp: Any, fp: Any, slopes: Any
) -> Any:
    """Piecewise linear through the points, flat beyond the ends: u clamped into [first, last],
    mapped onto the table's normalised x values (a batch stacks its tables at shifts 0, 2, 4...)."""
    v = (clip(u, first, last) - first) * inverse_span + shift
    return interp(v, xp, fp, slopes)


SHAPES: dict[str, Callable[..., Any]] = {
    "saturating": saturating,
    "polynomial": polynomial,
    "logistic": logistic,
    "logit": logit,
    "normal": normal,
    "sine": sine,
    "step": step,
    "table": table,
}


# --- the anti-dithering rules (selector.py: the settings and the order of the steps) --------------
# Each written once for a float or an array, with the same IEEE operations either way: the batch's
# `selector.decide` calls them on arrays, and the per-NPC code generated by
# `selector.one_decision_code` inlines them (per behavior where a rule is per behavior) or calls
# them (`weighted_top_n` on a list), so the two paths make the same choices bit for bit (tested once
# per rule in tests/test_utility_rules.py, and batch against single calls in the selector tests).


def boosted(score: Any, momentum: float) -> Any:
    """Momentum: the running behavior's score x (1 + momentum)."""
    return score * (1.0 + momentum)


def tag_ready(allowed: Any, score: Any) -> Any:
    """Tags: a behavior may be chosen if it carries an allowed tag and scores above 0."""
    return allowed & (score > 0.0)


def rested(now: float, stopped: Any, cooldown: Any, running: Any) -> Any:
    """Cooldown: a behavior may be chosen again once `cooldown` seconds have passed since it
    stopped (never stopped: -inf); the running behavior (running: True) has not stopped, so it is
    exempt."""
    return ((now - stopped) >= cooldown) | running


def restricted(passes: Any, none_pass: Any) -> Any:
    """A restriction (tags, cooldowns) keeps the behaviors that pass it, unless none of the
    candidates would: then it is ignored (the tags fall back to the free choice; when everything
    is cooling down, cooldowns are ignored). The caller intersects it with the earlier candidates."""
    return passes | none_pass


def switch_margin(now: float, started: Any, settings: AntiDithering) -> Any:
    """How much a challenger must beat the running behavior by: the tie tolerance, or within
    `commitment` seconds of the running behavior's start the larger of it and the interrupt margin."""
    tie = settings.tie_tolerance
    if settings.commitment <= 0.0:
        return tie
    committed = (now - started) < settings.commitment
    held = max(tie, settings.interrupt_margin)
    if isinstance(committed, np.ndarray):
        return np.where(committed, held, tie)
    return held if committed else tie


def keeps_running(best_score: Any, running_score: Any, margin: Any) -> Any:
    """The running behavior stays if it still scores above 0 and the best is not more than
    `margin` above it. (`&` of two bools is a bool: one expression for floats and arrays.)"""
    return (running_score > 0.0) & (best_score <= running_score + margin)


def within_top_n(scores_above: Any, top_n: int) -> Any:
    """Top-n: a random pick stays while fewer than `top_n` behaviors score above it (re-rolling
    every tick would flicker)."""
    return scores_above < top_n


def weighted_top_n(adjusted: Any, best: Any, top_n: int, fraction: Any) -> Any:
    """Top-n: a random pick among the `top_n` best candidates (ties in definition order), weighted
    by score; one that is not ready (-inf) or scores 0 weighs nothing, and with no weight at all
    the pick is `best`.

    adjusted: one NPC's scores (a list) with `best` its arg max and `fraction` its draw in [0, 1),
    or (N, B) for N NPCs with (N,) of each. The candidates are walked as columns (floats or (N,)
    arrays) with the same operations either way: weights summed in order, and the pick is the
    first candidate whose running sum exceeds fraction x total (the last one if rounding leaves
    none).
    """
    candidates, scores = _best_first(adjusted, top_n)
    total = 0.0
    sums = []  # the running sums of the weights, in order
    for score in scores:
        total = total + _where((score > 0.0) & (score < _INF), score, 0.0)
        sums.append(total)
    draw = fraction * total
    pick = candidates[-1]
    for k in range(len(candidates) - 2, -1, -1):
        pick = _where(sums[k] > draw, candidates[k], pick)
    return _where(total > 0.0, pick, best)


def _where(condition: Any, yes: Any, no: Any) -> Any:
    """np.where for arrays, a conditional expression for one value."""
    if isinstance(condition, np.ndarray):
        return np.where(condition, yes, no)
    return yes if condition else no


def _best_first(adjusted: Any, top_n: int) -> tuple[list[Any], list[Any]]:
    """The `top_n` best candidates by score, ties in definition order (a stable sort): their
    indices and scores, as columns ((N,) arrays for (N, B) scores, else one number each)."""
    if isinstance(adjusted, np.ndarray):
        best = np.argsort(-adjusted, axis=1, kind="stable")[:, :top_n]
        return list(best.T), list(np.take_along_axis(adjusted, best, axis=1).T)
    top = sorted(range(len(adjusted)), key=adjusted.__getitem__, reverse=True)[:top_n]
    return top, [adjusted[j] for j in top]


def moves_forward(last: float, now: float) -> bool:
    """Time only moves forward: `now` is finite and not before the last one seen."""
    return last <= now < _INF and now != -_INF
