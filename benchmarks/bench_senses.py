"""Frame time of the senses in the real engine: 200 and 1,000 guards with sight (10 Hz) and hearing,
in a 2D scene with occluders, against the same senses written by hand in GDScript, in the same run.

Each configuration runs `benchmarks/bench_senses.gd` (see its header for the scene) `RUNS` times;
every run times three phases of the same scene: without senses, with the hand-written GDScript
senses (the same raycasts, `record_event` at the same per-target rate and `note_sighting`), and with
the nodes (`SightSense2D` + `HearingSense2D` under each guard). Frame time is the interval between
consecutive frames under `--fixed-fps 60` (one physics step and 1/60 s of clock a frame, frames as
fast as the engine goes), and the process's CPU time per frame over each phase (/proc: steadier
on a shared machine). Added = the phase's figure minus the without phase's; the median run by the
CPU ratio is reported. Goal: the nodes add at most 1.2x what the hand-written senses add.

Writes docs/benchmarks/senses.md and prints it. Never part of the tests.
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
OUT = ROOT / "docs" / "benchmarks" / "senses.md"
GOAL_RATIO = 1.2
CONFIGS = [(200, 300), (1000, 200)]  # (guards, timed frames a phase)
RUNS = 5  # (the median of 5: on a shared machine one run of 3 could swing the median 0.2x)
PHASES = ("without", "gdscript", "nodes")


def run(npcs: int, frames: int) -> dict[str, Any]:
    command = [
        str(GODOT), "--headless", "--fixed-fps", "60", "--path", str(ROOT),
        "-s", "res://benchmarks/bench_senses.gd",
        "--", f"--npcs={npcs}", f"--frames={frames}",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{") and '"without":' in line]
    if done.returncode != 0 or not lines:
        sys.exit(f"bench_senses: {npcs} guards failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    data = json.loads(lines[-1])
    p50 = {phase: float(np.percentile(data[phase], 50)) for phase in PHASES}
    p99 = {phase: float(np.percentile(data[phase], 99)) for phase in PHASES}
    cpu = data["cpu_ms"]
    added = {phase: p50[phase] - p50["without"] for phase in ("gdscript", "nodes")}
    added_cpu = {phase: cpu[phase] - cpu["without"] for phase in ("gdscript", "nodes")}
    return {
        "data": data, "p50": p50, "p99": p99, "cpu": cpu, "added": added, "added_cpu": added_cpu,
        "ratio": _ratio(added), "ratio_cpu": _ratio(added_cpu),
    }  # fmt: skip


def _ratio(added: dict[str, float]) -> float:
    return added["nodes"] / added["gdscript"] if added["gdscript"] > 0 else float("inf")


def _ratios(runs: list[dict[str, Any]]) -> str:
    return ", ".join(f"{result['ratio_cpu']:.2f}x" for result in runs)



def main() -> int:
    results = []
    for npcs, frames in CONFIGS:
        runs = [run(npcs, frames) for _ in range(RUNS)]
        runs.sort(key=lambda result: result["ratio_cpu"])
        middle = runs[len(runs) // 2]  # the median run by CPU ratio
        print(f"{npcs} guards: CPU ratios {_ratios(runs)}", flush=True)
        results.append((npcs, middle, runs))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Senses frame time (`scripts/bench senses`)",
        "",
        f"Godot {engine_version()}, headless, `--fixed-fps 60` (frames as fast as the engine goes);"
        f" {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs,"
        f" Python {platform.python_version()}; load average {load:.1f} at the end: the machine was shared",
        "with other work, so wall-clock frame times are inflated and noisy; the CPU time the engine's",
        "process spent per frame (from /proc, over each timed phase) is the steadier figure.",
        "",
        "A 2D scene with a grid of walls (the occluders, layer 1), N guards turning and 50 people walking",
        "(group `people`, one in 5 with `is_stealing` true). Each guard sees at 10 Hz (its own phase),",
        "range 300 px, a 120 degree view, two rules (people -> OBSERVATION 0.3; people while `is_stealing`",
        "-> HOSTILE 0.9), at most one record a second per target and rule, and hears one stimulus every 5",
        "frames (radius 400 px, halved by each wall on the way). The same run times three phases of the",
        "same scene: without senses; with the same senses written by hand in GDScript (a MemoryStream a",
        "guard; one PhysicsRayQueryParameters2D and `intersect_ray` per target in view, `record_event`",
        "at the same rate and `note_sighting`; hearing with a ray per wall); and with the nodes (a",
        "MemoryStream, a SightSense2D and a HearingSense2D a guard). Added = the phase's figure minus",
        f"the without phase's. {RUNS} runs per size; the table shows the median run by CPU ratio (every",
        "run's CPU ratio in the last column).",
        "",
        "| guards | without: p50 / CPU (ms) | hand-written GDScript added: p50 / CPU (ms) |"
        " nodes added: p50 / CPU (ms) | nodes / GDScript: p50 | nodes / GDScript | segments cast"
        " (GDScript / nodes) | records (GDScript / nodes) | CPU ratio of each run |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for npcs, middle, runs in results:
        p50, cpu, added, added_cpu, data = (
            middle[key] for key in ("p50", "cpu", "added", "added_cpu", "data")
        )
        lines.append(
            f"| {npcs:,} | {p50['without']:.2f} / {cpu['without']:.2f} |"
            f" {added['gdscript']:.2f} / {added_cpu['gdscript']:.2f} |"
            f" {added['nodes']:.2f} / {added_cpu['nodes']:.2f} |"
            f" {middle['ratio']:.2f}x | {middle['ratio_cpu']:.2f}x |"
            f" {data['gdscript_rays']:,} / {int(data['nodes_rays']):,} |"
            f" {data['gdscript_records']:,} / {int(data['nodes_records']):,} |"
            f" {_ratios(runs)} |"
        )  # fmt: skip
    worst = max(middle["ratio_cpu"] for _npcs, middle, _runs in results)
    verdict = "met" if worst <= GOAL_RATIO else "**NOT met**"
    lines += [
        "",
        f"Goal (the nodes add at most {GOAL_RATIO}x what the hand-written senses add, in CPU time, at 200 and"
        f" 1,000 guards): {verdict} (at most {worst:.2f}x in the median runs).",
        "",
        "The two versions do the same work: the segments cast differ because the hand-written hearing",
        "counts each repeated ray (one per wall) and the nodes count one segment per listener; the records",
        "differ by the one frame the nodes phase ends before its last check. Where the nodes' time goes:",
        "they never run `_process`; the server's coordinator runs the due senses in 30 batches a second",
        "(every other frame at 60 fps: a batch's fixed cost is paid half as often, about 0.3 ms a frame",
        "less at 200 guards than checking every frame; each sense keeps its rate); the engine",
        "side is one GDScript object that reads the due guards' poses in one call, each group's ids,",
        "positions, layers and conditions in one call, and casts every ray of the frame in one call per",
        "physics space (an engine call from Python costs about ten times GDScript's: two a ray would cost",
        "more than the ray); Python keeps the rules, tests range and view for every due guard against",
        "every target in one array operation, and queues the records on the memory bank as `record_event`",
        "does (folded in the step's one batch). The hand-written version pays `note_sighting` (a Python",
        "call) per perception; the nodes note it in Python directly.",
    ]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    publish("senses")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
