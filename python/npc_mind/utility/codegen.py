"""The one code generator of utility selection: the rules of `rules.py` made into straight-line
Python, for one float at a time (`Code`, `inline`) or for numpy arrays written into reused buffers
(`ArrayCode`), and compiled by `compile_function`.

Three callers describe what to generate: `scalar.py` (one curve, a selector's per-NPC scoring),
`curves.py` (a family group of a batch) and `selector.py` (the per-NPC anti-dithering decision).

Generated code is meant to be read and stepped through:

- each source is registered with `linecache` under a fake filename that says what it is (e.g.
  ``<npc_mind.utility pick: attack|flee>``), so a traceback shows the failing line and a debugger
  lists the code; the entry lives as long as the function does;
- variables are named after what they hold (an input, a consideration's curve, a behavior), as
  sanitised unique identifiers;
- `GENERATE` is False when the environment variable ``NPC_MIND_NO_CODEGEN`` is set to anything but
  ``0`` or empty (read once, at import): every path then calls the rule functions of `rules.py`
  directly instead (slower, the same numbers and choices), so a breakpoint in a rule is hit from
  the per-NPC and the batch path alike (docs/contributing.md).
"""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
import inspect
import keyword
import math
import os
import re
import textwrap
from collections.abc import Callable, Iterable
from typing import Any, cast

import numpy as np

from npc_mind.utility import rules
from npc_mind.utility.errors import UtilityError
from npc_mind.utility.sources import compile_function, label_of, restore_sources

__all__ = [
    "GENERATE",
    "ArrayCode",
    "Code",
    "Names",
    "compile_function",
    "inline",
    "label_of",
    "restore_sources",
]

#: Whether the fast paths run generated code (the default) or call the rules directly.
GENERATE = os.environ.get("NPC_MIND_NO_CODEGEN", "") in ("", "0")


# --- names ----------------------------------------------------------------------------------------
class Names:
    """The variable names of one generated function: each after what it holds, made an identifier
    (non-identifier characters become _, a leading digit or keyword gets one more _), and unique
    (a second `enemy_distance` becomes `enemy_distance_2`). `reserved` are the names the code uses
    for itself (parameters, namespace entries)."""

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self.taken: set[str] = set(reserved)

    def new(self, hint: str) -> str:
        base = identifier(hint)
        name, n = base, 1
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name


def identifier(text: str) -> str:
    """`text` as a Python identifier that does not start with _ (the namespace's own names do)."""
    name = re.sub(r"\W", "_", text).strip("_") or "v"
    if name[0].isdigit() or keyword.iskeyword(name) or not name.isidentifier():
        name = f"v_{name}"
    return name


# --- the float path -------------------------------------------------------------------------------
def literal(value: float) -> str:
    """A float as an exact Python literal (repr round-trips), parenthesised when negative."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"not a finite constant: {value}")
    text = repr(value)
    return f"({text})" if text.startswith("-") else text


def parameter(value: Any, code: Code, hint: str) -> str:
    """A parameter as code: a float literal (or +-inf), a list as a namespace constant."""
    if isinstance(value, list):
        return code.constant(value, hint)
    value = float(value)
    if math.isinf(value):
        return "_INF" if value > 0 else "(-_INF)"
    return literal(value)


class Code:
    """Straight-line float code under construction, at one indent; an expression seen before reuses
    its variable. `names` is shared by every `Code` of one function; `namespace` is its globals."""

    def __init__(self, names: Names, indent: str, namespace: dict[str, Any]) -> None:
        self.lines: list[str] = []
        self.known: dict[str, str] = {}
        self.names = names
        self.indent = indent
        self.namespace = namespace

    def let(self, expression: str, hint: str) -> str:
        """A variable named after `hint` holding `expression` (the expression itself if a name)."""
        if expression.isidentifier():
            return expression
        name = self.known.get(expression)
        if name is None:
            name = self.known[expression] = self.names.new(hint)
            self.lines.append(f"{self.indent}{name} = {expression}")
        return name

    def constant(self, value: object, hint: str) -> str:
        name = f"_{identifier(hint)}{len(self.namespace)}"
        self.namespace[name] = value
        return name


@functools.cache
def statements(rule: Callable[..., Any]) -> tuple[ast.stmt, ...]:
    """A rule's body without its docstring: assignments, then one return."""
    (function,) = ast.parse(textwrap.dedent(inspect.getsource(rule))).body
    body = function.body  # type: ignore[attr-defined]  # a rule's source is one function definition
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

    def __init__(self, names: dict[str, str], code: Code, hint: str) -> None:
        self.names = names
        self.code = code
        self.hint = hint

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.names:
            return ast.parse(self.names[node.id], mode="eval").body
        value = getattr(rules, node.id, None)
        if isinstance(value, float):  # HUGE, LOGIT_EPSILON
            return ast.Constant(value)
        return node  # a name of the float forms' namespace (_exp, _INF...)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        if not (isinstance(node.func, ast.Name) and node.func.id in rules.FLOAT_FORMS):
            return cast(ast.expr, self.generic_visit(node))  # a float form's own call (_exp, _pow...)
        primitive = node.func.id
        # each argument bound to a variable first: a form may use it more than once
        args = [
            _bound(ast.unparse(self.visit(arg)), self.code, f"{self.hint}_{primitive}_in")
            for arg in node.args
        ]
        if primitive == "power" and args[1] == "1.0":
            return ast.parse(args[0], mode="eval").body  # x ** 1 is x, exactly
        if primitive == "at_least" and args[1].strip("()") == "-_INF":
            return ast.parse(args[0], mode="eval").body  # nothing is below -inf
        params, form = _form(primitive)
        return _Inliner(dict(zip(params, args, strict=True)), self.code, self.hint).visit(copy.deepcopy(form))


def _bound(expression: str, code: Code, hint: str) -> str:
    """A name or a constant as it is; anything else bound to a variable."""
    plain = expression.strip("()")
    with contextlib.suppress(ValueError):
        float(plain)
        return expression
    if plain in ("_INF", "-_INF"):
        return expression
    return code.let(expression, hint)


def inline(rule: Callable[..., Any], args: dict[str, str], code: Code, hint: str = "") -> str:
    """The code of `rule(**args)` for floats (args: code for each parameter), its assignments
    bound as variables in `code` (named `hint` and the rule's own local name); returns the
    expression of its result."""
    hint = hint or rule.__name__
    names = dict(args)
    for statement in statements(rule):
        value = copy.deepcopy(statement.value)  # type: ignore[attr-defined]  # a rule body holds only assignments and a return
        expression = ast.unparse(_Inliner(names, code, hint).visit(value))
        if isinstance(statement, ast.Return):
            return expression
        (target,) = statement.targets  # type: ignore[attr-defined]  # a rule body holds only assignments and a return
        names[target.id] = code.let(expression, f"{hint}_{target.id}")
    raise UtilityError(f"rules.py: {rule.__name__} has no return")


# --- the array path -------------------------------------------------------------------------------
#: A batch's (M, 1) parameter columns are spread to the work arrays' full (M, L) shape up to this
#: size: numpy runs a (M, L) op (M, 1) operand several times slower than (M, L) op (M, L) while the
#: arrays fit in cache (5x at 32 x 1,000 float64); beyond, the extra reads cost more than they save.
WIDEN_BYTES = 1 << 19


def _widen(
    namespace: dict[str, Any], columns: dict[str, np.ndarray], width: list[Any], shape: tuple[int, ...]
) -> None:
    """Point a generated batch function's parameter columns at copies spread to `shape` (or back
    at the columns themselves for large shapes); the same values, so the same results."""
    if width[0] == shape:
        return
    width[0] = shape
    for name, column in columns.items():
        spread = (
            len(shape) == 2
            and shape[0] == column.shape[0]
            and shape[0] * shape[1] * column.itemsize <= WIDEN_BYTES
        )
        namespace[name] = np.ascontiguousarray(np.broadcast_to(column, shape)) if spread else column


_UFUNCS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide", ast.Pow: "power"}


class ArrayCode:
    """Straight-line numpy code under construction (a batch's family group: the same operations
    in the same order as the rules, each written into a buffer it keeps, as fresh memory is slower
    to write than memory in cache). Values derived from the input are arrays written into buffers
    t0, t1... (reused: a buffer holding an intermediate result nobody else reads is written over
    by the next operation); a parameter that every curve of the group shares is a literal (so
    x ** 1 is left out for a group of linear curves, as the per-NPC code leaves it out), others
    (M, 1) columns in the namespace named after the parameter."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.lines: list[str] = []
        self.namespace = namespace
        self.buffers = 0
        self.arrays: set[str] = {"x"}
        self.spare: set[str] = set()  # buffers holding a value read once, by the next operation

    def constant(self, value: Any, hint: str = "c") -> str:
        """A parameter: one shared float as a literal, else an (M, 1) column in the namespace."""
        column = np.asarray(value)
        if column.ndim == 2 and column.size and (column == column.flat[0]).all():
            value = float(column.flat[0])
        if isinstance(value, float):
            if value == -np.inf:
                return "(-_INF)"
            return "_INF" if value == np.inf else repr(value)
        name = f"_{identifier(hint)}{len(self.namespace)}"
        self.namespace[name] = value
        return name

    def target(self, operands: list[str]) -> str:
        for operand in operands:
            if operand in self.spare:
                return operand
        name = f"t{self.buffers}"
        self.buffers += 1
        self.arrays.add(name)
        self.spare.add(name)
        return name

    def expression(self, node: ast.expr, names: dict[str, str]) -> str:
        if isinstance(node, ast.Name):
            if node.id in names:
                return names[node.id]
            value = getattr(rules, node.id)
            return repr(value)  # HUGE, LOGIT_EPSILON
        if isinstance(node, ast.Constant):
            return repr(float(cast(float, node.value)))  # a rule's constants are numbers
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operand = self.expression(node.operand, names)
            if operand not in self.arrays:
                return f"(-{operand})"
            out = self.target([operand])
            self.lines.append(f"_np.negative({operand}, out={out})")
            return out
        if isinstance(node, ast.BinOp) and type(node.op) in _UFUNCS:
            left, right = self.expression(node.left, names), self.expression(node.right, names)
            if left not in self.arrays and right not in self.arrays:
                return (
                    f"({left} {ast.unparse(ast.BinOp(ast.Name('a'), node.op, ast.Name('b')))[2:-2]} {right})"
                )
            if isinstance(node.op, ast.Pow) and right == "1.0":
                return left
            out = self.target([left, right])
            self.lines.append(f"_np.{_UFUNCS[type(node.op)]}({left}, {right}, out={out})")
            return out
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in rules.ARRAY_FORMS
        ):
            args = [self.expression(arg, names) for arg in node.args]
            if node.func.id == "power" and args[1] == "1.0":
                return args[0]  # x ** 1 is x, exactly
            if node.func.id == "at_least" and args[1] == "(-_INF)":
                return args[0]  # nothing is below -inf
            out = self.target(args[:1])
            self.lines.append(f"_A_{node.func.id}({', '.join(args)}, out={out})")
            return out
        raise ValueError(f"rules.py: {ast.unparse(node)} is not something the array code knows")

    def rule(self, rule: Callable[..., Any], args: dict[str, str]) -> str:
        """The code of `rule(**args)` on arrays; returns the name holding its result."""
        names = dict(args)
        body = statements(rule)
        reads = [node.id for statement in body for node in ast.walk(statement) if isinstance(node, ast.Name)]
        for name, value in args.items():
            if reads.count(name) > 1:
                self.spare.discard(value)  # read more than once: not to be written over
        self.lines.append(f"# rules.{rule.__name__}")
        for statement in body:
            result = self.expression(copy.deepcopy(statement.value), names)  # type: ignore[attr-defined]  # a rule body holds only assignments and a return
            if isinstance(statement, ast.Return):
                return result
            (target,) = statement.targets  # type: ignore[attr-defined]  # a rule body holds only assignments and a return
            names[target.id] = result
            if reads.count(target.id) > 2:  # its assignment and more than one read
                self.spare.discard(result)
        raise ValueError(f"rules.py: {rule.__name__} has no return")

    def function(self, result: str, label: str) -> Callable[..., None]:
        """`run(x, out, buffers)`: the steps' result written into out."""
        lines = list(self.lines)
        if result in self.spare:  # the last buffer is out itself
            lines = [re.sub(rf"\b{result}\b", "out", line) for line in lines]
            result = "out"
        if result != "out":
            lines.append(f"_np.copyto(out, {result})")
        names = ", ".join(f"t{i}" for i in range(self.buffers))
        head = [f"    {names}, = buffers[:{self.buffers}]"] if self.buffers else []
        source = "\n".join(
            ["def run(x, out, buffers):", *head, *(f"    {line}" for line in lines), "    return", ""]
        )
        namespace = {**self.namespace, "_np": np, "_INF": np.inf}
        namespace.update({f"_A_{name}": form for name, form in rules.ARRAY_FORMS.items()})
        run = compile_function(source, namespace, "run", label)
        run.buffers = self.buffers  # type: ignore[attr-defined]  # a function attribute, read by the caller
        columns = {
            name: value
            for name, value in self.namespace.items()
            if isinstance(value, np.ndarray) and value.ndim == 2 and value.shape[1] == 1
        }  # the (M, 1) parameter columns (a table curve's points are other arrays)
        run.widen = functools.partial(_widen, namespace, columns, [None])  # type: ignore[attr-defined]  # read by the caller
        return run
