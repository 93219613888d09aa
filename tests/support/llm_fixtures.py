"""Fixtures for the LLM tests (imported by tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from npc_mind.llm.endpoints import Endpoint, endpoints_from_env
from npc_mind.llm.local_server import LocalLlamaServer
from tests.support.fault_llm_server import FaultServer


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


@pytest.fixture(scope="session")
def llm_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    """The real model: `NPC_MIND_LLM_URL`'s first endpoint, else the provisioned llama-server, started
    once per session with one thread."""
    configured = endpoints_from_env()
    if configured:
        yield configured[0]
        return
    log = Path(tmp_path_factory.mktemp("llama")) / "llama-server.log"
    with LocalLlamaServer(threads=1, parallel=2, log_path=log) as server:
        yield server.endpoint()
