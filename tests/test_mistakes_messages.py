"""Issue 22 without the engine: every refusal is a documented exception with a clear message (a
malformed selector definition: UtilityDefinitionError; an endpoint URL: ValueError), and the core
pieces the Godot nodes' fallback for a missing input is made of (a plain selector still raises)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from npc_mind.llm.endpoints import Endpoint
from npc_mind.server import ClockMode
from npc_mind.server.core import MindServer
from npc_mind.server.decisions import DecisionSettings
from npc_mind.utility import InputFallback, MissingInputError, UtilitySelector
from npc_mind.utility.errors import UtilityDefinitionError
from npc_mind.utility.selector import MISSING

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


# --- a missing input, for callers that choose the fallback (the Godot nodes) --------------------
GUARD = {
    "behaviors": [
        {"name": "patrol", "considerations": [{"input_key": "calm", "curve_type": "linear"}]},
        {"name": "pursue", "considerations": [{"input_key": "threat", "curve_type": "linear"}]},
    ]
}
TARGETED = {
    "behaviors": [
        {"name": "idle", "considerations": [{"input_key": "calm", "curve_type": "linear"}]},
        {"name": "attack", "considerations": [
            {"input_key": "near", "curve_type": "linear", "per_target": True},
            {"input_key": "weak", "curve_type": "linear", "per_target": True},
        ]},
    ]
}  # fmt: skip


def test_a_plain_selector_still_raises_for_a_missing_input() -> None:
    selector = UtilitySelector.from_dict(GUARD)
    with pytest.raises(MissingInputError, match="behavior 'pursue', consideration 'threat'"):
        selector.choose({"calm": 0.5}, 0.0)


def test_the_unusable_inputs_are_named_and_filled() -> None:
    selector = UtilitySelector.from_dict(TARGETED)
    assert selector.unusable_inputs({}) == {"calm": MISSING}  # no per-target input: nothing to target
    assert selector.unusable_inputs({"calm": "high", "near": [0.5, 0.2]}) == {"calm": "high", "weak": MISSING}
    assert selector.unusable_inputs({"calm": 1, "near": [0.5], "weak": [0.1]}) == {}
    filled = selector.with_inputs({"calm": 1.0, "near": [0.5, 0.2]}, ["weak"], {"weak": 0.25})
    assert filled == {"calm": 1.0, "near": [0.5, 0.2], "weak": [0.25, 0.25]}
    assert selector.first_use("weak") == "behavior 'attack', consideration 'weak'"


def test_input_fallback_chooses_with_defaults_then_zero_and_tells_each_time() -> None:
    told: list[tuple[str, str, object]] = []
    chooser = InputFallback(UtilitySelector.from_dict(GUARD), {"calm": 0.2}, lambda *said: told.append(said))
    assert chooser.choose({"threat": 0.5}, 0.0) == "pursue"  # the default stands in, unsaid
    assert told == []
    assert chooser.choose({"calm": 0.4}, 1.0) == "patrol"  # threat reads 0
    assert chooser.choose({"calm": 0.4}, 2.0) == "patrol"
    assert told == [("threat", "behavior 'pursue', consideration 'threat'", MISSING)] * 2
    assert chooser.choose({"calm": "high", "threat": 0.1}, 3.0) == "patrol"  # calm: its default, 0.2
    assert told[-1] == ("calm", "behavior 'patrol', consideration 'calm'", "high")


def test_a_decision_told_of_bad_inputs_falls_back_as_usual_not_as_internal_error() -> None:
    server = MindServer(ClockMode.MANUAL)
    selector = server.add_selector(GUARD)
    told: list[tuple[str, object]] = []
    settings = DecisionSettings(intents=("patrol", "pursue"))
    told_one = server.add_decision(
        settings, selector, on_bad_input=lambda key, _where, given: told.append((key, given))
    )
    plain = server.add_decision(settings, selector)  # the core's behaviour: it raises
    for handle in (told_one, plain):
        server.request_decision(handle, {"calm": 0.9})
    events = server.update()
    assert [e.args for e in events if e.handle == told_one] == [(3, "no_endpoint")]
    assert [e.args for e in events if e.handle == plain] == [(3, "internal_error")]
    assert told == [("threat", MISSING)] and server.decisions.behavior(told_one) == "patrol"
    assert not server.decisions.has_endpoint(told_one)
    server.request_decision(told_one, {"calm": 0.9, "threat": "high"})
    assert [e.args for e in server.update() if e.handle == told_one] == [(3, "no_endpoint")]
    assert told[-1] == ("threat", "high")


def test_the_batched_path_tells_the_selectors_that_feed_it_of_an_input_never_set() -> None:
    server = MindServer(ClockMode.MANUAL)
    told: list[tuple[int, str]] = []
    server.selectors.on_missing_input = lambda handle, key, _where: told.append((handle, key))
    fed, preset_only = server.add_selector(GUARD), server.add_selector(GUARD)
    server.selectors.preset(preset_only, "calm", 0.3)  # a default: not feeding the batch
    server.advance(0.1)
    assert told == []
    server.set_input(fed, "calm", 0.5)
    server.advance(0.1)
    server.set_input(fed, "calm", 0.5)
    server.advance(0.1)
    assert told == [(fed, "threat")] * 2
    assert server.choice(fed) == "patrol"
