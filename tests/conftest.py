"""Shared fixtures; each area keeps its own in tests/support and is imported here."""

import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.llm_fixtures import fault_server, llm_endpoint  # noqa: F401

# The suite runs on several workers (pytest.ini: pytest-xdist, --dist loadgroup), a module on one
# worker with its module fixtures. Modules that run the engine on one Godot project share that
# project's .godot folder, which an editor or export run rewrites (uid cache, imports): they run on
# one worker, one after the other. Every other module is its own group.
ONE_PROJECT = {
    "repo": (  # this repository's own project (the demo, tests/addon)
        "test_addon_*", "test_debugger_feed", "test_decision_engine", "test_demo_headless",
        "test_demo_render", "test_designer_tools", "test_llm_local_model_in_game",
        "test_memory_profile_change", "test_mistakes_debugger", "test_mistakes_engine", "test_room3d",
        "test_ship_export", "test_utility_one_meaning",
    ),
    "binding": ("test_binding_contract", "test_binding_core", "test_binding_editor", "test_binding_faults"),
}  # fmt: skip


def _group_of(module: str) -> str:
    for group, patterns in ONE_PROJECT.items():
        if any(Path(module).match(pattern) for pattern in patterns):
            return group
    return module


@pytest.hookimpl(tryfirst=True)  # before xdist's, which reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_group_of(item.path.stem)))


ALONE_LOCK = "NPC_MIND_TESTS_ALONE_LOCK"  # the lock file the workers share (made by the main process)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """A test marked `alone` measures wall time against a deadline: while it runs (its fixtures
    too), no other worker runs a test, and it waits for the one running."""
    lock_path = os.environ.get(ALONE_LOCK) if hasattr(item.config, "workerinput") else None
    if not lock_path:  # one process: every test runs alone
        yield
        return
    with Path(lock_path).open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if item.get_closest_marker("alone") else fcntl.LOCK_SH)
        yield  # released when the file closes


@pytest.hookimpl(tryfirst=True)  # before xdist starts the workers, which inherit the environment
def pytest_sessionstart(session: pytest.Session) -> None:
    """The engine runs the addon's copies of npc_mind, gdbridge and npc_mind_godot (its own Python
    runtime): bring them in step with python/ first, so a test never runs code older than the tree
    (once, before any worker starts)."""
    if hasattr(session.config, "workerinput"):
        return
    from tools.provision import package

    package.sync_own_packages()
    handle, lock_path = tempfile.mkstemp(prefix="npc_mind-tests-", suffix=".lock")
    os.close(handle)
    os.environ[ALONE_LOCK] = lock_path


def pytest_sessionfinish(session: pytest.Session) -> None:
    lock_path = None if hasattr(session.config, "workerinput") else os.environ.pop(ALONE_LOCK, None)
    if lock_path:
        Path(lock_path).unlink(missing_ok=True)
