"""Issue 22, done when: the teammate flow in a fresh 3D project made from the zipped addon (as
tests/test_ship_addon.py makes one), with a missing key and a Node as an id, prints a handful of
lines, each pointing at the fix, and the mob keeps choosing and remembering."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.godot import run_godot
from tests.support.ship import game_from_zip

SCENE = Path(__file__).resolve().parent / "ship"
FRAMES = 120
pytestmark = pytest.mark.godot


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    game = game_from_zip(tmp_path_factory.mktemp("teammate"))
    for name in ("teammate.gd", "teammate.tscn"):
        shutil.copy2(SCENE / name, game / name)
    (game / "project.godot").write_text(
        'config_version=5\n\n[application]\n\nconfig/name="teammate"\nrun/main_scene="res://teammate.tscn"\n'
    )
    imported = run_godot(game, "--import", timeout=240)
    assert imported.returncode == 0 and not imported.errors(), imported.log
    return game


def test_the_teammate_flow_prints_a_handful_of_lines_each_naming_the_fix(game: Path) -> None:
    run = run_godot(game, "--quit-after", "2000", timeout=240, env={"NPC_MIND_LLM_URL": ""})
    assert run.returncode == 0, run.log
    (result,) = [line for line in run.json_lines() if "ticks" in line]
    assert result["ticks"] == FRAMES and result["chosen"] == FRAMES, run.log  # a behavior every tick
    assert result["aware"] == 3, run.log  # hostile at 0.9, every tick: pursue
    output = run.stdout + run.stderr
    assert "Traceback" not in output and "Cannot convert argument" not in output, run.log
    said = [line for line in output.splitlines() if line.startswith(("ERROR:", "WARNING:", "SCRIPT ERROR:"))]
    assert len(said) == 2, run.log
    missing, node_as_id = said
    assert missing.startswith("ERROR: npc_mind: /root/World/Mob/Brain: evaluate(): behavior 'eat'"), missing
    assert "'hungr'" in missing and "(it gives 'hunger': a typo?)" in missing, missing
    assert "Fix:" in missing and "use_default_input" in missing, missing
    assert node_as_id.startswith("WARNING: npc_mind: /root/World/Mob/Memory: an entity_id was given as")
    assert "/root/World/Player" in node_as_id and "Fix: pass node.get_instance_id()" in node_as_id
    assert len(output.splitlines()) < 40, run.log  # a handful, not a flood
