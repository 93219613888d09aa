"""Response curves: map a consideration's raw input to a score in [0, 1].

Every curve is a small immutable object that works on one float or on numpy arrays, in four steps:

1. optional input range: u = clamp((x - input_min) / (input_max - input_min), 0, 1), else u = x;
2. the family's shape y = f(u) (parameters below);
3. `invert`: y = 1 - y;
4. y is clamped to [0, 1]; a NaN input gives 0 (never propagated; the selector reports it);
   +-inf is clamped by an input range; without one it gives the shape's limit (0 where undefined).

Families (`type_name` is the `curve_type` of the data format): saturating, linear, polynomial,
logistic, logit, normal, sine, step and table, each described once in `families.FAMILIES` (formula,
parameters with their defaults and bounds), which the classes below take their defaults from.

`table` is what a Godot `Curve` resource becomes: the addon bakes the Hermite curve to points once
instead of sampling the engine per tick.

Each step and each family's shape is written once, in `rules.py`, as a function of floats or
arrays; this module holds the curves' parameters and their checks. `CurveStack` evaluates many
curves at once: one pass per family over a stacked (M, L) array (numpy code made from the rules,
`codegen.ArrayCode`), which is what makes batched scoring fast. A curve called on an array is a stack of
one; called on one number it runs plain-Python code made from the same rules (`scalar.py`), since
numpy's per-call overhead would dwarf the work.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, NoReturn

import numpy as np
import numpy.typing as npt

from npc_mind.utility import codegen, rules
from npc_mind.utility.codegen import ArrayCode
from npc_mind.utility.errors import UtilityDefinitionError, definition_number
from npc_mind.utility.families import FAMILIES
from npc_mind.utility.scalar import float_curve

FloatArray = npt.NDArray[np.floating]
# The float type of a stack: float64 (the default, exact) or float32 (faster batches).
DType = type[np.float64] | type[np.float32]

_BASE_FIELDS = frozenset({"input_min", "input_max", "invert"})
_MAX_K = 1e12  # a saturating k beyond this would not reach 1 even at rules.HUGE
_SCALARS = (float, int, np.floating, np.integer)  # one number: the plain-Python path


@dataclass(frozen=True, kw_only=True)
class Curve:
    """Base of all curves: the optional input range and the invert flag shared by every family."""

    input_min: float | None = None
    input_max: float | None = None
    invert: bool = False

    type_name: ClassVar[str] = ""
    family: ClassVar[str] = ""
    # The family's input domain, clamped before its shape (None: any input).
    domain: ClassVar[tuple[float, float] | None] = None

    def shape_params(self) -> dict[str, Any]:
        """The parameters of the family's function in `rules.py` (after u), from this curve's."""
        return {name: getattr(self, name) for name in ("m", "k", "c", "b")}

    @property
    def bounded(self) -> bool:
        """Whether every finite input scores inside [0, 1] before the last clamp."""
        return False

    def __post_init__(self) -> None:
        if (self.input_min is None) != (self.input_max is None):
            self._fail("input_min and input_max must be given together")
        if self.input_min is not None and self.input_max is not None:
            low = self._coerce("input_min", self.input_min)
            high = self._coerce("input_max", self.input_max)
            if not low < high:
                self._fail(f"input_min ({low}) must be below input_max ({high})")
            if not _finite_inverse(high - low):  # the kernels scale by 1 / (max - min)
                self._fail(f"input_min and input_max ({low}, {high}) span too narrow or too wide a range")
        if not isinstance(self.invert, bool):
            self._fail(f"invert must be a bool, got {self.invert!r}")
        for name in self.param_names():
            if name != "points":
                self._coerce(name, getattr(self, name))
        self._validate()

    @classmethod
    def param_names(cls) -> tuple[str, ...]:
        """The family's own parameters, in declaration order (the data format's `curve_params`)."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.name not in _BASE_FIELDS)

    def params(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.param_names()}

    def __call__(self, x: float | npt.ArrayLike) -> float | FloatArray:
        """The score of one input (a float) or of an array of inputs (an array of the same shape).

        One number goes through the generated plain-Python kernel (`scalar.compile_curve`), an
        array through the numpy one; both do the same arithmetic (with `codegen.GENERATE` off,
        both call the rules instead).
        """
        if isinstance(x, _SCALARS):
            return self._scalar(float(x))
        values = np.asarray(x, dtype=np.float64)
        out = self._single_stack.evaluate(values.reshape(1, -1))
        return float(out[0, 0]) if values.ndim == 0 else out.reshape(values.shape)

    @cached_property
    def _single_stack(self) -> CurveStack:
        return CurveStack([self])

    @cached_property
    def _scalar(self) -> Callable[[float], float]:
        return float_curve(self)

    def _validate(self) -> None:
        """Family-specific parameter checks; the base already made every parameter a finite float."""

    def _coerce(self, name: str, value: object) -> float:
        number = definition_number(value)
        if number is None:
            self._fail(f"{name} must be a number, got {value!r}")
        if not math.isfinite(number):
            self._fail(f"{name} must be finite, got {number}")
        object.__setattr__(self, name, number)
        return number

    def _fail(self, message: str) -> NoReturn:
        raise UtilityDefinitionError(f"{self.type_name} curve: {message}")


@dataclass(frozen=True)
class Saturating(Curve):
    """Diminishing returns from the design source: u / (u + k). k in (0, 1e12]: the input scoring 0.5."""

    k: float = FAMILIES["saturating"].default("k")

    type_name: ClassVar[str] = "saturating"
    family: ClassVar[str] = "saturating"
    domain: ClassVar[tuple[float, float] | None] = (0.0, rules.HUGE)  # negative counts as 0

    def shape_params(self) -> dict[str, Any]:
        return {"k": self.k}

    @property
    def bounded(self) -> bool:
        return True

    def _validate(self) -> None:
        if not 0 < self.k <= _MAX_K:
            self._fail(f"k must be in (0, {_MAX_K:g}], got {self.k}")


@dataclass(frozen=True)
class Linear(Curve):
    """y = m (u - c) + b: slope m, x shift c, y offset b (all finite)."""

    m: float = FAMILIES["linear"].default("m")
    c: float = FAMILIES["linear"].default("c")
    b: float = FAMILIES["linear"].default("b")

    type_name: ClassVar[str] = "linear"
    family: ClassVar[str] = "polynomial"

    @property
    def k(self) -> float:
        return 1.0

    def shape_params(self) -> dict[str, Any]:
        return {"m": self.m, "k": 1.0, "c": self.c, "b": self.b, "floor": -math.inf}


@dataclass(frozen=True)
class Polynomial(Curve):
    """y = m (u - c)^k + b: exponent k > 0; for a fractional k a negative u - c counts as 0."""

    m: float = FAMILIES["polynomial"].default("m")
    k: float = FAMILIES["polynomial"].default("k")
    c: float = FAMILIES["polynomial"].default("c")
    b: float = FAMILIES["polynomial"].default("b")

    type_name: ClassVar[str] = "polynomial"
    family: ClassVar[str] = "polynomial"

    def shape_params(self) -> dict[str, Any]:
        floor = 0.0 if self.k != round(self.k) else -math.inf  # a fractional power of a negative: 0
        return {"m": self.m, "k": self.k, "c": self.c, "b": self.b, "floor": floor}

    def _validate(self) -> None:
        if self.k <= 0:
            self._fail(f"k (the exponent) must be > 0, got {self.k}")


@dataclass(frozen=True)
class Logistic(Curve):
    """y = k / (1 + e^(-m (u - c))) + b: steepness m (negative falls), height k, midpoint c, offset b."""

    m: float = FAMILIES["logistic"].default("m")
    k: float = FAMILIES["logistic"].default("k")
    c: float = FAMILIES["logistic"].default("c")
    b: float = FAMILIES["logistic"].default("b")

    type_name: ClassVar[str] = "logistic"
    family: ClassVar[str] = "logistic"


@dataclass(frozen=True)
class Logit(Curve):
    """y = m ln(z / (1 - z)) + b with z = u - c kept inside (0, 1): the logistic's inverse."""

    m: float = FAMILIES["logit"].default("m")
    c: float = FAMILIES["logit"].default("c")
    b: float = FAMILIES["logit"].default("b")

    type_name: ClassVar[str] = "logit"
    family: ClassVar[str] = "logit"

    def shape_params(self) -> dict[str, Any]:
        return {"m": self.m, "c": self.c, "b": self.b}


@dataclass(frozen=True)
class Normal(Curve):
    """A bell: y = m e^(-(u - c)^2 / (2 k^2)) + b: height m, width k > 0, centre c, offset b."""

    m: float = FAMILIES["normal"].default("m")
    k: float = FAMILIES["normal"].default("k")
    c: float = FAMILIES["normal"].default("c")
    b: float = FAMILIES["normal"].default("b")

    type_name: ClassVar[str] = "normal"
    family: ClassVar[str] = "normal"

    def shape_params(self) -> dict[str, Any]:
        return {"m": self.m, "inverse_k": 1.0 / self.k, "c": self.c, "b": self.b}

    def _validate(self) -> None:
        if self.k <= 0 or not _finite_inverse(self.k):
            self._fail(f"k (the width) must be > 0 with a finite 1 / k, got {self.k}")


@dataclass(frozen=True)
class Sine(Curve):
    """y = m sin(pi k (u - c)) + b: amplitude m, k half waves per unit, shift c, offset b."""

    m: float = FAMILIES["sine"].default("m")
    k: float = FAMILIES["sine"].default("k")
    c: float = FAMILIES["sine"].default("c")
    b: float = FAMILIES["sine"].default("b")

    type_name: ClassVar[str] = "sine"
    family: ClassVar[str] = "sine"

    def shape_params(self) -> dict[str, Any]:
        return {"m": self.m, "frequency": math.pi * self.k, "c": self.c, "b": self.b}

    def _validate(self) -> None:
        if not math.isfinite(math.pi * self.k):
            self._fail(f"k must keep pi k finite, got {self.k}")


@dataclass(frozen=True)
class Step(Curve):
    """y = high if u >= threshold else low."""

    threshold: float = FAMILIES["step"].default("threshold")
    low: float = FAMILIES["step"].default("low")
    high: float = FAMILIES["step"].default("high")

    type_name: ClassVar[str] = "step"
    family: ClassVar[str] = "step"

    def shape_params(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "span": self.high - self.low, "low": self.low}

    @property
    def bounded(self) -> bool:
        return 0.0 <= self.low <= 1.0 and 0.0 <= self.high <= 1.0


@dataclass(frozen=True)
class Table(Curve):
    """Piecewise linear through (x, y) points (a baked Godot `Curve`), flat beyond the end points."""

    points: tuple[tuple[float, float], ...] = ((0.0, 0.0), (1.0, 1.0))

    type_name: ClassVar[str] = "table"
    family: ClassVar[str] = "table"

    def shape_params(self) -> dict[str, Any]:
        """One table alone (a stack of one): shift 0, the x values normalised onto [0, 1]."""
        xs, ys = zip(*self.points, strict=True)
        first, last = xs[0], xs[-1]
        inverse_span = 1.0 / (last - first)
        xp = [(x - first) * inverse_span for x in xs]
        slopes = [(ys[i + 1] - ys[i]) / (xp[i + 1] - xp[i]) for i in range(len(xp) - 1)]
        return {"first": first, "last": last, "inverse_span": inverse_span, "shift": 0.0, "xp": xp,
                "fp": list(ys), "slopes": slopes}  # fmt: skip

    @property
    def bounded(self) -> bool:
        return all(0.0 <= y <= 1.0 for _, y in self.points)

    def _validate(self) -> None:
        try:
            pairs = [[definition_number(value) for value in point] for point in self.points]
            if any(None in pair for pair in pairs):
                raise TypeError
            array = np.asarray(pairs, dtype=np.float64)
        except (TypeError, ValueError):
            self._fail(f"points must be (x, y) number pairs, got {self.points!r}")
        if array.ndim != 2 or array.shape[1] != 2 or array.shape[0] < 2:
            self._fail(f"points must be at least two (x, y) pairs, got shape {array.shape}")
        if not np.isfinite(array).all():
            self._fail("points must be finite")
        if not (np.diff(array[:, 0]) > 0).all():
            self._fail("point x values must be strictly increasing")
        if not _finite_inverse(float(array[-1, 0] - array[0, 0])):
            self._fail("point x values span too narrow or too wide a range")
        object.__setattr__(self, "points", tuple((float(x), float(y)) for x, y in array))


def _finite_inverse(span: float) -> bool:
    """A span the kernels can divide by: positive, finite, with a finite inverse."""
    return math.isfinite(span) and span > 0.0 and math.isfinite(1.0 / span)


CURVE_TYPES: dict[str, type[Curve]] = {
    cls.type_name: cls for cls in (Saturating, Linear, Polynomial, Logistic, Logit, Normal, Sine, Step, Table)
}


def _column(values: Sequence[float], dtype: DType) -> FloatArray:
    """One number per curve as an (M, 1) column, broadcasting over each row's inputs."""
    return np.array([[value] for value in values], dtype=dtype)


def _table_params(curves: Sequence[Curve], dtype: DType) -> dict[str, Any]:
    """`rules.table`'s parameters for a stack of tables: table i is rescaled onto [2i, 2i + 1],
    disjoint from the others, so all of them are one np.interp call."""
    tables = [np.asarray(curve.points, dtype=np.float64) for curve in curves]  # type: ignore[attr-defined]  # called with table curves only
    first = _column([table[0, 0] for table in tables], dtype)
    last = _column([table[-1, 0] for table in tables], dtype)
    inverse_span = 1.0 / (last - first)
    shift = np.multiply(2.0, np.arange(len(tables), dtype=dtype)[:, np.newaxis])
    xp = np.concatenate(
        [
            (table[:, 0].astype(dtype) - first[i]) * inverse_span[i] + shift[i]
            for i, table in enumerate(tables)
        ]
    )
    fp = np.concatenate([table[:, 1] for table in tables])
    return {"first": first, "last": last, "inverse_span": inverse_span, "shift": shift, "xp": xp, "fp": fp,
            "slopes": None}  # fmt: skip


class _FamilyGroup:
    """The curves of one family inside a stack: contiguous rows, parameters as (M, 1) columns,
    scored by the rules of `rules.py` (the same functions the per-NPC code is generated from)."""

    def __init__(self, rows: slice, curves: Sequence[Curve], dtype: DType) -> None:
        self.rows = rows
        first = curves[0]
        self.shape = rules.SHAPES[first.family]
        if first.family == "table":
            self.params = _table_params(curves, dtype)
        else:
            params = [curve.shape_params() for curve in curves]
            self.params = {name: _column([p[name] for p in params], dtype) for name in params[0]}
        self.domain = first.domain
        self.bounded = all(curve.bounded for curve in curves)  # finite input -> output in [0, 1]
        ranged = np.array([[curve.input_min is not None] for curve in curves])
        self.any_ranged = bool(ranged.any())
        low = np.array([[curve.input_min if curve.input_min is not None else 0.0] for curve in curves])
        high = np.array([[curve.input_max if curve.input_max is not None else 1.0] for curve in curves])
        self.range_low = low.astype(dtype)
        self.range_scale = (1.0 / (high - low)).astype(dtype)
        # Unranged rows pass through the same arithmetic unchanged: (x - 0) * 1, unclamped.
        self.clamp_low = np.where(ranged, 0.0, -np.inf).astype(dtype)
        self.clamp_high = np.where(ranged, 1.0, np.inf).astype(dtype)
        inverted = np.array([[curve.invert] for curve in curves])
        self.any_inverted = bool(inverted.any())
        self.invert_sign = np.where(inverted, -1.0, 1.0).astype(dtype)
        self.invert_shift = np.where(inverted, 1.0, 0.0).astype(dtype)

        self._runs: dict[tuple[bool, bool], Callable[..., None]] = {}
        self._buffers: list[FloatArray] = []  # the last input shape's (a new shape replaces them)
        self.dtype = dtype

    def _run(self, finish: bool, non_negative: bool) -> Callable[..., None]:
        """The group's steps (rules.py) as numpy code writing into buffers (`codegen.ArrayCode`),
        or with `codegen.GENERATE` off the rules themselves (`_run_by_rules`)."""
        if not codegen.GENERATE:
            return functools.partial(self._run_by_rules, finish, non_negative)
        code = ArrayCode({})
        u = "x"
        if self.any_ranged:
            args = {"low": self.range_low, "scale": self.range_scale, "floor": self.clamp_low,
                    "ceiling": self.clamp_high}  # fmt: skip
            names = {name: code.constant(value, f"range_{name}") for name, value in args.items()}
            u = code.rule(rules.normalised, {"x": u, **names})
        # non_negative: the caller checked x >= 0 with no NaN, so the domain [0, 1e30] clamp is
        # skipped (+inf then gives NaN, and the caller redoes the stack; see `CurveStack.evaluate`)
        if self.domain is not None and not non_negative:
            low, high = map(code.constant, self.domain)
            u = code.rule(rules.clamped, {"u": u, "low": low, "high": high})
        params = {name: code.constant(value, name) for name, value in self.params.items()}
        y = code.rule(self.shape, {"u": u, **params})  # every shape keeps a NaN input NaN
        if self.any_inverted:
            sign, shift = code.constant(self.invert_sign, "sign"), code.constant(self.invert_shift, "shift")
            y = code.rule(rules.inverted, {"y": y, "sign": sign, "shift": shift})
        if finish or not self.bounded:
            y = code.rule(rules.finished, {"y": y})
        rows = self.rows.stop - self.rows.start
        label = f"batch: {self.shape.__name__} x{rows}{', finished' if finish else ''}"
        return code.function(y, f"{label}{', non-negative' if non_negative else ''}")

    def _run_by_rules(
        self, finish: bool, non_negative: bool, x: FloatArray, out: FloatArray, _buffers: Any
    ) -> None:
        """`_run`'s steps by calling the rules on arrays (new arrays each step, then copied into out)."""
        u = x
        if self.any_ranged:
            u = rules.normalised(u, self.range_low, self.range_scale, self.clamp_low, self.clamp_high)
        if self.domain is not None and not non_negative:
            u = rules.clamped(u, *self.domain)
        y = self.shape(u, **self.params)
        if self.any_inverted:
            y = rules.inverted(y, self.invert_sign, self.invert_shift)
        if finish or not self.bounded:
            y = rules.finished(y)
        np.copyto(out, y)

    def evaluate(
        self, x: FloatArray, out: FloatArray, scratch: FloatArray, finish: bool, non_negative: bool
    ) -> None:
        run = self._runs.get((finish, non_negative))
        if run is None:
            run = self._runs[finish, non_negative] = self._run(finish, non_negative)
        buffers = self._buffers
        needed: int = getattr(run, "buffers", 0)
        if len(buffers) < needed or (buffers and buffers[0].shape != x.shape):
            count = max(needed, len(buffers))
            buffers = self._buffers = [np.empty(x.shape, dtype=self.dtype) for _ in range(count)]
        widen = getattr(run, "widen", None)  # generated code: its parameter columns at x's shape
        if widen is not None:
            widen(x.shape)
        run(x, out, buffers)


def _finish(out: FloatArray) -> None:
    out[...] = rules.finished(out)


class CurveStack:
    """Many curves evaluated together, one pass per family over a stacked (M, L) array.

    Row j holds the L inputs of curve `order[j]` (an index into the list given): rows are grouped
    by family, so callers lay their inputs out in that order. dtype float32 halves the memory
    traffic for large batches at about 1e-7 relative precision.
    """

    def __init__(self, curves: Sequence[Curve], dtype: DType = np.float64) -> None:
        self.dtype = dtype
        self.order = np.array(sorted(range(len(curves)), key=lambda i: curves[i].family), dtype=np.intp)
        self.curves = tuple(curves[i] for i in self.order)
        self._groups: list[_FamilyGroup] = []
        start = 0
        for _, members in itertools.groupby(self.curves, key=lambda curve: curve.family):
            group = list(members)
            self._groups.append(_FamilyGroup(slice(start, start + len(group)), group, dtype))
            start += len(group)

    def __len__(self) -> int:
        return len(self.curves)

    @property
    def has_saturating(self) -> bool:
        return any(group.domain is not None for group in self._groups)

    def evaluate(
        self,
        x: FloatArray,
        out: FloatArray | None = None,
        scratch: FloatArray | None = None,
        finish: bool = True,
        non_negative: bool = False,
    ) -> FloatArray:
        """Scores of x (M, L) in stack row order, written into out (allocated if None).

        scratch: a work array of the same shape, overwritten (allocated if None).

        finish=False skips the last clamp where a family cannot leave [0, 1] for a finite input:
        those rows then hold NaN for a NaN input, and the caller must call `finish(out)` if it
        finds one (batched scoring checks its much smaller result instead of every input).

        non_negative=True promises that x holds no negative value and no NaN (the caller checked
        `x.min() >= 0`): the saturating family then skips its clip, one pass fewer. An +inf input
        then gives NaN instead of 1, so with finish=False the caller must check for NaN and, if it
        finds one, evaluate again without the promise.
        """
        if out is None:
            out = np.empty_like(x, dtype=self.dtype)
        if scratch is None:
            scratch = np.empty_like(out)
        with np.errstate(all="ignore"):  # overflow to inf and NaN inputs are expected and clamped
            for group in self._groups:
                group.evaluate(x[group.rows], out[group.rows], scratch[group.rows], finish, non_negative)
        return out

    @staticmethod
    def finish(out: FloatArray) -> None:
        """The final clamp to [0, 1] with NaN -> 0, for scores evaluated with finish=False."""
        _finish(out)
