"""Issue 23, done when: in a new 3D project made from the zipped addon, a designer who does not
script builds an NPC in the inspector (tests/ship/designer/level.tscn holds only nodes, properties
and sub-resources: no script), presses Play, and the NPC notices (its SightSense3D and
HearingSense3D), remembers (MemoryStream with the designer's profile), chooses (a UtilitySelector
of sourced considerations, its target from memory) and acts (MoveAction, SetPropertyAction,
PlayAnimationAction). The test's observer (an autoload the test adds) only watches and reports;
with root, the game runs with the checkout and every Python of this machine hidden."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.designer_game import DESIGNER, make_game
from tests.support.godot import LAUNCHER, GodotRun, checked, run_godot
from tests.support.ship import can_isolate, isolated_run

pytestmark = pytest.mark.godot
CHECKS = 9


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_game(tmp_path_factory.mktemp("designer"))


def play(game: Path, scratch: Path) -> GodotRun:
    """Press Play: the project's main scene, physics on, no LLM configured."""
    args = ["--fixed-fps", "60", "--quit-after", "2400"]
    if can_isolate():
        return run_godot(game, *args, timeout=240, env={"NPC_MIND_LLM_URL": ""})
    command = [str(LAUNCHER), "--headless", "--path", str(game), *args]
    run, _ = isolated_run(command, scratch, timeout=240, env={"NPC_MIND_LLM_URL": ""})
    return run


def test_the_level_has_no_script() -> None:
    level = (DESIGNER / "level.tscn").read_text()
    assert "script" not in level and "GDScript" not in level and ".gd" not in level


def test_pressing_play_the_npc_notices_remembers_chooses_and_acts(game: Path, tmp_path: Path) -> None:
    run = play(game, tmp_path)
    checks = checked(run)
    assert len(checks) == CHECKS, checks
    assert "leaked" not in run.stdout + run.stderr, run.log


def test_the_editor_opens_the_level_with_no_error(game: Path) -> None:
    run = run_godot(game, "-e", "res://level.tscn", "--quit-after", "120", timeout=240)
    assert run.returncode == 0, run.log
    assert not run.errors(), run.log
