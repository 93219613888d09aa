"""The batch path's code for a group of curves of one family, made from the rules in `rules.py`.

Calling a rule on arrays works (`rules.saturating(u, k)`), but each operator allocates a new
array: on a (32, 1000) float64 stack that is three times the work done in place, as fresh memory
is slower to write than memory in cache. So a family group compiles its steps (range, domain,
shape, invert, clamp) once into numpy calls that write into buffers it keeps: the same operations
in the same order as the rules (and as the per-NPC code `scalar.py` makes from them), with a
parameter that every curve of the group shares written as a constant (so x ** 1 is left out for a
group of linear curves, as the per-NPC code leaves it out).
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from npc_mind.utility import rules
from npc_mind.utility.scalar import statements

_UFUNCS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide", ast.Pow: "power"}


class ArrayCode:
    """Straight-line numpy code under construction. Values derived from the input are arrays
    written into buffers t0, t1...; a buffer holding an intermediate result nobody else reads is
    written over by the next operation."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.lines: list[str] = []
        self.namespace = namespace
        self.buffers = 0
        self.arrays: set[str] = {"x"}
        self.spare: set[str] = set()  # buffers holding a value read once, by the next operation

    def constant(self, value: Any) -> str:
        """A parameter: one shared float as a literal, else an (M, 1) column in the namespace."""
        column = np.asarray(value)
        if column.ndim == 2 and column.size and (column == column.flat[0]).all():
            value = float(column.flat[0])
        if isinstance(value, float):
            if value == -np.inf:
                return "(-_INF)"
            return "_INF" if value == np.inf else repr(value)
        name = f"_c{len(self.namespace)}"
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
            return repr(float(node.value))
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
        for statement in body:
            result = self.expression(copy.deepcopy(statement.value), names)  # type: ignore[attr-defined]
            if isinstance(statement, ast.Return):
                return result
            (target,) = statement.targets  # type: ignore[attr-defined]
            names[target.id] = result
            if reads.count(target.id) > 2:  # its assignment and more than one read
                self.spare.discard(result)
        raise ValueError(f"rules.py: {rule.__name__} has no return")

    def function(self, result: str) -> Callable[..., None]:
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
        exec(compile(source, "<npc_mind.utility batch>", "exec"), namespace)
        run = namespace["run"]
        run.source = source
        run.buffers = self.buffers
        return run
