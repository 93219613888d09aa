"""`scripts/record`: record the scripted scenario with Godot's Movie Maker under a virtual X server
(Mesa's software OpenGL, no GPU needed) and assemble docs/media/demo.gif, docs/media/market.png and
docs/media/forgetting.png for the README. Not part of the tests.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
GODOT = ROOT / ".deps" / "godot" / "godot"
MEDIA = ROOT / "docs" / "media"
SCENARIO_SECONDS = 112
MAX_GIF_BYTES = 5_000_000


def render(frames_dir: Path, fps: int) -> None:
    if shutil.which("xvfb-run") is None:
        sys.exit("record: xvfb-run is missing; run scripts/provision display")
    shutil.rmtree(frames_dir, ignore_errors=True)
    frames_dir.mkdir(parents=True)
    command = [
        "xvfb-run", "-a", "-s", "-screen 0 1280x720x24 -nolisten tcp",
        str(GODOT), "--path", str(ROOT), "--rendering-driver", "opengl3", "--audio-driver", "Dummy",
        "--resolution", "1280x720", "--fixed-fps", str(fps), "--write-movie", str(frames_dir / "frame.png"),
        "--quit-after", str((SCENARIO_SECONDS + 1) * fps), "--", "--scripted", f"--out={frames_dir.parent}",
    ]  # fmt: skip
    print("record: rendering the scenario with Movie Maker (a minute or two)", flush=True)
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
    if done.returncode != 0:
        sys.exit(f"record: the engine failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


def assemble(frames_dir: Path, fps: int, speed: int) -> None:
    frames = sorted(frames_dir.glob("frame*.png"))
    if not frames:
        sys.exit("record: Movie Maker wrote no frames")
    MEDIA.mkdir(parents=True, exist_ok=True)
    (MEDIA / ".gdignore").touch()  # documentation pictures are not game assets
    Image.open(frames[min(len(frames) - 1, 20 * fps)]).convert("RGB").save(
        MEDIA / "market.png", optimize=True
    )
    step = 2
    while True:
        picked = frames[::step]
        images = [
            Image.open(path).convert("RGB").resize((640, 360), Image.Resampling.LANCZOS) for path in picked
        ]
        palette = images[len(images) // 2].quantize(colors=96, method=Image.Quantize.MEDIANCUT)
        converted = [image.quantize(palette=palette, dither=Image.Dither.NONE) for image in images]
        duration = int(1000 * step / fps / speed)
        gif = MEDIA / "demo.gif"
        converted[0].save(
            gif, save_all=True, append_images=converted[1:], duration=duration, loop=0, optimize=True
        )
        if gif.stat().st_size <= MAX_GIF_BYTES or step >= 16:
            break
        step *= 2
    plot = frames_dir.parent / "forgetting.png"
    if plot.is_file():
        shutil.copyfile(plot, MEDIA / "forgetting.png")
    size = gif.stat().st_size / 1e6
    print(f"record: {gif.relative_to(ROOT)} ({size:.1f} MB, {len(picked)} frames, {speed}x) and market.png")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/record", description=__doc__.splitlines()[0])
    parser.add_argument("--fps", type=int, default=10, help="frames per game second to render")
    parser.add_argument("--speed", type=int, default=4, help="how much faster than real time the GIF plays")
    args = parser.parse_args(argv)
    frames_dir = ROOT / "out" / "record" / "frames"
    render(frames_dir, args.fps)
    assemble(frames_dir, args.fps, args.speed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
