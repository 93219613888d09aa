"""A fresh 3D game made from the zipped addon, with the designer's level: an NPC built of nodes,
properties and sub-resources only (tests/ship/designer/level.tscn: no script in it), as the
inspector makes them. tests/test_designer_walkthrough.py plays it; run as a module it takes the
screenshots of docs/designer-walkthrough.md (the editor under a virtual X server, then the game):

    .venv/bin/python -m tests.support.designer_game docs/media

`make_game(folder)` unzips the addon into `folder/game`, adds the level, enables the npc_mind
plugin (as Project Settings > Plugins does) and the test's observer (`observer.gd`, an autoload
that watches and prints checks; the level knows nothing of it). With `shots`, also the editor
plugin that takes the editor's screenshots (tests/ship/designer/shots).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.godot import godot_command, run_godot
from tests.support.ship import game_from_zip

DESIGNER = Path(__file__).resolve().parents[1] / "ship" / "designer"
PROJECT = """config_version=5

[application]

config/name="designer walkthrough"
run/main_scene="res://level.tscn"

[autoload]

Observer="*res://observer.gd"

[editor_plugins]

enabled=PackedStringArray({plugins})
"""
SCREEN = "-screen 0 1600x900x24 -nolisten tcp"
EDITOR_SHOTS = ("editor-sight.png", "editor-mind.png", "editor-behavior.png")


def make_game(folder: Path, *, shots: bool = False) -> Path:
    """The fresh game (imported once, as opening it in the editor does); returns its folder."""
    game = game_from_zip(folder)
    for name in ("level.tscn", "observer.gd"):
        shutil.copy2(DESIGNER / name, game / name)
    plugins = ['"res://addons/npc_mind/plugin.cfg"']
    if shots:
        shutil.copytree(DESIGNER / "shots", game / "addons" / "walkthrough_shots")
        plugins.append('"res://addons/walkthrough_shots/plugin.cfg"')
    (game / "project.godot").write_text(PROJECT.format(plugins=", ".join(plugins)))
    imported = run_godot(game, "--import", timeout=300)
    if imported.returncode != 0 or imported.errors():
        raise RuntimeError(f"importing the designer's game failed:\n{imported.log}")
    return game


def rendered(game: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The engine on `game` with a real renderer (virtual X server, Mesa's software OpenGL)."""
    command = ["xvfb-run", "-a", "-s", SCREEN, *godot_command(), "--path", str(game)]
    command += ["--rendering-driver", "opengl3", "--audio-driver", "Dummy", "--resolution", "1600x900", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


def take_screenshots(out: Path) -> list[Path]:
    """The editor's three shots and the game's one, scaled to 1200 px wide (128 colours), into `out`."""
    from PIL import Image

    with tempfile.TemporaryDirectory() as scratch:
        game = make_game(Path(scratch), shots=True)
        raw = Path(scratch) / "raw"
        raw.mkdir()
        rendered(game, "-e", "--quit-after", "6000", "--", f"--walkthrough-shots={raw}")
        rendered(game, "--fixed-fps", "30", "--", f"--shot={raw / 'game.png'}", "--shot-at=2.4")
        saved = []
        for name in (*EDITOR_SHOTS, "game.png"):
            image = Image.open(raw / name).convert("RGB")
            image = image.resize((1200, round(image.height * 1200 / image.width)), Image.Resampling.LANCZOS)
            target = out / f"designer-{name}"
            image.quantize(colors=128, dither=Image.Dither.NONE).save(target, optimize=True)  # small PNGs
            saved.append(target)
        return saved


if __name__ == "__main__":
    for path in take_screenshots(Path(sys.argv[1]).resolve()):
        print(path)
