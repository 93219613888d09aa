"""UtilitySelector.evaluate called from GDScript (the per-node Dictionary path), headless.

Run with `scripts/bench evaluate`. Each NPC count runs `benchmarks/bench_evaluate.gd` `RUNS` times
with the compiled kernel (NPC_MIND_KERNEL unset) and `RUNS` times without it (NPC_MIND_KERNEL=numpy:
no kernel, so no check, as before the check was built), in turn: that many selectors of the game
benchmark's definition, each called once a frame with its context, in three loops a frame whose
order turns: repeating (the same numbers every frame: the binding's choice table answers), drifting
(awareness a little lower every frame while the choice holds: the kernel's check of the repeated
choice answers in C, or Python without the kernel) and the baseline, the same choice as a GDScript
object's method. Per loop the median over frames of the microseconds per call (loop included); the
ratios are to the baseline of the same run (the median run shown). Checked: the share of the
drifting calls the check answered. Writes docs/benchmarks/evaluate.md and prints it. Never part of
the tests.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tools.bench_engine import GODOT, engine_version
from tools.bench_quotes import publish

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "benchmarks" / "evaluate.md"
NPCS = (200, 1000)
FRAMES = 200
RUNS = 3
LOOPS = ("repeating", "drifting", "gdscript")


def run(npcs: int, kernel: bool) -> dict[str, Any]:
    command = [
        str(GODOT), "--headless", "--path", str(ROOT), "-s", "res://benchmarks/bench_evaluate.gd", "--",
        f"--npcs={npcs}", f"--frames={FRAMES}",
    ]  # fmt: skip
    env = {key: value for key, value in os.environ.items() if key != "NPC_MIND_KERNEL"}
    if not kernel:
        env["NPC_MIND_KERNEL"] = "numpy"
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False, env=env)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{") and '"usec"' in line]
    if done.returncode != 0 or not lines:
        sys.exit(f"bench_evaluate: {npcs} NPCs failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    data = json.loads(lines[-1])
    if data["wrong"]:
        sys.exit(f"bench_evaluate: {data['wrong']} of {npcs} selectors chose other than the baseline")
    per_call = {loop: float(np.median(data["usec"][loop])) for loop in LOOPS}
    return {
        "usec": per_call,
        "repeating": per_call["repeating"] / per_call["gdscript"],
        "drifting": per_call["drifting"] / per_call["gdscript"],
        "checked": data["counts"]["checked"] / (npcs * (FRAMES + 1)),
    }


def main() -> int:
    rows = []
    for npcs in NPCS:
        results: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
        for _ in range(RUNS):
            for kernel in (True, False):
                results[kernel].append(run(npcs, kernel))
        middle = {
            kernel: sorted(runs, key=lambda result: result["drifting"])[len(runs) // 2]
            for kernel, runs in results.items()
        }
        ratios = ", ".join(f"{result['drifting']:.2f}x" for result in results[True])
        rows.append((npcs, middle[True], middle[False], ratios))
        print(f"{npcs} NPCs: drifting / GDScript with the check {ratios}", flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Per-node evaluate (`scripts/bench evaluate`)",
        "",
        f"Godot {engine_version()}, headless; {platform.processor() or platform.machine()},"
        f" {os.cpu_count()} CPUs, Python {platform.python_version()}; load average {load:.1f} at the end"
        " (a shared machine).",
        "Each selector (the game benchmark's definition: chase and search over awareness, a float from",
        "0 to 3, with vetoes; wander over calm) is called once a frame by a GDScript loop with its",
        "context Dictionary: repeating (the same numbers every frame), drifting (awareness a little lower",
        "every frame, the choice the same), against the baseline, the same choice written as a GDScript",
        "object's method; the three loops run in one frame, their order turning each frame. Median over",
        f"{FRAMES} frames of the microseconds per call (loop included). With the kernel: the binding answers",
        "a drifting call in C when the kernel's check says the running behavior is chosen again",
        "(`checked`: the share of drifting calls it answered); without it (NPC_MIND_KERNEL=numpy, as",
        "before the check) a drifting call runs the Python per-NPC path.",
        f"{RUNS} runs each, the median run by the drifting ratio shown.",
        "",
        "| NPCs | kernel | repeating (us) | drifting (us) | GDScript (us) | repeating / GDScript |"
        " drifting / GDScript | checked | drifting / GDScript of each run |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for npcs, checked, plain, ratios in rows:
        for label, result, each in (("compiled (check)", checked, ratios), ("numpy (no check)", plain, "")):
            usec = result["usec"]
            lines.append(
                f"| {npcs:,} | {label} | {usec['repeating']:.3f} | {usec['drifting']:.3f} |"
                f" {usec['gdscript']:.3f} | {result['repeating']:.2f}x | {result['drifting']:.2f}x |"
                f" {result['checked']:.0%} | {each} |"
            )
    lines.append("")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))
    publish("evaluate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
