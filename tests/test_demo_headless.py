"""The demo scene, headless at a fixed frame rate: the design source's stories hold in its timeline,
whatever LLM tier occurs (no model at all: tier 3; a model answering in time: tiers 1 and 2)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.fault_llm_server import Fault
from tests.support.godot import GodotRun, run_godot

ROOT = Path(__file__).resolve().parents[1]
TIMELINE_FIELDS = {"t", "guard", "entity", "R", "awareness", "behavior", "tier"}

pytestmark = pytest.mark.godot


def play(out: Path, endpoint: str = "", *scene_args: str) -> GodotRun:
    # --quit-after: a scene that failed to load would otherwise idle until the timeout.
    frames = ["--fixed-fps", "30", "--quit-after", "4000"]
    run = run_godot(
        ROOT, *frames, "--", f"--out={out}", *scene_args, timeout=240, env={"NPC_MIND_LLM_URL": endpoint}
    )
    assert run.returncode == 0, run.log
    return run


def events(run: GodotRun, kind: str) -> list[dict]:
    return [line for line in run.json_lines() if line.get("event") == kind]


def assert_plot_is_labelled(plot: Path, run: GodotRun) -> None:
    """The forgetting plot reads without the README: tick labels left of the R axis and under the
    time axis, a label over each story moment's line, and one legend row per (guard, entity, type)
    line. Regions are demo_scene/forgetting_plot.gd's layout (axes box x 70-910, y 70-520)."""
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(plot).convert("RGB"), dtype=np.int32)
    assert pixels.shape == (600, 1300, 3)

    def inked(left: int, top: int, right: int, bottom: int) -> int:
        return int((pixels[top:bottom, left:right].sum(axis=2) < 600).sum())

    assert inked(20, 70, 66, 530) > 100, "R tick labels"
    assert inked(60, 526, 920, 580) > 200, "time tick labels and title"
    assert inked(70, 36, 910, 66) > 150, "story moment labels"
    samples = events(run, "sample")
    lines = {(line["guard"], line["entity"], line["type"]) for line in samples if line["entity"]}
    column = pixels[80:, 1060]  # the legend's swatches: one coloured run per row down x = 1060
    coloured = (column.max(axis=1) - column.min(axis=1) > 40) | (column.max(axis=1) < 120)
    rows = int((coloured[1:] & ~coloured[:-1]).sum() + coloured[0])
    assert rows == len(lines), (rows, sorted(lines))


def assert_stories(run: GodotRun) -> None:
    stories = {line["story"]: line for line in events(run, "story")}
    assert set(stories) == {"thief", "stone", "grenade"}, run.log
    for story in stories.values():
        assert story["held"], story
    # Read the timeline directly too, not only the scene's own verdicts.
    samples = events(run, "sample")
    assert samples and all(set(line) >= TIMELINE_FIELDS for line in samples)
    emerge = events(run, "emerge")[0]
    assert emerge["hidden_for"] >= 90.0
    aldric_after = [line for line in samples if line["guard"] == "Aldric" and line["t"] >= emerge["t"]]
    assert aldric_after and {line["behavior"] for line in aldric_after} <= {"pursue", "search"}
    recall = next(
        line for line in events(run, "recall") if line["entity"] == "Tam" and line["t"] >= emerge["t"]
    )
    assert recall["type"] == "hostile" and recall["R"] > 0.8  # still vivid: pursue
    landed = events(run, "stone_landed")[0]
    forgotten = next(line for line in events(run, "memory_forgotten") if line["entity"] == "Pip")
    assert forgotten["t"] - landed["t"] <= 10.5
    grenade = next(line for line in events(run, "grenade") if line["guard"] == "Bertha")
    exploded = events(run, "grenade_exploded")[0]
    assert grenade["pending"] and grenade["behavior"] == "flee" and grenade["frame"] == exploded["frame"]
    assert not run.errors(), run.errors()


def test_stories_hold_without_a_model_and_replay_identically(tmp_path: Path) -> None:
    run = play(tmp_path)
    assert_stories(run)
    # Memory and utility are deterministic under --fixed-fps: a second run gives the same timeline.
    again = play(tmp_path / "again")
    assert events(again, "sample") == events(run, "sample")
    tiers = {line["tier"] for line in events(run, "fallback")}
    assert tiers == {3} and {line["reason"] for line in events(run, "fallback")} == {"no_endpoint"}
    assert_plot_is_labelled(tmp_path / "forgetting.png", run)
    summary = events(run, "summary")[0]
    assert summary["all_stories_held"] and summary["metrics"]["memory/streams"] == 2


@pytest.mark.parametrize("latency", [0.05, 0.6], ids=["fast_model", "slow_model"])
def test_stories_hold_when_a_model_answers_and_a_grenade_cuts_it_off(
    tmp_path: Path, fault_server, latency: float
) -> None:
    # "flee" to everything (as the small model tends to say): the stories must hold all the same.
    fault_server.default = Fault("ok", latency=latency, intent="flee", urgency=0.7)
    run = play(tmp_path, fault_server.base_url)
    assert_stories(run)
    # Which tier each answer earns depends on the machine (tiers follow measured latency), so only
    # what holds for every tier is asserted: an applied answer is tier 1 or 2, a fallback tier 3.
    assert all(line["tier"] in (1, 2) for line in events(run, "decision"))
    assert all(line["tier"] == 3 for line in events(run, "fallback"))
    # The advice shows: an answer to the stone, in calm, has Bertha flee while it is fresh (6 s).
    samples = events(run, "sample")
    for answer in events(run, "decision"):
        if answer["guard"] == "Bertha" and answer["t"] < 40.0:
            fresh = [
                line["behavior"] for line in samples
                if line["guard"] == "Bertha" and 0 < line["t"] - answer["t"] <= 6
            ]  # fmt: skip
            assert "flee" in fresh, (answer, fresh)
    grenade = next(line for line in events(run, "grenade") if line["guard"] == "Bertha")
    assert grenade["in_flight"]  # the request had left: the abort cancelled a real HTTP request
    # Every abort is in the timeline; the grenade's is in its own frame, and only entering flee
    # aborts (the flee behavior's AbortDecisionAction: a question pending when Bertha flees on the
    # model's advice is dropped too, so how many there are depends on the answers' timing).
    aborts = events(run, "abort")
    assert events(run, "summary")[0]["metrics"]["decision/aborts"] == len(aborts)
    assert any(line["guard"] == "Bertha" and line["t"] == grenade["t"] for line in aborts), (aborts, grenade)
    assert all(line["behavior"] == "flee" for line in aborts), aborts


def test_the_demo_command_plays_headless_and_writes_its_timeline(tmp_path: Path) -> None:
    command = [sys.executable, str(ROOT / "demo_scene" / "launch.py"), "--headless", "--fast", "--no-llm"]
    done = subprocess.run(
        [*command, "--out", str(tmp_path)], capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "thief    held" in done.stdout and '"event":"sample"' not in done.stdout  # samples go to the file
    lines = [json.loads(line) for line in (tmp_path / "timeline.jsonl").read_text().splitlines()]
    assert any(line.get("event") == "sample" for line in lines)
    assert lines[-1]["event"] == "summary" and lines[-1]["all_stories_held"]
    assert (tmp_path / "forgetting.png").is_file()


@pytest.mark.llm
@pytest.mark.alone  # its answers must arrive within the tier-1 deadline in wall time
def test_the_real_model_advises_in_tier_1_and_the_stories_hold(tmp_path: Path, llm_endpoint) -> None:
    # Paced to the wall clock at 4x (model latency is real time; the whole story takes ~30 s).
    run = play(tmp_path, llm_endpoint.base_url, "--pace=4")
    assert_stories(run)
    grenade = next(line for line in events(run, "grenade") if line["guard"] == "Bertha")
    assert grenade["in_flight"]  # a real request to the real model was cut off by the grenade
    decisions = events(run, "decision")
    assert all(line["tier"] in (1, 2) and line["intent"] for line in decisions)
    if not any(line["tier"] == 1 for line in decisions):
        metrics = events(run, "summary")[0]["metrics"]
        latency = {key: value for key, value in metrics.items() if key.startswith("decision/")}
        pytest.skip(f"the machine is too loaded for a tier-1 answer this run: {decisions}, {latency}")


def test_realtime_paces_fixed_step_frames_to_the_wall_clock(tmp_path: Path) -> None:
    # --fixed-fps alone runs as fast as the engine goes; --realtime must sleep up to the wall clock,
    # so 90 frames at 30 fps take at least 3 s (about 0.7 s unpaced here; a lower bound: a slow
    # machine only adds to it).
    started = time.monotonic()
    run = run_godot(
        ROOT, "--fixed-fps", "30", "--quit-after", "90", "--", f"--out={tmp_path}", "--realtime",
        timeout=120, env={"NPC_MIND_LLM_URL": ""},
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert run.returncode == 0, run.log
    assert elapsed >= 3.0, elapsed
