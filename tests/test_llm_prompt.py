"""The request shape: a stable prefix per hub, a short situation without internal keys, ids or values
that change between requests; the grammars accept exactly the valid answers; choice mode refuses intents
it cannot tell apart; endpoints declare their kind and mode."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time

import pytest

from npc_mind.llm import DecisionSchema, Endpoint, LLMClient, PromptConfig, build_messages
from npc_mind.llm.errors import InvalidAnswerError
from npc_mind.llm.local_server import free_port
from npc_mind.llm.prompt import Example, MemoryFact, answer_json, examples_from, stable_messages
from npc_mind.llm.schema import ANSWER_PREFIX, ChoiceCollisionError
from npc_mind.llm.shape import RequestShape, resolve_mode
from npc_mind.memory import MemoryType
from npc_mind.server import ClockMode
from npc_mind.server.core import MindServer
from npc_mind.server.decisions import DecisionSettings
from tests.support.fault_llm_server import Fault, FaultServer
from tests.support.gbnf import matches

INTENTS = ("pursue", "search", "puzzled", "greet", "patrol", "flee")
SCHEMA = DecisionSchema(INTENTS)
THIEF = 94_371_225_118  # an engine object id: 11 digits, one token each, and nothing to reason about
URGENCIES = [f"{tenth / 10:.1f}" for tenth in range(11)]


def _ask_and_wait(server: MindServer, decision: int, context: dict) -> None:
    server.request_decision(decision, context)
    for _ in range(2000):
        events = server.update()
        if any(e.handle == decision and e.signal != "thinking_started" for e in events):
            return
        time.sleep(0.005)
    raise AssertionError("no decision signal")


@pytest.mark.timeout(60)
def test_two_npcs_of_a_hub_share_the_prefix_and_repeat_the_same_prompt(fault_server: FaultServer) -> None:
    fault_server.default = Fault(intent="search", urgency=0.5)
    server = MindServer(ClockMode.MANUAL, llm_endpoint=fault_server.base_url)
    settings = DecisionSettings(intents=INTENTS, soft_deadline=5.0, hard_deadline=10.0, persona="a guard")
    try:
        decisions = []
        for _ in range(2):
            memory = server.add_memory()
            server.record(memory, THIEF, MemoryType.HOSTILE, 0.9)
            decisions.append(server.add_decision(settings, memory=memory))
        context = {"situation": "spotted Tam, remembered as hostile", "threat": 2 / 3, "thief": THIEF}
        for decision in decisions:  # the same situation twice per NPC, time passing in between
            _ask_and_wait(server, decision, context)
            server.advance(2.0)
            _ask_and_wait(server, decision, context)
    finally:
        server.close()
    chats = [seen.body["messages"] for seen in fault_server.seen]
    assert len(chats) == 4
    prefix = chats[0][:-1]
    assert all(chat[:-1] == prefix for chat in chats)  # byte-identical prefix across NPCs and requests
    assert prefix == stable_messages(SCHEMA, PromptConfig(persona="a guard"))
    assert all(chat == chats[0] for chat in chats)  # same situation: the same request, tail included
    text = json.dumps(chats[0])
    assert "_npc_mind" not in text  # the server's request counter was written here
    assert not re.search(r"\d{5,}", text), text  # no entity ids or long numbers
    situation = chats[0][-1]["content"]
    assert "spotted Tam" in situation and "threat: 0.7" in situation and "hostile (vivid)" in situation


def test_the_situation_is_short_and_coarse() -> None:
    snapshot = {
        "_internal": 3, "threat": 0.6666, "danger": True, "target": 1_234_567, "when": 81234.5,
        "note": "line one\nline two", "blob": {"a": 1}, "count": 3, "health": 0.0, "calm": False,
        "visible": 1.0, "near": 0.04, "at": {"x": 3.5, "y": -1.0}, "tags": ("a", "b"),
        "who": {"id": THIEF, "class": "Node2D"}, "deep": {"a": {"b": 1}},
    }  # fmt: skip
    memories = [
        MemoryFact("hostile", THIEF, 0.9, 0.9), MemoryFact("observation", 1, 0.5, 0.3),
        MemoryFact("observation", 2, 0.4, 0.3), MemoryFact("trivia", 3, 0.1, 0.1),
    ]  # fmt: skip
    *_, user = build_messages(SCHEMA, snapshot, memories, PromptConfig(max_facts=12))
    assert user["content"] == (
        "Facts: at: x 3.5 y -1, blob: a 1, calm: no, count: 3, danger: yes, near: 0, "
        "note: line one line two, tags: a, b, threat: 0.7, visible: 1.\n"
        "You remember: hostile (vivid), observation (faint) x2, trivia (fading)."
    )
    *_, kept = build_messages(SCHEMA, {"health": 0.0}, (), PromptConfig(omit_zero=False))
    assert kept["content"] == "Facts: health: 0."
    *_, empty = build_messages(SCHEMA, {"_npc_mind_request": 7})
    assert empty["content"] == "Nothing is happening."


def test_few_shot_examples_are_part_of_the_stable_prefix() -> None:
    config = PromptConfig(examples=(Example("Situation: a thief runs off.", "pursue", 0.9),))
    system, shot, answer = stable_messages(SCHEMA, config)
    assert "Intents: pursue, search, puzzled, greet, patrol, flee." in system["content"]
    assert (shot["role"], answer["role"]) == ("user", "assistant")
    assert answer["content"] == '{"intent":"pursue","urgency":0.9}'
    with pytest.raises(ValueError, match="not one of the allowed intents"):
        stable_messages(SCHEMA, PromptConfig(examples=(Example("x", "dance"),)))


def test_a_nodes_examples_become_few_shot_examples_or_a_clear_error() -> None:
    entries = [
        {"situation": "a thief runs off", "intent": "pursue", "urgency": 0.9},
        {"situation": "calm", "intent": "patrol"},
    ]
    assert examples_from(entries, INTENTS) == (
        Example("a thief runs off", "pursue", 0.9),
        Example("calm", "patrol", 0.5),
    )
    assert examples_from([], INTENTS) == ()
    for bad, reason in (
        (["pursue"], "a Dictionary"),
        ([{"situation": "x", "intent": "dance"}], "'dance' is not one of the allowed intents"),
        ([{"situation": " ", "intent": "pursue"}], "non-empty situation"),
        ([{"situation": "x", "intent": "pursue", "urgency": 1.5}], "urgency must be a number in 0..1"),
        ([{"situation": "x", "intent": "pursue", "urgency": "high"}], "urgency must be a number in 0..1"),
        ([{"situation": "x", "intent": "pursue", "mood": 1}], "unknown key 'mood'"),
        ([{"situation": "x", "intent": "pursue"}] * 9, "at most 8"),
    ):
        with pytest.raises(ValueError, match=re.escape(reason)):
            examples_from(bad, INTENTS)


def test_decisions_with_equal_examples_share_a_hub_and_others_do_not() -> None:
    server = MindServer(ClockMode.MANUAL)
    shots = (Example("a thief runs off", "pursue", 0.9),)
    try:
        for examples in (shots, shots, (), (Example("a thief runs off", "search", 0.9),)):
            server.add_decision(DecisionSettings(intents=INTENTS, persona="a guard", examples=examples))
        assert len(server.decisions.hubs) == 3
        hub = next(hub for hub in server.decisions.hubs.values() if hub.prompt.examples == shots)
        assert stable_messages(SCHEMA, hub.prompt)[1:] == [
            {"role": "user", "content": "a thief runs off"},
            {"role": "assistant", "content": '{"intent":"pursue","urgency":0.9}'},
        ]
    finally:
        server.close()


def test_the_json_grammar_accepts_every_valid_answer_and_nothing_else() -> None:
    grammar = SCHEMA.answer_grammar()
    longest = len(SCHEMA.longest_answer())
    for intent, urgency in itertools.product(INTENTS, URGENCIES):
        tail = f'{intent}","urgency":{urgency}}}'
        assert matches(grammar, tail), tail
        assert len(tail) <= longest
        whole = ANSWER_PREFIX + tail
        assert whole == answer_json(intent, float(urgency))
        answer = RequestShape.for_mode(SCHEMA, "json").parse(whole)
        assert (answer.intent, answer.urgency) == (intent, float(urgency))
    for wrong in (
        'pursue", "urgency":0.5}', 'pursue","urgency": 0.5}', 'pursue","urgency":0.5,"target_id":1}',
        'pursue","urgency":1.5}', 'pursue","urgency":0.55}', 'pursue","urgency":1}', 'dance","urgency":0.5}',
        'pursue","urgency":0.5', 'PURSUE","urgency":0.5}', "pursue",
    ):  # fmt: skip
        assert not matches(grammar, wrong), wrong


def test_json_mode_sizes_max_tokens_from_the_longest_answer_and_prefills() -> None:
    shape = RequestShape.for_mode(SCHEMA, "json")
    body = shape.body(build_messages(SCHEMA, {}), model="m", max_tokens=48, temperature=0.0, stream=True)
    assert body["max_tokens"] == len('puzzled","urgency":0.5}') + 1
    assert body["grammar"] == SCHEMA.answer_grammar()
    assert body["messages"][-1] == {"role": "assistant", "content": ANSWER_PREFIX}
    assert "response_format" not in body
    plain = RequestShape.for_mode(SCHEMA, "schema").body(
        build_messages(SCHEMA, {}), model="m", max_tokens=48, temperature=0.0, stream=True
    )
    assert "grammar" not in plain and plain["max_tokens"] == 48 and plain["messages"][-1]["role"] == "user"
    assert "target_id" not in plain["response_format"]["json_schema"]["schema"]["properties"]


def test_choice_mode_reads_one_token_and_refuses_intents_sharing_one() -> None:
    tokens = {name: (100 + i, name[:2]) for i, name in enumerate(INTENTS)}
    tokens["puzzled"] = (150, "puz")
    shape = RequestShape.for_mode(SCHEMA, "choice", tokens)
    assert shape.grammar == "root ::= <[100]> | <[101]> | <[150]> | <[103]> | <[104]> | <[105]>"
    body = shape.body(build_messages(SCHEMA, {}), model="m", max_tokens=48, temperature=0.0, stream=False)
    assert body["max_tokens"] == 2  # the token, then the end the grammar forces: never cut
    assert shape.parse('{"intent":"puz').intent == "puzzled" and shape.parse("se").intent == "search"
    assert shape.parse("pu").urgency is None
    with pytest.raises(InvalidAnswerError):
        shape.parse('{"intent":"p')
    colliding = DecisionSchema(("take_cover", "take_off"))
    with pytest.raises(ChoiceCollisionError, match="'take_cover' and 'take_off' start with the same token"):
        RequestShape.for_mode(colliding, "choice", {"take_cover": (7, "take"), "take_off": (7, "take")})


def test_endpoints_declare_kind_and_mode_in_the_url_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    endpoint = Endpoint("http://127.0.0.1:8080/v1#kind=llama&mode=json")
    assert (endpoint.base_url, endpoint.kind, endpoint.mode) == ("http://127.0.0.1:8080/v1", "llama", "json")
    assert endpoint.root_url == "http://127.0.0.1:8080"
    assert (Endpoint("http://h/v1").kind, Endpoint("http://h/v1").mode) == ("auto", "auto")
    monkeypatch.setenv("NPC_MIND_LLM_MODE", "schema")
    assert Endpoint("http://h/v1").mode == "schema"
    for bad in ("http://h/v1#mode=fast", "http://h/v1#kind=vllm", "http://h/v1#speed=1"):
        with pytest.raises(ValueError):
            Endpoint(bad)
    # choice is the documented default on llama-server; other servers get response_format.
    assert [resolve_mode(m, "llama") for m in ("auto", "choice", "json", "schema")] == [
        "choice", "choice", "json", "schema",
    ]  # fmt: skip
    assert {resolve_mode(m, "openai") for m in ("auto", "choice", "json", "schema")} == {"schema"}


def test_an_unreachable_endpoint_is_asked_its_kind_again_once_it_answers() -> None:
    port = free_port()
    endpoint = Endpoint(f"http://127.0.0.1:{port}/v1")

    async def run() -> tuple[str, int, str, int]:
        async with LLMClient([endpoint]) as client:
            before = await client.shape(endpoint, SCHEMA)  # nothing listens: a plain request, not kept
            kept_before = len(client._shapes)
            with FaultServer(port=port):  # now something answers (not llama-server: 404 on /props)
                after = await client.shape(endpoint, SCHEMA)
                return before.mode, kept_before, after.mode, len(client._shapes)

    assert asyncio.run(run()) == ("schema", 0, "schema", 1)
