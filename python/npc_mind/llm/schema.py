"""The decision schema sent as `response_format`, and the strict validation of what comes back.

A model answer is applied only if it is exactly `{intent: one of the allowed intents, urgency: 0..1,
target_id?: int}`; anything else (bad JSON, a missing or extra field, an intent outside the enum, an
urgency out of range) raises `InvalidAnswerError` and the request falls back.
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


@dataclasses.dataclass(frozen=True, slots=True)
class Answer:
    """A validated model decision."""

    intent: str
    urgency: float
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
                "target_id": {"type": "integer", "minimum": 0},
            },
            "required": ["intent", "urgency"],
            "additionalProperties": False,
        }

    def response_format(self) -> dict[str, Any]:
        schema = {"name": "npc_decision", "strict": True, "schema": self.json_schema()}
        return {"type": "json_schema", "json_schema": schema}

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
        if not isinstance(intent, str) or intent not in self._allowed:  # type: ignore[attr-defined]
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
