"""gdbridge's class reference (the editor's help pages) from docstrings: wrapped lines joined into
paragraphs, Markdown code spans as Godot's [code] tags or links, literal brackets escaped."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

KNOWN = {"UtilitySelector", "Curve", "Node"}.__contains__


@pytest.fixture(scope="module")
def docs() -> Iterator[ModuleType]:
    # Imported here and dropped afterwards: other tests check that the core never loads gdbridge.
    loaded = set(sys.modules)
    yield importlib.import_module("gdbridge.docs")
    for name in set(sys.modules) - loaded:
        del sys.modules[name]


def test_wrapped_lines_join_and_a_blank_line_separates_paragraphs(docs: ModuleType) -> None:
    doc = """First paragraph that was
    wrapped twice
    by the editor.

    Second one."""
    assert docs.paragraphs(doc) == ["First paragraph that was wrapped twice by the editor.", "Second one."]


def test_list_items_stay_one_a_line_with_their_continuations(docs: ModuleType) -> None:
    doc = "Intro:\n- one,\n  still one\n- two\n1. three"
    assert docs.paragraphs(doc) == ["Intro:", "- one, still one", "- two", "1. three"]


def test_code_spans_become_tags_or_links(docs: ModuleType) -> None:
    text = docs.bbcode(
        "Set `curve`, a `Curve`; `apply()` or `x/(x+k)` or **this**, a UtilitySelector; a Node.",
        KNOWN,
        {"curve": "member", "apply": "method"},
    )
    assert text == (
        "Set [member curve], a [Curve]; [method apply] or [code]x/(x+k)[/code] or [b]this[/b], "
        "a [UtilitySelector]; a Node."
    )
    assert "`" not in text


def test_literal_brackets_are_escaped_everywhere(docs: ModuleType) -> None:
    assert docs.bbcode("in [0, 1]: `a[i]`", KNOWN) == "in [lb]0, 1[rb]: [code]a[lb]i[rb][/code]"
