"""gdbridge end to end: a headless Godot runs tests/godot/binding/checks.gd against the Python classes in
tests/godot/binding/binding_classes.py; every check prints one JSON line that is asserted here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.godot import GodotRun, engine_version, run_godot

PROJECT = Path(__file__).resolve().parent / "godot" / "binding"
CHECKS = [
    # registration
    "class_exists", "parent_class", "resource_parent", "has_signal", "constant", "enum", "enum_value",
    "property_list", "range_hint", "enum_hint", "resource_hint", "typed_property", "group",
    "typed_array_hint", "method_list", "private_hidden", "refcounted_class", "abstract_class",
    "python_parent_and_renamed", "mixin_virtual",
    # calls: typed (ptrcall) and untyped (Variant), every Variant type through echo
    "typed_int", "typed_float", "typed_string", "typed_packed", "typed_dict", "packed_return", "default_arg",
    "untyped_int", "untyped_coerce",
    "untyped_default_arg", "callv", "packed_1000", "variant_echo", "object_echo", "static_method",
    "static_engine_method",
    # containers: Dictionary and Array both ways, nested, every key kind, empty and large
    "container_round_trip", "typed_dict_return", "typed_array_return", "key_types_to_python", "key_order",
    "python_built_dict", "python_dict_into_engine_call", "text_round_trip",
    "packed_arguments", "python_path_containers", "cyclic_python_list_refused", "shared_containers_read_once",
    "shared_containers_written_once", "self_containing_written_refused",
    "self_containing_refused",
    "text_reread_each_time",
    "script_members_from_python",
    "to_string",
    # properties
    "defaults", "property_round_trip", "property_types", "set_get_by_name", "setter_ran", "validate_property",
    "resource_property",
    # signals
    "signal_connect", "signal_await", "python_callables", "object_argument",
    # saved scenes
    "pack", "save", "tscn_text", "tres_save", "tres_round_trip", "scene_round_trip", "resource_round_trip",
    "loaded_scene_values",
    # lifetime
    "refcounted_call", "refcounted_alive", "refcounted_freed", "ten_thousand_freed", "python_held_refcounted",
    # in the tree: virtuals, engine calls, threads, exceptions
    "virtuals_order", "engine_calls", "engine_property_from_python", "thread_call", "thread_tree_refused",
    "thread_deferred", "thread_offline_objects", "input_virtual", "doc_xml", "process_runs",
    "exception_keeps_running", "exit_tree",
]  # fmt: skip


@pytest.fixture(scope="module")
def run(request: pytest.FixtureRequest) -> GodotRun:
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"binding tests on Godot {engine_version()}")
    return run_godot(PROJECT, "--verbose", "-s", "res://checks.gd")


@pytest.mark.godot
def test_engine_exits_cleanly(run: GodotRun) -> None:
    assert run.returncode == 0, run.log
    assert "gdbridge: Python 3.11" in run.stdout, run.log
    assert "leaked at exit" not in run.stdout + run.stderr, run.log
    assert "unclaimed string names" not in run.stdout + run.stderr, run.log


@pytest.mark.godot
@pytest.mark.parametrize("name", CHECKS)
def test_check(run: GodotRun, name: str) -> None:
    checks = run.checks()
    assert name in checks, f"check {name} never ran\n{run.log}"
    assert checks[name]["ok"], f"{name}: got {checks[name].get('got')}"


@pytest.mark.godot
def test_exception_in_process_is_reported_with_traceback(run: GodotRun) -> None:
    text = run.stdout + run.stderr
    assert "ValueError: faulty frame 1" in text, run.log
    assert "binding_classes.py" in text and "in _process" in text, run.log


@pytest.mark.godot
def test_python_output_reaches_the_engine(run: GodotRun) -> None:
    assert "probe says hello" in run.stdout, run.log
    assert "probe: probe logs info" in run.stdout, run.log
    text = run.stdout + run.stderr
    assert "WARNING: probe: probe logs a warning" in text, run.log
    assert "WARNING: UserWarning: probe warns" in text, run.log


@pytest.mark.godot
def test_missing_python_is_one_clear_error() -> None:
    broken = run_godot(PROJECT, "-s", "res://quit.gd", env={"NPC_MIND_PYTHON": "/nonexistent/python3.11"})
    starts = [line for line in broken.errors() if "gdbridge: Python could not start" in line]
    assert len(starts) == 1 and "NPC_MIND_PYTHON=/nonexistent/python3.11" in starts[0], broken.log
    assert "gdbridge: Python 3.11" not in broken.stdout, broken.log


@pytest.mark.godot
def test_npc_mind_python_names_the_environment() -> None:
    python = str(PROJECT.parents[2] / ".venv" / "bin" / "python")
    run = run_godot(PROJECT, "-s", "res://quit.gd", env={"NPC_MIND_PYTHON": python})
    assert run.returncode == 0, run.log
    assert "gdbridge: Python 3.11" in run.stdout and python in run.stdout, run.log


@pytest.mark.godot
def test_unsafe_thread_call_is_refused_with_a_clear_error(run: GodotRun) -> None:
    assert "called from a non-main thread on a node inside the scene tree" in run.stdout + run.stderr, run.log


@pytest.mark.godot
def test_only_expected_errors(run: GodotRun) -> None:
    unexpected = [
        line
        for line in run.errors()
        if "faulty frame" not in line and "non-main thread" not in line and "Traceback" not in line
    ]
    assert not unexpected, run.log
