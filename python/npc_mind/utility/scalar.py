"""The per-NPC path: one context of plain floats scored by generated straight-line Python.

Scoring one NPC through numpy costs tens of microseconds of call overhead for a few dozen numbers,
while the design source's plain loop takes a few. So each curve, and each selector's whole
definition, is compiled once (at construction) into a Python function with its constants inlined
and each shared sub-expression (an input's clip, a range normalisation) computed once; `source`
keeps the generated text for debugging.

The curve code is not written here: it is made from the rules in `rules.py`, the functions the
batch calls with arrays. `inline` copies a rule's body with the curve's parameters as literals and
each primitive (clip, exp, ...) as its float form, so both paths do the same operations in the same
order; weighted sums use the batch's folded weights (consideration weight x behavior weight),
products its compensation and order. The contract (rules.py): the same numbers to 1e-12, the
batch's weighted sum being a matrix product with its own summation order.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
import inspect
import math
import operator
import textwrap
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from npc_mind.utility import rules
from npc_mind.utility.errors import MissingInputError, UtilityError

if TYPE_CHECKING:
    from npc_mind.utility.batch import BatchScorer
    from npc_mind.utility.behavior import Behavior
    from npc_mind.utility.curves import Curve

# Per behavior: a score, or a list of scores (one per target) for a per-target behavior.
Scores = list[Any]
# Compiled selector code by definition (a tuple of behaviors; with the settings for `chooser`):
# its source and function.
_COMPILED: dict[Hashable, tuple[str, Callable[..., Any]]] = {}
_COMPILED_LIMIT = 256


def _lit(value: float) -> str:
    """A float as an exact Python literal (repr round-trips), parenthesised when negative."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"not a finite constant: {value}")
    text = repr(value)
    return f"({text})" if text.startswith("-") else text


_NAMESPACE: dict[str, Any] = {
    **rules.FLOAT_NAMES,
    "_float": float,
    "_sum": sum,
    "_zip": zip,
}


class _Code:
    """Straight-line code under construction; an expression seen before reuses its variable."""

    def __init__(self, prefix: str, indent: str, namespace: dict[str, Any]) -> None:
        self.lines: list[str] = []
        self.names: dict[str, str] = {}
        self.prefix = prefix
        self.indent = indent
        self.namespace = namespace

    def let(self, expression: str) -> str:
        if expression.isidentifier():
            return expression
        name = self.names.get(expression)
        if name is None:
            name = f"{self.prefix}{len(self.names)}"
            self.names[expression] = name
            self.lines.append(f"{self.indent}{name} = {expression}")
        return name

    def constant(self, value: object, hint: str) -> str:
        name = f"_{hint}{len(self.namespace)}"
        self.namespace[name] = value
        return name


@functools.cache
def statements(rule: Callable[..., Any]) -> tuple[ast.stmt, ...]:
    """A rule's body without its docstring: assignments, then one return."""
    (function,) = ast.parse(textwrap.dedent(inspect.getsource(rule))).body
    body = function.body  # type: ignore[attr-defined]
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return tuple(body)


@functools.cache
def _form(primitive: str) -> tuple[tuple[str, ...], ast.expr]:
    params, text = rules.FLOAT_FORMS[primitive]
    return params, ast.parse(text, mode="eval").body


class _Inliner(ast.NodeTransformer):
    """A rule's expression with its names replaced: parameters and the rule's locals by the code
    given for them, rules.py's constants by their values, primitive calls by their float forms."""

    def __init__(self, names: dict[str, str], code: _Code) -> None:
        self.names = names
        self.code = code

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.names:
            return ast.parse(self.names[node.id], mode="eval").body
        value = getattr(rules, node.id, None)
        if isinstance(value, float):  # HUGE, LOGIT_EPSILON
            return ast.Constant(value)
        return node  # a name of the float forms' namespace (_exp, _INF...)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        if not (isinstance(node.func, ast.Name) and node.func.id in rules.FLOAT_FORMS):
            return self.generic_visit(node)  # a float form's own call (_exp, _pow...)
        # each argument bound to a variable first: a form may use it more than once
        args = [_bound(ast.unparse(self.visit(arg)), self.code) for arg in node.args]
        if node.func.id == "power" and args[1] == "1.0":
            return ast.parse(args[0], mode="eval").body  # x ** 1 is x, exactly
        if node.func.id == "at_least" and args[1].strip("()") == "-_INF":
            return ast.parse(args[0], mode="eval").body  # nothing is below -inf
        params, form = _form(node.func.id)
        return _Inliner(dict(zip(params, args, strict=True)), self.code).visit(copy.deepcopy(form))


def _bound(expression: str, code: _Code) -> str:
    """A name or a constant as it is; anything else bound to a variable."""
    plain = expression.strip("()")
    with contextlib.suppress(ValueError):
        float(plain)
        return expression
    if plain in ("_INF", "-_INF"):
        return expression
    return code.let(expression)


def inline(rule: Callable[..., Any], args: dict[str, str], code: _Code) -> str:
    """The code of `rule(**args)` for floats (args: code for each parameter), its assignments
    bound as variables in `code`; returns the expression of its result."""
    names = dict(args)
    for statement in statements(rule):
        value = copy.deepcopy(statement.value)  # type: ignore[attr-defined]
        expression = ast.unparse(_Inliner(names, code).visit(value))
        if isinstance(statement, ast.Return):
            return expression
        (target,) = statement.targets  # type: ignore[attr-defined]
        names[target.id] = code.let(expression)
    raise UtilityError(f"rules.py: {rule.__name__} has no return")


def _code_of(value: Any, code: _Code) -> str:
    """A parameter as code: a float literal (or +-inf), a list as a namespace constant."""
    if isinstance(value, list):
        return code.constant(value, "points")
    value = float(value)
    if math.isinf(value):
        return "_INF" if value > 0 else "(-_INF)"
    return _lit(value)


def curve_expression(curve: Curve, x: str, code: _Code, clean: bool = False) -> str:
    """An expression for curve(x) in [0, 1], with its sub-expressions bound in `code`: the steps
    of rules.py for this curve (see its docstring).

    clean: x is known to be in [0, 1e30] (no NaN, no inf), which lets the saturating curve skip
    its domain clamp and NaN check.
    """
    u = x
    ranged = curve.input_min is not None and curve.input_max is not None
    if ranged:
        scale = 1.0 / (curve.input_max - curve.input_min)  # type: ignore[operator]
        low = _lit(curve.input_min)  # type: ignore[arg-type]
        args = {"x": x, "low": low, "scale": _lit(scale), "floor": "0.0", "ceiling": "1.0"}
        u = code.let(inline(rules.normalised, args, code))
    # a range's [0, 1] is inside the saturating domain: no second clamp
    if (
        curve.domain is not None
        and not clean
        and not (ranged and curve.domain[0] <= 0.0 and curve.domain[1] >= 1.0)
    ):
        low, high = curve.domain
        u = code.let(inline(rules.clamped, {"u": u, "low": _lit(low), "high": _lit(high)}, code))
    params = {name: _code_of(value, code) for name, value in curve.shape_params().items()}
    y = inline(rules.SHAPES[curve.family], {"u": u, **params}, code)
    if curve.invert:
        y = inline(rules.inverted, {"y": code.let(y), "sign": "(-1.0)", "shift": "1.0"}, code)
    if clean and curve.bounded:
        return y
    score = code.let(y)
    if curve.bounded and curve.domain is not None:
        return f"({score} if {score} == {score} else 0.0)"  # in [0, 1] unless NaN
    return inline(rules.finished, {"y": score}, code)


def compile_function(source: str, namespace: dict[str, Any], name: str) -> Callable[..., Any]:
    exec(compile(source, f"<npc_mind.utility {name}>", "exec"), namespace)
    return namespace[name]


@functools.lru_cache(maxsize=1024)  # equal curves (e.g. one definition loaded per NPC) share it
def compile_curve(curve: Curve) -> Callable[[float], float]:
    """curve(x) for one float, as generated code (see the module docstring)."""
    namespace = dict(_NAMESPACE)
    code = _Code("v", "    ", namespace)
    result = curve_expression(curve, "x", code)
    source = "\n".join(["def curve(x):", *code.lines, f"    return {result}", ""])
    function = compile_function(source, namespace, "curve")
    function.source = source  # type: ignore[attr-defined]
    return function


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
        self.source, self.function = self._compiled(self.behaviors, "scores", dict(_NAMESPACE), None)

    def scores(self, context: Mapping[str, Any]) -> Scores:
        return self.function(context, self)

    def chooser(self, key: Hashable, decision: list[str], names: dict[str, Any]) -> Callable[..., int]:
        """The scoring with `decision` after it, as one function `pick(ctx, _owner, st, now,
        allowed)`: `decision` is lines reading the scores as `_sc` and ending in `return`
        (`selector.one_decision_code`), `names` what they use, `key` what else they depend on
        (the settings). Not for per-target behaviors. Shared, like `function`, per definition."""
        return self._compiled(("pick", self.behaviors, key), "pick", {**_NAMESPACE, **names}, decision)[1]

    def _compiled(
        self, key: Hashable, name: str, namespace: dict[str, Any], decision: list[str] | None
    ) -> tuple[str, Callable[..., Any]]:
        """The generated function `name` and its source, from the cache when `key` is in it (an
        unhashable definition is compiled for this selector only)."""
        try:
            cached = _COMPILED.get(key)
        except TypeError:
            cached = None
        if cached is None:
            source = self._generate(namespace, decision)
            cached = (source, compile_function(source, namespace, name))
            if len(_COMPILED) >= _COMPILED_LIMIT:
                _COMPILED.clear()
            with contextlib.suppress(TypeError):
                _COMPILED[key] = cached
        return cached

    # --- code generation -----------------------------------------------------------------------
    def _generate(self, namespace: dict[str, Any], decision: list[str] | None = None) -> str:
        """`scores(ctx, _owner)`, or with `decision` `pick(ctx, _owner, st, now, allowed)`."""
        inputs = {key: f"x{i}" for i, key in enumerate(self.scalar_keys)}
        inputs |= {key: f"y{i}" for i, key in enumerate(self.target_keys)}
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
            lists = [f"p{i}" for i in range(len(self.target_keys))]
            lines.append(f"    {', '.join(lists)}, = _owner._targets(ctx)")
            total = " + ".join([*names, *(f"_sum({p})" for p in lists)])
            report = f"        _owner._report_nan({values}, ({', '.join(lists)},))"
            lines += [f"    _s = {total}", "    if _s != _s:", report]
            lines += self._body(inputs, namespace, clean=False, targeted=True)
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
                inputs, namespace, clean=True, targeted=False, indent="        ", then=decision
            )
        lines += nan_check
        lines += self._body(inputs, namespace, clean=False, targeted=False, then=decision)
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
        namespace: dict[str, Any],
        *,
        clean: bool,
        targeted: bool,
        indent: str = "    ",
        then: list[str] | None = None,
    ) -> list[str]:
        outer = _Code("a" if clean else "g", indent, namespace)
        inner = _Code("t", indent + "    ", namespace)
        rows: dict[tuple[str, Curve], str] = {}

        def row(key: str, curve: Curve) -> str:
            name = rows.get((key, curve))
            if name is None:
                code = inner if key in self.batch.per_target_keys else outer
                name = rows[key, curve] = code.let(curve_expression(curve, inputs[key], code, clean))
            return name

        results: list[str] = []
        appends: list[str] = []
        for b, behavior in enumerate(self.behaviors):
            code = inner if behavior.targeted else outer
            total = code.let(self._behavior_expression(behavior, row, code))
            if behavior.targeted:
                results.append(f"r{b}")
                appends.append(f"{inner.indent}r{b}.append({total})")
            else:
                results.append(total)
        lines = list(outer.lines)
        if targeted and appends:
            targeted_names = [f"r{b}" for b, behavior in enumerate(self.behaviors) if behavior.targeted]
            lines += [f"{indent}{name} = []" for name in targeted_names]
            elements = ", ".join(f"y{i}" for i in range(len(self.target_keys)))
            lists = ", ".join(f"p{i}" for i in range(len(self.target_keys)))
            lines.append(f"{indent}for {elements}, in _zip({lists}):")
            lines += [*inner.lines, *appends]
        if then is None:
            lines.append(f"{indent}return [{', '.join(results)}]")
        else:  # the scores as `_sc`, then the decision's lines
            lines += [f"{indent}_sc = [{', '.join(results)}]", *(f"{indent}{line}" for line in then)]
        return lines

    @staticmethod
    def _behavior_expression(behavior: Behavior, row: Callable[[str, Curve], str], code: _Code) -> str:
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
            terms = [name if w == 1.0 else f"{name} * {_lit(w)}" for name, w in folded.items() if w != 0.0]
            total = " + ".join(terms) or "0.0"
        else:
            # f = s ** w; f' = f + (1 - f)(1 - 1/n) f; the f' multiplied in order, then the weight.
            compensation = 1.0 - 1.0 / len(considerations)
            factors = []
            for c in considerations:
                f = row(c.input_key, c.curve)
                if c.weight != 1.0:
                    f = code.let(f"{f} ** {_lit(c.weight)}")
                if compensation != 0.0:
                    f = code.let(f"{f} + (1.0 - {f}) * {_lit(compensation)} * {f}")
                factors.append(f)
            total = " * ".join([*factors, _lit(behavior.weight)])
        vetoes = [
            f"{row(c.input_key, c.curve)} < {_lit(c.veto_below)}"
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
            return [float(item) for item in value]  # type: ignore[attr-defined]
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
