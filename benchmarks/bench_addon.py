"""Frame time of the addon in the real engine: 200 and 1,000 guards with all three nodes, headless.

Each configuration runs `benchmarks/bench_addon.gd` once: the same guards (moving every frame) are
measured first without the npc_mind nodes, then with them, through the batched path (packed arrays
over node ids, O(1) Python crossings a frame), the Dictionary path (per-node calls), or the nodes
path (the Dictionary path's memory calls, the selectors fed per node for the batch with
`set_inputs` and read back as `choice`, no director), or, for comparison, the gdscript path (the
Dictionary path's logic written in plain GDScript objects: no npc_mind nodes). Frame time is
the interval between consecutive frames with the headless frame cap lifted. Goal: the nodes add at
most 25% of a 16.6 ms frame (4.15 ms) at 1,000 NPCs through the batched path. The Dictionary runs
and nodes runs also report each node method's time per call as GDScript sees it.

Writes docs/benchmarks/addon.md and prints it. Never part of the tests.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tools.bench_engine import GODOT, engine_version
from tools.bench_quotes import publish

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "benchmarks" / "addon.md"
BUDGET_MS = 16.6 * 0.25
# (guards, path, per-memory signals, each guard's calls in its own turn): signals off =
# emit_signals off and one drain_memory_events() a frame; turns = record, record, read, choose per
# guard (as per-guard `_process` code does) instead of one pass over the guards per call
CONFIGS = [
    (200, "batched", True, False),
    (1000, "batched", True, False),
    (1000, "batched", False, False),
    (10, "dictionary", True, False),
    (200, "dictionary", True, False),
    (1000, "dictionary", True, False),
    (200, "dictionary", True, True),
    (200, "nodes", True, False),
    (1000, "nodes", True, False),
    (200, "gdscript", True, False),
    (200, "gdscript", True, True),
    (1000, "gdscript", True, False),
]
FRAMES = {"batched": 300, "dictionary": 120, "nodes": 120, "gdscript": 120}
METHODS = ("record_event", "awareness_of", "evaluate", "query_strongest", "set_inputs", "choice")
TARGET_US = {"record_event": 1.5, "awareness_of": 1.5, "evaluate": 2.0, "query_strongest": 1.5}  # issue 14


def run(npcs: int, path: str, signals: bool = True, turns: bool = False) -> dict[str, Any]:
    command = [
        str(GODOT), "--headless", "--path", str(ROOT), "-s", "res://benchmarks/bench_addon.gd",
        "--", f"--npcs={npcs}", f"--frames={FRAMES[path]}", f"--path={path}",
        f"--signals={'on' if signals else 'off'}", f"--order={'turns' if turns else 'passes'}",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    # the result line (Godot writes its keys sorted: the line no longer starts with "frames")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{") and '"without":' in line]
    if done.returncode != 0 or not lines:
        sys.exit(f"bench_addon: {npcs} {path} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    data = json.loads(lines[-1])
    return {
        "without": np.array(data["without"]),
        "with": np.array(data["with"]),
        "per_call_us": data.get("per_call_us", {}),
        "baseline_per_call_us": data.get("baseline_per_call_us", {}),
        "step_ms": np.array(data.get("step_ms", [])),
    }


def per_call_cells(calls: dict[str, float], baseline: dict[str, float]) -> str:
    """Each method's time per call through the node, the GDScript baseline's, and their ratio."""
    cells = []
    for method in METHODS:
        if method in calls and baseline.get(method):
            node, gdscript = calls[method], baseline[method]
            cells.append(f"{node:.2f} / {gdscript:.2f} ({node / gdscript:.1f}x)")
        else:
            cells.append(f"{calls[method]:.2f}" if method in calls else "-")
    return " | ".join(cells)



def main() -> int:
    rows = []
    per_call: dict[tuple[int, str], tuple[dict[str, float], dict[str, float]]] = {}
    for npcs, path, signals, turns in CONFIGS:
        frames = run(npcs, path, signals, turns)
        if path in ("dictionary", "nodes") and not turns:
            per_call[npcs, path] = (frames["per_call_us"], frames["baseline_per_call_us"])
        p50_without, p99_without = np.percentile(frames["without"], [50, 99])
        p50_with, p99_with = np.percentile(frames["with"], [50, 99])
        added = p50_with - p50_without
        label = path if signals else f"{path}, signals off"
        label = f"{label}, own turns" if turns else label
        # the first sample is the frame of the timed recalls and the baseline's passes: left out
        step = float(np.median(frames["step_ms"][1:])) if frames["step_ms"].size > 1 else None
        rows.append((npcs, label, p50_without, p99_without, p50_with, p99_with, added, step))
        print(f"{npcs} {label}: +{added:.2f} ms p50, {p99_with:.2f} ms p99", flush=True)
    lines = [
        "# Addon frame time (`scripts/bench addon`)",
        "",
        f"Godot {engine_version()}, headless, frame cap lifted; {platform.processor() or platform.machine()},"
        f" Python {platform.python_version()}.",
        "Each row is one engine run: the same guards without the npc_mind nodes, then with a",
        "MemoryStream, UtilitySelector and AsyncLLMDecision each",
        "(2 perceptions recorded, 1 awareness read and 1 behavior chosen per guard per frame; one guard",
        "in 300 asks the LLM per frame, answered by the fallback tier as no endpoint is set). The",
        "`gdscript` rows run the Dictionary path's logic on plain GDScript objects instead (the per-call",
        "baseline below: a memory per (entity, type), 3 behaviors x 2 considerations; no LLM requests).",
        'The "own turns" rows make the same calls guard by guard (record, record, read, choose, then the',
        "next guard), as each guard's own `_process` would, instead of one pass over the guards per call.",
        "",
        "| guards | path | without p50 / p99 (ms) | with p50 / p99 (ms) | added p50 (ms) | of 16.6 ms |"
        " of it the server's step (ms) |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for npcs, path, p50_without, p99_without, p50_with, p99_with, added, step in rows:
        lines.append(
            f"| {npcs:,} | {path} | {p50_without:.2f} / {p99_without:.2f} | {p50_with:.2f} / {p99_with:.2f} |"
            f" {added:.2f} | {added / 16.6:.0%} | {'-' if step is None else f'{step:.2f}'} |"
        )
    batched = next(row for row in rows if row[0] == 1000 and row[1] == "batched")
    verdict = "met" if batched[6] <= BUDGET_MS else "NOT met"
    at_200 = per_call.get((200, "dictionary"), ({}, {}))[0]  # the reference crowd
    missed = ", ".join(f"`{m}`" for m in TARGET_US if at_200.get(m, 0.0) > TARGET_US[m])
    verdict_per_call = f"**NOT met** at 200 guards ({missed} above it)" if missed else "met at 200 guards"
    dictionary_200 = next((row for row in rows if row[0] == 200 and row[1] == "dictionary"), None)
    if dictionary_200 is not None:
        frame_met = "met" if dictionary_200[6] <= 1.0 else "**NOT met**"
        added_200 = dictionary_200[6]
        verdict_per_call += f"; 200 guards add at most 1 ms p50 here: {frame_met} ({added_200:.2f} ms)"
        gdscript_200 = next((row for row in rows if row[0] == 200 and row[1] == "gdscript"), None)
        if gdscript_200 is not None and gdscript_200[6] > 0:
            ratio = added_200 / gdscript_200[6]
            ratio_met = "met" if ratio <= 1.5 else "**NOT met**"
            verdict_per_call += (
                f"; at most 1.5x the same logic in plain GDScript (the `gdscript` rows, which add"
                f" {gdscript_200[6]:.2f} ms): {ratio_met} ({ratio:.2f}x)"
            )
    turns_200 = {row[1]: row[6] for row in rows if row[0] == 200 and row[1].endswith("own turns")}
    nodes_turns, gdscript_turns = turns_200.get("dictionary, own turns"), turns_200.get("gdscript, own turns")
    if nodes_turns is not None and gdscript_turns:
        verdict_per_call += (
            f"; with each guard's calls in its own turn, {nodes_turns:.2f} ms against"
            f" {gdscript_turns:.2f} ms ({nodes_turns / gdscript_turns:.2f}x)"
        )
    lines += [
        "",
        f"Goal (batched path, 1,000 guards, added p50 <= {BUDGET_MS:.2f} ms, 25% of 16.6 ms): **{verdict}**"
        f" ({batched[6]:.2f} ms).",
        "",
        "The Dictionary path crosses into Python once per call per guard (4 calls a guard a frame here), so",
        "its cost grows with the guards. Time per call on that path, as GDScript sees it (whole passes over",
        "the guards, loop and argument building included; `query_strongest` wakes memories, so it is timed",
        "once over every guard after the frames, each guard having recalled the same entity untimed in",
        "the frame before, as a game recalling every frame does), against a GDScript baseline in the same",
        "run: plain GDScript objects doing the equivalent Dictionary work through the same loops (a memory",
        "per (entity, type) with the refractory rehearsal, R = e^(-t/S) and the awareness thresholds; 3",
        "behaviors x 2 saturating considerations, the best one chosen). Cells: node / baseline (ratio), us.",
        "Path nodes: the selectors are fed for the batch by the nodes themselves, one `set_inputs`",
        "(a 3-key Dictionary written into the definition's input columns at the node's row) and one",
        "`choice` read per guard a frame; the choice is made for every guard of the definition in one",
        "batch at the end of the frame (after every `_process`, before drawing; `behavior_changed` is",
        "emitted then), so `choice` read in `_process` is the one made from the last frame's inputs.",
        "Its baseline stores the Dictionary and reads a property; the batch choice itself is in the",
        "frame time, not in these cells.",
        f"Target: at most {TARGET_US['record_event']} us per call"
        f" ({TARGET_US['evaluate']} us for `evaluate`).",
        "",
        "| guards | path | " + " | ".join(f"`{method}` (us)" for method in METHODS) + " |",
        "|---:|---|" + "---:|" * len(METHODS),
        *(f"| {npcs:,} | {path} | {per_call_cells(*calls)} |" for (npcs, path), calls in per_call.items()),
        "",
        f"Per-node target (issue 14): {verdict_per_call}.",
        "",
        "Where a call's time goes: `record_event` and `awareness_of` do not run the memory pool per call,",
        "and from GDScript they do not enter Python at all. A write is queued in the binding's C layer",
        "(checked at the call, so it cannot fail later; gdbridge's queued calls) and handed to the server",
        "in one piece before any Python code that could read it runs; the frame's step folds the queue",
        "into one `record_batch` before the clock moves. A read is answered in C from the per-frame table",
        "the step computes in one batch for the pairs read the frame before and publishes to the binding",
        "(gdbridge's answered reads), or from the written memory's R = 1 (e^0) when the stream's queued",
        "writes cannot evict it; a stream the server changed otherwise this frame is answered by the",
        "server, from the same table or the row (exact: `npc_mind.server.memories`, proven against the",
        "immediate path by `tests/test_server_deferred.py`, and in the engine, C paths included, by",
        "`tests/test_addon_memory_differential.py`). `UtilitySelector`'s per-frame methods read no memory",
        "and let the queued writes wait, so they reach the server once, at the step, unless a Python",
        "call that reads memory comes first: the timed `query_strongest` pass here, whose first call",
        "takes the frame's 2 x N writes and indexes them by stream (about 0.4 us a call at 200 guards).",
        "`query_strongest` of a pair read or recalled the frame before is answered from the same table",
        "(the batch path's answer without the wake) when the stream's memories of that entity are as the",
        "step left them or only refreshed by this frame's queued writes (the refreshed memory then has",
        "R = 1, the largest); its wake is queued and folded after the stream's writes; anything else",
        "applies the stream's queue and recalls at once. Its six-key Dictionary costs about what GDScript",
        "pays to build the same one (docs/benchmarks/binding.md), which is why it stays above 1.5 us.",
        "The MemoryStream and UtilitySelector methods check the thread themselves and call the server's",
        "bank once; `evaluate` runs one generated function per definition (the scoring and the",
        "anti-dithering decision, their rules inlined from their one function) and returns the behavior's",
        "index, which the node maps to its StringName. What is left of each call is mostly the binding's",
        "crossing (the Dictionary argument of `evaluate` and `set_inputs`) and the same Python running",
        "out of cache between the passes. The step's column is the server's own update of the frame:",
        "the fold of the queued writes (the NPCs whose events only refresh a memory in one pass, the",
        "rest in rounds of one event per NPC), the memory events, the next frame's table and the",
        "decisions. Before the memory pool's scalar paths and the leaner front end, the same runs",
        "measured 37.6 ms (200 guards) and 258 ms (1,000) added on this path.",
        "",
        "p99 on the batched path comes from the frames where every guard's crowd changes at once (every",
        "1.5-2 s here): 1,000-2,000 memories form in one frame, and each is a `memory_formed` signal",
        "(the server emits a frame's signals in one crossing, `gdbridge.objects.emit_signals`).",
        'The "signals off" row is the same run with `MemoryStream.emit_signals` off on every guard and',
        "the crowd code reading all memory events in one `NpcMindServer.drain_memory_events()` call a",
        "frame (packed arrays) instead of one engine signal per memory event.",
        "",
    ]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))
    publish("addon")  # the figures the README and the class pages quote
    return 0


if __name__ == "__main__":
    sys.exit(main())
