"""Response curves: map a consideration's raw input to a score in [0, 1].

Every curve is a small immutable object that works on one float or on numpy arrays, in four steps:

1. optional input range: u = clamp((x - input_min) / (input_max - input_min), 0, 1), else u = x;
2. the family's shape y = f(u) (parameters below);
3. `invert`: y = 1 - y;
4. y is clamped to [0, 1]; a NaN input gives 0 (never propagated; the selector reports it);
   +-inf is clamped by an input range; without one it gives the shape's limit (0 where undefined).

Families (`type_name` is the `curve_type` of the data format):

| type | shape | parameters and bounds |
|---|---|---|
| saturating | u / (u + k), negative u counts as 0 (the design source) | 0 < k <= 1e12 |
| linear | m (u - c) + b | m, c, b finite |
| polynomial | m (u - c)^k + b; for a fractional k, u - c < 0 counts as 0 | k > 0; m, c, b finite |
| logistic | k / (1 + e^(-m (u - c))) + b | m, k, c, b finite |
| logit | m ln(z / (1 - z)) + b, z = u - c kept inside (0, 1) | m, c, b finite |
| normal | m e^(-(u - c)^2 / (2 k^2)) + b (a bell at c, width k) | k > 0; m, c, b finite |
| sine | m sin(pi k (u - c)) + b | m, k, c, b finite |
| step | high if u >= threshold else low | threshold, low, high finite |
| table | piecewise linear through (x, y) points, flat outside them | >= 2 points, finite, x increasing |

`table` is what a Godot `Curve` resource becomes: the addon bakes the Hermite curve to points once
instead of sampling the engine per tick.

`CurveStack` evaluates many curves at once: one pass per family over a stacked (M, L) array,
which is what makes batched scoring fast. A curve called on an array is a stack of one; called on
one number it runs generated plain-Python code with the same operations (`scalar.py`), since
numpy's per-call overhead would dwarf the work.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from npc_mind.utility.errors import UtilityDefinitionError

FloatArray = npt.NDArray[np.floating]
# The float type of a stack: float64 (the default, exact) or float32 (faster batches).
DType = type[np.float64] | type[np.float32]
# Writes the family's shape of u into out, both (M, L): one row per curve, L inputs each. The third
# array, of the same shape, is scratch space the kernel may overwrite.
Kernel = Callable[[FloatArray, FloatArray, FloatArray], None]

_BASE_FIELDS = frozenset({"input_min", "input_max", "invert"})
_HUGE = 1e30  # saturating inputs are clamped here (float32 too) so that +inf gives 1, not inf / inf
_MAX_K = 1e12  # a saturating k beyond this would not reach 1 even at _HUGE
_LOGIT_EPSILON = 1e-9  # keeps the logit's z strictly inside (0, 1)
_SCALARS = (float, int, np.floating, np.integer)  # one number: the plain-Python path


@dataclass(frozen=True, kw_only=True)
class Curve:
    """Base of all curves: the optional input range and the invert flag shared by every family."""

    input_min: float | None = None
    input_max: float | None = None
    invert: bool = False

    type_name: ClassVar[str] = ""
    family: ClassVar[str] = ""

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
        array through the numpy one; both do the same arithmetic.
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
        from npc_mind.utility.scalar import compile_curve

        return compile_curve(self)

    def _validate(self) -> None:
        """Family-specific parameter checks; the base already made every parameter a finite float."""

    def _coerce(self, name: str, value: object) -> float:
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            self._fail(f"{name} must be a number, got {value!r}")
        if not math.isfinite(number):
            self._fail(f"{name} must be finite, got {number}")
        object.__setattr__(self, name, number)
        return number

    def _fail(self, message: str) -> None:
        raise UtilityDefinitionError(f"{self.type_name} curve: {message}")


@dataclass(frozen=True)
class Saturating(Curve):
    """Diminishing returns from the design source: u / (u + k). k in (0, 1e12]: the input scoring 0.5."""

    k: float = 1.0

    type_name: ClassVar[str] = "saturating"
    family: ClassVar[str] = "saturating"

    def _validate(self) -> None:
        if not 0 < self.k <= _MAX_K:
            self._fail(f"k must be in (0, {_MAX_K:g}], got {self.k}")


@dataclass(frozen=True)
class Linear(Curve):
    """y = m (u - c) + b: slope m, x shift c, y offset b (all finite)."""

    m: float = 1.0
    c: float = 0.0
    b: float = 0.0

    type_name: ClassVar[str] = "linear"
    family: ClassVar[str] = "polynomial"

    @property
    def k(self) -> float:
        return 1.0


@dataclass(frozen=True)
class Polynomial(Curve):
    """y = m (u - c)^k + b: exponent k > 0; for a fractional k a negative u - c counts as 0."""

    m: float = 1.0
    k: float = 2.0
    c: float = 0.0
    b: float = 0.0

    type_name: ClassVar[str] = "polynomial"
    family: ClassVar[str] = "polynomial"

    def _validate(self) -> None:
        if self.k <= 0:
            self._fail(f"k (the exponent) must be > 0, got {self.k}")


@dataclass(frozen=True)
class Logistic(Curve):
    """y = k / (1 + e^(-m (u - c))) + b: steepness m (negative falls), height k, midpoint c, offset b."""

    m: float = 10.0
    k: float = 1.0
    c: float = 0.5
    b: float = 0.0

    type_name: ClassVar[str] = "logistic"
    family: ClassVar[str] = "logistic"


@dataclass(frozen=True)
class Logit(Curve):
    """y = m ln(z / (1 - z)) + b with z = u - c kept inside (0, 1): the logistic's inverse."""

    m: float = 0.1
    c: float = 0.0
    b: float = 0.5

    type_name: ClassVar[str] = "logit"
    family: ClassVar[str] = "logit"


@dataclass(frozen=True)
class Normal(Curve):
    """A bell: y = m e^(-(u - c)^2 / (2 k^2)) + b: height m, width k > 0, centre c, offset b."""

    m: float = 1.0
    k: float = 0.15
    c: float = 0.5
    b: float = 0.0

    type_name: ClassVar[str] = "normal"
    family: ClassVar[str] = "normal"

    def _validate(self) -> None:
        if self.k <= 0 or not _finite_inverse(self.k):
            self._fail(f"k (the width) must be > 0 with a finite 1 / k, got {self.k}")


@dataclass(frozen=True)
class Sine(Curve):
    """y = m sin(pi k (u - c)) + b: amplitude m, k half waves per unit, shift c, offset b."""

    m: float = 1.0
    k: float = 1.0
    c: float = 0.0
    b: float = 0.0

    type_name: ClassVar[str] = "sine"
    family: ClassVar[str] = "sine"

    def _validate(self) -> None:
        if not math.isfinite(math.pi * self.k):
            self._fail(f"k must keep pi k finite, got {self.k}")


@dataclass(frozen=True)
class Step(Curve):
    """y = high if u >= threshold else low."""

    threshold: float = 0.5
    low: float = 0.0
    high: float = 1.0

    type_name: ClassVar[str] = "step"
    family: ClassVar[str] = "step"


@dataclass(frozen=True)
class Table(Curve):
    """Piecewise linear through (x, y) points (a baked Godot `Curve`), flat beyond the end points."""

    points: tuple[tuple[float, float], ...] = ((0.0, 0.0), (1.0, 1.0))

    type_name: ClassVar[str] = "table"
    family: ClassVar[str] = "table"

    def _validate(self) -> None:
        try:
            array = np.asarray(self.points, dtype=np.float64)
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


def _column(curves: Sequence[Curve], name: str, dtype: DType) -> FloatArray:
    """One parameter of every curve as an (M, 1) column, broadcasting over each row's inputs."""
    return np.array([[getattr(curve, name)] for curve in curves], dtype=dtype)


def _saturating_kernel(curves: Sequence[Curve], dtype: DType) -> tuple[Kernel, bool]:
    k = _column(curves, "k", dtype)

    def apply(u: FloatArray, out: FloatArray, scratch: FloatArray) -> None:
        np.clip(u, 0.0, _HUGE, out=out)  # NaN stays NaN, for CurveStack.finish
        np.add(out, k, out=scratch)
        np.divide(out, scratch, out=out)

    return apply, True


def _polynomial_kernel(curves: Sequence[Curve], dtype: DType) -> tuple[Kernel, bool]:
    m, k, c, b = (_column(curves, name, dtype) for name in "mkcb")
    fractional = k != np.round(k)
    any_fractional = bool(fractional.any())
    all_linear = bool((k == 1.0).all())

    def apply(u: FloatArray, out: FloatArray, scratch: FloatArray) -> None:
        np.subtract(u, c, out=out)
        if any_fractional:
            # A negative base to a fractional power has no real value.
            np.copyto(out, np.maximum(out, 0.0), where=fractional)
        if not all_linear:
            np.power(out, k, out=out)
        np.multiply(out, m, out=out)
        np.add(out, b, out=out)

    return apply, False


def _logistic_kernel(curves: Sequence[Curve], dtype: DType) -> tuple[Kernel, bool]:
    m, k, c, b = (_column(curves, name, dtype) for name in "mkcb")

    def apply(u: FloatArray, out: FloatArray, scratch: FloatArray) -> None:
        np.subtract(u, c, out=out)
        np.multiply(out, -m, out=out)
        np.exp(out, out=out)
        np.add(out, 1.0, out=out)
        np.divide(k, out, out=out)
        np.add(out, b, out=out)

    return apply, False


def _logit_kernel(curves: Sequence[Curve], dtype: DType) -> tuple[Kernel, bool]:
    m, c, b = (_column(curves, name, dtype) for name in "mcb")

    def apply(u: FloatArray, out: FloatArray, scratch: FloatArray) -> None:
        np.subtract(u, c, out=out)
        np.clip(out, _LOGIT_EPSILON, 1.0 - _LOGIT_EPSILON, out=out)
        np.divide(out, 1.0 - out, out=out)
        np.log(out, out=out)
        np.multiply(out, m, out=out)
        np.add(out, b, out=out)

    return apply, False


def _normal_kernel(curves: Sequence[Curve], dtype: DType) -> tuple[Kernel, bool]:
    m, k, c, b = (_column(curves, name, dtype) for name in "mkcb")
    scale = 1.0 / k

    def apply(u: FloatArray, out: FloatArray, scratch: FloatArray) -> None:
        np.subtract(u, c, out=out)
        np.multiply(out, scale, out=out)
        np.square(out, out=out)
        np.multiply(out, -0.5, out=out)
        np.exp(out, out=out)
        np.multiply(out, m, out=out)
        np.add(out, b, out=out)

    return apply, False


def _sine_kernel(curves: Sequence[Curve], dtype: DType) -> tuple[Kernel, bool]:
    m, k, c, b = (_column(curves, name, dtype) for name in "mkcb")
    frequency = np.pi * k

    def apply(u: FloatArray, out: FloatArray, scratch: FloatArray) -> None:
        np.subtract(u, c, out=out)
        np.multiply(out, frequency, out=out)
        np.sin(out, out=out)
        np.multiply(out, m, out=out)
        np.add(out, b, out=out)

    return apply, False


def _step_kernel(curves: Sequence[Curve], dtype: DType) -> tuple[Kernel, bool]:
    threshold, low, high = (_column(curves, name, dtype) for name in ("threshold", "low", "high"))

    def apply(u: FloatArray, out: FloatArray, scratch: FloatArray) -> None:
        missing = np.isnan(u)  # a comparison would turn NaN into "low"; keep it NaN
        np.greater_equal(u, threshold, out=scratch)  # 1.0 where reached, 0.0 elsewhere
        np.multiply(scratch, high - low, out=out)
        np.add(out, low, out=out)
        out[missing] = np.nan

    return apply, bool(((low >= 0) & (low <= 1) & (high >= 0) & (high <= 1)).all())


def _table_kernel(curves: Sequence[Curve], dtype: DType) -> tuple[Kernel, bool]:
    # All tables become one np.interp call: table i is rescaled onto [2i, 2i + 1], disjoint from the
    # others, and each input is clamped into its own table's x range and shifted the same way.
    tables = [np.asarray(curve.points, dtype=np.float64) for curve in curves]  # type: ignore[attr-defined]
    first = np.array([[table[0, 0]] for table in tables], dtype=dtype)
    last = np.array([[table[-1, 0]] for table in tables], dtype=dtype)
    inverse_span = 1.0 / (last - first)
    shift = 2.0 * np.arange(len(tables), dtype=dtype)[:, np.newaxis]
    xp = np.concatenate(
        [
            (table[:, 0].astype(dtype) - first[i]) * inverse_span[i] + shift[i]
            for i, table in enumerate(tables)
        ]
    )
    fp = np.concatenate([table[:, 1] for table in tables])

    def apply(u: FloatArray, out: FloatArray, scratch: FloatArray) -> None:
        np.clip(u, first, last, out=out)
        np.subtract(out, first, out=out)
        np.multiply(out, inverse_span, out=out)
        np.add(out, shift, out=out)
        out[...] = np.interp(out, xp, fp)

    return apply, bool(((fp >= 0) & (fp <= 1)).all())


# A family's kernels for a list of curves, and whether every output for a finite input is in [0, 1].
KernelFactory = Callable[[Sequence[Curve], DType], tuple[Kernel, bool]]

_FAMILY_KERNELS: dict[str, KernelFactory] = {
    "saturating": _saturating_kernel,
    "polynomial": _polynomial_kernel,
    "logistic": _logistic_kernel,
    "logit": _logit_kernel,
    "normal": _normal_kernel,
    "sine": _sine_kernel,
    "step": _step_kernel,
    "table": _table_kernel,
}


class _FamilyGroup:
    """The curves of one family inside a stack: contiguous rows, parameters as (M, 1) columns."""

    def __init__(self, rows: slice, curves: Sequence[Curve], dtype: DType) -> None:
        self.rows = rows
        self.kernel, self.bounded = _FAMILY_KERNELS[curves[0].family](curves, dtype)
        # For inputs known to be >= 0 (no NaN): the saturating curve without its clip, u / (u + k).
        # Identical numbers for finite u (u + k rounds to u above 1e30); +inf gives NaN, not 1, and
        # the caller must redo the stack (see `CurveStack.evaluate`).
        self.non_negative_kernel: Kernel | None = None
        if curves[0].family == "saturating":
            k = _column(curves, "k", dtype)

            def unclipped(u: FloatArray, out: FloatArray, scratch: FloatArray) -> None:
                np.add(u, k, out=scratch)
                np.divide(u, scratch, out=out)

            self.non_negative_kernel = unclipped
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

    def evaluate(
        self, x: FloatArray, out: FloatArray, scratch: FloatArray, finish: bool, non_negative: bool
    ) -> None:
        u = x
        if self.any_ranged:
            np.subtract(x, self.range_low, out=out)
            np.multiply(out, self.range_scale, out=out)
            np.clip(out, self.clamp_low, self.clamp_high, out=out)
            u = out
        kernel = self.kernel
        if non_negative and self.non_negative_kernel is not None:
            kernel = self.non_negative_kernel
        kernel(u, out, scratch)  # every kernel keeps a NaN input NaN
        if self.any_inverted:
            np.multiply(out, self.invert_sign, out=out)
            np.add(out, self.invert_shift, out=out)
        if finish or not self.bounded:
            _finish(out)


def _finish(out: FloatArray) -> None:
    # fmax/fmin return the number when the other operand is NaN: a NaN input scores 0 here, after
    # inverting, so an inverted curve does not turn a missing value into a full score.
    np.fmax(out, 0.0, out=out)
    np.fmin(out, 1.0, out=out)


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
        return any(group.non_negative_kernel is not None for group in self._groups)

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
