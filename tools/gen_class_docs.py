"""`python -m tools.gen_class_docs`: docs/classes, one page per addon class, from its docstrings.

The pages are written from the same declarations the editor's help is built from (the class
docstrings, each export's, signal's and method's `doc`; `gdbridge.docs`), so the two references
cannot disagree: edit a docstring, then run this. `--check` writes nothing and exits 1 when a
committed page differs from what the declarations give (tests/test_class_docs.py runs it).

No engine runs: the classes are declared against the engine API the provisioning dumped
(`addons/npc_mind/bin/gdbridge_api.json.gz`), and the addon's modules are imported without the
package's start-up (`npc_mind_godot/__init__.py` creates the engine singleton).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import sys
import types
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / "python"
API = ROOT / "addons" / "npc_mind" / "bin" / "gdbridge_api.json.gz"
PAGES = ROOT / "docs" / "classes"
INDEX = "README.md"

# The index follows a designer's path through the classes: module -> its section title.
SECTIONS = {
    "senses": "Senses: what the NPC perceives",
    "memory_nodes": "Memory: what it remembers and forgets",
    "inputs": "Inputs: what a choice reads, without code",
    "utility_nodes": "Choice: utility AI",
    "actions": "Actions: what a behavior does, without code",
    "decision_node": "LLM decisions",
    "server_singleton": "The server",
    "designer": "Editor tools",
}
_FIRST_SENTENCE = re.compile(r".*?\.(?=\s+[A-Z]|$)")  # up to the first full stop
FAMILIES_START = "<!-- curve families: generated from npc_mind.utility.families.markdown_table() -->"
FAMILIES_END = "<!-- end of curve families -->"


def _load_classes() -> list:
    """Every documented ClassInfo of the addon, in declaration order (module by module)."""
    if str(PYTHON) not in sys.path:
        sys.path.insert(0, str(PYTHON))
    from gdbridge import classdb, interface, objects

    if not API.is_file():
        raise SystemExit(f"{API.relative_to(ROOT)} is missing: run scripts/provision (no engine runs here)")
    if not objects.API:
        objects.API.update(interface.load_api(API))
    package = sys.modules.get("npc_mind_godot")
    if package is None:  # the modules without the package's start-up (it creates the singleton)
        package = types.ModuleType("npc_mind_godot")
        package.__path__ = [str(PYTHON / "npc_mind_godot")]
        sys.modules["npc_mind_godot"] = package
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"npc_mind_godot.{module.name}")
    found = [info for info in [*classdb.classes[1:], *classdb._pending] if info is not None]
    return [
        info
        for info in found
        if info.doc and not info.internal and info.cls.__module__.startswith("npc_mind_godot.")
    ]


def _families_appendix() -> str:
    from npc_mind.utility.families import markdown_table

    return (
        "## Curve families and their parameters (u: the input, normalised when the range is used)\n\n"
        f"{FAMILIES_START}\n{markdown_table()}{FAMILIES_END}\n\n"
        "Every score is clamped to 0..1 after `invert`."
    )


# What a class's docstring cannot hold (the editor's help has no markup for a table or an image):
# a screenshot from docs/media, and generated text read from the one place that owns it.
IMAGES = {
    "MemoryProfile": [("the forgetting preview in the inspector", "designer-profile.png")],
    "UtilityConsideration": [("the curve preview in the inspector", "designer-curve.png")],
    "NpcMindServer": [
        ("the NPC Mind debugger tab", "designer-debugger.png"),
        (
            "the NPC Mind tab on a guard's senses and actions (tests/addon/debug_feed_senses.gd)",
            "designer-debugger-senses.png",
        ),
    ],
}
APPENDICES: dict[str, Callable[[], str]] = {"UtilityConsideration": _families_appendix}


APPENDIX_START = "\n<!-- generated appendix -->\n"  # what follows is not a member's description


def _appendix(name: str) -> str:
    parts = [APPENDIX_START.strip("\n")]
    for alt, file in IMAGES.get(name, ()):
        parts.append(f"![{alt}](../media/{file})")
    if name in APPENDICES:
        parts.append(APPENDICES[name]())
    return "\n\n".join(parts) if len(parts) > 1 else ""


def render() -> dict[str, str]:
    """File name -> text of every page of docs/classes, the index included."""
    from gdbridge.docs import class_markdown, split_doc

    infos = _load_classes()
    names = {info.name for info in infos}

    def page_of(name: str) -> str | None:
        return f"{name}.md" if name in names else None

    pages = {
        f"{info.name}.md": class_markdown(info, page_of, _appendix(info.name))
        for info in infos
    }
    index = [
        "# Class reference",
        "",
        "One page per class of the addon, generated from the docstrings that also write the editor's",
        "help pages (`python -m tools.gen_class_docs`; do not edit these pages by hand).",
    ]
    by_section: dict[str, list] = {}
    for info in infos:
        by_section.setdefault(info.cls.__module__.rsplit(".", 1)[1], []).append(info)
    ordered = [*[m for m in SECTIONS if m in by_section], *sorted(set(by_section) - set(SECTIONS))]
    for module in ordered:
        index += ["", f"## {SECTIONS.get(module, module)}", ""]
        for info in by_section[module]:
            brief = " ".join(split_doc(info.doc)[0].split())
            first = _FIRST_SENTENCE.match(brief)
            brief = first[0] if first else brief
            index.append(f"- [{info.name}]({info.name}.md) ({info.parent}): {brief}")
    pages[INDEX] = "\n".join(index) + "\n"
    return pages


def differences(folder: Path = PAGES) -> list[str]:
    """What differs between `folder` and the generated pages (empty: none)."""
    wanted = render()
    present = {path.name for path in folder.glob("*.md")}
    problems = [f"{name}: missing" for name in sorted(set(wanted) - present)]
    problems += [f"{name}: not generated (a class that is gone?)" for name in sorted(present - set(wanted))]
    problems += [
        f"{name}: differs from its docstrings"
        for name in sorted(set(wanted) & present)
        if (folder / name).read_text(encoding="utf-8") != wanted[name]
    ]
    return problems


def write(folder: Path = PAGES) -> list[str]:
    """Write every page (and remove pages of classes that are gone); the names changed."""
    wanted = render()
    folder.mkdir(parents=True, exist_ok=True)
    changed = []
    for path in folder.glob("*.md"):
        if path.name not in wanted:
            path.unlink()
            changed.append(path.name)
    for name, text in wanted.items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(name)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page differs")
    parser.add_argument("--out", type=Path, default=PAGES, help="the pages' folder (default docs/classes)")
    args = parser.parse_args(argv)
    if args.check:
        problems = differences(args.out)
        for problem in problems:
            print(f"{args.out.name}/{problem}", file=sys.stderr)
        if problems:
            print("run `.venv/bin/python -m tools.gen_class_docs` to regenerate them", file=sys.stderr)
        return 1 if problems else 0
    for name in write(args.out):
        print(f"wrote {args.out.name}/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
