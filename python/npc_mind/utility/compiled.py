"""Batched utility scoring in the compiled kernel (`mk_utility_score`, the memory kernel's module:
`npc_mind/memory/kernel/utility_body.h`; one build, one dispatch, `NPC_MIND_KERNEL`).

`BatchScorer.score` asks `CompiledScorer.totals` first and runs numpy when it answers None:
`NPC_MIND_KERNEL=numpy` (or `NPC_MIND_NO_CODEGEN=1`, which calls the rules), the module not
built (or stale, or numpy's loops not as expected), a float32 scorer, or inputs that are not real
numbers (other real dtypes and strided arrays are cast to contiguous float64, as numpy casts them
into its rows). The plan below is the scorer's own numpy data (its stack's parameter columns,
weight matrix, products and vetoes, a table group's stacked points) laid out for C; the kernel
runs rules.py's steps in the numpy batch's order (every row's curve and the products bit for
bit, the weighted sums in consideration order: tests/test_utility_kernel.py).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from npc_mind.memory import kernel as compiled_kernel
from npc_mind.utility import codegen, rules

if TYPE_CHECKING:
    from npc_mind.utility.batch import BatchScorer
    from npc_mind.utility.curves import FloatArray

#: The families the kernel scores (utility_body.h's MK_U_* codes, in that order).
FAMILY_CODES = {name: code for code, name in enumerate(
    ("saturating", "polynomial", "logistic", "logit", "normal", "sine", "step", "table")
)}  # fmt: skip
#: A row's optional steps (utility_body.h): its group has a range, a domain, takes the power, inverts;
#: spread: the power's exponents are a column the numpy code spreads to the rows' width.
STEP_RANGE, STEP_DOMAIN, STEP_POWER, STEP_INVERT, STEP_SPREAD = 1, 2, 4, 8, 16
SHAPE_SLOTS = 5  # the most parameters a shape takes (polynomial: m, k, c, b, floor)
#: A row's parameters (utility_body.h's MK_U_PARAMS): range low, scale, floor, ceiling; domain low,
#: high; the shape's; invert sign, shift.
ROW_PARAMS = 4 + 2 + SHAPE_SLOTS + 2
_F64 = np.dtype(np.float64)
_CONVERTED = "biuf"  # input kinds the numpy path casts to float64 as it lays them out (bool, ints, floats)
_checked: list[str] = []  # the loops' check, once per process: "" or why not


def _ufuncs(ffi: Any) -> tuple[Any, ...]:
    return tuple(ffi.cast("void *", id(ufunc)) for ufunc in (np.exp, np.log, np.sin, np.power))


def loops_match_numpy(ffi: Any, lib: Any) -> str:
    """ "" when the kernel's exp, log, sin and power (numpy's loops, taken from the ufuncs) give
    the ufuncs' bits on edge and spread values; else why not (then numpy scores)."""
    if _checked:
        return _checked[0]
    plan = ffi.new("mk_utility *")
    if lib.mk_take_utility_loops(plan, *_ufuncs(ffi)):
        _checked.append("unusable: numpy's exp, log, sin or power ufunc has no float64 loop where it looks")
        return _checked[0]
    spread = np.linspace(-40.0, 40.0, 997) + np.sin(np.arange(997.0)) * 0.37  # no numpy.random at load
    sample = np.concatenate(([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, 710.0, -745.5], spread))
    cases = (
        (0, np.exp, sample, 0.0),
        (1, np.log, np.abs(sample) * 1e3, 0.0),
        (2, np.sin, sample * 1e2, 0.0),
        (3, lambda x: np.power(x, 2.5), np.abs(sample), 2.5),
        (3, lambda x: np.power(x, 3.0), sample, 3.0),
        (3, lambda x: np.power(x, 0.5), np.abs(sample), 0.5),  # a lone 0.5 may be a square root
        (3, lambda x: np.power(x, 2.0), sample, 2.0),
    )
    why = ""
    with np.errstate(all="ignore"):
        for which, ufunc, values, exponent in cases:
            got = values.copy()
            lib.mk_utility_apply(plan, which, ffi.from_buffer("double[]", got), got.shape[0], exponent)
            if got.tobytes() != ufunc(values).tobytes():
                why = "unusable: a numpy loop (exp, log, sin, power) called from the kernel gives other bits"
                break
    _checked.append(why)
    return why


def supported(scorer: BatchScorer) -> bool:
    """Whether the kernel can score this definition (float64: numpy scores float32)."""
    return scorer.dtype is np.float64 and all(
        group.shape.__name__ in FAMILY_CODES for group in scorer.stack._groups
    )


class CompiledScorer:
    """One `BatchScorer`'s plan (`mk_utility`) for one kernel level, with its work buffer."""

    def __init__(self, scorer: BatchScorer, level: compiled_kernel.Kernel) -> None:
        ffi, lib = level.ffi, level.lib
        self.ffi = ffi
        self.level_lib = lib
        self.score_function = getattr(lib, f"mk_utility_score_{level.level}")
        self.level = level.level
        stack = scorer.stack
        rows = len(stack)
        key_index = {key: i for i, key in enumerate(scorer.keys)}
        row_key = np.array([key_index[key] for key in scorer._row_keys], dtype=np.int64)
        row_family = np.zeros(rows, dtype=np.int32)
        row_steps = np.zeros(rows, dtype=np.int32)
        params = np.zeros((rows, ROW_PARAMS), dtype=np.float64)
        self._spread_groups: list[tuple[slice, int]] = []  # polynomial groups with an exponent column
        self._width = -1  # the width the spread bits are set for
        self._table: tuple[np.ndarray, ...] = (np.zeros(2), np.zeros(2), np.zeros(1))  # xp, fp, slopes
        for group in stack._groups:
            span = group.rows
            row_family[span] = FAMILY_CODES[group.shape.__name__]
            names = [
                p.name for p in inspect.signature(group.shape).parameters.values() if p.kind is p.KEYWORD_ONLY
            ]
            steps = 0
            if group.any_ranged:
                steps |= STEP_RANGE
                for slot, column in enumerate(
                    (group.range_low, group.range_scale, group.clamp_low, group.clamp_high)
                ):
                    params[span, slot] = column[:, 0]
            if group.domain is not None:
                steps |= STEP_DOMAIN
                params[span, 4], params[span, 5] = group.domain
            if group.shape is rules.table:  # per row its span's columns; the stacked points once
                names = ["first", "last", "inverse_span", "shift"]
                table = [np.ascontiguousarray(group.params[name], dtype=np.float64) for name in ("xp", "fp")]
                with np.errstate(all="ignore"):  # stacked x values may round together: never read then
                    slopes = (table[1][1:] - table[1][:-1]) / (table[0][1:] - table[0][:-1])  # np.interp's
                self._table = (*table, slopes)
            for slot, name in enumerate(names):
                params[span, 6 + slot] = np.asarray(group.params[name], dtype=np.float64).reshape(-1)
            # the numpy code leaves x ** k out only when every k of the group is 1 (codegen.ArrayCode)
            exponents = np.asarray(group.params["k"]) if group.shape is rules.polynomial else None
            if exponents is not None and not bool((exponents == 1.0).all()):
                steps |= STEP_POWER
                if not bool((exponents == exponents.flat[0]).all()):  # a column, not a literal
                    self._spread_groups.append((span, span.stop - span.start))
            if group.any_inverted:
                steps |= STEP_INVERT
                params[span, 11], params[span, 12] = group.invert_sign[:, 0], group.invert_shift[:, 0]
            row_steps[span] = steps

        # weighted sums: each behavior's nonzero columns of the (B, M) weight matrix, in stack order
        weights = scorer._sum_weights
        sum_row = [np.flatnonzero(weights[b]) for b in range(weights.shape[0])]
        sum_start = np.cumsum([0, *(len(r) for r in sum_row)], dtype=np.int64)
        rows_flat = np.concatenate(sum_row).astype(np.int64) if sum_row else np.zeros(0, np.int64)
        sum_weight = np.array([weights[b, r] for b, rs in enumerate(sum_row) for r in rs], dtype=np.float64)
        products = len(scorer._product_behaviors)
        product_start = np.append(scorer._product_starts, len(scorer._product_rows)).astype(np.int64)
        self._arrays: list[Any] = []  # keeps every array the plan points into alive
        plan = ffi.new("mk_utility *")
        for field, ctype, array in (
            ("row_key", "int64_t[]", row_key),
            ("row_family", "int32_t[]", row_family),
            ("row_steps", "int32_t[]", row_steps),
            ("row_params", "double[]", params),
            ("sum_start", "int64_t[]", sum_start),
            ("sum_row", "int64_t[]", rows_flat),
            ("sum_weight", "double[]", sum_weight),
            ("product_start", "int64_t[]", product_start),
            ("product_row", "int64_t[]", scorer._product_rows.astype(np.int64)),
            ("product_weight", "double[]", scorer._product_weights.reshape(-1).astype(np.float64)),
            ("product_compensation", "double[]", scorer._product_compensation.reshape(-1).astype(np.float64)),
            ("product_behavior", "int64_t[]", scorer._product_behaviors.astype(np.int64)),
            (
                "product_behavior_weight",
                "double[]",
                scorer._product_behavior_weights.reshape(-1).astype(np.float64),
            ),
            ("veto_row", "int64_t[]", scorer._veto_rows.astype(np.int64)),
            ("veto_threshold", "double[]", scorer._veto_thresholds.reshape(-1).astype(np.float64)),
            ("veto_behavior", "int64_t[]", np.argmax(scorer._veto_owner, axis=0).astype(np.int64)),
            ("table_xp", "double[]", self._table[0]),
            ("table_fp", "double[]", self._table[1]),
            ("table_slopes", "double[]", self._table[2]),
        ):
            held = np.ascontiguousarray(array)
            if held.size == 0:
                held = np.zeros(1, dtype=held.dtype)  # a valid pointer, never read
            pointer = ffi.from_buffer(ctype, held)
            self._arrays += [held, pointer]
            setattr(plan, field, pointer)
        plan.rows, plan.keys, plan.behaviors = rows, len(scorer.keys), len(scorer.behaviors)
        plan.products, plan.product_powered = products, not scorer._product_unweighted
        plan.vetoes = len(scorer._veto_rows)
        plan.table_points = len(self._table[0])
        if lib.mk_take_utility_loops(plan, *_ufuncs(ffi)):
            raise compiled_kernel.KernelUnavailableError(
                "numpy's exp, log, sin or power ufunc changed while running"
            )
        self.plan = plan
        self.row_steps = row_steps
        self.behaviors = len(scorer.behaviors)
        self.keys = len(scorer.keys)
        self.nan_counts = np.zeros(self.keys, dtype=np.int64)  # the last call's NaN inputs, per key
        self.missing = 0  # and in all
        self._nan_counts_c = ffi.from_buffer("int64_t[]", self.nan_counts)
        self.work = np.empty((rows + 1 + self.behaviors) * int(lib.mk_utility_block()))
        self._work_c = ffi.from_buffer("double[]", self.work)

    def totals(
        self, arrays: Sequence[Any], width: int, scores: FloatArray | None = None
    ) -> FloatArray | None:
        """Scores (width, B) of the key arrays (in the scorer's key order, each `width` long), with
        `nan_counts` per key; arrays of other real dtypes or strides are cast to contiguous
        float64 first (as numpy casts them into its rows), None for anything else (numpy's turn,
        which raises its errors). `scores` (rows, width), when given, receives every row's curve
        output."""
        if width != self._width:
            self._spread_for(width)
        buffer = self.ffi.from_buffer
        pointers = []
        kept = []  # the arrays converted here, alive until the call returns
        for given in arrays:
            array = given
            if type(array) is not np.ndarray or array.dtype is not _F64 or not array.flags.c_contiguous:
                if type(array) is not np.ndarray or array.dtype.kind not in _CONVERTED:
                    return None  # numpy's turn (its cast raises what it raises)
                array = np.ascontiguousarray(array, dtype=np.float64)  # numpy's own cast into its rows
                kept.append(array)
            pointers.append(buffer("double[]", array))
        out = np.empty((width, self.behaviors))
        scores_c = self.ffi.NULL if scores is None else buffer("double[]", scores)
        inputs_c = self.ffi.new("double *[]", pointers)
        out_c = buffer("double[]", out)
        self.missing = self.score_function(
            self.plan, inputs_c, width, out_c, self._nan_counts_c, self._work_c, scores_c
        )
        return out

    def _spread_for(self, width: int) -> None:
        """np.power's loop may take another path (other bits) for one exponent than for an array
        of them: a polynomial group's exponent column goes in as the numpy code gives it, spread
        to the (rows, width) shape up to codegen.WIDEN_BYTES, else one per row."""
        for span, count in self._spread_groups:
            if count * width * 8 <= codegen.WIDEN_BYTES:
                self.row_steps[span] |= STEP_SPREAD
            else:
                self.row_steps[span] &= ~STEP_SPREAD
        self._width = width


def compiled_for(scorer: BatchScorer, cache: dict[str, CompiledScorer | None]) -> CompiledScorer | None:
    """The scorer's plan at the level `NPC_MIND_KERNEL` chooses now (built once per level, kept in
    `cache`), or None when numpy scores."""
    if not codegen.GENERATE:  # NPC_MIND_NO_CODEGEN=1: every path calls the rules (breakpoints hit)
        return None
    level = compiled_kernel.active()
    if level is None:
        return None
    try:
        return cache[level.level]
    except KeyError:
        usable = supported(scorer) and not loops_match_numpy(level.ffi, level.lib)
        plan = cache[level.level] = CompiledScorer(scorer, level) if usable else None
        return plan


#: How far apart the kernel's scores must put a repeated choice (x (1 + the largest score)) for the
#: per-NPC path, whose scores are the same to 1e-12 (rules.py), to make it too: 1e-12 .. 1e-3.
CHOICE_GUARD = 1e-9
#: Inputs a checked definition reads at most (utility_body.h's MK_CHECK_KEYS; more: no check).
MAX_CHECK_KEYS = 8


class ChoiceCheck:
    """A selector definition's repeated-choice check in the kernel (`mk_choice_holds`): whether
    its running behavior is its choice again for one NPC's new inputs (the scorer's keys in order),
    for a reader that answers such a choice without the per-NPC path (the engine binding's choice
    table). `function` and `data` are addresses (the C function, its `mk_choice_check`), alive as
    long as this object."""

    def __init__(self, plan: CompiledScorer, momentum: float, tie_tolerance: float) -> None:
        ffi = plan.ffi
        self.plan = plan  # alive while the check points into it
        self.work = np.empty_like(plan.work)
        self.out = np.empty(plan.behaviors)
        self.nan_counts = np.empty(max(plan.keys, 1), dtype=np.int64)
        check = self.check = ffi.new("mk_choice_check *")
        check.plan = plan.plan
        check.momentum, check.tie_tolerance, check.guard = momentum, tie_tolerance, CHOICE_GUARD
        self._buffers = [  # kept: the check points into them
            ffi.from_buffer("double[]", self.work),
            ffi.from_buffer("double[]", self.out),
            ffi.from_buffer("int64_t[]", self.nan_counts),
        ]
        check.work, check.out, check.nan_counts = self._buffers
        name = f"mk_choice_holds_{plan.level}"
        self.holds_function = getattr(plan.level_lib, name)
        self.function = int(ffi.cast("uintptr_t", ffi.addressof(plan.level_lib, name)))
        self.data = int(ffi.cast("uintptr_t", check))

    def holds(self, values: Sequence[float], answer: int) -> bool:
        """The check from Python (its tests): the same call the reader makes."""
        given = np.ascontiguousarray(values, dtype=np.float64)
        return bool(self.holds_function(self.check, self.plan.ffi.from_buffer("double[]", given), answer))


def choice_check(scorer: BatchScorer, momentum: float, tie_tolerance: float) -> ChoiceCheck | None:
    """The definition's `ChoiceCheck` at the kernel level `NPC_MIND_KERNEL` chooses now, or None
    when the kernel does not score it (then its choices are answered only for the same numbers)."""
    plan = compiled_for(scorer, scorer._compiled)
    if plan is None or plan.keys > MAX_CHECK_KEYS:
        return None
    return ChoiceCheck(plan, momentum, tie_tolerance)
