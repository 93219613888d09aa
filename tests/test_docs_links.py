"""Every relative link of the README and the docs/ pages resolves: the file exists, and an anchor
(`page.md#a-heading`, `#a-heading`) names a heading of that page, as GitHub makes its anchors. The
README's first screenful leads a newcomer to install, the three nodes and shipping (issue 20)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} (.+)$", re.M)


def prose(text: str) -> str:
    """The page without code blocks and code spans (a link there is not a link)."""
    return _CODE.sub("", _FENCE.sub("", text))


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {anchor(h) for h in _HEADING.findall(_FENCE.sub("", page.read_text(encoding="utf-8")))}


def relative_links(page: Path) -> list[str]:
    return [
        target
        for target in _LINK.findall(prose(page.read_text(encoding="utf-8")))
        if not re.match(r"[a-z][a-z0-9+.-]*:", target)  # http:, https:, mailto:
    ]


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in relative_links(page):
        path, _, fragment = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            broken.append(f"{target}: no heading #{fragment} in {file.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_checker_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## A (small) heading: here\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n[ok](other.md) [ok](other.md#a-small-heading-here) [ok](#title) [web](https://x.org)\n"
        "[gone](missing.md) [no heading](other.md#nothing) `[in code](missing.md)`\n"
        "```\n[in a block](missing.md)\n```\n![image](media/none.png)\n"
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "other.md#nothing: no heading #nothing in other.md",
        "media/none.png: no such file",
    ]


def test_install_the_three_nodes_and_shipping_are_in_the_first_screenful() -> None:
    """A newcomer reads about 50 lines before scrolling: the install steps, the three nodes and the
    shipping section start there, and the README stays a path, not a reference (about 250 lines)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    first = "\n".join(lines[:50])
    assert "## In your game" in first and "**Install**" in first
    for node in ("MemoryStream", "UtilitySelector", "AsyncLLMDecision"):
        assert f"[`{node}`](docs/classes/{node}.md)" in first
    assert any(line == "## Ship" for line in lines[:70])
    assert len(lines) <= 260


def test_the_walkthrough_shows_the_no_code_path_before_the_scripting_path() -> None:
    """Issue 23: senses -> memory -> inputs -> choice -> actions wired in the inspector, then code."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    no_code, scripting = text.index("## Walkthrough: a guard with no code"), text.index("## Scripting")
    assert no_code < scripting
    walkthrough = text[no_code:scripting]
    assert "```" not in walkthrough  # no code in the no-code path
    steps = ["**Senses write memory.**", "**Memory forgets.**", "**Inputs read memory.**", "**The choice.**"]
    positions = [walkthrough.index(step) for step in [*steps, "**Actions.**"]]
    assert positions == sorted(positions)
