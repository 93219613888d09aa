"""The addon in the real engine beyond the first slice: the batched path over packed arrays, one batch
per shared definition, the plugin's monitors, and the editor opening the demo project with the plugin
enabled and no errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from npc_mind.memory import kernel
from tests.support.godot import run_check_script, run_godot
from tests.support.memory_kernel import LEVELS

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.godot


@pytest.mark.parametrize("kernel_level", LEVELS)
def test_batched_path_matches_the_node_path_and_monitors_read_the_server(kernel_level: str) -> None:
    """At each level of the compiled kernel (the batched scoring's and the memory pool's) and on
    numpy: a level forced that the engine's runtime cannot run would be an engine error here."""
    run, checks = run_check_script(
        ROOT, "res://tests/addon/batched_and_monitors.gd", env={kernel.ENV_VAR: kernel_level}
    )
    assert len(checks) == 11
    assert "leaked" not in run.stdout + run.stderr, run.log  # nodes, resources and curves all freed


# The addon dropped into a fresh project is tests/test_ship_addon.py (from the zip users get).


def test_the_clock_ignores_time_scale_and_stops_while_paused() -> None:
    run = run_godot(ROOT, "--fixed-fps", "10", "-s", "res://tests/addon/clock.gd")
    assert run.returncode == 0, run.log
    checks = run.checks()
    assert len(checks) == 4 and all(check["ok"] for check in checks.values()), checks
    assert not run.errors(), run.log


def test_the_editor_opens_the_project_with_the_plugin_enabled_without_errors() -> None:
    project_file = ROOT / "project.godot"
    before = project_file.read_text()
    assert 'enabled=PackedStringArray("res://addons/npc_mind/plugin.cfg")' in before
    try:
        run = run_godot(ROOT, "--editor", "--quit-after", "120", timeout=180)
        after = project_file.read_text()
    finally:
        project_file.write_text(before)  # the editor may tidy the file; the checkout keeps its own
    assert run.returncode == 0, run.log
    assert "gdbridge: Python" in run.stdout, run.log
    assert not run.errors(), run.errors()
    # The plugin declared its settings with their defaults as initial values: none is written.
    assert "[npc_mind]" not in after
    plugin = (ROOT / "addons" / "npc_mind" / "plugin.gd").read_text()
    declared = [line.split('"')[1] for line in plugin.splitlines() if line.strip().startswith('"npc_mind/')]
    assert "npc_mind/memory/clock" in declared
    assert not [name for name in declared if "key" in name]  # API keys come only from the environment


def test_freeing_every_child_of_root_does_not_stop_the_server() -> None:
    """Issue 10 (10): the per-frame hook is the main loop's own frame callback, owned by no node."""
    _, checks = run_check_script(ROOT, "res://tests/addon/level_change.gd", engine_args=("--fixed-fps", "10"))
    assert len(checks) == 3


def test_calls_from_a_thread_are_refused_and_never_reach_the_pool() -> None:
    """Issue 10 (3): a GDScript Thread recording into a 64-slot stream while the main thread does used
    to corrupt the pool; every call from the thread now fails with one WrongThreadError naming the
    method, and a node freed on a thread is released on the main thread."""
    run, checks = run_check_script(ROOT, "res://tests/addon/threads.gd", allow_errors=True)
    assert len(checks) == 2
    errors = run.errors()
    refused = [line for line in errors if "WrongThreadError" in line and "non-main thread" in line]
    assert refused == errors, run.log  # nothing but the refusals
    named = {line.split("WrongThreadError: ")[1].split("()")[0] for line in refused}
    assert named == {"MemoryStream.record_event", "NpcMindServer.record_batch", "NpcMindServer.now",
                     "MemoryStream.awareness_of"}, named  # fmt: skip
    assert len(refused) == 200 + 3, len(refused)


def test_a_rejected_clock_reads_back_and_a_reentrant_advance_is_refused() -> None:
    """Issue 10 (11): `clock` used to read back a rejected value, and advance() from a handler of the
    server's own signal recursed until a swallowed RecursionError."""
    run, checks = run_check_script(ROOT, "res://tests/addon/singleton_rules.gd", allow_errors=True)
    assert len(checks) == 3
    errors = run.errors()
    assert len(errors) == 2, run.log  # the clock, then the handler's advance
    assert "'sundial' is not a valid ClockMode" in errors[0], errors
    assert "advance() called from a handler of one of its own signals" in errors[1], errors


def test_selector_nodes_spawned_and_freed_leave_the_registries_at_the_live_count() -> None:
    """Issue 10 (5): freed selector rows used to stay in their group forever (2,001 rows here)."""
    _, checks = run_check_script(ROOT, "res://tests/addon/selector_churn.gd")
    assert len(checks) == 3
