"""Batched scoring: every NPC sharing one definition scored in a handful of numpy passes.

The definition is compiled once: the distinct (input, curve) pairs of all behaviors'
considerations become the M rows of a `CurveStack` (grouped by curve family, so each family is one
pass over an (M_f, N) slice), the inputs are laid out in that order with one `np.concatenate`,
weighted sums are one matrix product, products one `multiply.reduceat`. The (M, N) work arrays are
kept and reused between calls.

float64 batches run the compiled kernel instead when it is built (`npc_mind.utility.compiled`:
the same steps in C, one call; `NPC_MIND_KERNEL=numpy` keeps them here, docs/memory-kernel.md).

Speed: for curves that cannot leave [0, 1] (e.g. the saturating one), the final NaN -> 0 clamp is
skipped unless the (N, B) result shows a NaN, which is far smaller to check than every input.

Inputs: a scalar key maps to an (N,) array; a per-target key to an (N, T) array (the same T for
all per-target keys). Scores are (N, B), or (N, B, T) when any behavior is per-target (behaviors
without per-target inputs then have the same score for every target).
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from npc_mind.utility.behavior import Behavior
from npc_mind.utility.compiled import CompiledScorer, compiled_for
from npc_mind.utility.curves import Curve, CurveStack, DType, FloatArray
from npc_mind.utility.errors import MissingInputError, UtilityDefinitionError, UtilityError

log = logging.getLogger("npc_mind.utility")
_MATMUL_BLOCK = 1024  # NPCs per weighted-sum matrix product
_MINIMUM = np.minimum.reduce  # NaN if any element is NaN; one call, no Python wrapper


@dataclass
class _Buffers:
    """Work arrays kept between calls, each (rows, N) or (rows, N * T)."""

    values: FloatArray  # inputs laid out in stack row order
    scores: FloatArray  # curve outputs
    scratch: FloatArray  # for the curve kernels
    factors: FloatArray  # product considerations' compensated factors
    factor_work: FloatArray
    vetoes: FloatArray  # 1.0 where a veto consideration is below its threshold


class BatchScorer:
    """Scores N NPCs against one list of behaviors; see the module docstring for shapes."""

    def __init__(self, behaviors: Sequence[Behavior], dtype: DType = np.float64) -> None:
        self.behaviors = tuple(behaviors)
        self.dtype = dtype
        columns = [
            (b, behavior, c) for b, behavior in enumerate(self.behaviors) for c in behavior.considerations
        ]
        # Input keys, with the first consideration using each (for error messages).
        self.keys: list[str] = []
        self.per_target_keys: set[str] = set()
        self.first_use: dict[str, str] = {}
        for _, behavior, consideration in columns:
            key = consideration.input_key
            where = f"behavior {behavior.name!r}, consideration {key!r}"
            if key not in self.first_use:
                self.keys.append(key)
                self.first_use[key] = where
                if consideration.per_target:
                    self.per_target_keys.add(key)
            elif consideration.per_target != (key in self.per_target_keys):
                raise UtilityDefinitionError(
                    f"{where}: per_target for {key!r} differs from {self.first_use[key]}"
                )
        self.targeted = bool(self.per_target_keys)
        self._targeted_behaviors = np.array([b.targeted for b in self.behaviors], dtype=bool)

        # One stack row per distinct (input, curve): behaviors sharing a consideration share its work.
        distinct: dict[tuple[str, Curve], int] = {}
        column_distinct = [
            distinct.setdefault((consideration.input_key, consideration.curve), len(distinct))
            for _, _, consideration in columns
        ]
        pairs = list(distinct)
        self.stack = CurveStack([curve for _, curve in pairs], dtype)
        order = self.stack.order  # stack row j holds distinct pair order[j]
        n_rows, n_behaviors = len(pairs), len(self.behaviors)
        self._row_keys = [pairs[i][0] for i in order]
        row_of_pair = np.empty(n_rows, dtype=np.intp)
        row_of_pair[order] = np.arange(n_rows)
        position = row_of_pair[column_distinct]  # flat column -> stack row

        # Weighted sums: one (B, M) weight matrix, columns in stack order.
        self._sum_weights = np.zeros((n_behaviors, n_rows), dtype=dtype)
        product_rows: list[int] = []
        product_behaviors: list[int] = []
        product_starts: list[int] = []
        product_weights: list[float] = []
        product_compensation: list[float] = []
        for i, (b, behavior, consideration) in enumerate(columns):
            if behavior.aggregation == "weighted_sum":
                self._sum_weights[b, position[i]] += consideration.weight
                continue
            if not product_behaviors or product_behaviors[-1] != b:
                product_behaviors.append(b)
                product_starts.append(len(product_rows))
            product_rows.append(position[i])
            product_weights.append(consideration.weight)
            product_compensation.append(1.0 - 1.0 / len(behavior.considerations))
        self._product_behaviors = np.array(product_behaviors, dtype=np.intp)
        self._product_rows = np.array(product_rows, dtype=np.intp)
        self._product_starts = np.array(product_starts, dtype=np.intp)
        self._product_weights = np.array(product_weights, dtype=dtype)[:, np.newaxis]
        self._product_unweighted = bool((self._product_weights == 1.0).all())
        self._product_compensation: np.ndarray = np.array(product_compensation, dtype=dtype)[:, np.newaxis]

        vetoes = [
            (position[i], b, c.veto_below) for i, (b, _, c) in enumerate(columns) if c.veto_below is not None
        ]
        self._veto_rows = np.array([row for row, _, _ in vetoes], dtype=np.intp)
        self._veto_thresholds = np.array([[threshold] for _, _, threshold in vetoes], dtype=dtype)
        self._veto_owner = np.zeros((n_behaviors, len(vetoes)), dtype=dtype)
        for j, (_, b, _) in enumerate(vetoes):
            self._veto_owner[b, j] = 1.0
        # Products and vetoes read individual scores, so those need every score clamped up front.
        self._finish_early = bool(product_rows or vetoes)

        # The behavior weight multiplies after aggregation: folded into the weighted-sum matrix,
        # applied to products directly.
        weights = [[behavior.weight] for behavior in self.behaviors]
        behavior_weights: np.ndarray = np.array(weights, dtype=dtype)
        self._sum_weights *= behavior_weights
        self._sum_weights_t = np.ascontiguousarray(self._sum_weights.T)  # (M, B)
        self._veto_owner_t = np.ascontiguousarray(self._veto_owner.T)  # (V, B)
        self._product_behavior_weights = behavior_weights[self._product_behaviors]
        self._buffers: dict[int, _Buffers] = {}
        self._row_arrays = operator.itemgetter(*self._row_keys) if n_rows > 1 else self._one_row
        # Products and vetoes read clamped scores before the NaN check: they keep the clip.
        self._unclipped_ok = self.stack.has_saturating and not self._finish_early
        # Curves that may leave [0, 1] always end with the clamp, so a NaN input never reaches the totals.
        self._self_finishing = not all(group.bounded for group in self.stack._groups)
        self.nan_counts: dict[str, int] = {}  # NaN input values seen, per key (one per NPC and target)
        self._compiled: dict[str, CompiledScorer | None] = {}  # the kernel's plan, per level
        self._key_arrays = operator.itemgetter(*self.keys) if len(self.keys) > 1 else self._one_key

    def score(
        self, inputs: Mapping[str, npt.ArrayLike], target_mask: npt.ArrayLike | None = None
    ) -> FloatArray:
        """Scores (N, B) or (N, B, T), in a new array; the (M, N) work buffers stay inside.

        target_mask: (N, T) bools, False where an NPC has no such target (NPCs with fewer targets
        pad their per-target inputs); per-target behaviors score 0 there.
        """
        arrays, lead = self._flat_inputs(inputs)
        width = lead[0] * lead[-1] if len(lead) == 2 else lead[0]
        repeat = lead[-1] if len(lead) == 2 else 1  # scalar keys are repeated once per target
        plan = compiled_for(self, self._compiled)  # the compiled kernel, when it runs
        totals = None if plan is None else plan.totals(self._key_arrays(arrays), width)
        if totals is not None:
            assert plan is not None
            if plan.missing:  # NaN inputs, counted per key as the numpy path counts them
                for key, missing in zip(self.keys, plan.nan_counts.tolist(), strict=True):
                    if missing:
                        self.record_nan(key, missing if key in self.per_target_keys else missing // repeat)
        else:
            totals = self._numpy_totals(arrays, width, repeat)
        if len(lead) == 1:
            if target_mask is not None:
                raise UtilityError("target_mask given, but no behavior has per-target considerations")
            return totals
        result = totals.reshape(*lead, len(self.behaviors)).transpose(0, 2, 1)
        if target_mask is not None:
            mask = np.asarray(target_mask, dtype=bool)
            if mask.shape != lead:
                raise UtilityError(f"target_mask has shape {mask.shape}, the per-target inputs {lead}")
            result[:, self._targeted_behaviors, :] *= mask[:, np.newaxis, :]
        return result

    def _numpy_totals(self, arrays: dict[str, FloatArray], width: int, repeat: int) -> FloatArray:
        """(width, B) totals by numpy: the stack's passes, a matrix product, products, vetoes."""
        buffers = self._buffers_for(width)
        values, scores = buffers.values, buffers.scores
        np.concatenate(self._row_arrays(arrays), out=values.reshape(-1))
        # Weighted sums of inputs >= 0 (the common case, checked in one reduction): the saturating
        # curves skip their clip; an +inf input then shows up as NaN below, like a NaN input.
        non_negative = self._unclipped_ok and bool(_MINIMUM(values, axis=None) >= 0.0)
        self.stack.evaluate(
            values, out=scores, scratch=buffers.scratch, finish=self._finish_early, non_negative=non_negative
        )
        totals = self._aggregate(buffers)
        if self._finish_early:
            self._report_nan(values, repeat)
        elif np.isnan(_MINIMUM(totals, axis=None)):  # NaN (or +inf) input, bounded curve: clamp, redo
            self._report_nan(values, repeat)
            if non_negative:
                self.stack.evaluate(values, out=scores, scratch=buffers.scratch, finish=True)
            else:
                CurveStack.finish(scores)
            totals = self._aggregate(buffers)
        elif self._self_finishing:  # unbounded curves clamp a NaN to 0 themselves: look at the inputs
            self._report_nan(values, repeat)
        return totals

    def _one_key(self, arrays: Mapping[str, FloatArray]) -> tuple[FloatArray]:
        return (arrays[self.keys[0]],)

    def _one_row(self, arrays: Mapping[str, FloatArray]) -> tuple[FloatArray]:
        return (arrays[self._row_keys[0]],)

    def _aggregate(self, buffers: _Buffers) -> FloatArray:
        scores = buffers.scores
        # (L, B), C order; product behaviors' columns are 0 here. In blocks: one big product
        # would make OpenBLAS start threads, which on a busy machine is ten times slower.
        width = scores.shape[1]
        totals = np.empty((width, len(self.behaviors)), dtype=self.dtype)
        for start in range(0, width, _MATMUL_BLOCK):
            block = slice(start, start + _MATMUL_BLOCK)
            np.matmul(scores[:, block].T, self._sum_weights_t, out=totals[block])
        if len(self._product_behaviors):
            factors, work = buffers.factors, buffers.factor_work
            np.take(scores, self._product_rows, axis=0, out=factors)
            if not self._product_unweighted:
                np.power(factors, self._product_weights, out=factors)
            # f' = f + (1 - f)(1 - 1/n) f, in place: temporaries of this size cost page faults.
            np.subtract(1.0, factors, out=work)
            work *= self._product_compensation
            work *= factors
            factors += work
            products = np.multiply.reduceat(factors, self._product_starts, axis=0)
            products *= self._product_behavior_weights
            totals[:, self._product_behaviors] = products.T
        if len(self._veto_rows):
            below = buffers.vetoes
            np.take(scores, self._veto_rows, axis=0, out=below)
            np.less(below, self._veto_thresholds, out=below)  # 1.0 where vetoed
            totals[(below.T @ self._veto_owner_t) > 0.0] = 0.0
        return totals

    def _flat_inputs(
        self, inputs: Mapping[str, npt.ArrayLike]
    ) -> tuple[dict[str, FloatArray], tuple[int, ...]]:
        """Each key's input as one flat row (per-target keys N * T, scalar keys repeated T times)."""
        arrays: dict[str, FloatArray] = {}
        n: int | None = None
        targets: int | None = None
        first_key = first_target_key = ""
        for key in self.keys:
            if key not in inputs:
                raise MissingInputError(
                    f"{self.first_use[key]}: input {key!r} is missing from the batch inputs"
                )
            array = np.asarray(inputs[key])
            per_target = key in self.per_target_keys
            if array.ndim != (2 if per_target else 1):
                expected = "(N, T) for a per-target input" if per_target else "(N,)"
                raise UtilityError(
                    f"{self.first_use[key]}: {key!r} has shape {array.shape}, expected {expected}"
                )
            if n is None:
                n, first_key = array.shape[0], key
            if array.shape[0] != n or n == 0:
                raise UtilityError(
                    f"{self.first_use[key]}: {key!r} has {array.shape[0]} NPCs,"
                    f" {first_key!r} has {n} (need >= 1)"
                )
            if per_target:
                if targets is None:
                    targets, first_target_key = array.shape[1], key
                if array.shape[1] != targets or targets == 0:
                    raise UtilityError(
                        f"{self.first_use[key]}: {key!r} has {array.shape[1]} targets,"
                        f" {first_target_key!r} has {targets} (need >= 1)"
                    )
            arrays[key] = array
        assert n is not None  # a behavior has at least one consideration, so there is a key
        if targets is None:
            return arrays, (n,)
        for key, array in arrays.items():
            arrays[key] = array.reshape(-1) if key in self.per_target_keys else np.repeat(array, targets)
        return arrays, (n, targets)

    def _buffers_for(self, width: int) -> _Buffers:
        buffers = self._buffers.get(width)
        if buffers is None:
            self._buffers.clear()  # keep one size: the NPC count rarely changes
            rows = (
                len(self.stack),
                len(self.stack),
                len(self.stack),
                len(self._product_rows),
                len(self._product_rows),
                len(self._veto_rows),
            )
            buffers = _Buffers(*(np.empty((count, width), dtype=self.dtype) for count in rows))
            self._buffers[width] = buffers
        return buffers

    def _report_nan(self, values: FloatArray, repeat: int) -> None:
        with np.errstate(all="ignore"):  # a row may hold +inf and -inf, or sum past the largest float
            sums = np.add.reduce(values, axis=1)
        suspects = np.flatnonzero(np.isnan(sums))  # also +inf + -inf: rechecked
        counted: set[str] = set()
        for row in suspects:
            key = self._row_keys[row]
            missing = int(np.isnan(values[row]).sum())
            if key in counted or not missing:
                continue
            counted.add(key)
            self.record_nan(key, missing if key in self.per_target_keys else missing // repeat)

    def record_nan(self, key: str, missing: int) -> None:
        """Count `missing` NaN values of input `key` (logged the first time a key has any)."""
        if key not in self.nan_counts:
            log.warning(
                "%s: input %r is NaN for some NPCs; those considerations score 0", self.first_use[key], key
            )
        self.nan_counts[key] = self.nan_counts.get(key, 0) + missing
