"""One table per curve family (`npc_mind.utility.families`): the classes take their parameters and
defaults from it, the inspector's parameter table reads it (tests/addon/designer_*.gd run that in the
engine), and the family table of docs/classes/UtilityConsideration.md is its `markdown_table`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from npc_mind.utility.curves import CURVE_TYPES
from npc_mind.utility.families import FAMILIES, markdown_table

DOCS = Path(__file__).resolve().parent.parent / "docs" / "classes" / "UtilityConsideration.md"


def test_every_curve_class_has_its_family_and_no_family_lacks_a_class() -> None:
    assert list(FAMILIES) == list(CURVE_TYPES)


@pytest.mark.parametrize("type_name", [name for name in CURVE_TYPES if name != "table"])
def test_a_class_declares_its_familys_parameters_in_order_with_its_defaults(type_name: str) -> None:
    cls, family = CURVE_TYPES[type_name], FAMILIES[type_name]
    assert cls.param_names() == tuple(p.name for p in family.parameters)
    defaults = {field.name: field.default for field in dataclasses.fields(cls)}
    assert {p.name: defaults[p.name] for p in family.parameters} == {
        p.name: p.default for p in family.parameters
    }
    cls()  # the defaults pass the class's own checks
    for p in family.parameters:
        low, high = p.slider
        assert low <= p.default <= high, p.name
        assert p.tooltip.endswith(".") and p.label


def test_the_docs_table_is_the_families_table() -> None:
    text = DOCS.read_text(encoding="utf-8")
    start = "<!-- curve families: generated from npc_mind.utility.families.markdown_table() -->\n"
    end = "<!-- end of curve families -->"
    assert start in text and end in text
    table = text.split(start, 1)[1].split(end, 1)[0]
    assert table == markdown_table(), (
        f"{DOCS.name} drifted from the families; the table is:\n{markdown_table()}"
    )
