"""One meaning everywhere: a consideration defined in the inspector (a UtilityConsideration
resource, scored by the server in the engine) and the same one written in Python or JSON score the
same, for every curve family, with and without an input range. The one default: no input range (the
curve reads the raw input); `use_input_range` in the inspector, `input_min`/`input_max` in Python
and JSON, turn it on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from npc_mind.utility import Consideration, UtilitySelector
from npc_mind.utility.behavior import Behavior
from npc_mind.utility.curves import CURVE_TYPES
from tests.support.godot import run_godot

ROOT = Path(__file__).resolve().parents[1]
TABLE_POINTS = [[0.0, 0.0], [0.5, 0.8], [1.0, 1.0]]
PARAMS = {
    "saturating": {"k": 2.0},
    "linear": {"m": -0.8, "c": 0.1, "b": 0.9},
    "polynomial": {"m": 1.2, "k": 0.5, "c": 0.1, "b": 0.0},
    "logistic": {"m": -12.0, "k": 0.9, "c": 0.4, "b": 0.05},
    "logit": {"m": 0.2, "c": 0.0, "b": 0.5},
    "normal": {"m": 0.9, "k": 0.2, "c": 0.6, "b": 0.05},
    "sine": {"m": 0.5, "k": 1.5, "c": 0.2, "b": 0.5},
    "step": {"threshold": 0.45, "low": 0.1, "high": 0.9},
    "table": {},
}
CASES = [
    {"family": family, "params": params, "range": span, "invert": invert,
     "points": TABLE_POINTS if family == "table" else []}
    for family, params in PARAMS.items()
    for span, invert in ((None, False), ([0.0, 10.0], False), ([-1.0, 2.0], True))
]  # fmt: skip

pytestmark = pytest.mark.godot


def python_consideration(case: dict[str, Any]) -> Consideration:
    """The same consideration written in Python, with the curve classes."""
    span = {} if case["range"] is None else {"input_min": case["range"][0], "input_max": case["range"][1]}
    extra = {"points": case["points"]} if case["family"] == "table" else {}
    curve = CURVE_TYPES[case["family"]](**case["params"], **extra, **span, invert=case["invert"])
    return Consideration("x", curve)


def json_selector(case: dict[str, Any]) -> UtilitySelector:
    """The same consideration written as JSON by hand (the data format)."""
    consideration: dict[str, Any] = {"input_key": "x", "curve_type": case["family"], "invert": case["invert"]}
    if case["params"]:
        consideration["curve_params"] = case["params"]
    if case["range"] is not None:
        consideration["input_min"], consideration["input_max"] = case["range"]
    if case["family"] == "table":
        consideration["points"] = case["points"]
    return UtilitySelector.from_json(
        json.dumps({"behaviors": [{"name": "b", "considerations": [consideration]}]})
    )


@pytest.fixture(scope="module")
def engine_scores() -> dict[int, dict[str, Any]]:
    run = run_godot(ROOT, "-s", "res://tests/addon/one_meaning.gd", "--", f"--cases={json.dumps(CASES)}")
    assert run.returncode == 0, run.log
    assert run.json_lines()[-1] == {"done": True}, run.log
    assert not run.errors(), run.log
    return {line["case"]: line for line in run.json_lines() if "case" in line}


@pytest.mark.parametrize("index", range(len(CASES)), ids=lambda i: f"{CASES[i]['family']}-{i % 3}")
def test_inspector_python_and_json_score_the_same(
    engine_scores: dict[int, dict[str, Any]], index: int
) -> None:
    case = CASES[index]
    line = engine_scores[index]
    by_hand = UtilitySelector([Behavior("b", [python_consideration(case)])])
    from_json = json_selector(case)
    tolerance = 1e-6 if case["family"] == "table" else 1e-9  # a Godot Curve stores float32 points
    for value, engine in zip(line["inputs"], line["scores"], strict=True):
        python = by_hand.rank({"x": value})[0][-1]
        assert engine == pytest.approx(python, abs=tolerance), (case, value)
        assert from_json.rank({"x": value})[0][-1] == pytest.approx(python, abs=1e-12), (case, value)


def test_saturating_k2_at_6_scores_three_quarters_everywhere(
    engine_scores: dict[int, dict[str, Any]],
) -> None:
    # The example: the inspector used to normalise by a default [0, 1] range (1/3).
    line = engine_scores[
        CASES.index(next(c for c in CASES if c["family"] == "saturating" and c["range"] is None))
    ]
    assert "input_min" not in line["definition"]
    assert line["scores"][line["inputs"].index(6.0)] == pytest.approx(0.75)
