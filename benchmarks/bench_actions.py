"""Frame time of actions without code against the same movement in plain GDScript, headless.

Run with `scripts/bench actions`. Each NPC count runs `benchmarks/bench_actions.gd` once (with
`--fixed-fps 60`: one physics frame a frame, the frame cap lifted): the same CharacterBody2D NPCs,
each moving toward a far Marker2D and setting a property every physics frame, first idle (the empty
frame), then through a GDScript `_physics_process` each, then through a UtilitySelector's behavior
(a MoveAction in on_enter, a SetPropertyAction in on_tick). Added = the phase's median frame time
less the empty frame's; the ratio is actions added / GDScript added. Both run in the same process,
so a busier machine moves both. Writes docs/benchmarks/actions.md and prints it. Never part of the
tests.
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
OUT = ROOT / "docs" / "benchmarks" / "actions.md"
NPCS = (200, 1000)
FRAMES = 120


def run(npcs: int) -> dict[str, np.ndarray]:
    command = [
        str(GODOT), "--headless", "--fixed-fps", "60", "--path", str(ROOT), "-s",
        "res://benchmarks/bench_actions.gd", "--", f"--npcs={npcs}", f"--frames={FRAMES}",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{") and '"intervals"' in line]
    if done.returncode != 0 or not lines:
        sys.exit(f"bench_actions: {npcs} NPCs failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return {phase: np.array(values) for phase, values in json.loads(lines[-1])["intervals"].items()}


def engine_version() -> str:
    done = subprocess.run([str(GODOT), "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip().splitlines()[-1]


def main() -> int:
    rows = []
    for npcs in NPCS:
        frames = run(npcs)
        empty, gdscript, actions = (
            float(np.median(frames[phase])) for phase in ("empty", "gdscript", "actions")
        )
        added_gd, added_actions = gdscript - empty, actions - empty
        ratio = added_actions / added_gd if added_gd > 0 else float("inf")
        rows.append((npcs, empty, added_gd, added_actions, ratio))
        print(
            f"{npcs} NPCs: GDScript +{added_gd:.2f} ms, actions +{added_actions:.2f} ms ({ratio:.1f}x)",
            flush=True,
        )
    lines = [
        "# Actions frame time (`scripts/bench actions`)",
        "",
        f"Godot {engine_version()}, headless, `--fixed-fps 60`, frame cap lifted; "
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}.",
        "Each NPC (a CharacterBody2D, no agent) moves toward a far Marker2D and sets `modulate:a` every",
        "physics frame; median of the frame times over "
        f"{FRAMES} frames, less the idle frame's. One engine run per row.",
        "",
        "| NPCs | idle frame (ms) | GDScript frame (ms) | actions frame (ms) | GDScript, added (ms) |"
        " actions, added (ms) | actions / GDScript, added |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        *(
            f"| {n:,} | {e:.2f} | {e + g:.2f} | {e + a:.2f} | {g:.2f} | {a:.2f} | {r:.1f}x |"
            for n, e, g, a, r in rows
        ),
        "",
    ]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
