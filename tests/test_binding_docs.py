"""gdbridge's class reference (the editor's help pages) from docstrings: wrapped lines joined into
paragraphs, Markdown code spans as Godot's [code] tags or links, literal brackets escaped."""

from __future__ import annotations

from gdbridge.docs import bbcode, paragraphs

KNOWN = {"UtilitySelector", "Curve", "Node"}.__contains__


def test_wrapped_lines_join_and_a_blank_line_separates_paragraphs() -> None:
    doc = """First paragraph that was
    wrapped twice
    by the editor.

    Second one."""
    assert paragraphs(doc) == ["First paragraph that was wrapped twice by the editor.", "Second one."]


def test_list_items_stay_one_a_line_with_their_continuations() -> None:
    doc = "Intro:\n- one,\n  still one\n- two\n1. three"
    assert paragraphs(doc) == ["Intro:", "- one, still one", "- two", "1. three"]


def test_code_spans_become_tags_or_links() -> None:
    text = bbcode(
        "Set `curve`, a `Curve`; `apply()` or `x/(x+k)` or **this**, a UtilitySelector; a Node.",
        KNOWN,
        {"curve": "member", "apply": "method"},
    )
    assert text == (
        "Set [member curve], a [Curve]; [method apply] or [code]x/(x+k)[/code] or [b]this[/b], "
        "a [UtilitySelector]; a Node."
    )
    assert "`" not in text


def test_literal_brackets_are_escaped_everywhere() -> None:
    assert bbcode("in [0, 1]: `a[i]`", KNOWN) == "in [lb]0, 1[rb]: [code]a[lb]i[rb][/code]"
