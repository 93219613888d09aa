"""`python -m tools.trace_runtime`: which standard library modules the addon's runtime must keep.

Writes tools/provision/runtime_keep.txt, the keep-list `scripts/package` builds the runtime from
(tools/provision/package.py), from two sources:

- traced: the modules real runs open. The runtime is built with the whole (pruned) standard
  library, unzipped (so that every module file opened shows), then the engine runs under
  `strace -f -e trace=open,openat`: the demo's scripted scenario, the editor opening the project,
  every check script in tests/addon/, the shipping test's guard scene (an LLM request through
  httpx to an endpoint that does not answer) and the exported game playing its scenario. The
  export itself runs but is not counted: copying the runtime beside the game opens every file of
  it (its own code is in the static closure). Every file opened under `python/lib/python3.11/`
  names a module (`json/decoder.pyc`: json; `lib-dynload/_json...so`: _json).
- imported: the static import closure (modulefinder, imports inside functions included) over the
  standard library of npc_mind, gdbridge, npc_mind_godot and every shipped distribution the runs
  imported except numpy (whose closure names its test tools; numpy is covered by the trace).

A package is kept whole. Distributions in the runtime that no run imported are reported, so
package.NOT_IMPORTED can be checked. Needs root (strace) and a provisioned checkout; takes minutes.
"""

from __future__ import annotations

import datetime
import modulefinder
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from tools.provision import package

REPO = package.REPO
GODOT = REPO / ".deps" / "godot" / "godot"
OPENED = re.compile(
    r'(?:openat|open)\((?:AT_FDCWD, )?"[^"]*/python/lib/python3\.11/([^"]+)", [^)]*\)\s+=\s+\d'
)
SCENARIO = ["--fixed-fps", "30", "--quit-after", "4000"]
NOT_COUNTED = {"export"}  # copies, so opens, every file of the runtime: the exported game is what runs
STATIC_SKIP = {"numpy"}  # its closure names numpy.testing's tools; the trace covers what numpy imports


def _guard_game(scratch: Path) -> Path:
    """A game made of the shipping test's guard scene (tests/ship/main.tscn) and the addon."""
    game = scratch / "guard"
    shutil.copytree(REPO / "addons" / "npc_mind", game / "addons" / "npc_mind", symlinks=True)
    for name in ("main.gd", "main.tscn"):
        shutil.copy2(REPO / "tests" / "ship" / name, game / name)
    (game / "project.godot").write_text(
        'config_version=5\n\n[application]\n\nconfig/name="guard"\nrun/main_scene="res://main.tscn"\n'
    )
    return game


def _runs(scratch: Path) -> list[tuple[str, list[str], Path]]:
    """(name, command, working folder) of every traced run; the export comes before the exported game."""
    engine = [str(GODOT), "--headless", "--path", str(REPO)]
    runs = [
        ("demo", [*engine, *SCENARIO, "--", f"--out={scratch / 'demo'}"], REPO),
        ("editor", [*engine, "-e", "--quit-after", "60"], REPO),
        (
            "guard import",
            [str(GODOT), "--headless", "--path", str(_guard_game(scratch)), "--import"],
            scratch,
        ),
        (
            "guard scene",
            [str(GODOT), "--headless", "--path", str(scratch / "guard"), "--quit-after", "2000"],
            scratch,
        ),
        ("export", [*engine, "--export-release", "Linux", str(scratch / "export" / "demo.x86_64")], REPO),
        (
            "exported game",
            [
                str(scratch / "export" / "demo.sh"),
                "--headless",
                *SCENARIO,
                "--",
                f"--out={scratch / 'exported'}",
            ],
            scratch,
        ),
    ]
    for script in sorted((REPO / "tests" / "addon").glob("*.gd")):
        runs.append((script.stem, [*engine, "-s", f"res://tests/addon/{script.name}"], REPO))
    return runs


def _module(relative: str) -> tuple[str, str] | None:
    """('stdlib' or 'site', top-level name) of a file under python3.11/, None for folders of no module."""
    parts = relative.split("/")
    where = "stdlib"
    if parts[0] == "site-packages":
        where, parts = "site", parts[1:]
    elif parts[0] == "lib-dynload":
        parts = parts[1:]
    if not parts or not parts[0] or parts[0].endswith((".dist-info", ".txt", ".pth")):
        return None
    if parts[0] == "__pycache__":
        parts = parts[1:] or [""]
    name = package._module_name(parts[0])
    return (where, name) if name else None


def trace(scratch: Path) -> tuple[set[str], set[str]]:
    """Standard library and site-packages top-level names the runs opened."""
    stdlib: set[str] = set()
    site: set[str] = set()
    (scratch / "export").mkdir(parents=True, exist_ok=True)
    for name, command, cwd in _runs(scratch):
        log = scratch / f"{name.replace(' ', '_')}.trace"
        strace = ["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", str(log)]
        try:
            done = subprocess.run([*strace, *command], cwd=cwd, capture_output=True, text=True, timeout=600,
                                  env={**_environment(), "NPC_MIND_LLM_URL": ""}, check=False)  # fmt: skip
            status = f"exit {done.returncode}"
        except subprocess.TimeoutExpired:
            status = "timed out (traced as far as it went)"
        if name in NOT_COUNTED:
            print(f"trace_runtime: {name}: {status} (not counted)", flush=True)
            continue
        found = {_module(match.group(1)) for match in OPENED.finditer(log.read_text(errors="replace"))}
        found.discard(None)
        stdlib |= {top for where, top in found if where == "stdlib"}  # type: ignore[misc]
        site |= {top for where, top in found if where == "site"}  # type: ignore[misc]
        print(f"trace_runtime: {name}: {status}, {len(found)} top-level modules", flush=True)
    return stdlib, site


def _environment() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}


def static_closure(roots: list[str]) -> set[str]:
    """Standard library top-level names the `roots` import, directly or through each other."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    site = package.RUNTIME / "lib" / package.VERSION_DIR / "site-packages"
    finder = modulefinder.ModuleFinder(
        path=[str(REPO / "python"), str(site), str(stdlib), str(stdlib / "lib-dynload")],
        # Never shipped (so what they import does not matter), and numpy (see STATIC_SKIP).
        excludes=sorted(STATIC_SKIP | {package._module_name(name) for name in package.STDLIB_PRUNE}),
    )
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
        script.write("".join(f"import {name}\n" for name in roots))
    try:
        finder.run_script(script.name)
    finally:
        Path(script.name).unlink()
    found = set()
    for name, module in finder.modules.items():
        file = getattr(module, "__file__", None)
        if (
            file
            and Path(file).is_relative_to(stdlib)
            and not Path(file).is_relative_to(stdlib / "site-packages")
        ):
            found.add(package._module_name(name))
    return found


def own_modules() -> list[str]:
    """Every module of npc_mind, gdbridge and npc_mind_godot, by dotted name."""
    found = []
    for name in package.OWN_PACKAGES:
        for source in sorted((REPO / "python" / name).rglob("*.py")):
            parts = source.relative_to(REPO / "python").with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def shipped(names: set[str]) -> set[str]:
    """`names` without what the runtime never ships whatever the list says (package.STDLIB_PRUNE,
    package.DYNLOAD_PRUNE): modulefinder also follows imports of test and GUI tools."""
    pruned = {package._module_name(name) for name in package.STDLIB_PRUNE}
    return {name for name in names if name not in pruned and not package.DYNLOAD_PRUNE.match(f"{name}.")}


def write(traced: set[str], imported: set[str], site: set[str]) -> None:
    lines = [
        "# The standard library modules the addon's runtime keeps, by top-level name (a package is kept",
        "# whole, a lib-dynload extension module by its name): tools/provision/package.py copies only these",
        "# (plus package.STDLIB_ALWAYS); what package.STDLIB_PRUNE and DYNLOAD_PRUNE leave out is never",
        "# listed.",
        f"# Written by `python -m tools.trace_runtime` on {datetime.date.today().isoformat()}; read its",
        "# docstring. traced: opened by the demo, the editor, tests/addon/*.gd, the guard scene and the",
        "# exported game; imported: in the static import closure of npc_mind, gdbridge,",
        "# npc_mind_godot and the shipped distributions the runs imported.",
        f"# Distributions the runs imported: {', '.join(sorted(site))}.",
    ]
    for name in sorted(shipped(traced | imported), key=lambda n: (n.lstrip("_").lower(), n)):
        why = " ".join(kind for kind, names in (("traced", traced), ("imported", imported)) if name in names)
        lines.append(f"{name:<24} {why}")
    package.KEEP_LIST.write_text("\n".join(lines) + "\n")


def main() -> int:
    if shutil.which("strace") is None:
        sys.exit("trace_runtime: strace is missing (scripts/provision package installs it as root)")
    package.bundle(force=True, whole_stdlib=True)
    scratch = Path(tempfile.mkdtemp(prefix="npc_mind_trace_"))
    try:
        traced, site = trace(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    unused = package.NOT_IMPORTED & site
    if unused:
        sys.exit(f"trace_runtime: {sorted(unused)} were imported: take them out of package.NOT_IMPORTED")
    roots = own_modules() + sorted(site - STATIC_SKIP - set(package.OWN_PACKAGES))
    imported = static_closure(roots)
    write(traced, imported, site)
    kept = len(shipped(traced | imported))
    print(f"trace_runtime: {kept} kept ({len(traced)} traced, {len(imported)} imported); "
          f"distributions imported: {sorted(site)}", flush=True)  # fmt: skip
    package.bundle(force=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
