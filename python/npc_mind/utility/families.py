"""The response curve families, each described once: its formula, a one-line description, and its
parameters with their defaults, bounds, meaning and slider range.

Who reads it: the curve classes (`curves.py`: each field's default), the inspector's parameter
table (`npc_mind_godot.designer.NpcMindDesigner.get_curve_parameters`), UtilityConsideration's
docstring (`summary`: the editor's help) and the family table of docs/classes/UtilityConsideration.md
(`markdown_table`, written by tools/gen_class_docs.py; a test fails when the page drifts). The
formulas themselves are code in `rules.py`; the bounds are enforced by each class's checks, and
`bound` says them in words. u is the input (normalised to [0, 1] when the consideration uses an
input range).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Parameter:
    """One parameter of a family: `label` a word or two for tables, `tooltip` the inspector's
    sentence, `slider` the inspector's range (typing past its ends is allowed), `bound` the limits
    the curve enforces ("" when any finite number will do)."""

    name: str
    default: float
    label: str
    tooltip: str
    slider: tuple[float, float]
    bound: str = ""


@dataclass(frozen=True)
class Family:
    """A curve family: the `curve_type` of the data format, its formula, what it is for, and its
    parameters in declaration order (the data format's `curve_params`)."""

    type_name: str
    formula: str
    description: str
    parameters: tuple[Parameter, ...] = ()

    def default(self, name: str) -> float:
        return next(p.default for p in self.parameters if p.name == name)


P = Parameter
_OFFSET = "Offset added to the score."
FAMILIES: dict[str, Family] = {
    family.type_name: family
    for family in (
        Family(
            "saturating", "u / (u + k)", "Diminishing returns (the design source); u < 0 counts as 0.", (
                P("k", 1.0, "the input scoring 0.5",
                  "The input that scores 0.5 in u / (u + k): larger k rises more slowly (k > 0).",
                  (0.01, 20.0), "0 < k <= 1e12"),
            ),
        ),
        Family("linear", "m (u - c) + b", "A straight line.", (
            P("m", 1.0, "slope", "Slope of m (u - c) + b: negative falls.", (-5.0, 5.0)),
            P("c", 0.0, "shift", "Shift along the input: the line passes b at u = c.", (-1.0, 2.0)),
            P("b", 0.0, "offset", "Offset: the score at u = c.", (-1.0, 1.0)),
        )),
        Family(
            "polynomial", "m (u - c)^k + b",
            "Eases in (k > 1) or out (k < 1); for a fractional k, u - c below 0 counts as 0.", (
                P("m", 1.0, "scale", "Scale of m (u - c)^k + b: negative turns it upside down.", (-5.0, 5.0)),
                P("k", 2.0, "exponent",
                  "Exponent (k > 0): 2 eases in, 0.5 eases out (u - c below 0 counts as 0).",
                  (0.05, 8.0), "k > 0"),
                P("c", 0.0, "shift", "Shift along the input: the curve starts at u = c.", (-1.0, 2.0)),
                P("b", 0.0, "offset", _OFFSET, (-1.0, 1.0)),
            ),
        ),
        Family("logistic", "k / (1 + e^(-m (u - c))) + b", "An S: rises (or falls, m < 0) around c.", (
            P("m", 10.0, "steepness",
              "Steepness of the S: larger is sharper, negative falls instead of rising.", (-50.0, 50.0)),
            P("k", 1.0, "height", "Height of the S (the score it rises by).", (0.0, 2.0)),
            P("c", 0.5, "midpoint", "Midpoint: the input where the S is half way.", (-1.0, 2.0)),
            P("b", 0.0, "offset", _OFFSET, (-1.0, 1.0)),
        )),
        Family("logit", "m ln(z / (1 - z)) + b, z = u - c", "The logistic's inverse (z inside (0, 1)).", (
            P("m", 0.1, "scale", "Scale of m ln(z / (1 - z)) + b, z = u - c: the logistic's inverse.",
              (-1.0, 1.0)),
            P("c", 0.0, "shift", "Shift along the input.", (-1.0, 1.0)),
            P("b", 0.5, "offset", "Offset: the score at the middle (z = 0.5).", (0.0, 1.0)),
        )),
        Family("normal", "m e^(-(u - c)^2 / (2 k^2)) + b", "A bell at c, k wide.", (
            P("m", 1.0, "height", "Height of the bell.", (0.0, 2.0)),
            P("k", 0.15, "width", "Width of the bell (its standard deviation, > 0).", (0.005, 1.0), "k > 0"),
            P("c", 0.5, "centre", "Centre: the input that scores highest.", (-1.0, 2.0)),
            P("b", 0.0, "offset", _OFFSET, (-1.0, 1.0)),
        )),
        Family("sine", "m sin(pi k (u - c)) + b", "A wave.", (
            P("m", 1.0, "amplitude", "Amplitude of m sin(pi k (u - c)) + b.", (-1.0, 1.0)),
            P("k", 1.0, "half waves per unit", "Half waves per unit of input.", (0.0, 8.0)),
            P("c", 0.0, "shift", "Shift along the input.", (-1.0, 1.0)),
            P("b", 0.0, "offset", "Offset: the middle of the wave.", (-1.0, 1.0)),
        )),
        Family("step", "high if u >= threshold else low", "On or off at a threshold.", (
            P("threshold", 0.5, "threshold", "Inputs at or above it score high, below it low.", (-1.0, 2.0)),
            P("low", 0.0, "below", "The score below the threshold.", (0.0, 1.0)),
            P("high", 1.0, "at or above", "The score at or above the threshold.", (0.0, 1.0)),
        )),
        Family(
            "table", "piecewise linear through the baked `curve`",
            "A baked Godot Curve, flat beyond its end points (>= 2 points, x increasing): edit the Curve.",
        ),
    )
}  # fmt: skip


def markdown_table() -> str:
    """The families as the Markdown table of docs/classes/UtilityConsideration.md."""
    rows = ["| `curve_type` | shape | parameters (default) |", "|---|---|---|"]
    for family in FAMILIES.values():
        parameters = ", ".join(
            f"`{p.name}` {p.label} ({p.default:g}{', ' + p.bound if p.bound else ''})"
            for p in family.parameters
        )
        rows.append(f"| `{family.type_name}` | {family.formula} | {parameters or 'none (edit the Curve)'} |")
    return "\n".join(rows) + "\n"


def summary() -> str:
    """The families in one sentence of prose (UtilityConsideration's docstring, the editor's help)."""
    return "; ".join(
        f"`{family.type_name}` {family.formula}"
        + (f" ({', '.join(p.name for p in family.parameters)})" if family.parameters else "")
        for family in FAMILIES.values()
    )
