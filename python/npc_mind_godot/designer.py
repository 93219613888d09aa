"""What the editor's designer tools compute with the real code: `NpcMindDesigner` (static methods).

The inspector's curve preview samples a `UtilityConsideration` through the same path the server
takes (`to_dict()` -> `npc_mind.utility` -> the curve), and the memory-profile preview draws the
forgetting curve of each memory type with `npc_mind.memory.curves`; neither keeps a copy of a formula.
Each curve family's parameters (default, tooltip, slider range) come from `npc_mind.utility.families`,
the table the curve classes and the docs read too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gdbridge import classes
from gdbridge.declare import PackedFloat64Array
from gdbridge.types import PackedStringArray
from npc_mind.memory import MemoryType
from npc_mind.memory.curves import curve_points
from npc_mind.server.memories import MemoryProfileSpec
from npc_mind.utility import UtilityError, UtilitySelector
from npc_mind.utility.curves import CURVE_TYPES
from npc_mind.utility.families import FAMILIES

MEMORY_TYPE_NAMES = [kind.name.lower() for kind in MemoryType]


def preview_curve(definition: dict[str, Any]) -> Any:
    """The curve a consideration definition (the data format's dict) builds, as the server builds it."""
    selector = UtilitySelector.from_dict({"behaviors": [{"name": "preview", "considerations": [definition]}]})
    return selector.behaviors[0].considerations[0].curve


class NpcMindDesigner(classes.Object):
    """Editor helpers for npc_mind's designer tools (static methods; the inspector previews use them)."""

    @staticmethod
    def get_curve_types() -> PackedStringArray:
        """The response curve families, in the order the inspector lists them."""
        return PackedStringArray(list(CURVE_TYPES))

    @staticmethod
    def get_curve_parameters(curve_type: str) -> list:
        """The family's parameters: [{name, default, min, max, tooltip}] ([] for table or unknown)."""
        family = FAMILIES.get(str(curve_type))
        parameters = family.parameters if family is not None else ()
        return [
            {
                "name": p.name,
                "default": p.default,
                "min": p.slider[0],
                "max": p.slider[1],
                "tooltip": p.tooltip,
            }
            for p in parameters
        ]

    @staticmethod
    def sample_consideration(consideration: Any, inputs: PackedFloat64Array) -> dict:
        """The consideration's curve at each raw input: {scores, error} (error: why it cannot score)."""
        definition = consideration.to_dict()
        # A new consideration has no key yet: its curve still has a shape (the selector warns about the key).
        definition["input_key"] = definition["input_key"] or "input"
        try:
            curve = preview_curve(definition)
        except UtilityError as error:
            return {"scores": np.zeros(0), "error": str(error)}
        scores = curve(np.asarray(inputs, dtype=np.float64))
        return {"scores": np.asarray(scores, dtype=np.float64), "error": ""}

    @staticmethod
    def get_configuration_warnings(node: Any) -> PackedStringArray:
        """The configuration warnings an npc_mind node shows now (what the Scene dock reads)."""
        read = getattr(node, "_get_configuration_warnings", None)
        return PackedStringArray(list(read())) if callable(read) else PackedStringArray()

    @staticmethod
    def sample_forgetting(profile: Any, ages: PackedFloat64Array, salience: float) -> dict:
        """R over `ages` (seconds since last woken) for a fresh memory of each type at `salience`
        (S0 = base x (0.5 + salience)): {names, stability, r: [per type], search, pursue, forget,
        curve, error}. `profile` null: the defaults."""
        try:
            spec = profile.to_spec() if profile is not None else MemoryProfileSpec()
        except ValueError as error:
            return {"names": PackedStringArray(), "r": [], "error": str(error)}
        params = spec.params
        grid = np.asarray(ages, dtype=np.float64)
        scale = 0.5 + min(max(float(salience), 0.0), 1.0)
        stability = [min(float(base) * scale, params.max_stability) for base in params.base_stability]
        return {
            "names": PackedStringArray(MEMORY_TYPE_NAMES),
            "stability": stability,
            "r": [curve_points(grid, value, params) for value in stability],
            "search": float(params.awareness_search),
            "pursue": float(params.awareness_pursue),
            "forget": float(params.forget_threshold),
            "curve": str(params.curve),
            "error": "",
        }
