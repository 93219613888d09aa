"""Memory benchmark: the batched numpy MemoryPool against the source's C++ and a plain Python port.

Per frame, at 100, 1,000 and 10,000 NPCs x 64 slots, random events over 256 entities:
  (a) record 4 events per NPC, (b) one strongest-memory query per NPC, (c) R of every memory.
Every input is generated before timing; the implementations replay the same frames from an empty
state (warm-up frames fill the pools first). Reported: median per frame. Also: one
`record_batch` of 20,000 rows all for one NPC against 20,000 rows spread one per NPC, same run
(issue 10 defect 8: the one-NPC batch ran one round per row).

    scripts/bench memory            # or: .venv/bin/python benchmarks/bench_memory.py [--quick]

Writes docs/benchmarks/memory.md and prints the same table.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from npc_mind import __version__
from npc_mind.memory import MemoryPool
from tools.bench_quotes import publish

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "out" / "bench_memory"
DOC = ROOT / "docs" / "benchmarks" / "memory.md"
CXX_FLAGS = ["-O2", "-march=native", "-std=c++17"]
ENTITIES = 256
EVENTS_PER_NPC = 4
CAPACITY = 64
WARMUP = 24  # frames: 4 events x 24 > 64 slots, so every pool is full and evicting when timing starts


# -------------------------------------------------------------------------------------------------
# the plain per-object Python port of the source's NPCMemoryStream
class MemoryItem:
    __slots__ = ("entity", "last", "recalls", "salience", "stability", "type")

    def retrievability(self, now: float) -> float:
        elapsed = max(0.0, now - self.last)
        if self.stability < 0.0001:
            return 0.0
        return math.exp(-elapsed / self.stability)


BASE = (5.0, 30.0, 120.0, 600.0, 3600.0)


class NPCMemoryStream:
    MAX_CAPACITY = 64
    FORGET_THRESHOLD = 0.05

    def __init__(self) -> None:
        self.items: list[MemoryItem] = []

    def record(self, entity: int, mtype: int, salience: float, now: float) -> None:
        for item in self.items:
            if item.entity == entity and item.type == mtype:
                item.last = now
                item.recalls += 1
                item.salience = max(item.salience, salience)
                item.stability *= 1.0 + 1.35 * math.log(1.0 + item.recalls) * item.salience
                return
        if len(self.items) >= self.MAX_CAPACITY:
            self._evict(now)
        item = MemoryItem()
        item.entity, item.type, item.last, item.recalls = entity, mtype, now, 1
        item.salience = min(max(salience, 0.0), 1.0)
        item.stability = BASE[mtype] * (0.5 + item.salience)
        self.items.append(item)

    def query(self, entity: int, now: float) -> MemoryItem | None:
        best, best_r = None, 0.0
        for item in self.items:
            if item.entity == entity:
                r = item.retrievability(now)
                if r > best_r:
                    best, best_r = item, r
        if best is not None and best_r > self.FORGET_THRESHOLD:
            best.last = now
            best.recalls += 1
            return best
        return None

    def sweep(self, now: float) -> list[float]:
        return [item.retrievability(now) for item in self.items]

    def _evict(self, now: float) -> None:
        evict, lowest = 0, 1e9
        for i, item in enumerate(self.items):
            r = item.retrievability(now)
            if r < self.FORGET_THRESHOLD:
                evict = i
                break
            score = r * 0.6 + item.salience * 0.4
            if score < lowest:
                lowest, evict = score, i
        self.items[evict] = self.items[-1]
        self.items.pop()


# -------------------------------------------------------------------------------------------------
class Frames:
    """Every input of every frame, generated up front."""

    def __init__(self, n: int, frames: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        e = EVENTS_PER_NPC * n
        self.n, self.frames = n, frames
        self.now = np.arange(frames, dtype=np.float64) / 60.0
        # a game loop's natural order: each NPC's perceptions together
        self.npc = np.repeat(np.arange(n, dtype=np.int64), EVENTS_PER_NPC)
        self.ent = rng.integers(0, ENTITIES, (frames, e), dtype=np.int64)
        self.typ = rng.integers(0, 5, (frames, e), dtype=np.int8)
        self.sal = rng.random((frames, e))
        self.query = rng.integers(0, ENTITIES, (frames, n), dtype=np.int64)

    def write_cpp_input(self, path: Path) -> None:
        with path.open("wb") as f:
            np.array([self.n, self.frames, EVENTS_PER_NPC, WARMUP], dtype=np.int32).tofile(f)
            self.now.astype(np.float32).tofile(f)
            np.tile(self.npc.astype(np.int32), self.frames).tofile(f)
            self.ent.astype(np.uint32).tofile(f)
            self.typ.astype(np.uint8).tofile(f)
            self.sal.astype(np.float32).tofile(f)
            self.query.astype(np.uint32).tofile(f)


def run_numpy(fr: Frames) -> tuple[float, float, float]:
    pool = MemoryPool(CAPACITY, reserve_npcs=fr.n)
    ids = pool.add_npcs(fr.n)
    npcs = ids[fr.npc]
    out = np.empty((fr.n, CAPACITY))
    ta, tb, tc = [], [], []
    clock = time.perf_counter
    for f in range(fr.frames):
        now = float(fr.now[f])
        t0 = clock()
        pool.record_batch(npcs, fr.ent[f], fr.typ[f], fr.sal[f], now)
        t1 = clock()
        pool.query_strongest_batch(ids, fr.query[f], now)
        t2 = clock()
        pool.retrievability_all(now, out=out)
        t3 = clock()
        if f >= WARMUP:
            ta.append(t1 - t0)
            tb.append(t2 - t1)
            tc.append(t3 - t2)
    return tuple(float(np.median(t)) * 1e6 for t in (ta, tb, tc))  # type: ignore[return-value]


SKEW_ROWS = 20_000


def run_skew(calls: int) -> dict[str, tuple[float, float]]:
    """Median time (us) of one `record_batch` and one `query_strongest_batch` of SKEW_ROWS random
    rows: (all for one NPC, one per NPC) per call."""
    rng = np.random.default_rng(5)
    ent = rng.integers(0, ENTITIES, SKEW_ROWS, dtype=np.int64)
    typ = rng.integers(0, 5, SKEW_ROWS, dtype=np.int8)
    sal = rng.random(SKEW_ROWS)
    record, query = [], []
    for layout in ("one", "spread"):
        pool = MemoryPool(CAPACITY, reserve_npcs=SKEW_ROWS)
        ids = pool.add_npcs(SKEW_ROWS)
        npcs = np.zeros(SKEW_ROWS, dtype=np.int64) if layout == "one" else ids
        tr, tq = [], []
        for call in range(calls + 1):  # the first call fills the pool (not timed)
            t0 = time.perf_counter()
            pool.record_batch(npcs, ent, typ, sal, float(call))
            t1 = time.perf_counter()
            pool.query_strongest_batch(npcs, ent, call + 0.5)
            t2 = time.perf_counter()
            if call:
                tr.append(t1 - t0)
                tq.append(t2 - t1)
        record.append(float(np.median(tr)) * 1e6)
        query.append(float(np.median(tq)) * 1e6)
    return {"record_batch": (record[0], record[1]), "query_strongest_batch": (query[0], query[1])}


def run_python(fr: Frames, measured: int) -> tuple[float, float, float]:
    streams = [NPCMemoryStream() for _ in range(fr.n)]
    npc = fr.npc.tolist()
    ta, tb, tc = [], [], []
    clock = time.perf_counter
    for f in range(WARMUP + measured):
        now = float(fr.now[f])
        ent, typ, sal, q = fr.ent[f].tolist(), fr.typ[f].tolist(), fr.sal[f].tolist(), fr.query[f].tolist()
        t0 = clock()
        for i, e, t, s in zip(npc, ent, typ, sal, strict=True):
            streams[i].record(e, t, s, now)
        t1 = clock()
        for s, e in zip(streams, q, strict=True):
            s.query(e, now)
        t2 = clock()
        for s in streams:
            s.sweep(now)
        t3 = clock()
        if f >= WARMUP:
            ta.append(t1 - t0)
            tb.append(t2 - t1)
            tc.append(t3 - t2)
    return tuple(float(np.median(t)) * 1e6 for t in (ta, tb, tc))  # type: ignore[return-value]


def build_cpp() -> tuple[Path | None, str]:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        return None, "no C++ compiler found (install g++)"
    OUT.mkdir(parents=True, exist_ok=True)
    exe = OUT / "bench_memory_cpp"
    src = ROOT / "benchmarks" / "cpp" / "bench_memory.cpp"
    cmd = [cxx, *CXX_FLAGS, "-o", str(exe), str(src)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode:
        return None, f"C++ build failed: {res.stderr.strip()[:400]}"
    version = subprocess.run(
        [cxx, "--version"], capture_output=True, text=True, check=False
    ).stdout.splitlines()
    return exe, (version[0] if version else cxx)


def run_cpp(exe: Path, fr: Frames) -> tuple[float, float, float]:
    inp = OUT / f"input_{fr.n}.bin"
    fr.write_cpp_input(inp)
    res = subprocess.run([str(exe), str(inp)], capture_output=True, text=True, check=True)
    rows = np.array([[float(x) for x in line.split()] for line in res.stdout.splitlines() if line.strip()])
    inp.unlink()
    return tuple(float(v) for v in np.median(rows, axis=0))  # type: ignore[return-value]


def fmt_us(us: float) -> str:
    if us >= 10_000:
        return f"{us / 1000:,.1f} ms"
    if us >= 1000:
        return f"{us / 1000:,.2f} ms"
    return f"{us:,.1f} us"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer frames (a smoke run, not for the docs)")
    ap.add_argument("--sizes", default="100,1000,10000")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    measured = 20 if args.quick else 100
    exe, cxx = build_cpp()
    print(f"C++ baseline: {cxx}; flags {' '.join(CXX_FLAGS)}", flush=True)
    results = []
    for n in sizes:
        fr = Frames(n, WARMUP + measured, seed=n)
        npy = run_numpy(fr)
        cpp = run_cpp(exe, fr) if exe else (math.nan,) * 3
        py_frames = 3 if n >= 10_000 or args.quick else 10
        py = run_python(fr, py_frames)
        results.append((n, npy, cpp, py))
        print(
            f"  {n:>6} NPCs  pool {npy[0]:9.1f} {npy[1]:8.1f} {npy[2]:8.1f} us | "
            f"C++ {cpp[0]:9.1f} {cpp[1]:8.1f} {cpp[2]:8.1f} us | "
            f"python {py[0]:11.1f} {py[1]:9.1f} {py[2]:9.1f} us",
            flush=True,
        )
    skew = run_skew(2 if args.quick else 5)
    for call, (one, spread) in skew.items():
        print(f"  {call} of {SKEW_ROWS:,} rows: one NPC {one:.1f} us, spread {spread:.1f} us")
    table = render(results, cxx, measured, skew)
    DOC.parent.mkdir(parents=True, exist_ok=True)
    if not args.quick and sizes == [100, 1000, 10000]:
        DOC.write_text(table)
        print(f"\nwritten to {DOC.relative_to(ROOT)}\n")
        publish("memory")  # the figures the docs quote
    print(table)
    return 0


#: Issue 21 item 1: (work index, NPCs, the highest pool / C++ ratio that meets it, its wording).
GOALS = (
    (1, 1000, 1.0, "query at most 1.0x"),
    (1, 10000, 1.0, "query at most 1.0x"),
    (0, 1000, 1.0, "record ahead (below 1.0x)"),
    (0, 10000, 1.0, "record ahead (below 1.0x)"),
    (2, 1000, 1.0, "sweep ahead (below 1.0x)"),
    (2, 10000, 1.0, "sweep ahead (below 1.0x)"),
)


def goal_lines(results: list) -> list[str]:
    """Whether each goal of issue 21 item 1 is met in this run (the sizes it measured)."""
    ratios = {n: [p / c if c > 0 else math.nan for p, c in zip(npy, cpp, strict=True)]
              for n, npy, cpp, _ in results}  # fmt: skip
    lines = [
        "Goals (issue 21 item 1), pool / C++ in this run:",
        "",
        "| goal | NPCs | ratio | met |",
        "|---|---:|---:|---|",
    ]
    for work, n, bound, wording in GOALS:
        if n not in ratios:
            continue
        ratio = ratios[n][work]
        met = ratio <= bound if work == 1 else ratio < bound
        lines.append(f"| {wording} | {n:,} | {ratio:.2f}x | {'met' if met else 'NOT met'} |")
    return lines


def render(results: list, cxx: str, measured: int, skew: dict[str, tuple[float, float]]) -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    lines = [
        "# Memory benchmark",
        "",
        "Written by `scripts/bench memory` (`benchmarks/bench_memory.py`); do not edit by hand.",
        "",
        f"npc_mind {__version__}, numpy {np.__version__}, Python {platform.python_version()}, "
        f"{cpu}, {os.cpu_count()} cores.",
        f"C++ baseline: the design source's `NPCMemoryStream` (`benchmarks/cpp/`), built with "
        f"`{cxx}` `{' '.join(CXX_FLAGS)}`.",
        "",
        f"Per frame, 64 slots per NPC, random events over {ENTITIES} entities, median of {measured} frames "
        f"(plain Python: 10 frames, 3 at 10,000 NPCs) after {WARMUP} warm-up frames that fill every pool: "
        "(a) record 4 events per NPC, (b) one strongest-memory query per NPC (it wakes the memory), "
        "(c) R of every memory. The pool is `MemoryPool.record_batch`, `query_strongest_batch`, "
        "`retrievability_all(out=...)`; ratios are pool time / baseline time "
        "(below 1.0x: the pool is faster).",
        "",
        "| NPCs | work | pool | C++ -O2 -march=native | pool / C++ | plain Python | Python / pool |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    names = ("(a) record 4 each", "(b) query 1 each", "(c) R of all")
    for n, npy, cpp, py in results:
        for i, name in enumerate(names):
            ok = cpp[i] == cpp[i] and cpp[i] > 0
            ratio = npy[i] / cpp[i] if ok else math.nan
            lines.append(
                f"| {n:,} | {name} | {fmt_us(npy[i])} | {fmt_us(cpp[i])} | "
                f"{ratio:.2f}x | {fmt_us(py[i])} | {py[i] / npy[i]:,.0f}x faster |"
            )
    lines += ["", *goal_lines(results)]
    lines += [
        "",
        f"One call of {SKEW_ROWS:,} random rows (entities over {ENTITIES}, random types and saliences, "
        f"{CAPACITY} slots, into pools filled by one such call), median of 5 calls: every row for one "
        "NPC (its rows apply in input order, so most evict) against one row for each of "
        f"{SKEW_ROWS:,} NPCs; the query wakes what it finds.",
        "",
        "| call | rows | all for one NPC | one per NPC | one NPC / spread |",
        "|---|---:|---:|---:|---:|",
    ]
    for call, (one, spread) in skew.items():
        lines.append(f"| `{call}` | {SKEW_ROWS:,} | {fmt_us(one)} | {fmt_us(spread)} | {one / spread:.1f}x |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
