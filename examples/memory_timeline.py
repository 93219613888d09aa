"""A market square in plain Python: two guards, a thief, a stone and a grenade.

Runs headless, prints a timeline of what each guard remembers (R and awareness) and writes
`memory_timeline.png` (the forgetting curves) into --out.

    .venv/bin/python examples/memory_timeline.py --out out
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from npc_mind.memory import Awareness, MemoryParams, MemoryPool, MemoryType, curve_points

THIEF, STONE, GRENADE = 1001, 1002, 1003
CROWD = 2000  # passers-by 2000, 2001, ...
NAMES = {THIEF: "the thief", STONE: "a thrown stone", GRENADE: "the grenade"}
TYPE_NAMES = {t: t.name.capitalize() for t in MemoryType}
AWARE = {
    Awareness.PURSUE: "PURSUE",
    Awareness.SEARCH: "search",
    Awareness.PUZZLED: "puzzled",
    Awareness.NONE: "-",
}


def name_of(entity: int) -> str:
    return NAMES.get(entity, f"passer-by #{entity - CROWD + 1}")


def fmt_time(t: float) -> str:
    return f"{t:7.1f} s"


@dataclass
class Story:
    """The scenario: one pool for both guards, driven frame by frame on the real-seconds clock."""

    pool: MemoryPool
    guards: dict[str, int]
    lines: list[str] = field(default_factory=list)
    checks: list[tuple[bool, str]] = field(default_factory=list)
    series: dict[str, list[tuple[float, float]]] = field(default_factory=dict)

    def say(self, t: float, who: str, text: str) -> None:
        self.lines.append(f"{fmt_time(t)}  {who:<7} {text}")

    def check(self, ok: bool, text: str) -> None:
        self.checks.append((ok, text))

    def r(self, who: str, entity: int, mtype: MemoryType, t: float) -> float:
        for v in self.pool.memories(self.guards[who], t):
            if v.entity == entity and v.memory_type == mtype:
                return v.retrievability
        return 0.0

    def view(self, who: str, entity: int, mtype: MemoryType, t: float):
        for v in self.pool.memories(self.guards[who], t):
            if v.entity == entity and v.memory_type == mtype:
                return v
        return None

    def aware(self, who: str, entity: int, t: float) -> str:
        return AWARE[self.pool.awareness(self.guards[who], entity, t)]

    def sample(self, t: float) -> None:
        for key, (who, entity, mtype) in TRACKED.items():
            self.series.setdefault(key, []).append((t, self.r(who, entity, mtype, t)))

    def forgotten(self, t: float) -> None:
        rows = self.pool.pop_forgotten(t)
        who_of = {npc: who for who, npc in self.guards.items()}
        for npc, ent, mtype, due in sorted(
            zip(
                rows.npc.tolist(),
                rows.entity.tolist(),
                rows.memory_type.tolist(),
                rows.forget_time.tolist(),
                strict=True,
            ),
            key=lambda x: x[3],
        ):
            self.say(
                due,
                who_of[npc],
                f"forgets {name_of(ent)} ({TYPE_NAMES[MemoryType(mtype)]}): "
                f"R fell to {self.pool.params.forget_threshold:.2f}",
            )

    def evictions(self) -> None:
        ev = self.pool.drain_events()
        who_of = {npc: who for who, npc in self.guards.items()}
        for kind, npc, ent, mtype in zip(
            ev.kind.tolist(), ev.npc.tolist(), ev.entity.tolist(), ev.memory_type.tolist(), strict=True
        ):
            if kind == 3:  # EventKind.EVICTED
                self.say(
                    self.now,
                    who_of[npc],
                    f"   memory full: evicts {name_of(ent)} ({TYPE_NAMES[MemoryType(mtype)]})",
                )
                self.evicted.append((ent, mtype))

    now: float = 0.0
    evicted: list[tuple[int, int]] = field(default_factory=list)


TRACKED = {
    "Aldric: theft (Hostile 0.9)": ("Aldric", THIEF, MemoryType.HOSTILE),
    "Aldric: the blast (Observation 0.6)": ("Aldric", GRENADE, MemoryType.OBSERVATION),
    "Brenna: stone (Trivia 0.1)": ("Brenna", STONE, MemoryType.TRIVIA),
    "Brenna: grenade (Trauma 1.0)": ("Brenna", GRENADE, MemoryType.TRAUMA),
    "Brenna: passer-by #2 (Trivia 0.2)": ("Brenna", CROWD + 1, MemoryType.TRIVIA),
}


def run(out: Path, curve: str) -> Story:
    pool = MemoryPool(capacity=8, params=MemoryParams(curve=curve), events=True)
    story = Story(pool, {"Aldric": pool.add_npc(), "Brenna": pool.add_npc()})
    aldric, brenna = story.guards["Aldric"], story.guards["Brenna"]
    fps = 60.0

    def step_to(t_end: float, dt: float, each=None) -> None:
        t = story.now
        while t < t_end - 1e-9:
            t = min(t + dt, t_end)
            story.now = t
            if each is not None:
                each(t)
            story.sample(t)
            story.forgotten(t)
            story.evictions()

    story.sample(0.0)
    # 0 s: the theft, in front of Aldric
    pool.record(aldric, THIEF, MemoryType.HOSTILE, 0.9, 0.0)
    v = story.view("Aldric", THIEF, MemoryType.HOSTILE, 0.0)
    story.say(
        0.0,
        "Aldric",
        f"sees the thief snatch a purse        Hostile E 0.9 -> S {v.stability:.0f} s, "
        f"R 1.00 {story.aware('Aldric', THIEF, 0.0)}",
    )
    s_start = v.stability

    # 0-6 s: he watches him run, perceiving him every frame (60 Hz)
    def watch(t: float) -> None:
        if t <= 6.0:
            pool.record(aldric, THIEF, MemoryType.HOSTILE, 0.9, t)

    # 3 s: a boy throws a stone past Brenna; she keeps glancing at it (awareness every frame)
    glances: list[Awareness] = []

    def stone(t: float) -> None:
        watch(t)
        if abs(t - 3.0) < 0.5 / fps:
            pool.record(brenna, STONE, MemoryType.TRIVIA, 0.1, t)
            s = story.view("Brenna", STONE, MemoryType.TRIVIA, t).stability
            story.say(t, "Brenna", f"a stone clatters past                 Trivia E 0.1 -> S {s:.1f} s")
        if t >= 3.0:
            glances.append(pool.awareness(brenna, STONE, t))

    step_to(6.0, 1.0 / fps, stone)
    v = story.view("Aldric", THIEF, MemoryType.HOSTILE, 6.0)
    story.say(
        6.0,
        "Aldric",
        f"watched him for 6 s ({int(6 * fps)} frames): S still {v.stability:.0f} s, "
        f"k {v.recall_count} (refractory period)",
    )
    story.check(
        v.stability == s_start and v.recall_count == 1,
        f"per-frame perception does not inflate stability (S stays {s_start:.0f} s over 360 frames)",
    )
    story.say(6.0, "Aldric", "loses sight of him: the thief hides behind the well")
    step_to(16.0, 1.0 / fps, stone)
    story.check(
        glances[0] == Awareness.PURSUE and glances[-1] == Awareness.NONE,
        f"Brenna glanced at the stone {len(glances)} times (awareness every frame) and still forgot it",
    )
    story.check(story.aware("Brenna", STONE, 13.0) == "-", "the thrown stone is gone 10 s later")

    # 20 s: the grenade
    step_to(20.0, 0.5)
    pool.record(brenna, GRENADE, MemoryType.TRAUMA, 1.0, 20.0)
    pool.record(aldric, GRENADE, MemoryType.OBSERVATION, 0.6, 20.0)
    story.say(
        20.0,
        "Brenna",
        f"a grenade goes off beside her         Trauma E 1.0 -> S "
        f"{story.view('Brenna', GRENADE, MemoryType.TRAUMA, 20.0).stability:.0f} s",
    )
    story.say(
        20.0,
        "Aldric",
        f"hears the blast across the square     Observation E 0.6 -> S "
        f"{story.view('Aldric', GRENADE, MemoryType.OBSERVATION, 20.0).stability:.0f} s",
    )

    # 25-40 s: the crowd flows past Brenna; her 8 slots fill up
    crowd = iter(range(12))

    def passersby(t: float) -> None:
        if abs(t - round(t)) < 1e-9 and 25 <= t <= 36:
            i = next(crowd)
            mtype = MemoryType.TRIVIA if i % 3 else MemoryType.OBSERVATION
            pool.record(brenna, CROWD + i, mtype, 0.2 if mtype == MemoryType.TRIVIA else 0.3, t)

    step_to(40.0, 0.5, passersby)
    story.say(
        40.0, "Brenna", f"the crowd has passed: {pool.memory_count(brenna)} of {pool.capacity} slots in use"
    )
    held = {(v.entity, v.memory_type) for v in pool.memories(brenna, 40.0)}
    story.check(
        (GRENADE, MemoryType.TRAUMA) in held and all(e != GRENADE for e, _ in story.evicted),
        f"a full memory evicted {len(story.evicted)} low-value memories, never the grenade",
    )

    # 96 s: the thief steps out, 90 s after Aldric lost sight of him
    step_to(96.0, 0.5)
    r = story.r("Aldric", THIEF, MemoryType.HOSTILE, 96.0)
    level = story.aware("Aldric", THIEF, 96.0)
    story.say(96.0, "Aldric", f"the thief steps out, 90 s later       R {r:.2f} -> {level}")
    hit = pool.query_strongest(aldric, THIEF, 96.0)  # acting on it is a recall: it wakes the memory
    story.say(96.0, "Aldric", f'"You there! Stop!" (recall wakes the memory: k {hit.recall_count})')
    if curve == "exponential":
        story.check(
            abs(r - 0.90) < 0.01 and level == "PURSUE",
            f"the theft is still vivid 90 s later: R {r:.2f}, pursue",
        )
    else:
        story.check(
            level in ("PURSUE", "search"), f"the theft is still remembered 90 s later: R {r:.2f}, {level}"
        )
    story.say(96.0, "Brenna", f"never saw the thief: awareness {story.aware('Brenna', THIEF, 96.0)}")

    # 130 s: he strikes again: a rehearsal
    step_to(130.0, 0.5)
    s_before = story.view("Aldric", THIEF, MemoryType.HOSTILE, 130.0).stability
    pool.record(aldric, THIEF, MemoryType.HOSTILE, 0.9, 130.0)
    v = story.view("Aldric", THIEF, MemoryType.HOSTILE, 130.0)
    story.say(
        130.0,
        "Aldric",
        f"sees him steal again (rehearsal)      S {s_before:.0f} -> {v.stability:.0f} s, k {v.recall_count}",
    )
    story.check(v.stability > 2 * s_before, "a rehearsed hostile memory outlasts a single one")

    # 200 s: save; load in a "new session" whose clock starts at 0
    step_to(200.0, 1.0)
    path = out / "memory_timeline.npcmem"
    pool.save(path, now=200.0)
    loaded = MemoryPool.load(path, now=0.0)
    same = all(
        loaded.awareness(npc, e, dt) == pool.awareness(npc, e, 200.0 + dt)
        for npc in (aldric, brenna)
        for e in (THIEF, STONE, GRENADE, CROWD, CROWD + 11)
        for dt in (0.0, 60.0, 600.0)
    )
    story.say(
        200.0,
        "",
        f"game saved ({path.stat().st_size} bytes, ages not clock times) and loaded "
        f"with a clock starting at 0: {'identical answers' if same else 'DIFFERENT ANSWERS'}",
    )
    story.check(same, "save then load with another clock origin gives identical answers")

    step_to(600.0, 2.0)
    step_to(3000.0, 10.0)
    for who, ent in (("Aldric", THIEF), ("Aldric", GRENADE), ("Brenna", GRENADE)):
        story.say(3000.0, who, f"still remembers {name_of(ent)}?  {story.aware(who, ent, 3000.0)}")
    return story


def plot(story: Story, out: Path, params: MemoryParams) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5.2), dpi=110)
    bands = [
        (params.awareness_pursue, 1.02, "#f4cccc", "pursue"),
        (params.awareness_search, params.awareness_pursue, "#fff2cc", "search"),
        (params.forget_threshold, params.awareness_search, "#e8f0fe", "puzzled"),
    ]
    for ax in (ax1, ax2):
        for lo, hi, color, label in bands:
            ax.axhspan(lo, hi, color=color, zorder=0)
            ax.text(
                1.005,
                (lo + min(hi, 1.0)) / 2,
                label,
                transform=ax.get_yaxis_transform(),
                va="center",
                fontsize=8,
                color="#555",
            )
        ax.axhline(params.forget_threshold, color="#999", lw=0.8, ls="--")
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("retrievability R")
        ax.grid(alpha=0.3)
    colors = ["#c0392b", "#e67e22", "#7f8c8d", "#8e44ad", "#16a085"]
    for (key, pts), color in zip(story.series.items(), colors, strict=False):
        t = np.array([p[0] for p in pts])
        r = np.array([p[1] for p in pts])
        ax1.plot(np.maximum(t, 0.1), r, label=key, color=color, lw=1.8)
    for t, label in ((6.0, "thief hides"), (96.0, "steps out (recall)"), (130.0, "steals again")):
        ax1.axvline(t, color="#c0392b", lw=0.7, ls=":")
        ax1.text(t, 1.0, label, rotation=90, va="top", ha="right", fontsize=7, color="#c0392b")
    ax1.set_xscale("log")
    ax1.set_xlim(0.1, 3000)
    ax1.set_xlabel("seconds of play (log scale)")
    ax1.set_title("The market square: what the guards remember")
    ax1.legend(fontsize=8, loc="lower left")

    ages = np.linspace(0, 3000, 1200)
    s_theft = params.base_stability[MemoryType.HOSTILE] * 1.4
    exp_p = MemoryParams(curve="exponential")
    pow_p = MemoryParams(curve="power")
    ax2.plot(
        ages,
        curve_points(ages, s_theft, exp_p),
        color="#c0392b",
        lw=2,
        label=f"exponential e^(-t/S), S {s_theft:.0f} s (the source)",
    )
    ax2.plot(
        ages,
        curve_points(ages, s_theft, pow_p),
        color="#2c3e50",
        lw=2,
        label="FSRS-6 power law, same half-life, age cap",
    )
    s2 = s_theft * (1 + params.alpha * math.log(3) * 0.9)
    ax2.plot(
        ages,
        curve_points(ages, s2, exp_p),
        color="#c0392b",
        lw=1.2,
        ls="--",
        label=f"exponential after one rehearsal, S {s2:.0f} s",
    )
    ax2.plot(
        ages, 1 - ages / 180.0, color="#95a5a6", lw=1, ls="-.", label="a linear 180 s TTL (what we replace)"
    )
    ax2.axvline(90, color="#555", lw=0.7, ls=":")
    ax2.text(90, 0.03, " 90 s", fontsize=8, color="#555")
    ax2.set_xlim(0, 3000)
    ax2.set_xlabel("seconds since the theft was last woken")
    ax2.set_title("One theft (Hostile, E 0.9): forgetting curves")
    ax2.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    path = out / "memory_timeline.png"
    fig.savefig(path)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("out"), help="folder for the PNG and the save file")
    ap.add_argument("--curve", choices=["exponential", "power"], default="exponential")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    story = run(args.out, args.curve)
    print(f"npc_mind memory timeline ({args.curve} forgetting curve, R = retrievability)\n")
    print("   time   who     what happens")
    print("   " + "-" * 86)
    for line in sorted(story.lines, key=lambda s: float(s.split(" s")[0])):
        print(line)
    print("\nThe source's stories:")
    for ok, text in story.checks:
        print(f"  [{'ok' if ok else 'FAILED'}] {text}")
    png = plot(story, args.out, story.pool.params)
    print(f"\nforgetting curves plotted to {png}")
    return 0 if all(ok for ok, _ in story.checks) else 1


if __name__ == "__main__":
    sys.exit(main())
