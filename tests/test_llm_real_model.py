"""The real local model (llama-server + SmolLM2-135M, one thread), started once per session."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from npc_mind.decision import DecisionConfig, DecisionHub, DecisionMade
from npc_mind.llm import (
    Endpoint,
    LLMClient,
    LLMSettings,
    LocalLlamaServer,
    build_messages,
    endpoints_from_env,
)
from npc_mind.llm.local_server import LAUNCHER
from tests.support import decision_world as world
from tests.test_decision_tiers import only_decision, run_until_decided

pytestmark = pytest.mark.llm
# A busy machine can slow a one-thread model a lot: wait for bytes generously, the deadlines decide.
SETTINGS = LLMSettings(read_timeout=60.0)


def test_client_gets_a_schema_valid_intent_from_the_model(llm_endpoint: Endpoint) -> None:
    messages = build_messages(world.SCHEMA, world.board(threat=0.9, health=0.3))

    async def ask() -> object:
        async with LLMClient([llm_endpoint], SETTINGS) as client:
            return await client.decide(messages, world.SCHEMA)

    answer = asyncio.run(ask())
    # decide() only returns what passed strict validation; check the contract once more here.
    assert answer.intent in world.INTENTS  # type: ignore[attr-defined]
    assert 0.0 <= answer.urgency <= 1.0  # type: ignore[attr-defined]


def test_decision_through_the_hub_has_the_tier_of_its_latency(llm_endpoint: Endpoint) -> None:
    # A generous hard deadline so the answer is applied, whatever this machine's speed.
    config = DecisionConfig(soft_deadline=0.3, hard_deadline=60.0, replan_interval=60.0)
    with DecisionHub.connect([llm_endpoint], world.SCHEMA, config=config, settings=SETTINGS) as hub:
        decision = hub.add(1, world.selector())
        end = only_decision(run_until_decided(hub, {1: world.board(threat=0.8)}))
    assert isinstance(end, DecisionMade)
    assert end.intent in world.INTENTS
    assert end.tier == config.classify(end.latency) == decision.tier


def test_default_watchdog_against_the_model(llm_endpoint: Endpoint) -> None:
    """With the design's 300/800 ms the model may land in any tier; the tier must match the latency."""
    config = DecisionConfig(replan_interval=60.0)
    with DecisionHub.connect([llm_endpoint], world.SCHEMA, config=config, settings=SETTINGS) as hub:
        hub.add(1, world.selector(), rules=world.rules())
        end = only_decision(run_until_decided(hub, {1: world.board(threat=0.8)}))
    assert end.tier == config.classify(end.latency)
    if isinstance(end, DecisionMade):
        assert end.intent in world.INTENTS
    else:
        assert end.reason == "timeout"


def test_local_server_helper_starts_on_loopback_and_stops() -> None:
    if endpoints_from_env() and not LAUNCHER.is_file():
        pytest.skip("NPC_MIND_LLM_URL is set and the local llama-server is not provisioned")
    with LocalLlamaServer(parallel=1) as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        assert server.slots_busy() == [False]
        port = server.port
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=2.0)
