"""The import graph of the whole python/ tree, read with ast (nothing is imported): the core
(`npc_mind`) imports nothing of Godot, `gdbridge` or `npc_mind_godot`; `gdbridge` imports nothing
of `npc_mind` or `npc_mind_godot`; and no module imports itself through others, at import time or
from inside a function. Imports under `if TYPE_CHECKING:` are for annotations only and are left out.
`from package import name` counts as importing `package.name` when that is a module, else `package`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "python"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node except what sits under `if TYPE_CHECKING:`."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                todo.extend(child.orelse)
                continue
            todo.append(child)
    return out


def imports_of(name: str) -> set[str]:
    """The absolute names a module imports (modules of this tree resolved as described above)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
    return found


GRAPH = {name: imports_of(name) for name in MODULES}


def test_the_tree_is_found() -> None:
    assert {"npc_mind.memory.pool", "gdbridge", "npc_mind_godot"} <= MODULES.keys()
    assert "npc_mind.memory.rules" in GRAPH["npc_mind.memory.fastpaths"]
    assert "npc_mind.memory.columns" in GRAPH["npc_mind.memory.persistence"]  # a `from` import


def _top(name: str) -> str:
    return name.split(".", maxsplit=1)[0]


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [("npc_mind", {"godot", "gdbridge", "npc_mind_godot"}), ("gdbridge", {"npc_mind", "npc_mind_godot"})],
)
def test_layers(package: str, forbidden: set[str]) -> None:
    bad = sorted(
        f"{mod} imports {imp}"
        for mod, imps in GRAPH.items()
        if _top(mod) == package
        for imp in imps
        if _top(imp) in forbidden
    )
    assert not bad, bad


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The sets of the tree's modules that import one another in a cycle (Tarjan's strongly
    connected components of more than one module, or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in graph:
                continue  # outside the tree (stdlib, numpy, ...)
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            comp = {stack.pop()}
            while node not in comp:
                comp.add(stack.pop())
            if len(comp) > 1 or node in graph[node]:
                out.add(frozenset(comp))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


#: Where import cycles exist today (outside the memory core, all through imports inside functions):
#: packages whose modules may still import one another in a cycle, for their owners to break. Any
#: other cycle fails the test, and so does a listed package that no longer has one (so the list
#: only shrinks). A package, not a module list: its owners are changing its modules.
KNOWN_CYCLIC: set[str] = set()


def _package(name: str) -> str:
    return name.rpartition(".")[0] if "." in name else name


def _known(cycle: frozenset[str]) -> str | None:
    """The listed package a cycle lies wholly inside, if any."""
    packages = {_package(m) for m in cycle}
    return next((k for k in KNOWN_CYCLIC if all(p == k or p.startswith(k + ".") for p in packages)), None)


def test_no_import_cycle_in_the_tree_but_the_known_ones() -> None:
    found = cycles(GRAPH)
    new = [sorted(c) for c in found if _known(c) is None]
    assert not new, f"import cycles: {new}"
    gone = sorted(KNOWN_CYCLIC - {_known(c) for c in found})
    assert not gone, f"no longer cyclic (remove them from KNOWN_CYCLIC): {gone}"


def test_the_cycle_finder_finds_them(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}, "e": {"a", "os"}}
    assert cycles(graph) == {frozenset("abc"), frozenset("d")}
    assert cycles({"a": {"b", "os"}, "b": set()}) == set()
    monkeypatch.setitem(globals(), "KNOWN_CYCLIC", {"gdbridge"})  # how a listed package is matched
    assert _known(frozenset({"gdbridge.classes", "gdbridge.objects"})) == "gdbridge"
    assert _known(frozenset({"npc_mind.memory.pool", "npc_mind.memory.persistence"})) is None
    assert _known(frozenset({"npc_mind.utility.schema", "npc_mind.memory.pool"})) is None
