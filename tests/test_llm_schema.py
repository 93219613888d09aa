"""Strict validation, the breaker's states and settings bounds (the prompt: tests/test_llm_prompt.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from npc_mind.decision import DecisionConfig
from npc_mind.llm import (
    BreakerConfig,
    BreakerState,
    CircuitBreaker,
    DecisionSchema,
    Endpoint,
    InvalidAnswerError,
    LLMSettings,
)
from tests.support.scripted_transport import FakeClock

SCHEMA = DecisionSchema(("attack", "take_cover", "flee"))


@pytest.mark.parametrize(
    "content",
    [
        '{"intent": "attack", "urgency": 0.4, "target_id": 3}',
        '{"intent": "flee", "urgency": 1}',
        '{"urgency": 0, "intent": "take_cover", "target_id": null}',
    ],
)
def test_valid_answers_parse(content: str) -> None:
    answer = SCHEMA.parse(content)
    data = json.loads(content)
    assert (answer.intent, answer.urgency, answer.target_id) == (
        data["intent"], float(data["urgency"]), data.get("target_id"),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"intent": "attack", "urgency": ', "invalid_json"),
        ("[1, 2]", "invalid_json"),
        ('"attack"', "invalid_json"),
        ('{"intent": "dance", "urgency": 0.5}', "invalid_answer"),
        ('{"intent": "ATTACK", "urgency": 0.5}', "invalid_answer"),
        ('{"urgency": 0.5}', "invalid_answer"),
        ('{"intent": "attack"}', "invalid_answer"),
        ('{"intent": "attack", "urgency": 2}', "invalid_answer"),
        ('{"intent": "attack", "urgency": -0.1}', "invalid_answer"),
        ('{"intent": "attack", "urgency": "high"}', "invalid_answer"),
        ('{"intent": "attack", "urgency": true}', "invalid_answer"),
        ('{"intent": "attack", "urgency": NaN}', "invalid_answer"),
        ('{"intent": "attack", "urgency": 0.5, "target_id": 1.5}', "invalid_answer"),
        ('{"intent": "attack", "urgency": 0.5, "target_id": -1}', "invalid_answer"),
        ('{"intent": "attack", "urgency": 0.5, "plan": "x"}', "invalid_answer"),
    ],
)
def test_anything_else_is_refused(content: str, reason: str) -> None:
    with pytest.raises(InvalidAnswerError) as refused:
        SCHEMA.parse(content)
    assert refused.value.reason == reason


json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=8,
)


@given(st.one_of(json_values, st.fixed_dictionaries({"intent": json_values, "urgency": json_values})))
def test_arbitrary_json_is_accepted_only_when_it_is_a_decision(value: object) -> None:
    try:
        answer = SCHEMA.parse(json.dumps(value))
    except InvalidAnswerError:
        return
    assert isinstance(value, dict) and value["intent"] in SCHEMA.intents
    assert 0.0 <= answer.urgency <= 1.0 and set(value) <= {"intent", "urgency", "target_id"}


def test_schema_and_settings_bounds() -> None:
    for bad in ((), ("a", "a"), ("two words",), ("x" * 49,)):
        with pytest.raises(ValueError):
            DecisionSchema(bad)
    for options in ({"max_tokens": 0}, {"temperature": 3.0}, {"read_timeout": 0.0}, {"model": ""}):
        with pytest.raises(ValueError):
            LLMSettings(**options)  # type: ignore[arg-type]
    for options in ({"soft_deadline": 0.9}, {"soft_deadline": 0.0}, {"tag_ttl": -1.0}, {"min_gap": 61.0}):
        with pytest.raises(ValueError):
            DecisionConfig(**options)  # type: ignore[arg-type]
    for url in ("127.0.0.1:8080", "ftp://host/v1", "http://user:secret@host/v1"):
        with pytest.raises(ValueError):
            Endpoint(url)
    assert LLMSettings().max_tokens == 48
    assert Endpoint("http://127.0.0.1:1/v1/").chat_url == "http://127.0.0.1:1/v1/chat/completions"


def test_classify_is_the_design_sources_tiers() -> None:
    config = DecisionConfig()
    assert [config.classify(s) for s in (0.0, 0.299, 0.3, 0.799, 0.8, 5.0)] == [1, 1, 2, 2, 3, 3]


def test_breaker_opens_after_n_failures_probes_after_cooldown_and_closes() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker(BreakerConfig(failure_threshold=3, cooldown=2.0), clock)
    for _ in range(2):
        breaker.before_call()
        breaker.record_failure()
    assert breaker.state is BreakerState.CLOSED
    breaker.record_failure()
    assert breaker.state is BreakerState.OPEN and not breaker.available()
    clock.advance(1.9)
    assert not breaker.available()
    clock.advance(0.1)
    assert breaker.state is BreakerState.HALF_OPEN and breaker.available()
    breaker.before_call()  # the one probe
    assert not breaker.available()
    breaker.record_failure()  # the probe failed: open for another cooldown
    assert breaker.state is BreakerState.OPEN and breaker.opened_count == 2
    clock.advance(2.0)
    breaker.before_call()
    breaker.record_success()
    assert breaker.state is BreakerState.CLOSED and breaker.available()


def test_a_cancelled_probe_frees_the_probe_slot() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker(BreakerConfig(failure_threshold=1, cooldown=1.0), clock)
    breaker.record_failure()
    clock.advance(1.0)
    breaker.before_call()
    breaker.record_neutral()
    assert breaker.state is BreakerState.HALF_OPEN and breaker.available()
