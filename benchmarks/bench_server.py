"""The server's per-frame cost with a few live NPCs after many have come and gone (issue 10, item 5).

Run with `scripts/bench server`. Writes docs/benchmarks/server.md and prints the same table.

Each row compares two `MindServer`s built in the same run with the same live NPCs (8 selectors of one
definition chosen through the batched path every frame, 8 memory streams recording every frame, 8
idle decisions): a fresh one, and one that first spawned and despawned 100,000 NPCs of the row's
kind (decisions each with their own persona, as a crowd of individually written NPCs would). The
cost is `step()` plus that frame's batched calls, the median over interleaved blocks of frames.
Goal: the churned server within 1.2x of the fresh one.
"""

from __future__ import annotations

import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from npc_mind.server import ClockMode
from npc_mind.server.core import MindServer
from npc_mind.server.decisions import DecisionSettings

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "benchmarks" / "server.md"
CYCLES = 100_000
LIVE = 8
BLOCKS, FRAMES_PER_BLOCK = 15, 200
GOAL = 1.2
SELECTOR = {
    "behaviors": [
        {"name": "patrol", "considerations": [{"input_key": "calm", "curve_type": "linear"}]},
        {"name": "pursue", "considerations": [{"input_key": "threat", "curve_type": "linear"}]},
    ]
}


def churn_selectors(server: MindServer, index: int) -> None:
    server.remove(server.add_selector(SELECTOR))


def churn_memories(server: MindServer, index: int) -> None:
    handle = server.add_memory()
    server.record(handle, 7, 1, 0.5)
    server.remove(handle)


def churn_decisions(server: MindServer, index: int) -> None:
    server.remove(server.add_decision(DecisionSettings(persona=f"guard number {index}")))


CHURNS: dict[str, Callable[[MindServer, int], None]] = {
    "selectors": churn_selectors,
    "memory streams": churn_memories,
    "decisions (own persona each)": churn_decisions,
}


class World:
    """A server with LIVE NPCs of each kind and one frame's worth of batched calls."""

    def __init__(self, churn: Callable[[MindServer, int], None] | None) -> None:
        self.server = server = MindServer(ClockMode.MANUAL)
        self.selectors = np.array([server.add_selector(SELECTOR) for _ in range(LIVE)])
        self.streams = np.array([server.add_memory() for _ in range(LIVE)])
        self.decisions = [server.add_decision(DecisionSettings()) for _ in range(LIVE)]
        started = time.perf_counter()
        if churn is not None:  # while the live ones live, as in a game
            for index in range(CYCLES):
                churn(server, index)
        self.churn_seconds = time.perf_counter() - started
        self.rng = np.random.default_rng(1)
        self.frame = 0

    def step(self) -> None:
        server = self.server
        self.frame += 1
        server.set_inputs(self.selectors, "threat", self.rng.random(LIVE))
        server.set_inputs(self.selectors, "calm", self.rng.random(LIVE))
        entities = self.rng.integers(0, 32, LIVE)
        server.record_batch(self.streams, entities, np.full(LIVE, 1), np.full(LIVE, 0.5))
        server.step(1 / 60)

    def block(self) -> float:
        started = time.perf_counter()
        for _ in range(FRAMES_PER_BLOCK):
            self.step()
        return (time.perf_counter() - started) / FRAMES_PER_BLOCK


def measure(churn: Callable[[MindServer, int], None]) -> tuple[float, float, float]:
    """(fresh ms, churned ms, churn seconds): blocks interleaved so load changes hit both alike."""
    fresh, churned = World(None), World(churn)
    fresh_blocks, churned_blocks = [], []
    for _ in range(BLOCKS):
        fresh_blocks.append(fresh.block())
        churned_blocks.append(churned.block())
    fresh.server.close()
    churned.server.close()
    fresh_ms, churned_ms = statistics.median(fresh_blocks) * 1e3, statistics.median(churned_blocks) * 1e3
    return fresh_ms, churned_ms, churned.churn_seconds


def main() -> int:
    rows = []
    for name, churn in CHURNS.items():
        fresh_ms, churned_ms, seconds = measure(churn)
        rows.append((name, fresh_ms, churned_ms, churned_ms / fresh_ms, seconds))
        print(f"{name}: fresh {fresh_ms:.3f} ms, after {CYCLES:,} cycles {churned_ms:.3f} ms", flush=True)
    lines = [
        "# Server frame cost after churn (`scripts/bench server`)",
        "",
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}.",
        f"Live NPCs in both servers: {LIVE} selectors (one definition, batched path), {LIVE} memory streams,",
        f"{LIVE} idle decisions. A frame: two `set_inputs`, one `record_batch`, one `step()`; median over",
        f"{BLOCKS} interleaved blocks of {FRAMES_PER_BLOCK} frames.",
        "",
        f"| spawned and despawned first ({CYCLES:,} cycles) | fresh server (ms/frame) | churned server"
        " (ms/frame) | ratio | churn time (s) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, fresh_ms, churned_ms, ratio, seconds in rows:
        lines.append(f"| {name} | {fresh_ms:.3f} | {churned_ms:.3f} | {ratio:.2f}x | {seconds:.1f} |")
    worst = max(row[3] for row in rows)
    verdict = "met" if worst <= GOAL else "NOT met"
    goal = f"Goal (every row within {GOAL}x of the fresh server): **{verdict}** (worst {worst:.2f}x)."
    lines += ["", goal, ""]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
