"""Shared fixtures; each area keeps its own in tests/support and is imported here."""

from tests.support.llm_fixtures import fault_server, llm_endpoint  # noqa: F401


def pytest_sessionstart(session: object) -> None:
    """The engine runs the addon's copies of npc_mind, gdbridge and npc_mind_godot (its own Python
    runtime): bring them in step with python/ first, so a test never runs code older than the tree."""
    from tools.provision import package

    package.sync_own_packages()
