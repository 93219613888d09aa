"""Issue 10 (11): every malformed selector definition raises UtilityDefinitionError (never TypeError,
ValueError or ZeroDivisionError from deep inside), and every accepted one scores without error."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npc_mind.utility import UtilitySelector
from npc_mind.utility.curves import CURVE_TYPES
from npc_mind.utility.errors import UtilityDefinitionError

VALID: dict[str, Any] = {
    "behaviors": [
        {
            "name": "attack",
            "considerations": [
                {"input_key": "x", "curve_type": "logistic", "curve_params": {"k": 5.0}, "weight": 1.0,
                 "input_min": 0.0, "input_max": 1.0},
                {"input_key": "y", "curve_type": "table", "points": [[0.0, 0.0], [1.0, 1.0]]},
            ],
            "aggregation": "product",
            "weight": 1.0,
            "tags": ["fight"],
            "cooldown": 0.5,
        },
        {"name": "flee", "considerations": [{"input_key": "y", "curve_type": "normal"}]},
    ],
    "momentum": 0.1,
    "commitment": 0.2,
    "interrupt_margin": 0.2,
    "tie_tolerance": 0.01,
    "top_n": 2,
    "seed": 3,
}  # fmt: skip


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("behaviors", 0, "considerations", 0, "curve_type"), ["logistic"]),  # was TypeError (unhashable)
        (("behaviors", 0, "considerations", 0, "curve_params"), 3.0),  # was TypeError (not iterable)
        (("behaviors", 0, "considerations", 0, "curve_params"), "k"),  # was ValueError (dict update)
        (("behaviors", 1, "considerations", 0, "curve_params"), {"k": 1e-320}),  # was ValueError: 1/k inf
        (("behaviors", 0, "considerations", 0, "input_max"), 1e-320),  # was ValueError: 1/span inf
        (("behaviors", 0, "considerations", 1, "points"), [[0.0, 0.0], [1e-320, 1.0]]),
    ],
)
def test_the_malformed_definitions_found_raise_a_definition_error(path: tuple, value: Any) -> None:
    definition = copy.deepcopy(VALID)
    node = definition
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(UtilityDefinitionError):
        UtilitySelector.from_dict(definition)
    sine = {"behaviors": [{"name": "a", "considerations": [
        {"input_key": "x", "curve_type": "sine", "curve_params": {"k": 1e308}}]}]}  # fmt: skip
    with pytest.raises(UtilityDefinitionError):
        UtilitySelector.from_dict(sine)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    found = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        found.append((*prefix, key))
        found += _paths(child, (*prefix, key))
    return found


PATHS = _paths(VALID)
NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 0.0, -0.0, 1e-320, 1e308, -1e308]),
)
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=4), st.sampled_from(list(CURVE_TYPES))),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PATHS), JSON), min_size=1, max_size=3))
def test_any_mutation_of_a_definition_is_accepted_and_scores_or_is_a_definition_error(
    edits: list[tuple[tuple, Any]],
) -> None:
    definition = copy.deepcopy(VALID)
    for path, value in edits:
        node: Any = definition
        try:
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
        except (KeyError, IndexError, TypeError):  # an earlier edit replaced the parent
            continue
    try:
        selector = UtilitySelector.from_dict(definition)
    except UtilityDefinitionError:
        return
    per_target = {c.input_key: c.per_target for b in selector.behaviors for c in b.considerations}
    for x in (0.0, 0.5, 1.0, -3.0):
        context = {key: [x, 1.0] if targets else x for key, targets in per_target.items()}
        assert selector.choose(context, 0.0) in selector.names
        rows = {key: [value, value] for key, value in context.items()}
        chosen = selector.batch(2).choose(rows, 0.0)
        assert all(0 <= int(index) < len(selector.names) for index in chosen)
    again = UtilitySelector.from_dict(selector.to_dict())  # what it writes, it reads
    assert again.names == selector.names
