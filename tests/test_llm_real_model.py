"""The real local model (llama-server + SmolLM2-135M, one thread), started once per session."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from npc_mind.decision import DecisionConfig, DecisionFallback, DecisionHub, DecisionMade
from npc_mind.llm import (
    Endpoint,
    LLMClient,
    LLMSettings,
    LocalLlamaServer,
    PromptConfig,
    build_messages,
    endpoints_from_env,
)
from npc_mind.llm.errors import RejectedError
from npc_mind.llm.local_server import LAUNCHER, MODEL, TAIL_LINES, LocalServerError, free_port
from npc_mind.llm.prompt import stable_messages
from npc_mind.llm.schema import DecisionSchema
from tests.support import decision_world as world
from tests.support.fault_llm_server import FaultServer
from tests.test_decision_tiers import only_decision, run_until_decided

pytestmark = [pytest.mark.llm, pytest.mark.alone]  # the tier of each answer is its latency
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
    urgency = answer.urgency  # type: ignore[attr-defined]
    assert urgency is None or 0.0 <= urgency <= 1.0  # None: choice mode names only the intent


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


SITUATIONS = [
    world.board(threat=0.9, health=0.3),
    world.board(threat=0.1, health=1.0),
    world.board(threat=0.7, health=0.8, grenade=1.0),
    {**world.board(threat=0.5), "situation": "a stone landed at my feet"},
    {**world.board(threat=0.95), "situation": "an enemy is shooting at me"},
    {**world.board(threat=0.0), "situation": "all quiet on the wall"},
]


def declared(endpoint: Endpoint, mode: str) -> Endpoint:
    return Endpoint(endpoint.base_url, endpoint.max_in_flight, kind=endpoint.kind, mode=mode)


async def _shape_and_answers(endpoint: Endpoint, schema: DecisionSchema) -> tuple[object, list[dict]]:
    """The client's request shape for `endpoint`, and the raw completions of its bodies for SITUATIONS
    (non-streamed, so each carries its finish_reason)."""
    async with LLMClient([endpoint], SETTINGS) as client:
        shape = await client.shape(endpoint, schema)
        completions = []
        for board in SITUATIONS:
            body = client._body(build_messages(schema, board), schema, shape) | {"stream": False}
            response = await client._http.post(endpoint.chat_url, json=body, timeout=60.0)  # type: ignore[union-attr]
            assert response.status_code == 200, response.text  # the server took the grammar
            completions.append(response.json())
    return shape, completions


@pytest.mark.parametrize("mode", ["choice", "json"])
def test_llama_modes_answer_schema_valid_never_cut_in_the_tier_of_their_latency(
    llm_endpoint: Endpoint, mode: str
) -> None:
    endpoint = declared(llm_endpoint, mode)
    shape, completions = asyncio.run(_shape_and_answers(endpoint, world.SCHEMA))
    if shape.mode != mode:  # type: ignore[attr-defined]
        pytest.skip(f"NPC_MIND_LLM_URL is not a llama-server (its mode: {shape.mode})")  # type: ignore[attr-defined]
    for completion in completions:
        choice = completion["choices"][0]
        assert choice["finish_reason"] == "stop", completion  # never "length": never cut
        answer = shape.parse(choice["message"]["content"])  # type: ignore[attr-defined]
        assert answer.intent in world.INTENTS
        assert (answer.urgency is None) == (mode == "choice")
    # The same requests through a hub: each ends applied, in the tier its latency earns.
    config = DecisionConfig(soft_deadline=0.3, hard_deadline=60.0, replan_interval=60.0)
    with DecisionHub.connect([endpoint], world.SCHEMA, config=config, settings=SETTINGS) as hub:
        assert hub.prepared is not None and "error" not in hub.prepared.result(timeout=120)[endpoint.base_url]
        for npc, board in enumerate(SITUATIONS):
            decision = hub.add(npc, world.selector())
            end = only_decision(run_until_decided(hub, {npc: board}))
            assert isinstance(end, DecisionMade), end
            assert end.intent in world.INTENTS
            assert end.tier == config.classify(end.latency) == decision.tier


def test_warm_up_caches_the_stable_prefix_before_the_first_request(llm_endpoint: Endpoint) -> None:
    prompt = PromptConfig(persona="a lighthouse keeper who never sleeps")  # a prefix not cached yet

    async def run() -> tuple[dict, dict, int]:
        async with LLMClient([llm_endpoint], SETTINGS) as client:
            report = await client.prepare(world.SCHEMA, stable_messages(world.SCHEMA, prompt))
            shape = await client.shape(llm_endpoint, world.SCHEMA)
            messages = build_messages(world.SCHEMA, SITUATIONS[0], (), prompt)
            body = client._body(messages, world.SCHEMA, shape) | {"stream": False}
            http = client._http
            assert http is not None
            completion = (await http.post(llm_endpoint.chat_url, json=body, timeout=60.0)).json()
            tail = await http.post(
                f"{llm_endpoint.root_url}/tokenize", json={"content": messages[-1]["content"]}, timeout=10.0
            )
            return report, completion, len(tail.json()["tokens"])

    report, completion, tail_tokens = asyncio.run(run())
    if "usage" not in completion or "prompt_tokens_details" not in completion["usage"]:
        pytest.skip("the endpoint does not report cached prompt tokens")
    assert report[llm_endpoint.base_url]["warmed"] >= 1, report
    usage = completion["usage"]
    # Everything but the situation and the few template tokens around it came from the cache.
    assert usage["prompt_tokens_details"]["cached_tokens"] >= usage["prompt_tokens"] - tail_tokens - 12, usage


def test_choice_mode_refuses_intents_whose_first_tokens_collide(llm_endpoint: Endpoint) -> None:
    colliding = DecisionSchema(("take_cover", "take_off", "patrol"))  # both start with the token "take"
    endpoint = declared(llm_endpoint, "choice")

    async def run() -> str:
        async with LLMClient([endpoint], SETTINGS) as client:
            try:
                shape = await client.shape(endpoint, colliding)
            except RejectedError as error:
                assert "'take_cover' and 'take_off' start with the same token" in str(error)
                return error.reason
            return f"no refusal (mode {shape.mode})"

    reason = asyncio.run(run())
    if reason.startswith("no refusal (mode schema"):
        pytest.skip("NPC_MIND_LLM_URL is not a llama-server")
    assert reason == "choice_collision"
    # Through a hub the refusal is a clear tier-3 fallback, never a crash.
    config = DecisionConfig(replan_interval=60.0)
    with DecisionHub.connect([endpoint], colliding, config=config, settings=SETTINGS) as hub:
        hub.add(1, world.selector())
        end = only_decision(run_until_decided(hub, {1: world.board()}))
    assert isinstance(end, DecisionFallback) and end.reason == "choice_collision"


def test_a_relative_model_path_works_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (LAUNCHER.is_file() and MODEL.is_file()):
        pytest.skip("the local llama-server is not provisioned")
    monkeypatch.chdir(tmp_path)  # the launcher changes directory: the path must be absolute by then
    with LocalLlamaServer(model=Path(os.path.relpath(MODEL, tmp_path)), parallel=1) as server:
        assert server.model.is_absolute()  # type: ignore[union-attr]
        assert httpx.get(f"{server.root_url}/health", timeout=5.0).status_code == 200


def test_a_missing_model_is_a_clear_error_and_the_command_says_so(tmp_path: Path) -> None:
    with pytest.raises(LocalServerError, match="NPC_MIND_LLM_MODEL_FILE"):
        LocalLlamaServer(model=tmp_path / "absent.gguf").start()
    done = subprocess.run(
        [sys.executable, "-m", "npc_mind.llm", "--model", str(tmp_path / "absent.gguf")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "absent.gguf" in done.stderr and "Traceback" not in done.stderr


def test_a_port_another_program_holds_is_refused_before_anything_starts(tmp_path: Path) -> None:
    """Issue 22 (10): with another program on the port, `python -m npc_mind.llm --port N` printed
    that program's URL as NPC_MIND_LLM_URL (it answered /health), then said `llama-server exited`."""
    if not (LAUNCHER.is_file() and MODEL.is_file()):
        pytest.skip("the local llama-server is not provisioned")
    with FaultServer() as other:  # a real HTTP server that answers /health with 200
        done = subprocess.run(
            [sys.executable, "-m", "npc_mind.llm", "--port", str(other.port)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert done.returncode == 1, done
    assert "NPC_MIND_LLM_URL" not in done.stdout
    assert f"port {other.port} on 127.0.0.1 is in use by another program" in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr  # one line


def test_a_model_that_does_not_load_is_reported_with_the_servers_own_words(tmp_path: Path) -> None:
    """Issue 22 (10): a garbage model file was reported as "see its output", and in a game that
    output goes nowhere: the error now carries the server's last lines."""
    if not LAUNCHER.is_file():
        pytest.skip("the local llama-server is not provisioned")
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"not a model " * 400)
    with pytest.raises(LocalServerError) as caught:
        LocalLlamaServer(model=garbage, port=free_port()).start()
    message = str(caught.value)
    assert "llama-server exited with code" in message and str(garbage) in message
    assert "failed to load model" in message  # llama-server's own line, not "see its output"
    assert message.count("\n") <= TAIL_LINES
    log = tmp_path / "server.log"  # with a log, the lines are there too, and the message says so
    with pytest.raises(LocalServerError, match=str(log)):
        LocalLlamaServer(model=garbage, port=free_port(), log_path=log).start()
    assert "failed to load model" in log.read_text(errors="replace")
