"""Shared fixtures; each area keeps its own in tests/support and is imported here."""

from tests.support.llm_fixtures import fault_server, llm_endpoint  # noqa: F401
