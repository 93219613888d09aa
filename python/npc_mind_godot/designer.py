"""What the editor's designer tools compute with the real code: `NpcMindDesigner` (static methods).

The inspector's curve preview samples a `UtilityConsideration` through the same path the server
takes (`to_dict()` -> `npc_mind.utility` -> the curve), and the memory-profile preview draws the
forgetting curve of each memory type with `npc_mind.memory.curves`; neither keeps a copy of a formula.
`CURVE_PARAMETERS` names each curve family's parameters with a tooltip and a slider range (the
bounds the curve itself enforces stay in `npc_mind.utility.curves`; the defaults come from there).
"""

from __future__ import annotations

import dataclasses
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

# family -> parameter -> (tooltip, slider low, slider high); u is the input (normalised to [0, 1]
# when the consideration uses an input range). The sliders allow typing past their ends.
CURVE_PARAMETERS: dict[str, dict[str, tuple[str, float, float]]] = {
    "saturating": {
        "k": ("The input that scores 0.5 in u / (u + k): larger k rises more slowly (k > 0).", 0.01, 20.0),
    },
    "linear": {
        "m": ("Slope of m (u - c) + b: negative falls.", -5.0, 5.0),
        "c": ("Shift along the input: the line passes b at u = c.", -1.0, 2.0),
        "b": ("Offset: the score at u = c.", -1.0, 1.0),
    },
    "polynomial": {
        "m": ("Scale of m (u - c)^k + b: negative turns it upside down.", -5.0, 5.0),
        "k": ("Exponent (k > 0): 2 eases in, 0.5 eases out (u - c below 0 counts as 0).", 0.05, 8.0),
        "c": ("Shift along the input: the curve starts at u = c.", -1.0, 2.0),
        "b": ("Offset added to the score.", -1.0, 1.0),
    },
    "logistic": {
        "m": ("Steepness of the S: larger is sharper, negative falls instead of rising.", -50.0, 50.0),
        "k": ("Height of the S (the score it rises by).", 0.0, 2.0),
        "c": ("Midpoint: the input where the S is half way.", -1.0, 2.0),
        "b": ("Offset added to the score.", -1.0, 1.0),
    },
    "logit": {
        "m": ("Scale of m ln(z / (1 - z)) + b, z = u - c: the logistic's inverse.", -1.0, 1.0),
        "c": ("Shift along the input.", -1.0, 1.0),
        "b": ("Offset: the score at the middle (z = 0.5).", 0.0, 1.0),
    },
    "normal": {
        "m": ("Height of the bell.", 0.0, 2.0),
        "k": ("Width of the bell (its standard deviation, > 0).", 0.005, 1.0),
        "c": ("Centre: the input that scores highest.", -1.0, 2.0),
        "b": ("Offset added to the score.", -1.0, 1.0),
    },
    "sine": {
        "m": ("Amplitude of m sin(pi k (u - c)) + b.", -1.0, 1.0),
        "k": ("Half waves per unit of input.", 0.0, 8.0),
        "c": ("Shift along the input.", -1.0, 1.0),
        "b": ("Offset: the middle of the wave.", -1.0, 1.0),
    },
    "step": {
        "threshold": ("Inputs at or above it score high, below it low.", -1.0, 2.0),
        "low": ("The score below the threshold.", 0.0, 1.0),
        "high": ("The score at or above the threshold.", 0.0, 1.0),
    },
    "table": {},  # the consideration's Godot Curve, edited with the engine's curve editor
}
MEMORY_TYPE_NAMES = [kind.name.lower() for kind in MemoryType]


def _defaults(curve_type: str) -> dict[str, float]:
    cls = CURVE_TYPES[curve_type]
    return {field.name: field.default for field in dataclasses.fields(cls) if field.name in cls.param_names()}


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
        help_table = CURVE_PARAMETERS.get(str(curve_type))
        if not help_table:
            return []
        defaults = _defaults(str(curve_type))
        return [
            {"name": name, "default": float(defaults[name]), "min": low, "max": high, "tooltip": tooltip}
            for name, (tooltip, low, high) in help_table.items()
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
