"""The decision schema: what a model may answer, as `response_format`, as a GBNF grammar (llama-server)
or as a choice of first tokens, and the strict validation of what comes back.

A model answer is applied only if it is exactly `{intent: one of the allowed intents, urgency: 0..1,
target_id?: int}`; anything else (bad JSON, a missing or extra field, an intent outside the enum, an
urgency out of range) raises `InvalidAnswerError` and the request falls back.

The grammar allows one spelling per answer, with no whitespace: `{"intent":"pursue","urgency":0.7}`
(urgency with one decimal). A model writing free whitespace or an invented `target_id` ran past any
sensible `max_tokens` and was cut before the closing brace; with the grammar the longest valid answer
is known, and `max_tokens` is sized from it so no answer is ever cut.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from typing import Any

from npc_mind.llm.errors import InvalidAnswerError

INTENT_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,47}")
MAX_INTENTS = 64
# Entity ids are engine object ids or pool indices: non-negative and within int64.
TARGET_ID_MAX = 2**63 - 1
_FIELDS = frozenset({"intent", "urgency", "target_id"})
# What the answer starts with, so the model's first generated token is an intent (llama-server continues
# an assistant message given last: the prefix costs prompt tokens, not generated ones).
ANSWER_PREFIX = '{"intent":"'
URGENCY_SUFFIX = '","urgency":'
GRAMMAR_URGENCY = '("0." [0-9] | "1.0")'
LONGEST_URGENCY = "0.5"  # every valid urgency has 3 characters


class ChoiceCollisionError(ValueError):
    """Choice mode needs every intent to start with its own token; these intents share one."""


def gbnf_literal(text: str) -> str:
    """`text` as a GBNF string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclasses.dataclass(frozen=True, slots=True)
class Answer:
    """A validated model decision."""

    intent: str
    urgency: float | None  # None in choice mode: the model names only the intent
    target_id: int | None = None


@dataclasses.dataclass(frozen=True)
class DecisionSchema:
    """The allowed intents (1..64 names, letters/digits/underscore, at most 48 characters each)."""

    intents: tuple[str, ...]

    def __post_init__(self) -> None:
        intents = tuple(self.intents)
        object.__setattr__(self, "intents", intents)
        if not 1 <= len(intents) <= MAX_INTENTS:
            raise ValueError(f"intents: need 1..{MAX_INTENTS} names, got {len(intents)}")
        if len(set(intents)) != len(intents):
            raise ValueError("intents: names must be unique")
        for name in intents:
            if not isinstance(name, str) or not INTENT_PATTERN.fullmatch(name):
                raise ValueError(f"intents: {name!r} is not a name like take_cover")
        object.__setattr__(self, "_allowed", frozenset(intents))

    def json_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "intent": {"type": "string", "enum": list(self.intents)},
                "urgency": {"type": "number", "minimum": 0, "maximum": 1},
            },
            "required": ["intent", "urgency"],
            "additionalProperties": False,
        }

    def response_format(self) -> dict[str, Any]:
        schema = {"name": "npc_decision", "strict": True, "schema": self.json_schema()}
        return {"type": "json_schema", "json_schema": schema}

    def answer_grammar(self) -> str:
        """GBNF for what follows `ANSWER_PREFIX`: an intent, the urgency, the closing brace; no whitespace."""
        intents = " | ".join(gbnf_literal(name) for name in self.intents)
        return f"root ::= ({intents}) {gbnf_literal(URGENCY_SUFFIX)} {GRAMMAR_URGENCY} {gbnf_literal('}')}"

    def longest_answer(self) -> str:
        """The longest text `answer_grammar` accepts: every token is at least one character, so this
        many tokens (plus one for the end token) always hold a whole answer."""
        longest = max(self.intents, key=len)
        return f"{longest}{URGENCY_SUFFIX}{LONGEST_URGENCY}}}"

    def choice_grammar(self, first_tokens: dict[str, int]) -> str:
        """GBNF for exactly one token, the first token of one intent (`first_tokens`: intent -> token
        id, from the server's tokenizer). `ChoiceCollisionError` if two intents share a first token."""
        missing = [name for name in self.intents if name not in first_tokens]
        if missing:
            raise ValueError(f"no first token for intents {missing[:3]}")
        owners: dict[int, str] = {}
        for name in self.intents:
            token = first_tokens[name]
            if token in owners:
                raise ChoiceCollisionError(
                    f"choice mode: intents {owners[token]!r} and {name!r} start with the same token "
                    f"(id {token}); rename one of them so their first tokens differ, or use mode 'json'"
                )
            owners[token] = name
        return "root ::= " + " | ".join(f"<[{first_tokens[name]}]>" for name in self.intents)

    def parse(self, content: str) -> Answer:
        """Validate the model's message content; `InvalidAnswerError` unless it is a valid decision."""
        try:
            data = json.loads(content)
        except (json.JSONDecodeError, TypeError) as error:
            message = f"content is not JSON ({error.__class__.__name__})"
            raise InvalidAnswerError(message, "invalid_json") from None
        if not isinstance(data, dict):
            raise InvalidAnswerError("content is not a JSON object", "invalid_json")
        extra = data.keys() - _FIELDS
        if extra:
            raise InvalidAnswerError(f"unexpected fields {sorted(extra)[:3]}")
        intent = data.get("intent")
        if not isinstance(intent, str) or intent not in self._allowed:  # type: ignore[attr-defined]  # set by the subclass made for each intent list
            raise InvalidAnswerError(f"intent {str(intent)[:48]!r} is not one of the allowed intents")
        urgency = data.get("urgency")
        if isinstance(urgency, bool) or not isinstance(urgency, int | float):
            raise InvalidAnswerError("urgency is missing or not a number")
        if not (math.isfinite(urgency) and 0.0 <= urgency <= 1.0):
            raise InvalidAnswerError("urgency is outside 0..1")
        target = data.get("target_id")
        if target is not None and (
            isinstance(target, bool) or not isinstance(target, int) or not 0 <= target <= TARGET_ID_MAX
        ):
            raise InvalidAnswerError("target_id is not a non-negative integer")
        return Answer(intent, float(urgency), target)
