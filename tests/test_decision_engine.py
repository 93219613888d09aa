"""LLM decisions in the real engine (headless Godot, in a subprocess: a crash fails the test, not the
suite) against the fault server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.fault_llm_server import FaultServer
from tests.support.godot import run_check_script

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.godot


def prompts_by_persona(server: FaultServer) -> dict[str, str]:
    """The user message of each request, by the persona its system message names."""
    found = {}
    for seen in server.seen:
        system, user = (message["content"] for message in seen.body["messages"])
        persona = system.split("You are the tactical mind of ", 1)[1].split(". ", 1)[0]
        found[persona] = user
    return found


def test_engine_objects_in_a_context_reach_the_prompt_as_plain_data(fault_server: FaultServer) -> None:
    """A node in the context freed in the same frame crashed the engine (signal 11): the LLM thread
    formatted the prompt with str() of the freed node. A live node ended every request at once in an
    unlogged prompt_error (a node in the tree refuses calls from another thread). A decision whose
    MemoryStream was freed raised inside the server's step. A request pending when a setting changed
    ended in no signal."""
    run, _ = run_check_script(
        ROOT, "res://tests/addon/decision_objects.gd", env={"NPC_MIND_TEST_ENDPOINT": fault_server.base_url}
    )
    ids = next(line["ids"] for line in run.json_lines() if "ids" in line)
    prompts = prompts_by_persona(fault_server)
    assert set(prompts) == {
        "freed_same_frame", "live_node", "freed_before", "freed_right_after", "memory_freed",
        "reconfigured",
    }, prompts  # fmt: skip
    # The prompt shows an engine object by its name (never its id), value types by their fields.
    assert "target: Enemy" in prompts["freed_same_frame"]
    live = prompts["live_node"]
    for shown in (
        "target: Watcher",
        "list: Watcher, 1, x",
        "nested: who Watcher",
        "at: x 3.5 y -1",
        "tint: r 1 g 0 b 0 a 1",
        "tags: a, b",
        "call: <VariantValue>",
    ):  # anything else: its type
        assert shown in live, (shown, live)
    assert "res:" not in live  # a Resource without a name: nothing a model can use
    assert "target" not in prompts["freed_before"]  # a freed object reads as None, never its pointer
    assert "target: Watcher" in prompts["freed_right_after"]  # copied when asked
    assert not [p for p in prompts.values() if str(ids["enemy"]) in p or str(ids["watcher"]) in p]
    assert "You remember" not in prompts["memory_freed"]
    assert not [prompt for prompt in prompts.values() if "_npc_mind" in prompt]  # no internal keys


def test_few_shot_examples_per_node_share_one_prefix_per_hub(fault_server: FaultServer) -> None:
    """Nodes with equal `examples` send byte-identical stable prefixes (one hub, one cached prefix);
    a node without them sends its own; a bad example is refused with its reason."""
    run, _ = run_check_script(
        ROOT, "res://tests/addon/decision_examples.gd",
        env={"NPC_MIND_TEST_ENDPOINT": fault_server.base_url}, allow_errors=True,
    )  # fmt: skip
    refused = [line for line in run.errors() if "examples[0]" in line]
    assert len(refused) == 1 and "'dance' is not one of the allowed intents" in refused[0], run.log
    chats = {seen.body["messages"][-1]["content"]: seen.body["messages"] for seen in fault_server.seen}
    by_guard = {next(label for label in ("first", "second", "plain") if label in tail): chat[:-1]
                for tail, chat in chats.items()}  # fmt: skip
    assert set(by_guard) == {"first", "second", "plain"}, chats
    assert by_guard["first"] == by_guard["second"]
    shots = by_guard["first"][1:]
    assert [message["role"] for message in shots] == ["user", "assistant", "user", "assistant"]
    assert shots[0]["content"] == "a thief runs off with the gold"
    assert json.loads(shots[1]["content"]) == {"intent": "attack", "urgency": 0.9}
    assert json.loads(shots[3]["content"]) == {"intent": "flee", "urgency": 0.5}
    assert by_guard["plain"] == by_guard["first"][:1]  # the same system message, no examples
