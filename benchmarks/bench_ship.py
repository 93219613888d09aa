"""Start-up time of the exported demo against the editor-run demo, in the same run.

The demo is exported with `--export-release` (the repository's preset, the provisioned release
template) into a temporary folder; then, alternately, the exported game and the engine running
the project (`godot --path .`, what the editor's Play starts) each open the market scene headless
and quit after its first frame (`--quit-after 1`): process start, the engine, Python's start from
the addon's runtime, the scene and its nodes. Wall time per run; medians and their ratio.
Sizes: the addon's zip as the package command reported it (dist/sizes.json, written by
`scripts/package`), and the export's Python runtime (`python/` beside the binary) and whole folder.

Writes docs/benchmarks/ship.md, prints it and rewrites the figures the README quotes from it
(tools/bench_quotes.py). Never part of the tests.
"""

from __future__ import annotations

import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tools.bench_quotes import publish  # noqa: E402 - the checkout's tools, after the path

GODOT = ROOT / ".deps" / "godot" / "godot"
OUT = ROOT / "docs" / "benchmarks" / "ship.md"
PACKAGE_SIZES = ROOT / "dist" / "sizes.json"  # what the package command reported
RUNS = 15
FIRST_FRAME = ["--headless", "--quit-after", "1"]


def timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or "gdbridge: Python" not in done.stdout:
        sys.exit(f"bench_ship: {command[0]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return elapsed


def folder_size(folder: Path) -> tuple[float, int]:
    """MB (10^6 bytes) and files under `folder`."""
    sizes = [path.stat().st_size for path in folder.rglob("*") if path.is_file()]
    return sum(sizes) / 1e6, len(sizes)


def main() -> None:
    if not PACKAGE_SIZES.is_file():
        sys.exit("bench_ship: dist/sizes.json is missing; run scripts/package")
    package = json.loads(PACKAGE_SIZES.read_text())
    folder = Path(tempfile.mkdtemp(prefix="npc_mind_export_"))
    try:
        binary = folder / "demo.x86_64"
        export = subprocess.run(
            [str(GODOT), "--headless", "--path", str(ROOT), "--export-release", "Linux", str(binary)],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        if export.returncode != 0:
            sys.exit(f"bench_ship: the export failed:\n{export.stdout[-2000:]}\n{export.stderr[-2000:]}")
        size_mb, files = folder_size(folder)
        runtime_mb, runtime_files = folder_size(folder / "python")
        # The launcher (when the engine side wrote one) cd's into the folder; the binary itself runs too.
        launchers = sorted(folder.glob("*.sh"))
        exported_cmd = [str(launchers[0])] if launchers else [str(binary)]
        editor_cmd = [str(GODOT), "--path", str(ROOT)]
        timed([*exported_cmd, *FIRST_FRAME], folder)  # warm the page cache for both
        timed([*editor_cmd, *FIRST_FRAME], ROOT)
        exported, editor = [], []
        for _ in range(RUNS):
            exported.append(timed([*exported_cmd, *FIRST_FRAME], Path("/")))
            editor.append(timed([*editor_cmd, *FIRST_FRAME], Path("/")))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    exp_median, ed_median = statistics.median(exported), statistics.median(editor)
    lines = [
        "# Start-up: the exported demo against the editor-run demo",
        "",
        f"`scripts/bench ship` on {platform.node()} ({platform.machine()}), {RUNS} alternating runs each",
        "after one warm-up: headless, the market scene, quit after its first frame (the process's wall",
        "time: engine start, Python from the addon's runtime, the scene and its nodes).",
        "",
        "| run | median s | min s | max s |",
        "|---|---|---|---|",
        f"| exported (`--export-release`) | {exp_median:.2f} | {min(exported):.2f} | {max(exported):.2f} |",
        f"| editor-run (`godot --path .`) | {ed_median:.2f} | {min(editor):.2f} | {max(editor):.2f} |",
        "",
        f"Exported / editor-run: **{exp_median / ed_median:.2f}** (median).",
        "",
        "| size | MB | files |",
        "|---|---|---|",
        f"| the addon's zip, unpacked (`scripts/package`) | {package['unpacked_mb']:.1f} "
        f"| {package['files']} |",
        f"| the addon's zip, zipped (`scripts/package`) | {package['zipped_mb']:.1f} | {package['files']} |",
        f"| the export's Python runtime (`python/`) | {runtime_mb:.1f} | {runtime_files} |",
        f"| the export folder (binary, pack, engine libraries, runtime) | {size_mb:.1f} | {files} |",
        "",
    ]
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))
    publish("ship")


if __name__ == "__main__":
    main()
