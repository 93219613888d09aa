"""A real rendered frame of the demo (virtual X server + Mesa's software OpenGL, no GPU): the guards,
their memory bars and the market are on screen, not a blank window."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.support.godot import godot_command

ROOT = Path(__file__).resolve().parents[1]
GUARD_BLUE = (51, 89, 217)  # Color(0.2, 0.35, 0.85)
HOSTILE_BAR = (230, 77, 51)  # Color(0.9, 0.3, 0.2)
TRIVIA_BAR = (153, 153, 153)  # Color(0.6, 0.6, 0.6)
GROUND = (219, 204, 168)  # Color(0.86, 0.8, 0.66)
# The window: half the project's 1280x720, which its canvas_items stretch scales the market to
# (software GL draws it four times as fast; the bars are still 40 px long, 3-4 px high).
SCALE = 0.5
WIDTH, HEIGHT = int(1280 * SCALE), int(720 * SCALE)

pytestmark = [
    pytest.mark.godot,
    pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="no xvfb-run: scripts/provision display"),
]


def render(tmp_path: Path, at_seconds: float) -> np.ndarray:
    shot = tmp_path / "frame.png"
    command = [
        "xvfb-run", "-a", "-s", f"-screen 0 {WIDTH}x{HEIGHT}x24 -nolisten tcp",
        *godot_command(), "--path", str(ROOT), "--rendering-driver", "opengl3", "--audio-driver", "Dummy",
        "--fixed-fps", "30", "--quit-after", str(int(30 * (at_seconds + 10))),
        "--resolution", f"{WIDTH}x{HEIGHT}",
        "--", f"--out={tmp_path}", f"--screenshot={shot}", f"--screenshot-at={at_seconds}",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0 and shot.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    return np.asarray(Image.open(shot).convert("RGB"))


def count(image: np.ndarray, colour: tuple[int, int, int], tolerance: int = 6) -> int:
    return int((np.abs(image.astype(int) - colour).max(axis=2) <= tolerance).sum())


def test_a_rendered_frame_shows_the_guards_and_their_fading_memories(tmp_path: Path) -> None:
    image = render(tmp_path, 20.0)  # after the theft (Aldric) and the stone (Bertha)
    assert image.shape == (HEIGHT, WIDTH, 3)
    area = SCALE * SCALE  # a count of pixels at the project's size, scaled to the window's
    assert count(image, GROUND) > 0.5 * HEIGHT * WIDTH  # the market square, not a blank window
    assert count(image, GUARD_BLUE) > 2 * 400 * area  # two guards, 14 px radius each
    assert count(image, HOSTILE_BAR) > 200 * area  # Aldric's memory of the theft, nearly full
    # Bertha (the guard on the right) has a bar for the stone, already partly faded: count its pixels
    # in the rows of bars above her, where a full bar would be 80 px long and 7 px high (at 1280x720).
    ys, xs = np.nonzero(np.abs(image.astype(int) - GUARD_BLUE).max(axis=2) <= 6)
    right = xs > WIDTH / 2
    cy, cx = int(ys[right].mean()), int(xs[right].mean())
    bar = image[cy - int(76 * SCALE) : cy - int(19 * SCALE), cx - int(40 * SCALE) : cx + int(41 * SCALE)]
    faded = count(bar, TRIVIA_BAR) / (7 * SCALE) / SCALE  # its length at 1280x720
    assert 1 <= faded < 60, faded
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 50  # text, trees, stalls: a real picture
