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


PAGES = {"UtilitySelector": "UtilitySelector.md", "MemoryStream": "MemoryStream.md"}.get


def test_markdown_links_classes_with_a_page_and_keeps_code_and_list_items(docs: ModuleType) -> None:
    """The class pages' text (docs/classes) from the same docstrings: a class with a page is linked
    where the docstring names it (in backticks or as a CamelCase word), code stays code."""
    doc = """Feeds a UtilitySelector from a `MemoryStream`;
    `MemoryStream.awareness_of` and a Node stay as they are.

    Steps:
    - one,
      still one
    - two"""
    assert docs.markdown(doc, PAGES) == (
        "Feeds a [UtilitySelector](UtilitySelector.md) from a [`MemoryStream`](MemoryStream.md);\n"
        "`MemoryStream.awareness_of` and a Node stay as they are.\n"
        "\n"
        "Steps:\n"
        "\n"
        "- one, still one\n"
        "- two"
    )


def test_markdown_wraps_long_paragraphs_without_breaking_a_link(docs: ModuleType) -> None:
    text = docs.markdown("word " * 30 + "UtilitySelector " + "word " * 5, PAGES, width=60)
    lines = text.splitlines()
    assert all(len(line) <= 60 for line in lines)
    assert any("[UtilitySelector](UtilitySelector.md)" in line for line in lines)
