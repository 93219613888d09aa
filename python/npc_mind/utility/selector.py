"""Choosing a behavior: ranking, tag restriction, anti-dithering, per NPC or for N NPCs at once.

Anti-dithering (all off by default, so plain arg max and the design source's numbers hold):

- momentum (>= 0): the running behavior's score counts (1 + momentum) times when choosing;
- tie_tolerance (>= 0): a challenger must beat the running behavior by more than this;
- commitment (seconds >= 0): after a switch, keep the new behavior this long unless a challenger
  beats it by more than interrupt_margin (>= 0) or it drops to 0 (e.g. vetoed);
- a behavior's own `cooldown`: after it stops it cannot be chosen for that many seconds;
- top_n (>= 1) with seed: a new choice is a weighted random pick among the n best candidates
  (weights = scores); the running behavior stays while it is among the n best.

`decide` works on (N, B) arrays of scores and state for `SelectorBatch.choose`. One NPC
(`UtilitySelector.choose`, the server's per-node `evaluate`) runs generated plain Python instead:
numpy's call overhead would cost more than the work. `one_decision_code` writes those steps for one
definition's settings (a setting that is off leaves no code), each rule inlined from its function
here, and `scalar.py` puts them after the definition's scoring, so a choice is one Python call. Both
make the same choices, and draw the same random numbers for top_n.
"""

from __future__ import annotations

import functools
import logging
import math
import operator
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from npc_mind.utility.batch import BatchScorer
from npc_mind.utility.behavior import Behavior, BehaviorExplanation, Context
from npc_mind.utility.curves import FloatArray
from npc_mind.utility.errors import UtilityDefinitionError, UtilityError
from npc_mind.utility.scalar import ScalarScorer, _Code, compile_function, inline

log = logging.getLogger("npc_mind.utility")
_INF = math.inf
_score_of_pair = operator.itemgetter(1)
_score_of_row = operator.itemgetter(2)
IntArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]
Precision = Literal["float64", "float32"]


@dataclass(frozen=True)
class AntiDithering:
    """Anti-dithering settings (see the module docstring); the defaults switch everything off."""

    momentum: float = 0.0
    tie_tolerance: float = 0.0
    commitment: float = 0.0
    interrupt_margin: float = 0.25
    top_n: int = 1
    seed: int | None = None

    def __post_init__(self) -> None:
        for name in ("momentum", "tie_tolerance", "commitment", "interrupt_margin"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not (math.isfinite(value) and value >= 0)
            ):
                raise UtilityDefinitionError(f"selector: {name} must be a finite number >= 0, got {value!r}")
            object.__setattr__(self, name, float(value))
        if isinstance(self.top_n, bool) or not isinstance(self.top_n, Integral) or self.top_n < 1:
            raise UtilityDefinitionError(f"selector: top_n must be an integer >= 1, got {self.top_n!r}")
        object.__setattr__(self, "top_n", int(self.top_n))
        if self.seed is not None:
            if isinstance(self.seed, bool) or not isinstance(self.seed, Integral) or self.seed < 0:
                raise UtilityDefinitionError(
                    f"selector: seed must be an integer >= 0 or None, got {self.seed!r}"
                )
            object.__setattr__(self, "seed", int(self.seed))


# ------------------------------------------------------------------------------------------------
# The anti-dithering rules, each written once for a float (decide_one) or an array (decide), with
# the same IEEE operations either way: the two paths make the same choices bit for bit.


def boosted(score: Any, momentum: float) -> Any:
    """Momentum: the running behavior's score x (1 + momentum)."""
    return score * (1.0 + momentum)


def cooling(now: float, stopped: Any, cooldown: Any) -> Any:
    """Cooldown: a behavior that stopped less than `cooldown` seconds ago is not ready."""
    return (now - stopped) < cooldown


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


def pick_index(at_or_below_draw: Any, keep: int) -> Any:
    """Top-n draw: the pick is the count of cumulative weights at or below the draw, at most keep - 1."""
    if isinstance(at_or_below_draw, np.ndarray):
        return np.minimum(at_or_below_draw, keep - 1)
    return min(at_or_below_draw, keep - 1)


class DecisionState:
    """Anti-dithering state: the running behavior (-1: none yet), when it started, when each
    behavior stopped, and the last `now` seen. `DecisionState(n, b)` holds it as arrays for n NPCs
    (`decide`); `DecisionState.one(b)` as plain Python numbers and a list for one NPC (the
    generated per-NPC decision, where numpy's per-call cost would exceed the work), with the last
    choice's detail: its scores (a new list each choice), and the tag fallback and target that
    belong to the choice whose scores `marked` holds (written only by a choice with tags or
    targets, so a plain choice writes nothing more)."""

    __slots__ = ("fallback", "last_now", "marked", "rng", "running", "scores", "started", "stopped", "target")

    def __init__(self, n_npcs: int, n_behaviors: int) -> None:
        self.running: Any = np.full(n_npcs, -1, dtype=np.intp)
        self.started: Any = np.full(n_npcs, -np.inf)
        self.stopped: Any = np.full((n_npcs, n_behaviors), -np.inf)
        self.last_now = -math.inf
        self.scores = self.marked = self.target = self.rng = None
        self.fallback = False

    @classmethod
    def one(cls, n_behaviors: int, rng: np.random.Generator | None = None) -> DecisionState:
        """One NPC's state; rng: its own random numbers for top_n draws (None: no draws)."""
        state = cls.__new__(cls)
        state.running = -1
        state.started = -math.inf
        state.stopped = [-math.inf] * n_behaviors
        state.last_now = -math.inf
        state.scores = state.marked = state.target = None
        state.fallback = False
        state.rng = rng
        return state


def moves_forward(last: float, now: float) -> bool:
    """Time only moves forward: `now` is finite and not before the last one seen."""
    return last <= now < _INF and now != -_INF


def advance_time(state: DecisionState, now: float) -> None:
    """`moves_forward` or a clear error; `now` becomes the last time seen."""
    last = state.last_now
    if not moves_forward(last, now):
        if not math.isfinite(now):
            raise UtilityError(f"now must be a finite time, got {now}")
        raise UtilityError(f"now went backwards: {now} after {last}")
    state.last_now = now


def decide(
    scores: FloatArray,
    *,
    allowed: BoolArray | None,
    cooldowns: FloatArray,
    state: DecisionState,
    now: float,
    settings: AntiDithering,
    rng: np.random.Generator,
) -> tuple[IntArray, BoolArray]:
    """Chosen behavior per NPC (N,) and whether its tag restriction fell back to the free choice.

    scores: (N, B) >= 0; allowed: (N, B) or None. Updates state. Steps that a setting switches
    off are skipped, so the default is little more than an arg max.
    """
    advance_time(state, now)
    n, b = scores.shape
    # Element (i, j) of an (N, B) array is flat[i * B + j]: flat indexing is several times faster
    # than fancy (rows, columns) indexing, and B-long row reductions are done as matrix products.
    row_start = np.arange(0, n * b, b)
    ones = np.ones(b)
    running = state.running
    has_running = running >= 0
    any_running = bool(has_running.any())
    running_at = row_start + np.maximum(running, 0)

    # Tags: only allowed behaviors that score above 0; none such -> the free choice.
    ready: BoolArray | None = None  # None: every behavior
    tag_fallback = np.zeros(n, dtype=bool)
    if allowed is not None:
        ready = allowed & (scores > 0.0)
        tag_fallback = (ready @ ones) == 0.0
        ready[tag_fallback] = True
    # Cooldowns: the running behavior is exempt; if everything is cooling down, ignore cooldowns.
    if bool((cooldowns > 0.0).any()):
        busy = cooling(now, state.stopped, cooldowns)
        busy.reshape(-1)[running_at[has_running]] = False
        rested = ~busy if ready is None else ready & ~busy
        none_rested = (rested @ ones) == 0.0
        rested[none_rested] = True if ready is None else ready[none_rested]
        ready = rested

    adjusted = scores.copy() if ready is None else np.where(ready, scores, -np.inf)
    flat = adjusted.reshape(-1)
    if settings.momentum > 0.0 and any_running:
        at = running_at[has_running]
        flat[at] = boosted(flat[at], settings.momentum)
    best = np.argmax(adjusted, axis=1)
    if not any_running:
        chosen = _weighted_top_n(adjusted, best, settings.top_n, rng) if settings.top_n > 1 else best
    else:
        best_score = flat[row_start + best]
        if settings.top_n > 1:
            best = _weighted_top_n(adjusted, best, settings.top_n, rng)
        # A running behavior that is not ready (tags) scores -inf here, one that dropped to 0 is
        # not kept either.
        running_score = flat[running_at]
        running_ok = has_running & (running_score > 0.0)
        margin = switch_margin(now, state.started, settings)
        keep = has_running & keeps_running(best_score, running_score, margin)
        if settings.top_n > 1:
            above = (adjusted > running_score[:, np.newaxis]) @ ones
            keep |= running_ok & within_top_n(above, settings.top_n)
        chosen = np.where(keep, running, best)

    switched = chosen != running
    if bool(switched.any()):
        left = switched & has_running
        state.stopped.reshape(-1)[running_at[left]] = now
        state.started[switched] = now
    state.running = chosen
    return chosen, tag_fallback


def _weighted_top_n(adjusted: FloatArray, best: IntArray, top_n: int, rng: np.random.Generator) -> IntArray:
    """A random pick among each row's top_n positive scores, weighted by score."""
    n, b = adjusted.shape
    keep = min(top_n, b)
    top = np.argsort(-adjusted, axis=1, kind="stable")[:, :keep]
    weights = np.take_along_axis(adjusted, top, axis=1)
    weights = np.where(np.isfinite(weights) & (weights > 0.0), weights, 0.0)
    totals = weights.sum(axis=1)
    cumulative = np.cumsum(weights, axis=1)
    draws = rng.random(n) * totals
    picks = pick_index((cumulative <= draws[:, np.newaxis]).sum(axis=1), keep)
    random_best = top[np.arange(n), picks]
    return np.where(totals > 0.0, random_best, best)


def one_decision_code(
    settings: AntiDithering, cooldowns: list[float] | None, n_behaviors: int
) -> tuple[list[str], dict[str, Any]]:
    """`decide`'s steps for one NPC as lines of Python, and the names they use.

    The lines read `_sc` (the behaviors' scores, a list), `st` (`DecisionState.one`), `now` and
    `allowed` (a list of bools, or None: every behavior), update `st` and end in `return` of the
    chosen index; `scalar.ScalarScorer` puts them after the scoring. Each rule is inlined from its
    function above with the settings as constants (a setting that is off leaves no code); the
    batch tests hold the result to `decide` step for step. cooldowns: each behavior's, or None when
    none has one; n_behaviors: how many scores `_sc` holds.
    """
    namespace: dict[str, Any] = {
        "_advance_time": advance_time, "_ready_one": _ready_one, "_weighted_top_n_one": _weighted_top_n_one,
        "_switch_margin": switch_margin, "_settings": settings, "_cooldowns": cooldowns, "_sum": sum,
        "_INF": _INF,
    }  # fmt: skip

    def rule(function: Callable[..., Any], **args: str) -> str:
        code = _Code("_u", "", namespace)
        expression = inline(function, args, code)
        assert not code.lines, "rule arguments here are names or constants"
        return f"({expression})"

    top_n = settings.top_n
    margin = (
        f"{switch_margin(0.0, 0.0, settings)!r}"  # without commitment: the tie tolerance, a constant
        if settings.commitment <= 0.0
        else "_switch_margin(now, st.started, _settings)"
    )
    lines = [
        "_last = st.last_now",
        f"if not {rule(moves_forward, last='_last', now='now')}:",
        "    _advance_time(st, now)  # raises the clear error",
        "st.last_now = now",
        "st.scores = _adj = _sc",
        "running = st.running",
    ]
    # Tags: only allowed behaviors that score above 0; cooldowns: the running one exempt (`_ready_one`).
    ready = [
        "_ready, st.fallback = _ready_one(_sc, allowed, _cooldowns, st, now)",
        "st.target = None",
        "st.marked = _sc",
        "if _ready is not None:",
        "    _adj = [s if r else -_INF for s, r in zip(_sc, _ready, strict=True)]",
    ]
    lines += (
        ready if cooldowns is not None else ["if allowed is not None:", *(f"    {line}" for line in ready)]
    )
    # the first maximum, as np.argmax (unrolled: a third of the cost of index(max()) at 3 behaviors)
    arg_max = ["best = 0", "_b = _adj[0]"]
    for j in range(1, n_behaviors):
        arg_max += [f"if _adj[{j}] > _b:", f"    best = {j}", f"    _b = _adj[{j}]"]
    lines += ["if running < 0:", *(f"    {line}" for line in arg_max)]
    if top_n > 1:
        lines.append(f"    best = _weighted_top_n_one(_adj, best, {top_n}, st.rng)")
    lines += ["    st.started = now", "    st.running = best", "    return best"]
    if settings.momentum > 0.0:
        lines += [
            "if _adj is _sc:",
            "    _adj = _sc.copy()  # the scores stay unboosted",
            "_r = _adj[running]",
            f"_adj[running] = {rule(boosted, score='_r', momentum=repr(settings.momentum))}",
        ]
    lines += arg_max
    if top_n > 1:
        lines.append(f"best = _weighted_top_n_one(_adj, best, {top_n}, st.rng)")
    lines.append("_r = _adj[running]")
    if settings.commitment > 0.0:
        lines.append(f"_m = {margin}")
        margin = "_m"
    keep = rule(keeps_running, best_score="_b", running_score="_r", margin=margin)
    if top_n > 1:
        above = "_sum(1 for _a in _adj if _a > _r)"
        keep += f" or (_r > 0.0 and {rule(within_top_n, scores_above='_n', top_n=str(top_n))})"
        lines.append(f"_n = {above}")
    lines += [
        f"if {keep}:",
        "    return running",
        "if best != running:",
        "    st.stopped[running] = now",
        "    st.started = now",
        "    st.running = best",
        "return best",
    ]
    return lines, namespace


@functools.lru_cache(maxsize=256)
def _decision_function(
    settings: AntiDithering, cooldowns: tuple[float, ...] | None, n_behaviors: int
) -> Callable[[list[float], DecisionState, float, list[bool] | None], int]:
    """The generated decision on its own, `decide(scores, state, now, allowed)` -> the chosen index
    (per-target definitions, whose scores are reduced to one per behavior first)."""
    lines, namespace = one_decision_code(
        settings, None if cooldowns is None else list(cooldowns), n_behaviors
    )
    source = "\n".join(["def decide(_sc, st, now, allowed):", *(f"    {line}" for line in lines), ""])
    return compile_function(source, namespace, "decide")


def _ready_one(
    scores: list[float],
    allowed: list[bool] | None,
    cooldowns: list[float] | None,
    state: DecisionState,
    now: float,
) -> tuple[list[bool] | None, bool]:
    """The per-NPC decision's tag and cooldown steps: which behaviors may be chosen (None: all) and
    whether the tags fell back to the free choice."""
    ready: list[bool] | None = None
    tag_fallback = False
    if allowed is not None:
        ready = [ok and score > 0.0 for ok, score in zip(allowed, scores, strict=True)]
        if not any(ready):
            tag_fallback = True
            ready = None  # every behavior
    if cooldowns is not None:
        rested = [
            not cooling(now, stopped, cooldown)
            for stopped, cooldown in zip(state.stopped, cooldowns, strict=True)
        ]
        if state.running >= 0:
            rested[state.running] = True  # the running behavior is exempt
        if ready is not None:
            rested = [a and b for a, b in zip(ready, rested, strict=True)]
        if any(rested):
            ready = rested
    return ready, tag_fallback


def _weighted_top_n_one(adjusted: list[float], best: int, top_n: int, rng: np.random.Generator) -> int:
    """`_weighted_top_n` for one NPC, drawing the same random number."""
    keep = min(top_n, len(adjusted))
    top = sorted(range(len(adjusted)), key=lambda j: -adjusted[j])[:keep]  # stable, as argsort
    weights = [w if 0.0 < w < math.inf else 0.0 for w in (adjusted[j] for j in top)]
    total = float(np.sum(weights)) if keep >= 8 else sum(weights)  # numpy sums 8+ pairwise
    draw = rng.random() * total
    cumulative = 0.0
    at_or_below = 0
    for weight in weights:
        cumulative += weight
        if cumulative <= draw:
            at_or_below += 1
    pick = pick_index(at_or_below, keep)
    return top[pick] if total > 0.0 else best


@dataclass(frozen=True)
class Choice:
    """The detail behind `UtilitySelector.choose`'s answer."""

    behavior: str
    target_index: int | None
    score: float
    tag_fallback: bool  # allowed_tags matched no behavior with a score above 0: free choice instead


class UtilitySelector:
    """Scores behaviors for one context and chooses one; `SelectorBatch` does it for N NPCs."""

    def __init__(
        self,
        behaviors: Sequence[Behavior],
        *,
        momentum: float = 0.0,
        tie_tolerance: float = 0.0,
        commitment: float = 0.0,
        interrupt_margin: float = 0.25,
        top_n: int = 1,
        seed: int | None = None,
    ) -> None:
        self.behaviors = tuple(behaviors)
        if not self.behaviors:
            raise UtilityDefinitionError("selector: needs at least one behavior")
        for behavior in self.behaviors:
            if not isinstance(behavior, Behavior):
                raise UtilityDefinitionError(f"selector: {behavior!r} is not a Behavior")
        names = [behavior.name for behavior in self.behaviors]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise UtilityDefinitionError(f"selector: behavior names must be unique, repeated: {duplicates}")
        if all(behavior.weight == 0.0 for behavior in self.behaviors):
            raise UtilityDefinitionError("selector: every behavior weight is zero")
        self.settings = AntiDithering(momentum, tie_tolerance, commitment, interrupt_margin, top_n, seed)
        self.names = tuple(names)
        self.index = {name: i for i, name in enumerate(names)}
        self.cooldowns = np.array([behavior.cooldown for behavior in self.behaviors])
        self.scorer = BatchScorer(self.behaviors)  # also checks that inputs are used consistently
        self._scorers = {"float64": self.scorer}
        self.targeted = self.scorer.targeted
        # The per-NPC path: generated plain-Python scoring and the scalar decision rules.
        self.scalar = ScalarScorer(self.behaviors, self.scorer)
        self._scores = self.scalar.function  # called as (context, self.scalar): one call less
        cooldowns = self.cooldowns.tolist() if bool((self.cooldowns > 0.0).any()) else None
        # One NPC's choice: the generated scoring and decision in one function,
        # `pick_fn(context, self.scalar, state, now, allowed)` -> the chosen index (per-target
        # behaviors: their best target found first, then the generated decision).
        if self.targeted:
            self._decide = _decision_function(
                self.settings, None if cooldowns is None else tuple(cooldowns), len(self.behaviors)
            )
            self.pick_fn: Callable[..., int] = self._pick_targeted
        else:
            lines, names = one_decision_code(self.settings, cooldowns, len(self.behaviors))
            self.pick_fn = self.scalar.chooser(self.settings, lines, names)
        self._tag_sets = [frozenset(behavior.tags) for behavior in self.behaviors]
        self._tag_masks: dict[frozenset[str], list[bool]] = {}
        self.state = self.new_state()
        self._batch: SelectorBatch | None = None

    # --- data format (see schema.py) -----------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UtilitySelector:
        from npc_mind.utility.schema import selector_from_dict

        return selector_from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        from npc_mind.utility.schema import selector_to_dict

        return selector_to_dict(self)

    @classmethod
    def from_json(cls, text: str) -> UtilitySelector:
        from npc_mind.utility.schema import selector_from_json

        return selector_from_json(text)

    def to_json(self, indent: int | None = 2) -> str:
        from npc_mind.utility.schema import selector_to_json

        return selector_to_json(self, indent)

    # --- per NPC -------------------------------------------------------------------------------
    def explain(self, context: Context) -> list[BehaviorExplanation]:
        """Every behavior (per target when per-target) with each consideration's numbers.

        The detailed path, for debugging and the editor (each curve in plain Python); `rank` and
        `choose` score through the selector's generated code, which gives the same numbers faster.
        """
        targets = self._target_count(context)
        rows = []
        for behavior in self.behaviors:
            indices: Sequence[int | None] = range(targets) if behavior.targeted else (None,)
            rows.extend(behavior.explain(context, index) for index in indices)
        return rows

    def rank(self, context: Context) -> list[tuple[str, float]] | list[tuple[str, int | None, float]]:
        """Behaviors by descending score (ties keep definition order).

        Without per-target behaviors: (name, score) rows. With them: (name, target_index, score)
        rows, one per target (target_index None for behaviors without per-target inputs).
        """
        if not self.targeted:
            scores = self.scalar.scores(context)
            return sorted(zip(self.names, scores, strict=True), key=_score_of_pair, reverse=True)
        return sorted(self._score_rows(context), key=_score_of_row, reverse=True)

    def choose(self, context: Context, now: float, allowed_tags: Collection[str] | None = None) -> str:
        """The behavior to run now; the detail (target, score, tag fallback) is in `last_choice`,
        every behavior's score in `last_scores()`."""
        return self.names[self.pick(self.state, context, now, allowed_tags)]

    def pick(
        self, state: DecisionState, context: Context, now: float, allowed_tags: Collection[str] | None = None
    ) -> int:
        """`choose` for one NPC of this definition whose state is `state` (from `new_state`, so
        many NPCs share one selector): the chosen behavior's index."""
        if allowed_tags is None:
            return self.pick_fn(context, self.scalar, state, now, None)
        chosen = self.pick_fn(context, self.scalar, state, now, self._tag_list(allowed_tags))
        if state.fallback:
            log.info(
                "no behavior available for tags %s; chose freely: %s",
                sorted(allowed_tags),
                self.names[chosen],
            )
        return chosen

    def new_state(self, rng: np.random.Generator | None = None) -> DecisionState:
        """A fresh per-NPC state for `pick`, with its own random numbers when top_n draws."""
        if rng is None and self.settings.top_n > 1:
            rng = np.random.default_rng(self.settings.seed)
        return DecisionState.one(len(self.behaviors), rng)

    def _pick_targeted(
        self,
        context: Context,
        owner: ScalarScorer,
        state: DecisionState,
        now: float,
        allowed: list[bool] | None,
    ) -> int:
        """`pick_fn` with per-target behaviors: each one's best target, then the decision."""
        values = self._scores(context, owner)
        scores: list[float] = []
        targets: list[int | None] = []
        for behavior, value in zip(self.behaviors, values, strict=True):
            if not behavior.targeted:
                scores.append(value)
                targets.append(None)
            elif value:  # the best target (the first of equals, as np.argmax)
                best = max(value)
                scores.append(best)
                targets.append(value.index(best))
            else:  # nothing to target
                scores.append(0.0)
                targets.append(None)
        chosen = self._decide(scores, state, now, allowed)
        if allowed is None:
            state.fallback = False
        state.target = targets[chosen]
        state.marked = scores
        return chosen

    @property
    def last_choice(self) -> Choice | None:
        """The detail behind the last `choose` (None before any, or after `reset`)."""
        return self.choice_of(self.state)

    def choice_of(self, state: DecisionState) -> Choice | None:
        """The detail behind the last `pick` with `state`."""
        scores = state.scores
        if scores is None:
            return None
        chosen = state.running  # the decision leaves the chosen behavior running
        if state.marked is scores:  # the tags' fallback and the target belong to this choice
            return Choice(self.names[chosen], state.target, scores[chosen], state.fallback)
        return Choice(self.names[chosen], None, scores[chosen], False)

    def last_scores(self) -> dict[str, float]:
        """Each behavior's score in the last `choose` (a per-target one: its best target's, 0 with
        no target), best first as `rank` orders them; {} before any."""
        return self.scores_of(self.state)

    def scores_of(self, state: DecisionState) -> dict[str, float]:
        """`last_scores` of the last `pick` with `state`."""
        pairs = zip(self.names, state.scores or (), strict=False)  # none before the first choice
        ranked = sorted(pairs, key=_score_of_pair, reverse=True)
        return {name: float(score) for name, score in ranked}

    def reset(self) -> None:
        """Forget the running behavior, commitment and cooldowns (the random numbers go on)."""
        self.state = self.new_state(self.state.rng)

    def tag_mask(self, allowed_tags: Collection[str]) -> BoolArray:
        """(B,) True for behaviors carrying at least one of the tags."""
        if isinstance(allowed_tags, str):
            raise UtilityError("allowed_tags must be a collection of tags, not one string")
        wanted = set(allowed_tags)
        return np.array([bool(wanted.intersection(behavior.tags)) for behavior in self.behaviors])

    def _tag_list(self, allowed_tags: Collection[str]) -> list[bool]:
        """`tag_mask` as a list, cached per set of tags (the same few come back every tick)."""
        if isinstance(allowed_tags, str):
            raise UtilityError("allowed_tags must be a collection of tags, not one string")
        wanted = frozenset(allowed_tags)
        mask = self._tag_masks.get(wanted)
        if mask is None:
            if len(self._tag_masks) >= 256:
                self._tag_masks.clear()
            mask = self._tag_masks[wanted] = [bool(wanted & tags) for tags in self._tag_sets]
        return mask

    # --- N NPCs --------------------------------------------------------------------------------
    def score_batch(
        self,
        inputs: Mapping[str, npt.ArrayLike],
        precision: Precision | None = None,
        target_mask: npt.ArrayLike | None = None,
    ) -> FloatArray:
        """Scores for N NPCs: (N, B), or (N, B, T) with per-target behaviors.

        precision "float64" gives the per-NPC path's numbers (to rounding); "float32" is faster
        for large batches and agrees to about 1e-6. None: float32 when every input array is
        float32 (as from Godot's packed arrays), else float64. target_mask (N, T): False for padding targets.
        """
        if precision is None:
            precision = "float32" if _all_float32(inputs, self.scorer.keys) else "float64"
        return self._scorer(precision).score(inputs, target_mask)

    def batch(self, n_npcs: int, precision: Precision | None = None) -> SelectorBatch:
        """A new batch of n_npcs NPCs sharing this definition, each with its own state."""
        return SelectorBatch(self, n_npcs, precision)

    def choose_batch(
        self,
        inputs: Mapping[str, npt.ArrayLike],
        now: float,
        allowed: BoolArray | None = None,
        target_mask: npt.ArrayLike | None = None,
    ) -> IntArray:
        """Behavior indices (N,) for N NPCs, keeping their state here between calls.

        A different N starts a new batch (fresh state); use `batch(n)` to manage several.
        """
        counts = [len(np.asarray(inputs[key])) for key in self.scorer.keys if key in inputs]
        n = counts[0] if counts else 0  # no input at all: the scorer names the missing one
        if self._batch is None or self._batch.n_npcs != n:
            self._batch = SelectorBatch(self, max(n, 1))
        return self._batch.choose(inputs, now, allowed, target_mask)

    # --- helpers -------------------------------------------------------------------------------
    def _scorer(self, precision: Precision | None) -> BatchScorer:
        scorer = self._scorers.get(precision)
        if scorer is None:
            if precision is None:
                return self.scorer
            if precision != "float32":
                raise UtilityError(f"precision must be 'float64' or 'float32', got {precision!r}")
            scorer = self._scorers[precision] = BatchScorer(self.behaviors, np.float32)
        return scorer

    def _target_count(self, context: Context) -> int:
        counts = {
            key: len(np.atleast_1d(context[key])) for key in self.scorer.per_target_keys if key in context
        }
        if len(set(counts.values())) > 1:
            raise UtilityError(f"per-target inputs disagree on the number of targets: {counts}")
        return next(iter(counts.values()), 0)

    def _score_rows(self, context: Context) -> list[tuple[str, int | None, float]]:
        """(behavior, target_index, score) in definition order, one row per target if per-target."""
        values = self.scalar.scores(context)
        if not self.targeted:
            return [(name, None, score) for name, score in zip(self.names, values, strict=True)]
        rows: list[tuple[str, int | None, float]] = []
        for behavior, value in zip(self.behaviors, values, strict=True):
            if behavior.targeted:
                rows.extend((behavior.name, t, score) for t, score in enumerate(value))
            else:
                rows.append((behavior.name, None, value))
        return rows


def _all_float32(inputs: Mapping[str, npt.ArrayLike], keys: Sequence[str]) -> bool:
    return all(getattr(inputs.get(key), "dtype", None) == np.float32 for key in keys)


class SelectorBatch:
    """N NPCs sharing one selector definition, each with its own anti-dithering state in arrays.

    One call per frame: `choose(inputs, now)` returns behavior indices (N,) into `names`; after it,
    `scores` (N, B[, T]), `chosen_target` (N,) (-1 without per-target behaviors) and
    `tag_fallback` (N,) hold the detail.
    """

    def __init__(self, selector: UtilitySelector, n_npcs: int, precision: Precision | None = None) -> None:
        if n_npcs < 1:
            raise UtilityError(f"a batch needs at least one NPC, got {n_npcs}")
        self.selector = selector
        self.precision = precision
        selector._scorer(precision)  # fail early on an unknown precision
        self.names = selector.names
        self.n_npcs = n_npcs
        self.state = DecisionState(n_npcs, len(selector.behaviors))
        self.rng = np.random.default_rng(selector.settings.seed)
        self.scores: FloatArray | None = None
        self.chosen_target = np.full(n_npcs, -1, dtype=np.intp)
        self.tag_fallback = np.zeros(n_npcs, dtype=bool)

    def resize(self, n_npcs: int) -> None:
        """Grow or shrink to n_npcs rows: rows kept keep their state, new rows start fresh."""
        if n_npcs < 1:
            raise UtilityError(f"a batch needs at least one NPC, got {n_npcs}")
        old, keep = self.state, min(n_npcs, self.n_npcs)
        self.state = DecisionState(n_npcs, len(self.names))
        self.state.running[:keep] = old.running[:keep]
        self.state.started[:keep] = old.started[:keep]
        self.state.stopped[:keep] = old.stopped[:keep]
        self.state.last_now = old.last_now
        self.chosen_target = np.resize(self.chosen_target, n_npcs)
        self.chosen_target[keep:] = -1
        self.tag_fallback = np.resize(self.tag_fallback, n_npcs)
        self.tag_fallback[keep:] = False
        self.n_npcs = n_npcs
        self.scores = None

    def reset_rows(self, rows: npt.ArrayLike) -> None:
        """These rows start afresh (a reused row gets no anti-dithering state of its previous NPC)."""
        rows = np.asarray(rows, dtype=np.intp)
        self.state.running[rows] = -1
        self.state.started[rows] = -np.inf
        self.state.stopped[rows] = -np.inf
        self.chosen_target[rows] = -1
        self.tag_fallback[rows] = False
        self.scores = None

    def keep_rows(self, rows: npt.ArrayLike) -> None:
        """Keep only these rows, in this order, with their state (compaction after many removals)."""
        rows = np.asarray(rows, dtype=np.intp)
        if rows.size < 1:
            raise UtilityError("a batch needs at least one NPC, got 0")
        old = self.state
        self.state = DecisionState(rows.size, len(self.names))
        self.state.running[:] = old.running[rows]
        self.state.started[:] = old.started[rows]
        self.state.stopped[:] = old.stopped[rows]
        self.state.last_now = old.last_now
        self.chosen_target = self.chosen_target[rows]
        self.tag_fallback = self.tag_fallback[rows]
        self.n_npcs = int(rows.size)
        self.scores = None

    def choose(
        self,
        inputs: Mapping[str, npt.ArrayLike],
        now: float,
        allowed: BoolArray | None = None,
        target_mask: npt.ArrayLike | None = None,
    ) -> IntArray:
        """allowed: None, a (B,) mask for every NPC (see `UtilitySelector.tag_mask`) or (N, B).

        target_mask (N, T): False where an NPC has no such target (see `BatchScorer.score`).
        """
        scores = self.selector.score_batch(inputs, self.precision, target_mask)
        if scores.shape[0] != self.n_npcs:
            raise UtilityError(f"this batch has {self.n_npcs} NPCs, the inputs have {scores.shape[0]}")
        self.scores = scores
        if self.selector.targeted:
            targets = np.argmax(scores, axis=2)
            best = np.max(scores, axis=2)
        else:
            best = scores
        mask = None
        if allowed is not None:
            mask = np.broadcast_to(np.asarray(allowed, dtype=bool), best.shape)
        selector = self.selector
        chosen, self.tag_fallback = decide(
            best,
            allowed=mask,
            cooldowns=selector.cooldowns,
            state=self.state,
            now=now,
            settings=selector.settings,
            rng=self.rng,
        )
        if selector.targeted:
            self.chosen_target = np.where([b.targeted for b in selector.behaviors], targets, -1)[
                np.arange(self.n_npcs), chosen
            ]
        return chosen
