"""Considerations and behaviors, and the per-NPC scoring path (the reference the batch path matches).

A behavior's score, for one context (and one target when it has per-target considerations):

- each consideration reads `context[input_key]` and maps it through its curve to s in [0, 1];
- `weighted_sum` (the design source): sum of weight x s, no automatic renormalisation;
- `product` (Infinite Axis Utility System): f = s ** weight, compensated for the number n of
  considerations, f' = f + (1 - f)(1 - 1/n) f, and the f' multiplied together;
- the behavior's `weight` multiplies the aggregate;
- a consideration with `veto_below` zeroes the behavior when its s < veto_below, whatever the
  aggregation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np

from npc_mind.utility.curves import Curve
from npc_mind.utility.errors import MissingInputError, UtilityDefinitionError, UtilityError, definition_number

Aggregation = Literal["weighted_sum", "product"]
AGGREGATIONS: tuple[str, ...] = ("weighted_sum", "product")
# A context value: one float, or one float per target for a per-target consideration.
ContextValue = float | Sequence[float] | np.ndarray
Context = Mapping[str, ContextValue]


def _non_negative(owner: str, name: str, value: object) -> float:
    number = definition_number(value)
    if number is None:
        raise UtilityDefinitionError(f"{owner}: {name} must be a number, got {value!r}")
    if not (math.isfinite(number) and number >= 0.0):
        raise UtilityDefinitionError(f"{owner}: {name} must be finite and >= 0, got {number}")
    return number


def _as_tuple(owner: str, name: str, items: object) -> tuple:
    try:
        return tuple(items)  # type: ignore[arg-type]  # not iterable: the TypeError below names the field
    except TypeError:
        raise UtilityDefinitionError(f"{owner}: {name} must be a list, got {items!r}") from None


@dataclass(frozen=True)
class Consideration:
    """One input of a behavior: `context[input_key]` mapped through `curve` to [0, 1].

    weight: >= 0, finite (a multiplier in `weighted_sum`, an exponent in `product`).
    veto_below: None or in [0, 1]; a curve output below it zeroes the behavior.
    per_target: the input is a sequence with one value per target (e.g. the distance to each enemy).
    """

    input_key: str
    curve: Curve
    weight: float = 1.0
    veto_below: float | None = None
    per_target: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.input_key, str) or not self.input_key:
            raise UtilityDefinitionError(
                f"consideration: input_key must be a non-empty string, got {self.input_key!r}"
            )
        owner = f"consideration {self.input_key!r}"
        if not isinstance(self.curve, Curve):
            raise UtilityDefinitionError(f"{owner}: curve must be a Curve, got {self.curve!r}")
        object.__setattr__(self, "weight", _non_negative(owner, "weight", self.weight))
        if self.veto_below is not None:
            veto = _non_negative(owner, "veto_below", self.veto_below)
            if veto > 1.0:
                raise UtilityDefinitionError(f"{owner}: veto_below must be in [0, 1], got {veto}")
            object.__setattr__(self, "veto_below", veto)
        if not isinstance(self.per_target, bool):
            raise UtilityDefinitionError(f"{owner}: per_target must be a bool, got {self.per_target!r}")


@dataclass(frozen=True)
class ConsiderationExplanation:
    """How one consideration scored: for debugging and for the editor."""

    input_key: str
    raw_input: float
    curve_output: float
    weight: float
    contribution: float  # weight x s (weighted_sum) or the compensated factor f' (product)
    vetoed: bool
    nan_input: bool


@dataclass(frozen=True)
class BehaviorExplanation:
    """How one behavior scored against one target (target_index None: no per-target inputs)."""

    behavior: str
    target_index: int | None
    score: float
    vetoed: bool
    considerations: tuple[ConsiderationExplanation, ...]


@dataclass(frozen=True)
class Behavior:
    """A candidate action and how to score it.

    aggregation: "weighted_sum" or "product".
    weight: >= 0, finite; multiplies the aggregate.
    tags: let a caller restrict the choice (e.g. to the LLM's intent).
    cooldown: seconds >= 0 during which the behavior cannot be chosen again after it stops.
    """

    name: str
    considerations: Sequence[Consideration]
    aggregation: Aggregation = "weighted_sum"
    weight: float = 1.0
    tags: Sequence[str] = ()
    cooldown: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise UtilityDefinitionError(f"behavior: name must be a non-empty string, got {self.name!r}")
        owner = f"behavior {self.name!r}"
        considerations = _as_tuple(owner, "considerations", self.considerations)
        if not considerations:
            raise UtilityDefinitionError(f"{owner}: needs at least one consideration")
        for consideration in considerations:
            if not isinstance(consideration, Consideration):
                raise UtilityDefinitionError(f"{owner}: {consideration!r} is not a Consideration")
        object.__setattr__(self, "considerations", considerations)
        if self.aggregation not in AGGREGATIONS:
            raise UtilityDefinitionError(
                f"{owner}: unknown aggregation {self.aggregation!r}, expected {' or '.join(AGGREGATIONS)}"
            )
        object.__setattr__(self, "weight", _non_negative(owner, "weight", self.weight))
        if all(consideration.weight == 0.0 for consideration in considerations):
            raise UtilityDefinitionError(f"{owner}: every consideration weight is zero")
        if isinstance(self.tags, str):
            raise UtilityDefinitionError(f"{owner}: tags must be a list of strings, not one string")
        tags = _as_tuple(owner, "tags", self.tags)
        if not all(isinstance(tag, str) and tag for tag in tags):
            raise UtilityDefinitionError(f"{owner}: tags must be non-empty strings, got {tags!r}")
        object.__setattr__(self, "tags", tags)
        object.__setattr__(self, "cooldown", _non_negative(owner, "cooldown", self.cooldown))

    @cached_property
    def targeted(self) -> bool:
        """Scored once per target: at least one consideration reads a per-target input."""
        return any(consideration.per_target for consideration in self.considerations)

    def score(self, context: Context, target_index: int | None = None) -> float:
        return self.explain(context, target_index).score

    def explain(self, context: Context, target_index: int | None = None) -> BehaviorExplanation:
        """Score against one context (and target), keeping every consideration's numbers."""
        if self.targeted and target_index is None:
            raise UtilityError(f"behavior {self.name!r} has per-target considerations: give a target_index")
        product = self.aggregation == "product"
        compensation = 1.0 - 1.0 / len(self.considerations)
        total = 1.0 if product else 0.0
        vetoed = False
        rows = []
        for consideration in self.considerations:
            raw = self._read_input(context, consideration, target_index)
            score = consideration.curve._scalar(raw)  # the plain-Python kernel, as curve(raw)
            consideration_vetoed = consideration.veto_below is not None and score < consideration.veto_below
            vetoed = vetoed or consideration_vetoed
            if product:
                factor = score**consideration.weight
                contribution = factor + (1.0 - factor) * compensation * factor
                total *= contribution
            else:
                contribution = consideration.weight * score
                total += contribution
            rows.append(
                ConsiderationExplanation(
                    consideration.input_key,
                    raw,
                    score,
                    consideration.weight,
                    contribution,
                    consideration_vetoed,
                    math.isnan(raw),
                )
            )
        final = 0.0 if vetoed else total * self.weight
        return BehaviorExplanation(self.name, target_index, final, vetoed, tuple(rows))

    def _read_input(self, context: Context, consideration: Consideration, target_index: int | None) -> float:
        key = consideration.input_key
        if key in context and not consideration.per_target:
            try:
                return float(context[key])  # type: ignore[arg-type]  # a bad value raises TypeError, reported below
            except (TypeError, ValueError):
                pass  # the clear error below
        where = f"behavior {self.name!r}, consideration {key!r}"
        if key not in context:
            raise MissingInputError(f"{where}: input {key!r} is missing from the context")
        value = context[key]
        if consideration.per_target:
            values = np.asarray(value, dtype=np.float64)
            if values.ndim != 1:
                raise UtilityError(
                    f"{where}: a per-target input must be a sequence of numbers, got {value!r}"
                )
            if target_index is None or not 0 <= target_index < len(values):
                raise UtilityError(
                    f"{where}: target index {target_index} is out of range for {len(values)} targets"
                )
            return float(values[target_index])
        try:
            return float(value)  # type: ignore[arg-type]  # a bad value raises TypeError, reported below
        except (TypeError, ValueError):
            raise UtilityError(f"{where}: input must be a number, got {value!r}") from None
