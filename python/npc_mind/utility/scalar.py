"""The per-NPC path: one context of plain floats scored by generated straight-line Python.

Scoring one NPC through numpy costs tens of microseconds of call overhead for a few dozen numbers,
while the design source's plain loop takes a few. So each curve, and each selector's whole
definition, is compiled once (at construction) into a Python function with its constants inlined
and each shared sub-expression (an input's clip, a range normalisation) computed once; `source`
keeps the generated text for debugging.

The curve code is not written here: it is made from the rules in `rules.py`, the functions the
batch calls with arrays. `codegen.inline` copies a rule's body with the curve's parameters as literals and
each primitive (clip, exp, ...) as its float form, so both paths do the same operations in the same
order; weighted sums use the batch's folded weights (consideration weight x behavior weight),
products its compensation and order. The contract (rules.py): the same numbers to 1e-12, the
batch's weighted sum being a matrix product with its own summation order.

With `codegen.GENERATE` off (NPC_MIND_NO_CODEGEN=1) nothing is generated: `curve_by_rules` and
`behavior_by_rules` call the rules in the generated code's order, for debugging.
"""

from __future__ import annotations

import contextlib
import functools
import math
import operator
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from npc_mind.utility import codegen, rules
from npc_mind.utility.codegen import Code, Names, inline, literal, parameter
from npc_mind.utility.errors import MissingInputError, UtilityError

if TYPE_CHECKING:
    from npc_mind.utility.batch import BatchScorer
    from npc_mind.utility.behavior import Behavior
    from npc_mind.utility.curves import Curve

# Per behavior: a score, or a list of scores (one per target) for a per-target behavior.
Scores = list[Any]
# Compiled selector code by definition (a tuple of behaviors; with the settings for `chooser`):
# its source and function.
_Shared = tuple[Any, Callable[..., Any]]  # a source (None without generated code) and a function
_COMPILED: dict[Hashable, _Shared] = {}
_COMPILED_LIMIT = 256


_NAMESPACE: dict[str, Any] = {
    **rules.FLOAT_NAMES,
    "_float": float,
    "_sum": sum,
    "_zip": zip,
}
# The names generated code uses for itself (parameters, the decision's state), never a variable's.
_RESERVED = ("ctx", "st", "now", "allowed", "best", "running")


def curve_expression(curve: Curve, x: str, code: Code, hint: str, clean: bool = False) -> str:
    """An expression for curve(x) in [0, 1], with its sub-expressions bound in `code` as variables
    named `hint` and the step: the steps of rules.py for this curve (see its docstring).

    clean: x is known to be in [0, 1e30] (no NaN, no inf), which lets the saturating curve skip
    its domain clamp and NaN check.
    """
    u = x
    input_min, input_max = curve.input_min, curve.input_max
    ranged = input_min is not None and input_max is not None
    if input_min is not None and input_max is not None:
        scale = 1.0 / (input_max - input_min)
        args = {"x": x, "low": literal(input_min), "scale": literal(scale), "floor": "0.0", "ceiling": "1.0"}
        u = code.let(inline(rules.normalised, args, code, f"{hint}_range"), f"{hint}_ranged")
    # a range's [0, 1] is inside the saturating domain: no second clamp
    if (
        curve.domain is not None
        and not clean
        and not (ranged and curve.domain[0] <= 0.0 and curve.domain[1] >= 1.0)
    ):
        low, high = curve.domain
        args = {"u": u, "low": literal(low), "high": literal(high)}
        u = code.let(inline(rules.clamped, args, code, f"{hint}_domain"), f"{hint}_clamped")
    params = {name: parameter(value, code, f"{hint}_{name}") for name, value in curve.shape_params().items()}
    y = inline(rules.SHAPES[curve.family], {"u": u, **params}, code, hint)
    if curve.invert:
        y = code.let(y, f"{hint}_shape")
        y = inline(rules.inverted, {"y": y, "sign": "(-1.0)", "shift": "1.0"}, code, f"{hint}_inverted")
    if clean and curve.bounded:
        return y
    score = code.let(y, f"{hint}_unclamped")
    if curve.bounded and curve.domain is not None:
        return f"({score} if {score} == {score} else 0.0)"  # in [0, 1] unless NaN
    return inline(rules.finished, {"y": score}, code, f"{hint}_finished")


@functools.lru_cache(maxsize=1024)  # equal curves (e.g. one definition loaded per NPC) share it
def compile_curve(curve: Curve) -> Callable[[float], float]:
    """curve(x) for one float, as generated code (see the module docstring)."""
    namespace = dict(_NAMESPACE)
    code = Code(Names(("x",)), "    ", namespace)
    result = curve_expression(curve, "x", code, curve.type_name)
    source = "\n".join(["def curve(x):", *code.lines, f"    return {result}", ""])
    return codegen.compile_function(source, namespace, "curve", f"curve: {curve!r}")


def curve_by_rules(curve: Curve, x: float) -> float:
    """curve(x) for one float by calling the rules of rules.py one after the other: what
    `compile_curve` generates, without generating it (`codegen.GENERATE` off)."""
    u = x
    if curve.input_min is not None and curve.input_max is not None:
        scale = 1.0 / (curve.input_max - curve.input_min)
        u = rules.normalised(x, curve.input_min, scale, 0.0, 1.0)
    if curve.domain is not None:
        u = rules.clamped(u, *curve.domain)  # inside [0, 1] after a range: changes nothing
    y = rules.SHAPES[curve.family](u, **curve.shape_params())
    if curve.invert:
        y = rules.inverted(y, -1.0, 1.0)
    return rules.finished(y)


def float_curve(curve: Curve) -> Callable[[float], float]:
    """curve(x) for one float: the generated code, or with `codegen.GENERATE` off the rules."""
    if codegen.GENERATE:
        return compile_curve(curve)
    return functools.partial(curve_by_rules, curve)


def behavior_by_rules(behavior: Behavior, inputs: Mapping[str, float]) -> float:
    """A behavior's score from its inputs (floats by key), each curve by `curve_by_rules`, in the
    generated code's order: the folded weights of a weighted sum, a product's compensated factors
    then its weight, the vetoes last (`ScalarScorer._behavior_expression`)."""
    scores: dict[tuple[str, Curve], float] = {}
    for c in behavior.considerations:
        pair = (c.input_key, c.curve)
        if pair not in scores:
            scores[pair] = curve_by_rules(c.curve, inputs[c.input_key])
    total: float
    if behavior.aggregation == "weighted_sum":
        weights: dict[tuple[str, Curve], float] = {}
        for c in behavior.considerations:
            pair = (c.input_key, c.curve)
            weights[pair] = weights.get(pair, 0.0) + c.weight
        terms = [
            scores[pair] if w == 1.0 else scores[pair] * w
            for pair, w in ((pair, weight * behavior.weight) for pair, weight in weights.items())
            if w != 0.0
        ]
        total = functools.reduce(operator.add, terms) if terms else 0.0
    else:
        compensation = 1.0 - 1.0 / len(behavior.considerations)
        factors = []
        for c in behavior.considerations:
            f = scores[c.input_key, c.curve]
            if c.weight != 1.0:
                f = f**c.weight
            if compensation != 0.0:
                f = f + (1.0 - f) * compensation * f
            factors.append(f)
        total = functools.reduce(operator.mul, [*factors, behavior.weight])
    vetoed = any(
        scores[c.input_key, c.curve] < c.veto_below
        for c in behavior.considerations
        if c.veto_below is not None
    )
    return 0.0 if vetoed else total


class ScalarScorer:
    """A selector's behaviors compiled for one context at a time.

    `scores(context)`: per behavior (definition order) its score, or for a per-target behavior
    a list with one score per target. Scalar inputs are read with float(); per-target inputs are
    sequences of numbers of one length (a context holding none of them has no targets). Errors
    name the behavior and consideration, as the batch path's do; NaN inputs score 0 and are
    counted in the batch scorer's `nan_counts` and logged once per key.

    `function(context, scorer)` is the generated function itself, shared by every selector of
    one definition (one function object, so one globals dict: a code object run with a different
    globals dict per selector misses the interpreter's global-lookup caches on every switch, which
    cost about 0.1-0.2 us a call over 200 selectors); the scorer passed in is the one whose
    counts and errors it reports.
    """

    def __init__(self, behaviors: Sequence[Behavior], batch: BatchScorer) -> None:
        self.behaviors = tuple(behaviors)
        self.batch = batch
        self.scalar_keys = [key for key in batch.keys if key not in batch.per_target_keys]
        self.target_keys = [key for key in batch.keys if key in batch.per_target_keys]
        # Generating and compiling costs about a millisecond; selectors of one definition (e.g. one
        # per NPC on the server's Dictionary path) share the compiled function.
        self.source: str | None
        if codegen.GENERATE:
            self.source, self.function = self._compiled(self.behaviors, "scores", dict(_NAMESPACE), None)
        else:
            self.source, self.function = self._shared(self.behaviors, lambda: (None, self._scores_by_rules))

    def scores(self, context: Mapping[str, Any]) -> Scores:
        return self.function(context, self)

    def chooser(self, key: Hashable, decision: list[str], names: dict[str, Any]) -> Callable[..., int]:
        """The scoring with `decision` after it, as one function `pick(ctx, _owner, st, now,
        allowed)`: `decision` is lines reading the scores as `_sc` and ending in `return`
        (`selector.one_decision_code`), `names` what they use, `key` what else they depend on
        (the settings). Not for per-target behaviors. Shared, like `function`, per definition."""
        return self._compiled(("pick", self.behaviors, key), "pick", {**_NAMESPACE, **names}, decision)[1]

    def chooser_by_rules(self, key: Hashable, decide: Callable[..., int]) -> Callable[..., int]:
        """`chooser` without generating code (`codegen.GENERATE` off): `pick(ctx, _owner, st, now,
        allowed)` scores by the rules, then calls `decide(scores, st, now, allowed)`."""
        scores = self.function

        def pick(ctx: Mapping[str, Any], owner: ScalarScorer, st: Any, now: float, allowed: Any) -> int:
            return decide(scores(ctx, owner), st, now, allowed)

        return self._shared(("pick", self.behaviors, key), lambda: (None, pick))[1]

    def _compiled(
        self, key: Hashable, name: str, namespace: dict[str, Any], decision: list[str] | None
    ) -> tuple[str, Callable[..., Any]]:
        """The generated function `name` and its source, shared per `key` (`_shared`)."""

        def generate() -> tuple[str, Callable[..., Any]]:
            source = self._generate(namespace, decision)
            label = f"{name}: {codegen.label_of(behavior.name for behavior in self.behaviors)}"
            return source, codegen.compile_function(source, namespace, name, label)

        return self._shared(key, generate)

    @staticmethod
    def _shared(key: Hashable, make: Callable[[], _Shared]) -> _Shared:
        """`make()` (a source and a function), from the cache when `key` is in it (an unhashable
        definition gets its own for this selector only)."""
        try:
            cached = _COMPILED.get(key)
        except TypeError:
            cached = None
        if cached is None:
            cached = make()
            if len(_COMPILED) >= _COMPILED_LIMIT:
                _COMPILED.clear()
            with contextlib.suppress(TypeError):
                _COMPILED[key] = cached
        return cached

    # --- without generated code (codegen.GENERATE off) -------------------------------------------
    def _scores_by_rules(self, context: Mapping[str, Any], owner: ScalarScorer) -> Scores:
        """`function`'s scores by calling the rules (`curve_by_rules`, `behavior_by_rules`): the
        same inputs read, errors raised and NaN counted through `owner`, the same numbers."""
        try:
            values = {key: float(context[key]) for key in self.scalar_keys}
        except (KeyError, TypeError, ValueError, OverflowError):
            owner._bad_input(context)
            raise
        lists = owner._targets(context) if self.target_keys else []
        owner._report_nan(tuple(values.values()), tuple(lists))  # counts only the NaN values
        targets = [
            {**values, **{key: items[t] for key, items in zip(self.target_keys, lists, strict=True)}}
            for t in range(len(lists[0]) if lists else 0)
        ]
        return [
            [behavior_by_rules(behavior, inputs) for inputs in targets]
            if behavior.targeted
            else behavior_by_rules(behavior, values)
            for behavior in self.behaviors
        ]

    # --- code generation -----------------------------------------------------------------------
    def _generate(self, namespace: dict[str, Any], decision: list[str] | None = None) -> str:
        """`scores(ctx, _owner)`, or with `decision` `pick(ctx, _owner, st, now, allowed)`."""
        variables = Names(_RESERVED)
        inputs = {key: variables.new(key) for key in (*self.scalar_keys, *self.target_keys)}
        lists = [variables.new(f"{key}_targets") for key in self.target_keys]
        lines = [
            "def scores(ctx, _owner):" if decision is None else "def pick(ctx, _owner, st, now, allowed):"
        ]
        names = [inputs[key] for key in self.scalar_keys]
        values = f"({', '.join(names)},)" if names else "()"
        if names:
            # float() of each input: numbers of any kind (int, numpy) become the floats both paths
            # score; a missing key or a non-number goes to the owner for the clear error. A few
            # inputs are read one subscript each (cheaper than itemgetter's call and tuple up to
            # about 4 keys), more in one itemgetter call.
            if len(names) <= 4:
                reads = [f"        {inputs[key]} = ctx[{key!r}]" for key in self.scalar_keys]
            else:
                namespace["_get"] = operator.itemgetter(*self.scalar_keys)
                reads = [f"        {', '.join(names)}, = _get(ctx)"]
            lines += [
                "    try:",
                *reads,
                *(f"        {name} = _float({name})" for name in names),
                "    except (KeyError, TypeError, ValueError, OverflowError):",
                "        _owner._bad_input(ctx)",
                "        raise",
            ]
        if self.target_keys:
            lines.append(f"    {', '.join(lists)}, = _owner._targets(ctx)")
            total = " + ".join([*names, *(f"_sum({p})" for p in lists)])
            report = f"        _owner._report_nan({values}, ({', '.join(lists)},))"
            lines += [f"    _s = {total}", "    if _s != _s:", report]
            lines += self._body(inputs, lists, variables, namespace, clean=False, targeted=True)
            return "\n".join([*lines, ""])
        nan_check: list[str] = []
        if names:
            # a NaN input makes the sum NaN (so does inf - inf: the report checks each value)
            report = f"        _owner._report_nan({values}, ())"
            nan_check = [f"    _s = {' + '.join(names)}", "    if _s != _s:", report]
        if names and self._has_unranged_saturating():
            # Inputs all in [0, 1e30] (no NaN, no inf): the saturating curves need no clip, and
            # there is no NaN to count, so the check comes after this branch.
            clean = " and ".join(f"0.0 <= {name} <= {rules.HUGE!r}" for name in names)
            lines.append(f"    if {clean}:")
            lines += self._body(
                inputs, lists, variables, namespace, clean=True, targeted=False, indent=" " * 8, then=decision
            )
        lines += nan_check
        lines += self._body(inputs, lists, variables, namespace, clean=False, targeted=False, then=decision)
        return "\n".join([*lines, ""])

    def _has_unranged_saturating(self) -> bool:
        return any(
            c.curve.family == "saturating" and c.curve.input_min is None
            for behavior in self.behaviors
            for c in behavior.considerations
        )

    def _body(
        self,
        inputs: dict[str, str],
        lists: list[str],
        variables: Names,
        namespace: dict[str, Any],
        *,
        clean: bool,
        targeted: bool,
        indent: str = "    ",
        then: list[str] | None = None,
    ) -> list[str]:
        # A body of its own names: the clean and the general branch name the same values alike.
        names = Names(variables.taken)
        outer = Code(names, indent, namespace)
        inner = Code(names, indent + "    ", namespace)
        rows: dict[tuple[str, Curve], str] = {}

        def row(key: str, curve: Curve) -> str:
            name = rows.get((key, curve))
            if name is None:
                code = inner if key in self.batch.per_target_keys else outer
                hint = f"{key}_{curve.type_name}"
                expression = curve_expression(curve, inputs[key], code, hint, clean)
                name = rows[key, curve] = code.let(expression, hint)
            return name

        results: list[str] = []
        appends: list[str] = []
        targeted_names: list[str] = []
        for behavior in self.behaviors:
            code = inner if behavior.targeted else outer
            total = code.let(self._behavior_expression(behavior, row, code), behavior.name)
            if behavior.targeted:
                per_target = names.new(f"{behavior.name}_per_target")
                targeted_names.append(per_target)
                results.append(per_target)
                appends.append(f"{inner.indent}{per_target}.append({total})")
            else:
                results.append(total)
        lines = list(outer.lines)
        if targeted and appends:
            lines += [f"{indent}{name} = []" for name in targeted_names]
            elements = ", ".join(inputs[key] for key in self.target_keys)
            lines.append(f"{indent}for {elements}, in _zip({', '.join(lists)}):")
            lines += [*inner.lines, *appends]
        if then is None:
            lines.append(f"{indent}return [{', '.join(results)}]")
        else:  # the scores as `_sc`, then the decision's lines
            lines += [f"{indent}_sc = [{', '.join(results)}]", *(f"{indent}{line}" for line in then)]
        return lines

    @staticmethod
    def _behavior_expression(behavior: Behavior, row: Callable[[str, Curve], str], code: Code) -> str:
        considerations = behavior.considerations
        if behavior.aggregation == "weighted_sum":
            # The batch's folded weight matrix: per distinct (input, curve), the summed consideration
            # weights times the behavior weight.
            weights: dict[str, float] = {}
            for c in considerations:
                name = row(c.input_key, c.curve)
                weights[name] = weights.get(name, 0.0) + c.weight
            folded = {name: weight * behavior.weight for name, weight in weights.items()}
            # x * 1.0 is x exactly: the multiplication is left out
            terms = [name if w == 1.0 else f"{name} * {literal(w)}" for name, w in folded.items() if w != 0.0]
            total = " + ".join(terms) or "0.0"
        else:
            # f = s ** w; f' = f + (1 - f)(1 - 1/n) f; the f' multiplied in order, then the weight.
            compensation = 1.0 - 1.0 / len(considerations)
            factors = []
            for c in considerations:
                f = row(c.input_key, c.curve)
                if c.weight != 1.0:
                    f = code.let(f"{f} ** {literal(c.weight)}", f"{behavior.name}_{c.input_key}_weighted")
                if compensation != 0.0:
                    expression = f"{f} + (1.0 - {f}) * {literal(compensation)} * {f}"
                    f = code.let(expression, f"{behavior.name}_{c.input_key}_compensated")
                factors.append(f)
            total = " * ".join([*factors, literal(behavior.weight)])
        vetoes = [
            f"{row(c.input_key, c.curve)} < {literal(c.veto_below)}"
            for c in considerations
            if c.veto_below is not None
        ]
        if vetoes:
            total = f"(0.0 if {' or '.join(vetoes)} else {total})"
        return total

    # --- helpers the generated code calls --------------------------------------------------------
    def _bad_input(self, context: Mapping[str, Any]) -> None:
        """Raise the clear error for a context the fast read failed on (or return to re-raise)."""
        for key in self.scalar_keys:
            if key not in context:
                raise MissingInputError(
                    f"{self.batch.first_use[key]}: input {key!r} is missing from the context"
                )
            try:
                float(context[key])
            except (TypeError, ValueError, OverflowError):
                raise UtilityError(
                    f"{self.batch.first_use[key]}: input must be a number, got {context[key]!r}"
                ) from None

    def _targets(self, context: Mapping[str, Any]) -> list[list[float]]:
        """Each per-target input as a list of floats, all of one length."""
        if not any(key in context for key in self.target_keys):
            return [[] for _ in self.target_keys]  # nothing to target
        lists = []
        for key in self.target_keys:
            if key not in context:
                raise MissingInputError(
                    f"{self.batch.first_use[key]}: input {key!r} is missing from the context"
                )
            lists.append(self._sequence(key, context[key]))
        counts = {key: len(values) for key, values in zip(self.target_keys, lists, strict=True)}
        if len(set(counts.values())) > 1:
            raise UtilityError(f"per-target inputs disagree on the number of targets: {counts}")
        return lists

    def _sequence(self, key: str, value: object) -> list[float]:
        try:
            if isinstance(value, str | bytes):
                raise TypeError
            if isinstance(value, np.ndarray):
                if value.ndim != 1:
                    raise TypeError
                return value.astype(np.float64).tolist()
            return [float(item) for item in value]  # type: ignore[attr-defined]  # any iterable of numbers; others raise TypeError, caught by the caller
        except (TypeError, ValueError, OverflowError):
            raise UtilityError(
                f"{self.batch.first_use[key]}: input must be a sequence of numbers (one per target),"
                f" got {value!r}"
            ) from None

    def _report_nan(self, values: tuple[float, ...], lists: tuple[list[float], ...]) -> None:
        for key, value in zip(self.scalar_keys, values, strict=True):
            if math.isnan(value):
                self.batch.record_nan(key, 1)
        for key, items in zip(self.target_keys, lists, strict=True):
            missing = sum(1 for item in items if math.isnan(item))
            if missing:
                self.batch.record_nan(key, missing)
