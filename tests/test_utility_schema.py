"""The data format: dict / JSON round trip, every field named, clear errors for bad definitions."""

import copy
import json

import pytest

from npc_mind.utility import UtilityDefinitionError, UtilitySelector
from npc_mind.utility.schema import BEHAVIOR_FIELDS, CONSIDERATION_FIELDS, SELECTOR_FIELDS


def guard_definition() -> dict:
    """A selector as a designer would export it from the Godot inspector."""
    return {
        "behaviors": [
            {
                "name": "attack",
                "aggregation": "product",
                "weight": 1.2,
                "tags": ["hostile"],
                "cooldown": 1.5,
                "considerations": [
                    {
                        "input_key": "enemy_distance",
                        "curve_type": "logistic",
                        "curve_params": {"m": -12.0, "c": 0.4},
                        "input_min": 0.0,
                        "input_max": 30.0,
                        "per_target": True,
                    },
                    {
                        "input_key": "ammo",
                        "curve_type": "saturating",
                        "curve_params": {"k": 2.0},
                        "veto_below": 0.05,
                    },
                ],
            },
            {
                "name": "patrol",
                "considerations": [
                    {
                        "input_key": "calm",
                        "curve_type": "table",
                        "points": [[0.0, 0.1], [0.5, 0.9], [1.0, 1.0]],
                        "weight": 0.5,
                        "invert": True,
                    }
                ],
            },
        ],
        "momentum": 0.1,
        "commitment": 2.0,
        "seed": 4,
    }


CONTEXT = {"enemy_distance": [5.0, 25.0], "ammo": 3.0, "calm": 0.3}


def test_dict_and_json_round_trip_keeps_definition_and_numbers() -> None:
    selector = UtilitySelector.from_dict(guard_definition())
    data = selector.to_dict()
    assert UtilitySelector.from_dict(data).to_dict() == data
    again = UtilitySelector.from_json(selector.to_json())
    assert again.to_dict() == data
    assert again.rank(CONTEXT) == selector.rank(CONTEXT)
    assert json.loads(selector.to_json()) == data


def test_to_dict_writes_every_field_with_defaults_filled_in() -> None:
    data = UtilitySelector.from_dict(guard_definition()).to_dict()
    assert tuple(data) == SELECTOR_FIELDS
    patrol = data["behaviors"][1]
    assert tuple(patrol) == BEHAVIOR_FIELDS
    assert patrol["aggregation"] == "weighted_sum" and patrol["weight"] == 1.0 and patrol["cooldown"] == 0.0
    distance = data["behaviors"][0]["considerations"][0]
    assert tuple(distance) == CONSIDERATION_FIELDS
    # Missing curve parameters take the family default and are written out.
    assert distance["curve_params"] == {"m": -12.0, "k": 1.0, "c": 0.4, "b": 0.0}
    assert distance["points"] == [] and distance["weight"] == 1.0 and distance["veto_below"] is None
    calm = patrol["considerations"][0]
    assert calm["curve_type"] == "table" and calm["curve_params"] == {}
    assert calm["points"] == [[0.0, 0.1], [0.5, 0.9], [1.0, 1.0]]
    assert data["interrupt_margin"] == 0.25 and data["top_n"] == 1


def test_the_loaded_selector_behaves_as_defined() -> None:
    selector = UtilitySelector.from_dict(guard_definition())
    rows = {(name, target): score for name, target, score in selector.rank(CONTEXT)}
    # Near enemy (target 0) outscores the far one; the inverted table gives 1 - 0.58 for calm 0.3.
    assert rows[("attack", 0)] > rows[("attack", 1)]
    assert rows[("patrol", None)] == pytest.approx(0.5 * (1.0 - (0.1 + 0.8 * 0.6)))
    assert selector.settings.momentum == 0.1 and selector.settings.commitment == 2.0


def _break(path: tuple, value: object) -> dict:
    data = copy.deepcopy(guard_definition())
    target = data
    for step in path[:-1]:
        target = target[step]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


_DELETE = object()
FIRST = ("behaviors", 0, "considerations", 0)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (
            (*FIRST, "curve_type"),
            "spline",
            "behavior 'attack', consideration 'enemy_distance': unknown curve_type",
        ),
        (
            (*FIRST, "curve_params"),
            {"m": "steep"},
            "behavior 'attack', consideration 'enemy_distance': .*m must be",
        ),
        ((*FIRST, "curve_params"), {"slope": 1.0}, "consideration 'enemy_distance': .*unknown curve_params"),
        (
            ("behaviors", 0, "considerations", 1, "curve_params"),
            {"k": -2.0},
            "consideration 'ammo': saturating",
        ),
        ((*FIRST, "input_max"), -1.0, "consideration 'enemy_distance': .*below input_max"),
        ((*FIRST, "points"), [[0, 0], [1, 1]], "points are only for a table curve"),
        (("behaviors", 1, "considerations", 0, "points"), [[0, 0]], "consideration 'calm': table curve"),
        ((*FIRST, "weigth"), 1.0, r"consideration #0: unknown fields \['weigth'\]"),
        ((*FIRST, "input_key"), _DELETE, "missing required fields"),
        (("behaviors", 0, "aggregation"), "max", "behavior 'attack': unknown aggregation"),
        (
            ("behaviors", 1, "considerations", 0, "weight"),
            0.0,
            "behavior 'patrol': every consideration weight is zero",
        ),
        (("behaviors", 1, "name"), "attack", "unique"),
        (("behaviors", 1, "tags"), "calm", "behavior 'patrol': tags must be a list"),
        (("behaviors", 1, "tags"), None, "behavior 'patrol': tags must be a list"),
        (("behaviors", 1, "cooldown"), None, "behavior 'patrol': cooldown must be a number"),
        (
            ("behaviors", 1, "considerations", 0, "invert"),
            None,
            "consideration 'calm': .*invert must be a bool",
        ),
        (("momentum",), -1.0, "momentum"),
        (("format",), "something.else", "format"),
        (("version",), 2, "unsupported version"),
        (("behaviors",), {}, "behaviors must be a list"),
    ],
)
def test_invalid_definitions_name_behavior_and_consideration(
    path: tuple, value: object, message: str
) -> None:
    with pytest.raises(UtilityDefinitionError, match=message):
        UtilitySelector.from_dict(_break(path, value))


def test_an_input_used_per_target_and_not_is_rejected() -> None:
    data = guard_definition()
    data["behaviors"][1]["considerations"][0]["input_key"] = "enemy_distance"
    with pytest.raises(
        UtilityDefinitionError, match=r"behavior 'patrol', consideration 'enemy_distance'.*per_target"
    ):
        UtilitySelector.from_dict(data)


def test_bad_json_is_a_definition_error() -> None:
    with pytest.raises(UtilityDefinitionError, match="not valid JSON"):
        UtilitySelector.from_json("{behaviors: [")
