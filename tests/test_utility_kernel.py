"""Batched utility scoring in the compiled kernel (`npc_mind.utility.compiled`) against the numpy
path, at each dispatch level this CPU runs: over random definitions of every family (ranges,
inverts, products with and without weights, vetoes, behavior weights, per-target inputs) and
random inputs with NaN, +-inf, -0.0, huge and out-of-range values, at NPC counts around the
kernel's block, every row's curve output is numpy's bit for bit (tables: np.interp's), products
and vetoes too, and a weighted sum is within its summation-order bound (numpy sums with a matrix
product, in BLAS's order); the NaN reports are the same. What the kernel leaves to numpy (float32,
inputs that are not numbers, NPC_MIND_KERNEL=numpy, NPC_MIND_NO_CODEGEN=1) runs numpy."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from npc_mind.memory import kernel
from npc_mind.utility import Behavior, Consideration, UtilitySelector, compiled, rules
from npc_mind.utility.curves import Linear, Logistic, Logit, Normal, Polynomial, Saturating, Sine, Step, Table
from tests.support.memory_kernel import LEVELS, forced_kernel
from tests.test_utility_batch import random_curve

COMPILED = [level for level in LEVELS if level != "numpy"]
KEYS = ("health", "ammo", "fear", "hunger", "distance")
COUNTS = (1, 7, 255, 256, 257, 1000)
EPS = np.finfo(np.float64).eps


def test_the_kernel_scores_here() -> None:
    assert COMPILED, f"the compiled kernel is not available: {kernel.status()}"
    module = kernel._loaded()
    assert compiled.loops_match_numpy(module.ffi, module.lib) == ""


def test_the_kernel_knows_every_family() -> None:
    """A family added to rules.py is scored by numpy until the kernel learns it: this fails first."""
    assert set(compiled.FAMILY_CODES) == set(rules.SHAPES)


def test_the_c_codes_are_the_plans() -> None:
    """utility_body.h's family codes, step bits and row width are the ones the plan is laid out with."""
    body = (kernel.HERE / "utility_body.h").read_text()
    families = re.search(r"enum \{ (MK_U_SATURATING[^}]*) \};", body)
    assert families is not None
    names = [name.strip().removeprefix("MK_U_").lower() for name in families[1].split(",")]
    assert names == list(compiled.FAMILY_CODES)
    steps = dict(re.findall(r"MK_U_(RANGE|DOMAIN|POWER|INVERT|SPREAD) = (\d+)", body))
    assert {name: int(bit) for name, bit in steps.items()} == {
        "RANGE": compiled.STEP_RANGE, "DOMAIN": compiled.STEP_DOMAIN, "POWER": compiled.STEP_POWER,
        "INVERT": compiled.STEP_INVERT, "SPREAD": compiled.STEP_SPREAD,
    }  # fmt: skip
    width = re.search(r"#define MK_U_PARAMS (\d+)", body)
    assert width is not None and int(width[1]) == compiled.ROW_PARAMS
    check_keys = re.search(r"#define MK_CHECK_KEYS (\d+)", body)
    assert check_keys is not None and int(check_keys[1]) == compiled.MAX_CHECK_KEYS


def every_family(rng: np.random.Generator) -> list[Behavior]:
    """One behavior per family (two considerations: plain, and ranged and inverted), plus linear
    and fractional polynomials sharing a group (numpy then takes x ** 1 too)."""
    u = lambda a, b: float(rng.uniform(a, b))  # noqa: E731
    ranged = {"input_min": -0.5, "input_max": 1.5, "invert": True}
    makers = {
        "saturating": lambda **kw: Saturating(k=u(0.1, 3.0), **kw),
        "linear": lambda **kw: Linear(m=u(-2.0, 2.0), c=u(-0.5, 0.5), b=u(-0.2, 0.8), **kw),
        "polynomial": lambda **kw: Polynomial(m=u(-2.0, 2.0), k=0.5, c=u(-0.5, 0.5), **kw),
        "logistic": lambda **kw: Logistic(m=u(-10.0, 10.0), k=u(0.2, 1.0), c=u(0.0, 1.0), **kw),
        "logit": lambda **kw: Logit(m=u(0.05, 0.3), c=u(-0.2, 0.2), b=u(0.3, 0.7), **kw),
        "normal": lambda **kw: Normal(m=u(0.3, 1.0), k=u(0.05, 0.5), c=u(0.0, 1.0), **kw),
        "sine": lambda **kw: Sine(m=u(0.2, 0.5), k=u(0.5, 3.0), c=u(-0.5, 0.5), b=0.5, **kw),
        "step": lambda **kw: Step(threshold=u(0.0, 1.0), low=u(0.0, 0.5), high=u(0.5, 1.0), **kw),
        "table": lambda **kw: random_table(rng, **kw),
    }
    return [
        Behavior(
            name,
            [
                Consideration(KEYS[i % len(KEYS)], make(), u(0.1, 2.0)),
                Consideration(KEYS[(i + 1) % len(KEYS)], make(**ranged), u(0.1, 2.0), veto_below=0.05),
            ],
            aggregation="product" if i % 3 == 0 else "weighted_sum",
            weight=u(0.5, 1.5),
        )
        for i, (name, make) in enumerate(makers.items())
    ]


def random_table(rng: np.random.Generator, **common: object) -> Table:
    """Two to seven points (some sharing a y: flat segments), x on the inputs' specials too."""
    count = int(rng.integers(2, 8))
    xs = np.unique(np.concatenate((rng.choice([-0.0, 0.0, 0.5, 1.0], 1), rng.uniform(-1.0, 2.0, count))))
    ys = rng.choice([0.0, 0.25, 1.0, float(rng.uniform(-0.2, 1.2))], len(xs))
    return Table(points=tuple(zip(xs.tolist(), ys.tolist(), strict=True)), **common)  # type: ignore[arg-type]  # the base's keywords


def random_behaviors(rng: np.random.Generator, per_target: bool, unweighted: bool) -> list[Behavior]:
    behaviors = []
    for b in range(int(rng.integers(1, 10))):
        considerations = []
        for _ in range(int(rng.integers(1, 6))):
            key = str(rng.choice(KEYS))
            curve = random_curve(rng)
            considerations.append(
                Consideration(
                    key,
                    curve,
                    1.0 if unweighted else float(rng.uniform(0.0, 2.0)),
                    veto_below=float(rng.uniform(0.0, 0.3)) if rng.random() < 0.2 else None,
                    per_target=per_target and key == "distance",
                )
            )
        aggregation = "product" if rng.random() < 0.4 else "weighted_sum"
        behaviors.append(
            Behavior(f"b{b}", considerations, aggregation=aggregation, weight=float(rng.uniform(0.0, 2.0)))
        )
    return behaviors


def wild(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Inputs in and far out of every range, with NaN, +-inf, -0.0, 0 and huge values."""
    values = rng.uniform(-1.5, 3.0, shape)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e300, -1e300, 1e30, 5e-324, 1.0, 0.5])
    picks = rng.random(shape) < 0.15
    values[picks] = rng.choice(specials, int(picks.sum()))
    scaled = rng.random(shape) < 0.1
    values[scaled] *= 1e6
    return values


def inputs_for(
    selector: UtilitySelector, rng: np.random.Generator, n: int, targets: int
) -> dict[str, np.ndarray]:
    per_target = selector.scorer.per_target_keys
    return {key: wild(rng, (n, targets) if key in per_target else (n,)) for key in KEYS}


def compare(
    selector_of: Callable[[], UtilitySelector],
    inputs: dict[str, np.ndarray],
    level: str,
    target_mask: np.ndarray | None = None,
) -> None:
    """One definition, scored on numpy and at `level` by two selectors: the same curve bits, the
    same products and vetoes, weighted sums within their bound, the same NaN reports."""
    numpy_selector, compiled_selector = selector_of(), selector_of()
    with forced_kernel("numpy"):
        want = numpy_selector.score_batch(inputs, target_mask=target_mask)
    with forced_kernel(level):
        got = compiled_selector.score_batch(inputs, target_mask=target_mask)
        scorer = compiled_selector.scorer
        plan = scorer._compiled[level]
        assert plan is not None and plan.level == level
        arrays, lead = scorer._flat_inputs(inputs)
        width = int(np.prod(lead))
        curve_scores = np.empty((len(scorer.stack), width))
        plan.totals(list(scorer._key_arrays(arrays)), width, curve_scores)
    values = np.concatenate(scorer._row_arrays(arrays)).reshape(len(scorer.stack), width)
    reference = scorer.stack.evaluate(values, finish=True)  # rules.py's pipeline, numpy's code
    assert curve_scores.tobytes() == reference.tobytes()
    assert got.shape == want.shape and got.dtype == want.dtype
    assert compiled_selector.scorer.nan_counts == numpy_selector.scorer.nan_counts
    for b, behavior in enumerate(compiled_selector.behaviors):
        column_got, column_want = got[:, b], want[:, b]
        if behavior.aggregation == "product":
            assert column_got.tobytes() == column_want.tobytes(), behavior.name
            continue
        # both sums round each of their terms' partial sums: within terms x eps x the sum's size
        size = sum(abs(c.weight) for c in behavior.considerations) * abs(behavior.weight)
        bound = 2 * len(behavior.considerations) * EPS * size
        assert np.all(np.abs(column_got - column_want) <= bound), behavior.name
        vetoed = column_want == 0.0
        assert np.all(column_got[vetoed] == 0.0)


@pytest.mark.parametrize("level", COMPILED)
@pytest.mark.parametrize("n", COUNTS)
def test_every_family_scores_as_numpy(level: str, n: int) -> None:
    rng = np.random.default_rng(n)
    behaviors = every_family(rng)
    selector_of = lambda: UtilitySelector(behaviors)  # noqa: E731
    compare(selector_of, inputs_for(selector_of(), rng, n, 1), level)


@pytest.mark.parametrize("level", COMPILED)
def test_a_large_batch_takes_one_exponent_per_row_as_numpy(level: str) -> None:
    """Past codegen.WIDEN_BYTES the numpy code gives np.power an (M, 1) exponent column (one
    exponent per row: the loop's square-root path for 0.5), below it the column spread out."""
    rng = np.random.default_rng(11)
    behaviors = every_family(rng)
    selector_of = lambda: UtilitySelector(behaviors)  # noqa: E731
    compare(selector_of, inputs_for(selector_of(), rng, 20_000, 1), level)


@pytest.mark.parametrize("level", COMPILED)
@pytest.mark.parametrize("seed", range(16))
def test_random_definitions_score_as_numpy(level: str, seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    per_target = seed % 4 == 3
    behaviors = random_behaviors(rng, per_target, unweighted=seed % 5 == 0)
    selector_of = lambda: UtilitySelector(behaviors)  # noqa: E731
    n = int(rng.choice(COUNTS))
    targets = int(rng.integers(1, 4))
    inputs = inputs_for(selector_of(), rng, n, targets)
    mask = rng.random((n, targets)) < 0.7 if selector_of().scorer.targeted else None
    compare(selector_of, inputs, level, mask)


@pytest.mark.parametrize("level", COMPILED)
def test_batch_choices_are_numpys(level: str) -> None:
    rng = np.random.default_rng(7)
    behaviors = random_behaviors(rng, per_target=False, unweighted=False)
    choices = {}
    for run in ("numpy", level):
        selector = UtilitySelector(behaviors, momentum=0.1, commitment=0.5)
        batch = selector.batch(300)
        tick_rng = np.random.default_rng(8)
        with forced_kernel(run):
            choices[run] = [
                batch.choose({key: tick_rng.uniform(-0.5, 2.5, 300) for key in KEYS}, now=0.1 * t).tolist()
                for t in range(20)
            ]
    assert choices[level] == choices["numpy"]


@pytest.mark.parametrize("level", COMPILED)
def test_tables_interpolate_as_np_interp(level: str) -> None:
    """Inputs on every table's points and ends, between them, beyond them; tables stacked at
    shifts 0, 2, 4... (one np.interp call in numpy), with flat and steep segments."""
    rng = np.random.default_rng(5)
    tables = [random_table(rng) for _ in range(6)]
    tables.append(Table(points=((0.0, 0.0), (1e-9, 1.0), (1e9, 0.0))))
    knots = np.array([x for table in tables for x, _ in table.points])
    inputs = np.concatenate(
        (knots, np.nextafter(knots, np.inf), np.nextafter(knots, -np.inf), wild(rng, (500,)))
    )
    behaviors = [Behavior(f"t{i}", [Consideration("fear", table)]) for i, table in enumerate(tables)]
    selector_of = lambda: UtilitySelector(behaviors)  # noqa: E731
    compare(selector_of, {"fear": inputs}, level)


def test_what_the_kernel_leaves_to_numpy() -> None:
    rng = np.random.default_rng(3)
    inputs = {key: rng.uniform(0.0, 2.0, 50) for key in KEYS}
    plain = UtilitySelector([Behavior("s", [Consideration("fear", Saturating(k=1.0))])])
    with forced_kernel("auto"):
        plain.score_batch({key: value.astype(np.float32) for key, value in inputs.items()})
        assert plain._scorers["float32"]._compiled == {kernel.cpu_level(): None}  # float32: numpy's
        want = plain.score_batch(inputs)
        plan = plain.scorer._compiled[kernel.cpu_level()]
        assert plan is not None
        # strided, float32 and integer inputs are cast as numpy casts them, then scored here
        strided = np.repeat(inputs["fear"], 2)[::2]
        assert plan.totals([strided], 50).tobytes() == want.tobytes()
        assert plan.totals([inputs["fear"].astype(np.float32)], 50) is not None
        counts = np.arange(50)
        assert (
            plain.score_batch({"fear": counts}).tobytes()
            == plain.score_batch({"fear": counts * 1.0}).tobytes()
        )
        assert plan.totals([np.array(["a"] * 50)], 50) is None  # not numbers: numpy's error
        with pytest.raises(TypeError):
            plain.score_batch({"fear": np.array(["a"] * 50)})
    fresh = UtilitySelector(plain.behaviors)
    with forced_kernel("numpy"):
        fresh.score_batch(inputs)
    assert fresh.scorer._compiled == {}


def test_without_generated_code_the_batch_calls_the_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """NPC_MIND_NO_CODEGEN=1 (codegen.GENERATE off): a breakpoint in rules.py is hit by a batch."""
    from npc_mind.utility import codegen

    monkeypatch.setattr(codegen, "GENERATE", False)
    calls = []
    saturating = rules.SHAPES["saturating"]
    monkeypatch.setitem(rules.SHAPES, "saturating", lambda *a, **k: calls.append(1) or saturating(*a, **k))
    selector = UtilitySelector([Behavior("s", [Consideration("fear", Saturating(k=1.0))])])
    with forced_kernel("auto"):
        scores = selector.score_batch({"fear": np.array([1.0, 3.0])})
    assert calls and scores[:, 0].tolist() == [0.5, 0.75]
    assert selector.scorer._compiled == {}


def test_float32_inputs_score_in_the_kernel_when_float64_is_asked() -> None:
    rng = np.random.default_rng(4)
    behaviors = every_family(rng)
    inputs32 = {key: rng.uniform(-1.0, 2.0, 300).astype(np.float32) for key in KEYS}
    with forced_kernel("numpy"):
        want = UtilitySelector(behaviors).score_batch(inputs32, "float64")
    selector = UtilitySelector(behaviors)
    with forced_kernel("auto"):
        got = selector.score_batch(inputs32, "float64")
    assert selector.scorer._compiled[kernel.cpu_level()] is not None
    assert np.abs(got - want).max() <= 1e-14
