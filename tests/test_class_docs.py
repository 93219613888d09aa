"""docs/classes is generated from the docstrings that write the editor's help (issue 20, item 6):
`python -m tools.gen_class_docs` writes it without an engine, and a committed page that differs from
what the declarations give fails here. The generator runs in a subprocess: it imports the addon's
classes, which other tests must not find loaded."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from npc_mind.utility.families import markdown_table

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "classes"
FIX = "run `.venv/bin/python -m tools.gen_class_docs` and commit docs/classes"


def generator(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tools.gen_class_docs", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def in_generator(code: str) -> str:
    """Run `code` with the generator's classes loaded; its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", "from tools import gen_class_docs as g\n" + code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_committed_pages_are_what_the_docstrings_give() -> None:
    done = generator("--check")
    assert done.returncode == 0, f"docs/classes drifted from the docstrings:\n{done.stderr}\n{FIX}"


def test_a_page_edited_by_hand_a_missing_page_and_a_stray_page_are_reported(tmp_path: Path) -> None:
    pages = tmp_path / "classes"
    shutil.copytree(PAGES, pages)
    stream = pages / "MemoryStream.md"
    stream.write_text(stream.read_text().replace("forgets like a person", "forgets like a goldfish"))
    (pages / "SenseRule.md").unlink()
    (pages / "SightSense.md").write_text("# SightSense2D, SightSense3D (Node)\n")  # a hand-written page
    done = generator("--check", "--out", str(pages))
    assert done.returncode == 1
    assert "classes/MemoryStream.md: differs from its docstrings" in done.stderr
    assert "classes/SenseRule.md: missing" in done.stderr
    assert "classes/SightSense.md: not generated" in done.stderr
    assert generator("--out", str(pages)).returncode == 0  # regenerated, the folder passes
    assert generator("--check", "--out", str(pages)).returncode == 0
    assert not (pages / "SightSense.md").exists()


def test_every_page_lists_the_members_the_editor_help_lists() -> None:
    """The page and the editor's help read the same declarations: the same properties, methods and
    signals, each with its own description."""
    out = in_generator(
        "import re\n"
        "from gdbridge import docs\n"
        "for info in g._load_classes():\n"
        "    xml = docs.class_xml(info, lambda name: False)\n"
        "    help_members = sorted(re.findall(r'<(?:member|method|signal) name=\"(\\w+)\"', xml))\n"
        "    page = (g.PAGES / f'{info.name}.md').read_text().split(g.APPENDIX_START)[0]\n"
        "    page_members = sorted(\n"
        "        re.findall(r'^\\| `(\\w+)` \\|', page, re.M) + re.findall(r'^- `(\\w+)\\(', page, re.M))\n"
        "    print(info.name, help_members == page_members, help_members, page_members)\n"
    )
    lines = out.splitlines()
    assert len(lines) >= 30  # every addon class
    mismatched = [line for line in lines if line.split()[1] != "True"]
    assert mismatched == []


def test_the_index_lists_every_page_and_the_curve_table_is_the_families_table() -> None:
    index = (PAGES / "README.md").read_text()
    for page in sorted(PAGES.glob("*.md")):
        if page.name != "README.md":
            assert f"]({page.name})" in index, f"the index does not list {page.name}"
    assert markdown_table() in (PAGES / "UtilityConsideration.md").read_text()


def test_python_only_methods_and_nested_enums_are_not_documented_as_methods() -> None:
    """Neither the page nor the editor's help lists what ClassDB does not have: a `python_only`
    method (MemoryProfile.to_spec) or a nested enum class (MemoryStream.MemoryType, a constant)."""
    out = in_generator(
        "from gdbridge import docs\n"
        "infos = {info.name: info for info in g._load_classes()}\n"
        "print('to_spec' in docs.class_xml(infos['MemoryProfile'], lambda name: False))\n"
        "print('name=\"MemoryType\"' in docs.class_xml(infos['MemoryStream'], lambda name: False))\n"
    )
    assert out.split() == ["False", "False"]
    assert "to_spec" not in (PAGES / "MemoryProfile.md").read_text()
    stream = (PAGES / "MemoryStream.md").read_text()
    assert "- `MemoryType(" not in stream and "enum `MemoryType`: `TRIVIA` = 0" in stream
