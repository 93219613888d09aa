"""Response curves: each family's formula, input range, invert, clamping, NaN, arrays and validation."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npc_mind.utility import UtilityDefinitionError
from npc_mind.utility.curves import (
    CURVE_TYPES,
    CurveStack,
    Linear,
    Logistic,
    Logit,
    Normal,
    Polynomial,
    Saturating,
    Sine,
    Step,
    Table,
)

EXAMPLES = [
    Saturating(k=2.0),
    Linear(m=0.5, c=0.2, b=0.1),
    Polynomial(m=2.0, k=2.0, c=0.25, b=0.0),
    Polynomial(m=1.0, k=0.5),
    Logistic(m=8.0, k=0.9, c=0.4, b=0.05),
    Logit(m=0.2, c=0.0, b=0.5),
    Normal(m=0.8, k=0.2, c=0.6, b=0.1),
    Sine(m=0.5, k=2.0, c=0.1, b=0.5),
    Step(threshold=0.3, low=0.2, high=0.7),
    Table(points=((0.0, 0.0), (0.5, 0.8), (1.0, 0.4))),
]


@pytest.mark.parametrize(
    ("curve", "x", "expected"),
    [
        (Saturating(k=5.0), 8.0, 8.0 / 13.0),
        (Saturating(k=0.5), 1.0, 1.0 / 1.5),
        (Saturating(k=5.0), -3.0, 0.0),  # negative input counts as 0
        (Saturating(k=5.0), math.inf, 1.0),
        (Linear(m=0.5, c=0.2, b=0.1), 0.6, 0.5 * 0.4 + 0.1),
        (Polynomial(m=2.0, k=2.0, c=0.25), 0.75, 2.0 * 0.5**2),
        (Polynomial(m=4.0, k=3.0, c=0.5, b=0.5), 0.25, 4.0 * (-0.25) ** 3 + 0.5),
        (Polynomial(m=1.0, k=0.5, c=0.5), 0.25, 0.0),  # fractional power of a negative base -> 0
        (Polynomial(m=1.0, k=0.5), 0.36, 0.6),
        (Logistic(m=8.0, k=0.9, c=0.4, b=0.05), 0.7, 0.9 / (1.0 + math.exp(-8.0 * 0.3)) + 0.05),
        (Logit(m=0.2, b=0.5), 0.8, 0.2 * math.log(0.8 / 0.2) + 0.5),
        (Normal(m=0.8, k=0.2, c=0.6, b=0.1), 0.3, 0.8 * math.exp(-(0.3**2) / (2 * 0.2**2)) + 0.1),
        (Sine(m=0.5, k=2.0, c=0.1, b=0.5), 0.3, 0.5 * math.sin(math.pi * 2.0 * 0.2) + 0.5),
        (Step(threshold=0.3, low=0.2, high=0.7), 0.29, 0.2),
        (Step(threshold=0.3, low=0.2, high=0.7), 0.3, 0.7),
        (Table(points=((0.0, 0.0), (0.5, 0.8), (1.0, 0.4))), 0.25, 0.4),
        (Table(points=((0.0, 0.0), (0.5, 0.8), (1.0, 0.4))), 0.75, 0.6),
        (Table(points=((0.0, 0.0), (0.5, 0.8), (1.0, 0.4))), 7.0, 0.4),  # flat beyond the last point
        (Table(points=((-2.0, 0.3), (4.0, 0.9))), -5.0, 0.3),
    ],
)
def test_each_family_follows_its_formula(curve, x, expected) -> None:
    assert curve(x) == pytest.approx(expected, abs=1e-12)


def test_outputs_are_clamped_to_unit_interval() -> None:
    assert Linear(m=3.0)(0.9) == 1.0
    assert Linear(m=1.0, b=-0.5)(0.2) == 0.0
    assert Polynomial(m=-1.0, k=2.0)(0.5) == 0.0


def test_input_range_normalises_and_clamps_before_the_shape() -> None:
    curve = Linear(input_min=10.0, input_max=30.0)
    assert curve(20.0) == pytest.approx(0.5)
    assert curve(0.0) == 0.0
    assert curve(99.0) == 1.0
    # The range is applied before the shape: a quadratic over the normalised input.
    assert Polynomial(k=2.0, input_min=0.0, input_max=100.0)(50.0) == pytest.approx(0.25)


def test_invert_flips_the_output() -> None:
    for curve in EXAMPLES:
        flipped = type(curve)(**curve.params(), invert=True)
        for x in (0.1, 0.45, 0.8):
            assert flipped(x) == pytest.approx(1.0 - curve(x), abs=1e-12)


def test_nan_input_gives_zero_even_when_inverted() -> None:
    for curve in EXAMPLES:
        flipped = type(curve)(**curve.params(), invert=True, input_min=0.0, input_max=1.0)
        assert curve(math.nan) == 0.0
        assert flipped(math.nan) == 0.0


def test_arrays_give_the_same_numbers_as_single_values() -> None:
    xs = np.array([[-1.0, 0.0, 0.2], [0.5, 0.9, 3.0]])
    for curve in EXAMPLES:
        ys = curve(xs)
        assert isinstance(ys, np.ndarray)
        assert ys.shape == xs.shape
        assert ys == pytest.approx(np.vectorize(curve)(xs), abs=1e-15)
    assert isinstance(Saturating()(0.5), float)


@given(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(EXAMPLES), st.booleans())
def test_any_input_scores_inside_unit_interval(x: float, curve, invert: bool) -> None:
    y = type(curve)(**curve.params(), invert=invert)(x)
    assert 0.0 <= y <= 1.0


def test_a_stack_of_mixed_families_matches_each_curve() -> None:
    curves = [*EXAMPLES, Table(points=((1.0, 1.0), (3.0, 0.0))), Saturating(k=0.1, invert=True)]
    stack = CurveStack(curves)
    xs = np.linspace(-0.5, 3.5, 41)
    # Row j of the stack holds the inputs of curve order[j].
    out = stack.evaluate(np.tile(xs, (len(curves), 1)))
    for row, index in enumerate(stack.order):
        assert out[row] == pytest.approx(curves[index](xs), abs=1e-12)
    out32 = CurveStack(curves, np.float32).evaluate(np.tile(xs, (len(curves), 1)).astype(np.float32))
    assert out32.dtype == np.float32
    assert out32 == pytest.approx(out, abs=1e-5)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Saturating(k=0.0), "saturating curve: k must be in"),
        (lambda: Saturating(k=math.nan), "k must be finite"),
        (lambda: Polynomial(k=-1.0), "exponent"),
        (lambda: Normal(k=0.0), "width"),
        (lambda: Linear(m="steep"), "m must be a number"),
        (lambda: Linear(input_min=1.0), "given together"),
        (lambda: Linear(input_min=2.0, input_max=2.0), "below input_max"),
        (lambda: Linear(invert=1), "invert must be a bool"),
        (lambda: Table(points=((0.0, 0.0),)), "at least two"),
        (lambda: Table(points=((0.0, 0.0), (0.0, 1.0))), "strictly increasing"),
        (lambda: Table(points=((0.0, 0.0), (1.0, math.inf))), "finite"),
    ],
)
def test_parameters_that_break_a_curve_are_rejected(build, message: str) -> None:
    with pytest.raises(UtilityDefinitionError, match=message):
        build()


def test_every_type_is_registered_by_its_data_name() -> None:
    assert set(CURVE_TYPES) == {
        "saturating", "linear", "polynomial", "logistic", "logit", "normal", "sine", "step", "table",
    }  # fmt: skip
    for name, cls in CURVE_TYPES.items():
        assert cls.type_name == name
        assert 0.0 <= cls()(0.5) <= 1.0  # the defaults build a valid curve


def test_a_stack_keeps_its_numbers_across_batch_sizes() -> None:
    # The stack's buffers follow the input's shape: a smaller, then a larger batch after it.
    stack = CurveStack(EXAMPLES)
    for size in (7, 3, 11, 7):
        xs = np.linspace(-0.5, 1.5, size)
        out = stack.evaluate(np.tile(xs, (len(EXAMPLES), 1)))
        for row, index in enumerate(stack.order):
            assert out[row].tolist() == pytest.approx([EXAMPLES[index](float(x)) for x in xs], abs=1e-12)
