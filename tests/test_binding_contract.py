"""gdbridge held to what a godot-cpp class does: tests/godot/binding/contract.gd runs headless against
tests/godot/binding/binding_contract.py; every check is one JSON line asserted here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.godot import GodotRun, run_godot

PROJECT = Path(__file__).resolve().parent / "godot" / "binding"
CHECKS = [
    # utilities
    "every_utility_agrees", "utility_errors_raise", "str_many_times",
    # objects: null, freed, identity
    "typed_null", "untyped_null", "live_object", "signals_emitted_in_one_crossing", "poses_in_one_crossing",
    "poses_refused", "moves_in_one_crossing", "moves_refused", "collector_tuned",
    "freed_objects_detected", "freed_use_raises", "held_live",
    # reference counts
    "refcount_after_new", "refcount_after_calls", "refcount_many_cycles", "refcount_stored_by_python",
    "refcount_made_by_python", "stored_tally_survives",
    "released_when_python_drops", "released_a_frame_later",
    # value types and typed containers
    "vector_keys_from_python", "vector_keys_into_python", "value_types_hashable", "typed_array_result",
    "typed_int_array_result", "typed_array_argument", "typed_dict_result", "typed_dict_argument",
    "typed_array_property", "typed_dict_property", "typed_array_property_hint", "typed_dict_property_hint",
    "typed_array_method_hint", "hinted_array_property",
    "returned_string_keys_exact", "returned_key_address_reused", "argument_string_keys_exact",
    "text_results_exact", "string_name_arguments_exact", "argument_keys_read_again_exact",
    "changed_key_strings_read_again",
    # notifications
    "postinitialize_from_gdscript", "notifications_chained", "parent_notification_inherited",
    "postinitialize_from_python",
    # dynamic properties
    "dynamic_property_list", "dynamic_get_set", "dynamic_list_follows_state", "property_revert",
    "unknown_dynamic_property", "saved_dynamic_property", "loaded_dynamic_property", "subgroup",
    # callables and declared virtuals
    "python_callables_compare", "python_callable_in_gdscript", "virtual_default_body",
    "virtual_overridden_in_gdscript", "virtual_declared", "virtual_typed_array_result", "virtual_ref_result",
    # declarations
    "bitfield_registered", "bitfield_property", "bitfield_values", "vararg_method", "mixin_method",
    "mixin_signal",
    # queued calls (declare.queued)
    "queued_calls_in_call_order", "queued_calls_only_on_main_thread", "queued_calls_seen_after_engine_calls",
    "queued_calls_stop_with_key_zero", "queued_key_freed_with_object", "queued_calls_many",
    "queue_key_only_for_instances", "answered_from_the_table", "answered_within_the_budget",
    "answered_only_when_open", "answered_only_from_the_latest_table", "apart_methods_leave_the_queue",
    # parity with godot-cpp: a callable's text, internal and abstract classes, the library's path
    "callable_to_string", "callable_to_string_default", "abstract_from_python", "abstract_from_gdscript",
    "internal_made_by_python", "internal_not_exposed", "library_path",
]  # fmt: skip


@pytest.fixture(scope="module")
def run() -> GodotRun:
    return run_godot(PROJECT, "-s", "res://contract.gd", timeout=60)


@pytest.mark.godot
def test_contract_runs_to_the_end_without_engine_errors(run: GodotRun) -> None:
    assert run.returncode == 0, run.log
    assert run.json_lines()[-1] == {"done": True}, run.log
    assert not run.errors(), run.log


@pytest.mark.godot
@pytest.mark.parametrize("name", CHECKS)
def test_contract(run: GodotRun, name: str) -> None:
    checks = run.checks()
    assert name in checks, f"check {name} never ran\n{run.log}"
    assert checks[name]["ok"], f"{name}: got {checks[name].get('got')}"
