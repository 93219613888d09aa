"""Frame time of the addon in the real engine: 200 and 1,000 guards with all three nodes, headless.

Each configuration runs `benchmarks/bench_addon.gd` once: the same guards (moving every frame) are
measured first without the npc_mind nodes, then with them, through the batched path (packed arrays
over node ids, O(1) Python crossings a frame) or the Dictionary path (per-node calls). Frame time is
the interval between consecutive frames with the headless frame cap lifted. Goal: the nodes add at
most 25% of a 16.6 ms frame (4.15 ms) at 1,000 NPCs through the batched path.

Writes docs/benchmarks/addon.md and prints it. Never part of the tests.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GODOT = ROOT / ".deps" / "godot" / "godot"
OUT = ROOT / "docs" / "benchmarks" / "addon.md"
BUDGET_MS = 16.6 * 0.25
CONFIGS = [(200, "batched"), (1000, "batched"), (200, "dictionary"), (1000, "dictionary")]
FRAMES = {"batched": 300, "dictionary": 60}  # the Dictionary path is slow: fewer frames suffice


def run(npcs: int, path: str) -> dict[str, np.ndarray]:
    command = [
        str(GODOT), "--headless", "--path", str(ROOT), "-s", "res://benchmarks/bench_addon.gd",
        "--", f"--npcs={npcs}", f"--frames={FRAMES[path]}", f"--path={path}",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith('{"frames"')]
    if done.returncode != 0 or not lines:
        sys.exit(f"bench_addon: {npcs} {path} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    data = json.loads(lines[-1])
    return {"without": np.array(data["without"]), "with": np.array(data["with"])}


def engine_version() -> str:
    done = subprocess.run([str(GODOT), "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip().splitlines()[-1]


def main() -> int:
    rows = []
    for npcs, path in CONFIGS:
        frames = run(npcs, path)
        p50_without, p99_without = np.percentile(frames["without"], [50, 99])
        p50_with, p99_with = np.percentile(frames["with"], [50, 99])
        added = p50_with - p50_without
        rows.append((npcs, path, p50_without, p99_without, p50_with, p99_with, added))
        print(f"{npcs} {path}: +{added:.2f} ms p50", flush=True)
    lines = [
        "# Addon frame time (`scripts/bench addon`)",
        "",
        f"Godot {engine_version()}, headless, frame cap lifted; {platform.processor() or platform.machine()},"
        f" Python {platform.python_version()}. Each row is one engine run: the same guards without the",
        "npc_mind nodes, then with a MemoryStream, UtilitySelector and AsyncLLMDecision each",
        "(2 perceptions recorded, 1 awareness read and 1 behaviour chosen per guard per frame; one guard",
        "in 300 asks the LLM per frame, answered by the fallback tier as no endpoint is set).",
        "",
        "| guards | path | without p50 / p99 (ms) | with p50 / p99 (ms) | added p50 (ms) | of 16.6 ms |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for npcs, path, p50_without, p99_without, p50_with, p99_with, added in rows:
        lines.append(
            f"| {npcs:,} | {path} | {p50_without:.2f} / {p99_without:.2f} | {p50_with:.2f} / {p99_with:.2f} |"
            f" {added:.2f} | {added / 16.6:.0%} |"
        )
    batched = next(row for row in rows if row[0] == 1000 and row[1] == "batched")
    verdict = "met" if batched[6] <= BUDGET_MS else "NOT met"
    lines += [
        "",
        f"Goal (batched path, 1,000 guards, added p50 <= {BUDGET_MS:.2f} ms, 25% of 16.6 ms): **{verdict}**"
        f" ({batched[6]:.2f} ms).",
        "",
        "The Dictionary path crosses into Python once per call per guard (about 4 calls a guard a frame), so",
        "its cost grows with the guards; it is the convenient path for a handful of NPCs.",
        "",
        "p99 on the batched path comes from the frames where every guard's crowd changes at once (every",
        "1.5-2 s here): 1,000-2,000 memories form in one frame, and each is a `memory_formed` signal.",
        "",
    ]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
