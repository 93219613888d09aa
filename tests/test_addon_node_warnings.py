"""Configuration mistakes of the new nodes, in the real engine (tests/addon/node_warnings.gd): a
CallMethodAction whose args do not fit its method (checked before the call: the engine's own error
would print at every call, every frame on_tick), an empty slot in an action list, a Stimulus2D whose
source resolves to nothing. One warning each in the editor's list, one error each at run time naming
the node and the fix (none for the empty slot: skipped as documented), and the rest keeps working."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.godot


def test_new_node_mistakes_warn_in_the_editor_and_err_once_at_run_time() -> None:
    run, checks = run_check_script(
        ROOT, "res://tests/addon/node_warnings.gd", engine_args=("--fixed-fps", "60"), allow_errors=True
    )
    assert len(checks) == 8, checks
    errors = run.errors()
    assert not any("Error calling method" in line for line in errors), errors  # the engine never called it
    assert len(errors) == 3, run.log  # once each, though met every frame (on_tick) or every emit
    entering, ticking, stone = sorted(errors)
    selector = "ERROR: npc_mind: /root/Guard/Mind: behavior 'watch', "
    assert entering.startswith(selector + "on_enter[0] CallMethodAction tick: "), entering
    assert "method 'tick' takes 1 to 2 arguments, 3 given; the action is skipped." in entering, entering
    assert entering.endswith("Fix: give args as many values as the method takes."), entering
    assert ticking.startswith(selector + "on_tick[0] CallMethodAction tick: "), ticking
    assert "method 'tick' takes 1 to 2 arguments, 0 given" in ticking, ticking
    assert stone.startswith("ERROR: npc_mind: /root/Thrower/Loud: source '../Nowhere' resolves to nothing")
    assert "Fix: set source to the node that makes the sound" in stone, stone
