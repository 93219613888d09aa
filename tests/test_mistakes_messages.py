"""Issue 22 (11), without the engine: every refusal is a documented exception with a clear message
(a malformed selector definition: UtilityDefinitionError; an endpoint URL: ValueError)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from npc_mind.llm.endpoints import Endpoint
from npc_mind.utility import UtilitySelector
from npc_mind.utility.errors import UtilityDefinitionError

ONE: dict[str, Any] = {
    "behaviors": [
        {"name": "a", "considerations": [
            {"input_key": "x", "curve_type": "logistic", "input_min": 0.0, "input_max": 1.0},
            {"input_key": "y", "curve_type": "table", "points": [[0.0, 0.0], [1.0, 1.0]]},
        ]},
    ],
}  # fmt: skip
HUGE = 10**400  # an int no float can hold: float() raised OverflowError


@pytest.mark.parametrize(
    ("path", "value", "named"),
    [
        (("behaviors", 0, "considerations", 0, "weight"), HUGE, "weight"),
        (("behaviors", 0, "considerations", 0, "input_min"), HUGE, "input_min"),
        (("behaviors", 0, "considerations", 0, "curve_params"), {"k": HUGE}, "k"),
        (("behaviors", 0, "considerations", 1, "points"), [[0.0, 0.0], [HUGE, 1.0]], "points"),
        (("behaviors", 0, "weight"), HUGE, "weight"),
        (("behaviors", 0, "cooldown"), HUGE, "cooldown"),
        (("momentum",), HUGE, "momentum"),
        (("tie_tolerance",), HUGE, "tie_tolerance"),
        # a string or a bool is no number, even "1" (it was read as 1.0)
        (("behaviors", 0, "considerations", 0, "weight"), "1", "weight"),
        (("behaviors", 0, "considerations", 0, "input_min"), "0", "input_min"),
        (("behaviors", 0, "considerations", 0, "weight"), True, "weight"),
        (("behaviors", 0, "considerations", 1, "points"), [["0", 0.0], [1.0, 1.0]], "points"),
        (("behaviors", 0, "considerations", 1, "points"), [[0.0, None], [1.0, 1.0]], "points"),
    ],
)
def test_a_number_field_of_the_wrong_type_is_a_definition_error_naming_it(
    path: tuple, value: Any, named: str
) -> None:
    definition = copy.deepcopy(ONE)
    node = definition
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(UtilityDefinitionError, match=named):
        UtilitySelector.from_dict(definition)


def test_numbers_of_any_real_kind_are_still_accepted() -> None:
    import numpy as np

    definition = copy.deepcopy(ONE)
    consideration = definition["behaviors"][0]["considerations"][0]
    consideration["weight"] = np.float32(0.5)
    consideration["input_max"] = 2  # an int
    definition["momentum"] = np.int64(1)
    selector = UtilitySelector.from_dict(definition)
    assert selector.behaviors[0].considerations[0].weight == 0.5


@pytest.mark.parametrize("port", ["99999", "0", "65536", "-1", "http"])
def test_an_endpoint_port_outside_1_to_65535_is_refused(port: str) -> None:
    with pytest.raises(ValueError, match=r"port must be in 1\.\.65535"):
        Endpoint(f"http://127.0.0.1:{port}/v1")


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:65535/v1", "http://127.0.0.1:1/v1", "http://[::1]:8080/v1"]
)
def test_an_endpoint_port_inside_the_range_is_kept(url: str) -> None:
    assert Endpoint(url).base_url == url
