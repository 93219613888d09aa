"""The designer tools in the inspector: the curve preview of a UtilityConsideration (every curve
family, sampled with the real curve code, typed parameter fields, invalid parameters reported) and
the MemoryProfile forgetting preview, built outside the editor and inside the real headless editor
through the npc_mind plugin's inspector plugin; there also the selector's declared inputs, and
warnings that appear and clear as a nested resource is edited; a consideration's default input; the
running nodes' read-only "Live" properties (what the Remote inspector shows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.godot import run_check_script, run_godot

ROOT = Path(__file__).resolve().parents[1]
HELP_PAGES = {
    "UtilitySelector", "UtilityBehavior", "UtilityConsideration",
    "MemoryProfile", "MemoryStream", "AsyncLLMDecision", "NpcMindServer", "NpcMindDesigner",
    "InputSource", "AwarenessInput", "RecallInput", "DistanceInput", "SinceSeenInput", "PropertyInput",
    "BlackboardInput", "IntentInput",
    "SenseRule", "SightSense2D", "SightSense3D", "HearingSense2D", "HearingSense3D",
    "TouchSense2D", "TouchSense3D", "Stimulus2D", "Stimulus3D",
    "MindAction", "MoveAction", "SetPropertyAction", "CallMethodAction",
    "PlayAnimationAction", "EmitSignalAction", "AskDecisionAction", "AbortDecisionAction",
}  # fmt: skip
FAMILIES = {"saturating", "linear", "polynomial", "logistic", "logit", "normal", "sine", "step", "table"}

pytestmark = pytest.mark.godot


def test_previews_build_for_every_curve_family_and_the_profile() -> None:
    _run, checks = run_check_script(ROOT, "res://tests/addon/designer_previews.gd")
    assert {name.split(":")[0] for name in checks if ":" in name} >= FAMILIES | {"profile"}


def test_the_editor_loads_the_plugin_and_inspects_with_the_previews() -> None:
    scene = "res://tests/addon/designer_editor.tscn"
    run = run_godot(ROOT, "-e", scene, "--quit-after", "900", "--", "--npc-mind-editor-checks", timeout=180)
    assert run.returncode == 0, run.log
    assert run.json_lines()[-1] == {"done": True}, run.log
    checks = run.checks()
    assert {name for name, check in checks.items() if not check["ok"]} == set(), checks
    assert {name.split(":")[0] for name in checks if ":" in name} >= FAMILIES
    assert {
        "plugin enabled", "profile preview in the inspector", "the selector shows the inputs it reads",
        "a nested edit refreshes the warning", "fixing it clears the warning",
        "a behavior carries its name", "a consideration carries its input key",
        "the picker shows UtilityBehavior's name", "the picker shows UtilityConsideration's name",
        "label of rehearsal_refractory_s", "label of tag_ttl", "label of max_response_kib",
    } <= set(checks)  # fmt: skip
    described = {name.split(":")[0] for name in checks if name.endswith("every member has a description")}
    assert described == HELP_PAGES, checks
    unbroken = "help page has no mid-sentence line break"
    helped = {name.split(":")[0] for name in checks if name.endswith(unbroken)}
    assert helped == HELP_PAGES, checks
    assert not run.errors(), run.log


def test_a_default_input_stands_in_for_a_key_the_game_does_not_give() -> None:
    _run, checks = run_check_script(ROOT, "res://tests/addon/default_input.gd")
    assert set(checks) == {
        "evaluate: the default stands in", "evaluate: a given value wins", "batched: the default stands in",
    }  # fmt: skip


def test_running_nodes_show_live_read_only_state() -> None:
    _run, checks = run_check_script(ROOT, "res://tests/addon/live_state.gd")
    assert len(checks) == 6


def test_the_inspector_names_types_and_profile_edits() -> None:
    _run, checks = run_check_script(ROOT, "res://tests/addon/inspector_names.gd")
    assert len(checks) == 6, checks
