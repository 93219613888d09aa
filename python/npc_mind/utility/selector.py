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
in `rules.py` or called (the top-n draw), and `scalar.py` puts them after the definition's scoring,
so a choice is one Python call. Both make the same choices, and draw the same random numbers for
top_n. With NPC_MIND_NO_CODEGEN=1 (`codegen.GENERATE` off) one NPC's choice is `decide` on a batch
of one (`decide_as_batch`) instead.
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

from npc_mind.utility import codegen, schema
from npc_mind.utility.batch import BatchScorer
from npc_mind.utility.behavior import Behavior, BehaviorExplanation, Context
from npc_mind.utility.codegen import Code, Names, inline
from npc_mind.utility.curves import FloatArray
from npc_mind.utility.errors import UtilityDefinitionError, UtilityError, definition_number
from npc_mind.utility.rules import (
    boosted,
    keeps_running,
    moves_forward,
    rested,
    restricted,
    switch_margin,
    tag_ready,
    weighted_top_n,
    within_top_n,
)
from npc_mind.utility.scalar import ScalarScorer

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
            value = definition_number(getattr(self, name))
            if value is None or not (math.isfinite(value) and value >= 0):
                raise UtilityDefinitionError(
                    f"selector: {name} must be a finite number >= 0, got {getattr(self, name)!r}"
                )
            object.__setattr__(self, name, value)
        if isinstance(self.top_n, bool) or not isinstance(self.top_n, Integral) or self.top_n < 1:
            raise UtilityDefinitionError(f"selector: top_n must be an integer >= 1, got {self.top_n!r}")
        object.__setattr__(self, "top_n", int(self.top_n))
        if self.seed is not None:
            if isinstance(self.seed, bool) or not isinstance(self.seed, Integral) or self.seed < 0:
                raise UtilityDefinitionError(
                    f"selector: seed must be an integer >= 0 or None, got {self.seed!r}"
                )
            object.__setattr__(self, "seed", int(self.seed))


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
        # one NPC's last choice: its scores, the scores `target` and `fallback` belong to
        self.scores: list[float] | None = None
        self.marked: list[float] | None = None
        self.target: int | None = None
        self.rng: np.random.Generator | None = None
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

    # Readiness: tags, then cooldowns (a cooldown of 0 never holds a behavior: time only moves on).
    # `restricted` changes nothing for rows where something passes: it runs only if a row needs it.
    ready: BoolArray | None = None  # None: every behavior
    tag_fallback = np.zeros(n, dtype=bool)
    if allowed is not None:
        ready = tag_ready(allowed, scores)
        tag_fallback = (ready @ ones) == 0.0
        if bool(tag_fallback.any()):
            ready = restricted(ready, tag_fallback[:, np.newaxis])
    if bool((cooldowns > 0.0).any()):
        is_running = np.zeros((n, b), dtype=bool)
        is_running.reshape(-1)[running_at[has_running]] = True
        passes = rested(now, state.stopped, cooldowns, is_running)
        candidates = passes if ready is None else ready & passes
        none_pass = (candidates @ ones) == 0.0
        if bool(none_pass.any()):
            passes = restricted(passes, none_pass[:, np.newaxis])
            candidates = passes if ready is None else ready & passes
        ready = candidates

    adjusted = scores.copy() if ready is None else np.where(ready, scores, -np.inf)
    flat = adjusted.reshape(-1)
    if settings.momentum > 0.0 and any_running:
        at = running_at[has_running]
        flat[at] = boosted(flat[at], settings.momentum)
    best = np.argmax(adjusted, axis=1)
    if not any_running:
        chosen = weighted_top_n(adjusted, best, settings.top_n, rng.random(n)) if settings.top_n > 1 else best
    else:
        best_score = flat[row_start + best]
        if settings.top_n > 1:
            best = weighted_top_n(adjusted, best, settings.top_n, rng.random(n))
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


def one_decision_code(
    settings: AntiDithering, cooldowns: list[float] | None, n_behaviors: int, names: Sequence[str] = ()
) -> tuple[list[str], dict[str, Any]]:
    """`decide`'s steps for one NPC as lines of Python, and the names they use.

    The lines read `_sc` (the behaviors' scores, a list), `st` (`DecisionState.one`), `now` and
    `allowed` (a list of bools, or None: every behavior), update `st` and end in `return` of the
    chosen index; `scalar.ScalarScorer` puts them after the scoring. Each rule is inlined from its
    function in `rules.py` with the settings as constants (a setting that is off leaves no code), except
    `switch_margin` with commitment and the top-n draw `weighted_top_n`, which are called; the
    batch tests hold the result to `decide` step for step. cooldowns: each behavior's, or None when
    none has one; n_behaviors: how many scores `_sc` holds; names: the behaviors' (the per-behavior
    variables are named after them), or () for `_behavior0`...
    """
    namespace: dict[str, Any] = {
        "_advance_time": advance_time, "_weighted_top_n": weighted_top_n, "_switch_margin": switch_margin,
        "_settings": settings, "_sum": sum, "_INF": _INF,
    }  # fmt: skip

    def rule(function: Callable[..., Any], **args: str) -> str:
        code = Code(Names(), "", namespace)
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
    # Readiness, unrolled per behavior: tags (when `allowed` is given), then cooldowns.
    unique = Names()
    labels = [f"_{unique.new(name)}" for name in names] or [f"_behavior{j}" for j in range(n_behaviors)]
    with_tags = _readiness_code(rule, cooldowns, labels, tags=True)
    if cooldowns is None:
        lines += ["if allowed is not None:", *(f"    {line}" for line in with_tags)]
    else:
        without = _readiness_code(rule, cooldowns, labels, tags=False)
        lines += ["if allowed is not None:", *(f"    {line}" for line in with_tags)]
        lines += ["else:", *(f"    {line}" for line in without or ["pass"])]
    # the first maximum, as np.argmax (unrolled: a third of the cost of index(max()) at 3 behaviors)
    arg_max = ["best = 0", "_b = _adj[0]"]
    for j in range(1, n_behaviors):
        arg_max += [f"if _adj[{j}] > _b:", f"    best = {j}", f"    _b = _adj[{j}]"]
    lines += ["if running < 0:", *(f"    {line}" for line in arg_max)]
    if top_n > 1:
        lines.append(f"    best = _weighted_top_n(_adj, best, {top_n}, st.rng.random())")
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
        lines.append(f"best = _weighted_top_n(_adj, best, {top_n}, st.rng.random())")
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
    settings: AntiDithering, cooldowns: tuple[float, ...] | None, names: tuple[str, ...]
) -> Callable[[list[float], DecisionState, float, list[bool] | None], int]:
    """The generated decision on its own, `decide(scores, state, now, allowed)` -> the chosen index
    (per-target definitions, whose scores are reduced to one per behavior first)."""
    lines, namespace = one_decision_code(
        settings, None if cooldowns is None else list(cooldowns), len(names), names
    )
    source = "\n".join(["def decide(_sc, st, now, allowed):", *(f"    {line}" for line in lines), ""])
    return codegen.compile_function(source, namespace, "decide", f"decide: {codegen.label_of(names)}")


def decide_as_batch(  # noqa: PLR0917 -- a partial of the first two stands in for the generated decide
    settings: AntiDithering,
    cooldowns: FloatArray,
    scores: list[float],
    state: DecisionState,
    now: float,
    allowed: list[bool] | None,
) -> int:
    """One NPC's choice made by `decide` on a batch of one: what the generated per-NPC decision
    does (the same choice, state and random draw), without generating it (`codegen.GENERATE`
    off). `state` is `DecisionState.one`; cooldowns: each behavior's, as `decide` takes them."""
    batch = DecisionState(1, len(scores))
    batch.running[0], batch.started[0], batch.stopped[0] = state.running, state.started, state.stopped
    batch.last_now = state.last_now
    mask = None if allowed is None else np.array([allowed], dtype=bool)
    chosen, fallback = decide(
        np.array([scores], dtype=np.float64),
        allowed=mask,
        cooldowns=cooldowns,
        state=batch,
        now=now,
        settings=settings,
        rng=state.rng,  # type: ignore[arg-type]  # a state of a top_n > 1 selector always has one (new_state)
    )
    state.last_now = batch.last_now
    state.running = int(chosen[0])
    state.started = float(batch.started[0])
    state.stopped[:] = batch.stopped[0].tolist()
    state.scores = scores
    if allowed is not None:
        state.fallback = bool(fallback[0])
        state.target = None
        state.marked = scores
    return state.running


def _readiness_code(
    rule: Callable[..., str], cooldowns: list[float] | None, labels: Sequence[str], *, tags: bool
) -> list[str]:
    """`decide`'s readiness steps for one NPC, each behavior's `tag_ready`, `rested` and
    `restricted` inlined (`_sc[j]` its score), ending in `_adj`: the scores with those not ready
    at -inf. tags: `allowed` is a list (then the lines also record the tag fallback), else None.
    A behavior whose cooldown is 0 is never held (time only moves on, as `decide` skips
    cooldowns when none has one); with neither tags nor a cooldown there are no lines. labels: each
    behavior's variable prefix (`_attack`: `_attack_tagged`, `_attack_ready`, `_attack_rested`)."""
    n_behaviors = len(labels)
    lines: list[str] = []
    ready = ["True"] * n_behaviors  # each behavior's readiness, as code
    if tags:
        passes = [f"{label}_tagged" for label in labels]
        lines += [
            f"{name} = {rule(tag_ready, allowed=f'allowed[{j}]', score=f'_sc[{j}]')}"
            for j, name in enumerate(passes)
        ]
        lines += [
            f"_f = not ({' or '.join(passes)})",
            "st.fallback = _f",
            "st.target = None",
            "st.marked = _sc",
        ]
        ready = [f"{label}_ready" for label in labels]
        lines += [
            f"{name} = {rule(restricted, passes=passes[j], none_pass='_f')}" for j, name in enumerate(ready)
        ]
    held = {j: cooldown for j, cooldown in enumerate(cooldowns or ()) if cooldown > 0.0}
    if held:
        lines.append("_st = st.stopped")
        for j, cooldown in held.items():
            args = {
                "now": "now",
                "stopped": f"_st[{j}]",
                "cooldown": repr(cooldown),
                "running": f"(running == {j})",
            }
            lines.append(f"{labels[j]}_rested = {rule(rested, **args)}")
        candidates = [
            _both(ready[j], f"{labels[j]}_rested") if j in held else ready[j] for j in range(n_behaviors)
        ]
        if "True" in candidates:  # one behavior is always a candidate: the cooldowns apply
            for j in held:
                ready[j] = _both(ready[j], f"{labels[j]}_rested")
        else:
            lines.append(f"_none = not ({' or '.join(candidates)})")
            for j in held:
                ready[j] = _both(ready[j], rule(restricted, passes=f"{labels[j]}_rested", none_pass="_none"))
    if all(expression == "True" for expression in ready):
        return lines
    scores = [f"_sc[{j}]" if r == "True" else f"(_sc[{j}] if {r} else -_INF)" for j, r in enumerate(ready)]
    return [*lines, f"_adj = [{', '.join(scores)}]"]


def _both(first: str, second: str) -> str:
    """Code for "first and second" of two readiness tests ("True": none)."""
    return second if first == "True" else f"({first} and {second})"


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
        self._scorers: dict[Precision | None, BatchScorer] = {"float64": self.scorer}
        self.targeted = self.scorer.targeted
        # The per-NPC path: generated plain-Python scoring and the scalar decision rules.
        self.scalar = ScalarScorer(self.behaviors, self.scorer)
        self._scores = self.scalar.function  # called as (context, self.scalar): one call less
        cooldowns = self.cooldowns.tolist() if bool((self.cooldowns > 0.0).any()) else None
        # One NPC's choice: the generated scoring and decision in one function,
        # `pick_fn(context, self.scalar, state, now, allowed)` -> the chosen index (per-target
        # behaviors: their best target found first, then the generated decision).
        # With `codegen.GENERATE` off, `decide` on a batch of one NPC makes the choice instead.
        by_rules = functools.partial(decide_as_batch, self.settings, self.cooldowns)
        if self.targeted:
            self._decide = (
                _decision_function(self.settings, None if cooldowns is None else tuple(cooldowns), self.names)
                if codegen.GENERATE
                else by_rules
            )
            self.pick_fn: Callable[..., int] = self._pick_targeted
        elif codegen.GENERATE:
            lines, used = one_decision_code(self.settings, cooldowns, len(self.behaviors), self.names)
            self.pick_fn = self.scalar.chooser(self.settings, lines, used)
        else:
            self.pick_fn = self.scalar.chooser_by_rules(self.settings, by_rules)
        self._tag_sets = [frozenset(behavior.tags) for behavior in self.behaviors]
        self._tag_masks: dict[frozenset[str], list[bool]] = {}
        self.state = self.new_state()
        self._batch: SelectorBatch | None = None

    # --- data format (see schema.py) -----------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UtilitySelector:
        """A selector from the data format (`schema`); problems raise UtilityDefinitionError."""
        behaviors, settings = schema.selector_parts(data)
        return cls(behaviors, **settings)

    def to_dict(self) -> dict[str, Any]:
        return schema.selector_to_dict(self)

    @classmethod
    def from_json(cls, text: str) -> UtilitySelector:
        return cls.from_dict(schema.parse_json(text))

    def to_json(self, indent: int | None = 2) -> str:
        return schema.selector_to_json(self, indent)

    # --- a missing input, for callers that choose a fallback over MissingInputError --------------
    def unusable_inputs(self, context: Context) -> dict[str, Any]:
        """The inputs this definition reads that `context` cannot give, in definition order: key ->
        the value given, one that is no number (`float()` refuses it), or `MISSING`. A per-target
        key counts as missing only when another per-target key is given (with none of them there is
        nothing to target, which is no error)."""
        unusable: dict[str, Any] = {}
        for key in self.scalar.scalar_keys:
            value = context.get(key, MISSING)
            if value is not MISSING:
                try:
                    float(value)
                    continue
                except (TypeError, ValueError, OverflowError):
                    pass
            unusable[key] = value
        targets = self.scalar.target_keys
        if any(key in context for key in targets):
            unusable.update((key, MISSING) for key in targets if key not in context)
        return unusable

    def first_use(self, key: str) -> str:
        """The first behavior and consideration reading `key`, as the error messages name them."""
        return self.scorer.first_use[key]

    def with_inputs(
        self, context: Context, keys: Collection[str], defaults: Mapping[str, float] | None = None
    ) -> dict[str, Any]:
        """`context` with each of `keys` set to its `defaults` value, else 0 (a per-target key: that
        for each target of the other per-target inputs)."""
        filled = dict(context)
        defaults = defaults or {}
        targets = next((len(context[key]) for key in self.scalar.target_keys if key in context), 0)  # type: ignore[arg-type]  # per-target inputs are sequences
        for key in keys:
            value = defaults.get(key, 0.0)
            filled[key] = [value] * targets if key in self.scorer.per_target_keys else value
        return filled

    # --- per NPC -------------------------------------------------------------------------------
    def explain(self, context: Context) -> list[BehaviorExplanation]:
        """Every behavior (per target when per-target) with each consideration's numbers.

        The detailed path, for debugging and the editor (each curve in plain Python); `rank` and
        `choose` score through the selector's generated code, which gives the same numbers faster.
        """
        targets = self._target_count(context)
        rows: list[BehaviorExplanation] = []
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


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # `unusable_inputs`' value for a key the context does not give


class InputFallback:
    """A selector as a `Chooser` (what an LLM decision's tiers 2 and 3 call) that never raises for
    the context's inputs. `defaults` (the considerations' default inputs) stand in for the keys the
    context lacks, silently. A key still missing, or given as no number, reads as its default, else
    0, and each time `on_bad_input(key, where, given)` is told (`where`: the behavior and
    consideration reading it; `given`: the value, or `MISSING`). A plain `UtilitySelector` raises
    MissingInputError or UtilityError instead: the caller that wants the fallback asks for it."""

    def __init__(
        self,
        selector: UtilitySelector,
        defaults: Mapping[str, float],
        on_bad_input: Callable[[str, str, Any], None],
    ) -> None:
        self.selector = selector
        self.defaults = dict(defaults)
        self.on_bad_input = on_bad_input

    def choose(self, context: Context, now: float, allowed_tags: Collection[str] | None = None) -> str:
        if self.defaults:
            context = {**self.defaults, **context}  # a given value wins
        selector = self.selector
        try:
            return selector.choose(context, now, allowed_tags)
        except UtilityError:
            unusable = selector.unusable_inputs(context)
            if not unusable:
                raise
        for key, given in unusable.items():
            self.on_bad_input(key, selector.first_use(key), given)
        return selector.choose(selector.with_inputs(context, unusable, self.defaults), now, allowed_tags)
