"""Batched scoring: every NPC sharing one definition scored in a handful of numpy passes.

The definition is compiled once: all considerations of all behaviours become the M columns of a
`CurveStack` (grouped by curve family, so each family is one pass over an (N, M) slice), inputs are
gathered into that layout with one `np.take`, weighted sums are one matrix product, products one
`multiply.reduceat`. The (N, K) input and (N, M) work arrays are kept and reused between calls.

Inputs: a scalar key maps to an (N,) array; a per-target key to an (N, T) array (the same T for
all per-target keys). Scores are (N, B), or (N, B, T) when any behaviour is per-target (behaviours
without per-target inputs then have the same score for every target).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from npc_mind.utility.behavior import Behavior
from npc_mind.utility.curves import CurveStack, FloatArray
from npc_mind.utility.errors import MissingInputError, UtilityDefinitionError, UtilityError

log = logging.getLogger("npc_mind.utility")


class BatchScorer:
    """Scores N NPCs against one list of behaviours; see the module docstring for shapes."""

    def __init__(self, behaviors: Sequence[Behavior]) -> None:
        self.behaviors = tuple(behaviors)
        columns = [
            (b, behavior, c) for b, behavior in enumerate(self.behaviors) for c in behavior.considerations
        ]
        # Input keys, with the first consideration using each (for error messages).
        self.keys: list[str] = []
        self.per_target_keys: set[str] = set()
        self._first_use: dict[str, str] = {}
        for _, behavior, consideration in columns:
            key = consideration.input_key
            where = f"behavior {behavior.name!r}, consideration {key!r}"
            if key not in self._first_use:
                self.keys.append(key)
                self._first_use[key] = where
                if consideration.per_target:
                    self.per_target_keys.add(key)
            elif consideration.per_target != (key in self.per_target_keys):
                raise UtilityDefinitionError(
                    f"{where}: per_target for {key!r} differs from {self._first_use[key]}"
                )
        self.targeted = bool(self.per_target_keys)
        key_index = {key: j for j, key in enumerate(self.keys)}

        self.stack = CurveStack([consideration.curve for _, _, consideration in columns])
        order = self.stack.order  # stack column j holds flat column order[j]
        n_columns, n_behaviors = len(columns), len(self.behaviors)
        self._gather = np.array([key_index[columns[i][2].input_key] for i in order], dtype=np.intp)
        position = np.empty(n_columns, dtype=np.intp)
        position[order] = np.arange(n_columns)  # flat column -> stack column

        # Weighted sums: one (M, B) weight matrix, rows in stack order.
        self._sum_weights = np.zeros((n_columns, n_behaviors))
        product_columns: list[int] = []
        self._product_behaviors: list[int] = []
        product_starts: list[int] = []
        product_weights: list[float] = []
        product_compensation: list[float] = []
        for i, (b, behavior, consideration) in enumerate(columns):
            if behavior.aggregation == "weighted_sum":
                self._sum_weights[position[i], b] = consideration.weight
                continue
            if not self._product_behaviors or self._product_behaviors[-1] != b:
                self._product_behaviors.append(b)
                product_starts.append(len(product_columns))
            product_columns.append(position[i])
            product_weights.append(consideration.weight)
            product_compensation.append(1.0 - 1.0 / len(behavior.considerations))
        self._any_sum = any(behavior.aggregation == "weighted_sum" for behavior in self.behaviors)
        self._product_columns = np.array(product_columns, dtype=np.intp)
        self._product_starts = np.array(product_starts, dtype=np.intp)
        self._product_weights = np.array(product_weights)
        self._product_unweighted = bool((self._product_weights == 1.0).all())
        self._product_compensation = np.array(product_compensation)

        vetoes = [
            (position[i], b, c.veto_below) for i, (b, _, c) in enumerate(columns) if c.veto_below is not None
        ]
        self._veto_columns = np.array([column for column, _, _ in vetoes], dtype=np.intp)
        self._veto_thresholds = np.array([threshold for _, _, threshold in vetoes])
        self._veto_owner = np.zeros((len(vetoes), n_behaviors))
        for row, (_, b, _) in enumerate(vetoes):
            self._veto_owner[row, b] = 1.0

        self._behavior_weights = np.array([behavior.weight for behavior in self.behaviors])
        self._buffers: dict[tuple[int, ...], tuple[FloatArray, FloatArray, FloatArray]] = {}
        self.nan_counts: dict[str, int] = {}

    def score(self, inputs: Mapping[str, npt.ArrayLike], check_nan: bool = True) -> FloatArray:
        """Scores (N, B) or (N, B, T); a new array, the work buffers stay inside."""
        lead = self._lead_shape(inputs)
        values, gathered, scores = self._buffers_for(lead)
        for j, key in enumerate(self.keys):
            array = np.asarray(inputs[key], dtype=np.float64)
            values[..., j] = (
                array[:, np.newaxis] if self.targeted and key not in self.per_target_keys else array
            )
        if check_nan:
            self._report_nan(values)
        np.take(values, self._gather, axis=-1, out=gathered)
        self.stack.evaluate(gathered, out=scores)

        out = np.empty((*lead, len(self.behaviors)))
        if self._any_sum:
            np.matmul(scores, self._sum_weights, out=out)
        if len(self._product_behaviors):
            factors = np.take(scores, self._product_columns, axis=-1)
            if not self._product_unweighted:
                np.power(factors, self._product_weights, out=factors)
            # f' = f + (1 - f)(1 - 1/n) f
            factors += (1.0 - factors) * self._product_compensation * factors
            out[..., self._product_behaviors] = np.multiply.reduceat(factors, self._product_starts, axis=-1)
        if len(self._veto_columns):
            below = np.take(scores, self._veto_columns, axis=-1) < self._veto_thresholds
            vetoed = (below.astype(np.float64) @ self._veto_owner) > 0.0
            out[vetoed] = 0.0
        out *= self._behavior_weights
        return np.moveaxis(out, -1, 1) if self.targeted else out

    def _lead_shape(self, inputs: Mapping[str, npt.ArrayLike]) -> tuple[int, ...]:
        n: int | None = None
        targets: int | None = None
        for key in self.keys:
            if key not in inputs:
                raise MissingInputError(
                    f"{self._first_use[key]}: input {key!r} is missing from the batch inputs"
                )
            shape = np.shape(inputs[key])
            per_target = key in self.per_target_keys
            if len(shape) != (2 if per_target else 1):
                expected = "(N, T) for a per-target input" if per_target else "(N,)"
                raise UtilityError(
                    f"{self._first_use[key]}: input {key!r} has shape {shape}, expected {expected}"
                )
            if n is None:
                n = shape[0]
            if shape[0] != n:
                raise UtilityError(
                    f"{self._first_use[key]}: input {key!r} has {shape[0]} NPCs, others have {n}"
                )
            if per_target:
                if targets is None:
                    targets = shape[1]
                if shape[1] != targets or targets == 0:
                    raise UtilityError(
                        f"{self._first_use[key]}: {key!r} has {shape[1]} targets, expected {targets} (>= 1)"
                    )
        assert n is not None  # a behaviour has at least one consideration, so there is a key
        return (n, targets) if targets is not None else (n,)

    def _buffers_for(self, lead: tuple[int, ...]) -> tuple[FloatArray, FloatArray, FloatArray]:
        buffers = self._buffers.get(lead)
        if buffers is None:
            self._buffers.clear()  # keep one shape: the NPC count rarely changes
            buffers = (
                np.empty((*lead, len(self.keys))),
                np.empty((*lead, len(self.stack))),
                np.empty((*lead, len(self.stack))),
            )
            self._buffers[lead] = buffers
        return buffers

    def _report_nan(self, values: FloatArray) -> None:
        missing = np.isnan(values).reshape(-1, len(self.keys)).sum(axis=0)
        for j in np.flatnonzero(missing):
            key = self.keys[j]
            if key not in self.nan_counts:
                log.warning(
                    "%s: input %r is NaN for some NPCs; those considerations score 0",
                    self._first_use[key],
                    key,
                )
            self.nan_counts[key] = self.nan_counts.get(key, 0) + int(missing[j])
