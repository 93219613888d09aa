"""The addon runtime's keep-list (tools/provision/runtime_keep.txt) against the project's own code:
every standard library module npc_mind, gdbridge or npc_mind_godot imports, anywhere in a module
(inside functions too), ships with the runtime. Quick: no engine, no build."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from tools.provision import package

ROOT = Path(__file__).resolve().parents[1]


def _imported_stdlib(source: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source.read_text(), str(source))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found & sys.stdlib_module_names


def test_every_standard_module_the_project_imports_is_kept() -> None:
    keep = package.stdlib_keep()
    assert keep, "tools/provision/runtime_keep.txt is missing (python -m tools.trace_runtime writes it)"
    kept = keep | package.STDLIB_ALWAYS
    missing = {}
    for name in package.OWN_PACKAGES:
        for source in sorted((ROOT / "python" / name).rglob("*.py")):
            for module in sorted(_imported_stdlib(source) - kept - set(sys.builtin_module_names)):
                missing.setdefault(module, source.relative_to(ROOT).as_posix())
    assert missing == {}, f"add these to the keep-list (or run python -m tools.trace_runtime): {missing}"


def test_the_keep_list_names_standard_modules_the_runtime_does_not_prune() -> None:
    keep = package.stdlib_keep() or set()
    strange = sorted(
        name for name in keep if name not in sys.stdlib_module_names and not name.startswith("_sysconfigdata")
    )
    assert strange == [], strange
    pruned = {package._module_name(name) for name in package.STDLIB_PRUNE}
    assert sorted(keep & pruned) == [], "the runtime prunes these whatever the keep-list says"
