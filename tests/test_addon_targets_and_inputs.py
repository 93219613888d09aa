"""Issue 23, items 2 and 3, in the real engine: a UtilitySelector's target from memory and the
sourced inputs of its considerations (tests/addon/target_memory.gd, sourced_inputs.gd)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fault_llm_server import Fault, FaultServer
from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.godot


def test_target_from_memory_follows_the_strongest_memory_and_outlives_its_node() -> None:
    _, checks = run_check_script(ROOT, "res://tests/addon/target_memory.gd")
    assert len(checks) == 10


def test_sourced_inputs_score_as_a_dictionary_and_choose_by_themselves() -> None:
    _, checks = run_check_script(ROOT, "res://tests/addon/sourced_inputs.gd")
    assert len(checks) == 8


def test_the_llm_advice_is_an_input_while_it_is_fresh(fault_server: FaultServer) -> None:
    fault_server.default = Fault("ok", intent="flee", urgency=0.7)
    _, checks = run_check_script(
        ROOT, "res://tests/addon/intent_input.gd", env={"NPC_MIND_TEST_ENDPOINT": fault_server.base_url}
    )
    assert len(checks) == 5, checks
    assert len(fault_server.seen) == 2


def test_bad_sources_warn_once_name_the_node_and_the_fix_and_the_npc_keeps_working() -> None:
    run, checks = run_check_script(ROOT, "res://tests/addon/bad_sources.gd", allow_errors=True)
    assert len(checks) == 6
    errors = [line for line in run.errors() if "npc_mind:" in line]
    assert errors == run.errors(), run.log  # nothing but the reported mistakes
    assert len(errors) == 5, errors  # once each, not once per frame
    named = sorted(line.split("npc_mind: ")[1].split(":")[0] for line in errors)
    assert named == ["/root/Confused/Mind"] * 3 + ["/root/Flat/Mind", "/root/Forgetful/Mind"], errors
    assert all("Fix: " in line for line in errors), errors
    assert sum("PropertyInput: Confused has no property 'health'" in line for line in errors) == 1, errors


def test_own_copies_of_sources_are_batched_by_their_settings_and_never_mixed_up() -> None:
    _, checks = run_check_script(ROOT, "res://tests/addon/sourced_copies.gd")
    assert len(checks) == 2
