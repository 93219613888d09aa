"""Actions without code in the real engine, physics on: a behavior's on_enter, on_tick and on_exit
lists move a CharacterBody2D through its NavigationAgent2D (or straight, with no agent), set a
property, call a method, play an AnimationPlayer and an AnimatedSprite2D, emit a signal on the NPC,
and the selector emits behavior_exited / behavior_entered around them. Bad configuration gives one
configuration warning and one run-time error per mistake; the NPC keeps working."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fault_llm_server import FaultServer
from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.godot


def test_a_behavior_runs_its_actions_on_enter_tick_and_exit() -> None:
    run, checks = run_check_script(ROOT, "res://tests/addon/actions.gd", engine_args=("--fixed-fps", "60"))
    assert len(checks) == 20
    assert "leaked" not in run.stdout + run.stderr, run.log  # a freed selector's actions are let go


def test_bad_actions_warn_in_the_editor_and_err_once_at_run_time() -> None:
    run, checks = run_check_script(
        ROOT, "res://tests/addon/actions_mistakes.gd", engine_args=("--fixed-fps", "60"), allow_errors=True
    )
    assert len(checks) == 8
    errors = run.errors()
    # One line per mistake, naming the selector's path, the behavior, the action and the fix; the
    # on_tick mistake met every physics frame is printed once too.
    assert len(errors) == 8, run.log
    moving = [line for line in errors if "/root/World/Mover/Mind" in line]
    assert len(moving) == 1, errors
    assert "MoveAction ../Plain: node '../Plain' is a Node, which has no position" in moving[0]
    assert "the move stops. Fix: point node at a Node2D or Node3D (a Marker2D/3D)." in moving[0], moving
    errors = [line for line in errors if line not in moving]
    for line in errors:
        assert line.startswith("ERROR: npc_mind: /root/World/Guard/Mind: behavior 'watch', on_"), line
        assert "the action is skipped. Fix: " in line, line
    assert sum("on_tick[0] CallMethodAction no_such_tick" in line for line in errors) == 1
    # a value of the wrong type (the engine would set 0 without a word) names the node, the
    # property, both types and the fix
    (typed,) = [line for line in errors if "on_enter[7]" in line]
    assert (
        "SetPropertyAction rotation: property 'rotation' of Node2D 'Guard' is a float, but value is a "
        "String; the action is skipped. Fix: give value the property's type (see its inspector)." in typed
    ), typed


def test_a_move_action_pursues_the_remembered_position_until_the_memory_fades() -> None:
    _, checks = run_check_script(
        ROOT, "res://tests/addon/actions_target.gd", engine_args=("--fixed-fps", "60")
    )
    assert len(checks) == 9


def test_a_patrol_walks_its_route_and_a_flee_aborts_the_decision_owed_in_its_frame() -> None:
    run, checks = run_check_script(
        ROOT, "res://tests/addon/actions_route_abort.gd", engine_args=("--fixed-fps", "60")
    )
    assert len(checks) == 6, checks
    assert not run.errors(), run.log


def test_an_ask_action_sends_the_situation_written_from_its_template(fault_server: FaultServer) -> None:
    run, checks = run_check_script(
        ROOT,
        "res://tests/addon/actions_ask.gd",
        env={"NPC_MIND_TEST_ENDPOINT": fault_server.base_url},
        allow_errors=True,
    )
    assert len(checks) == 3
    assert len(fault_server.seen) == 1  # the bad template asked nothing
    user = fault_server.seen[0].body["messages"][-1]["content"]
    assert user.startswith("Situation: Thief was last seen 12 s ago, 50 m away; I am alert (0.75).\n"), user
    facts = user.splitlines()[1]
    shown_facts = ("target name: Thief", "distance: 50", "since seen: 12", "npc name: Guard", "awareness: 3")
    shown_facts += ("strongest type: hostile",)
    for shown in (*shown_facts, "alarm: 0.8"):
        assert shown in facts, (shown, user)
    assert "target id" not in user
    errors = run.errors()
    assert (
        len(errors) == 1
        and "on_enter[1] AskDecisionAction: the template names an unknown field {nobody}" in errors[0]
    )
    assert "Fix: use one of: alarm, awareness, behavior, distance," in errors[0], errors


def test_the_physics_pass_is_batched_in_order() -> None:
    run, checks = run_check_script(
        ROOT, "res://tests/addon/actions_batched.gd", engine_args=("--fixed-fps", "60"), allow_errors=True
    )
    assert len(checks) == 6
    errors = run.errors()  # the freed waypoint's, once; the freed body's move ends silently
    assert len(errors) == 1, run.log
    gone = "/root/World/Chaser/Mind: behavior 'go', MoveAction ../../Far: node '../../Far' is gone"
    assert gone in errors[0], errors


def test_a_move_with_face_motion_turns_the_body_to_its_heading_so_its_sight_looks_ahead() -> None:
    _, checks = run_check_script(
        ROOT, "res://tests/addon/actions_facing.gd", engine_args=("--fixed-fps", "60")
    )
    assert len(checks) == 6


def test_a_redefined_selector_runs_its_new_behaviors_actions_and_signals_keep_their_order() -> None:
    _, checks = run_check_script(ROOT, "res://tests/addon/actions_redefined.gd")
    assert len(checks) == 3
