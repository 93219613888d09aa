"""The 3D sample (demo_scene/room3d): a guard wired with nodes and resources only (SightSense3D and
HearingSense3D with the market demo's sense rules, sourced awareness, a target from memory, move
actions through a NavigationAgent3D on a navigation mesh baked at start) in a room with pillars and
walls; a scripted thief steals and hides behind the wall. Played headless, physics on, its story
holds (demo_scene/room3d/story.gd); rendered under a virtual X server (Mesa), the frame shows it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.support.godot import checked, godot_command, run_godot

ROOT = Path(__file__).resolve().parents[1]
SCENE = "res://demo_scene/room3d/room3d.tscn"
# The rendered frame's size: software GL draws 640x360 four times as fast as 1280x720, and the
# guard, the thief and the "?" are still tens of pixels each.
WIDTH, HEIGHT = 640, 360
STORY_CHECKS = 9

pytestmark = pytest.mark.godot


def test_the_guard_pursues_the_thief_searches_where_it_was_last_seen_and_forgets() -> None:
    run = run_godot(ROOT, "--fixed-fps", "60", "--quit-after", "3600", SCENE, "--", "--story", timeout=240)
    checks = checked(run)
    assert len(checks) == STORY_CHECKS, checks
    assert "leaked" not in run.stdout + run.stderr, run.log


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="no xvfb-run: scripts/provision display")
def test_a_rendered_frame_shows_the_guard_searching_and_the_thief_hidden(tmp_path: Path) -> None:
    shot = tmp_path / "room3d.png"
    command = [
        "xvfb-run", "-a", "-s", f"-screen 0 {WIDTH}x{HEIGHT}x24 -nolisten tcp",
        *godot_command(), "--path", str(ROOT), "--rendering-driver", "opengl3", "--audio-driver", "Dummy",
        "--fixed-fps", "30", "--quit-after", "900", "--resolution", f"{WIDTH}x{HEIGHT}", SCENE,
        "--", f"--screenshot={shot}", "--screenshot-at=12",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0 and shot.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    image = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    red, green, blue = image[..., 0], image[..., 1], image[..., 2]
    guard = (blue > red + 80) & (blue > green + 40)  # the blue capsule, lit or in shade
    thief = (red > green + 90) & (red > blue + 90)
    mark = (red > 200) & (green > 170) & (blue < 120)  # the yellow "?" over the searching guard
    ys, xs = np.nonzero(guard)
    assert ys.size > 75, ys.size
    assert ys.size and np.nonzero(thief)[0].size > 75, np.nonzero(thief)[0].size
    # at 12 s: the guard stands at the door (the top right of the room), the thief is down the
    # corridor behind the east wall (the right edge, lower down), the "?" above the guard
    assert xs.mean() > WIDTH * 0.55 and ys.mean() < HEIGHT * 0.5, (xs.mean(), ys.mean())
    thief_ys, thief_xs = np.nonzero(thief)
    assert thief_xs.mean() > xs.mean(), (thief_xs.mean(), xs.mean())
    assert thief_ys.mean() > ys.mean() + HEIGHT * 0.2, (thief_ys.mean(), ys.mean())
    mark_ys, mark_xs = np.nonzero(mark)
    assert mark_ys.size > 25, mark_ys.size
    assert abs(mark_xs.mean() - xs.mean()) < WIDTH * 0.05 and mark_ys.mean() < ys.mean(), mark_xs.mean()
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 200  # lit, shaded: a real picture
