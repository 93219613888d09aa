"""The decision prompt: a stable prefix per hub, then a short situation.

Prompt evaluation is most of a small model's latency, and a server caches the longest prefix a request
shares with the last one in its slot. So the prompt is split:

- `stable_messages`: persona, the allowed intents, the answer format and optional few-shot examples.
  It depends only on the hub's schema and `PromptConfig`, so it is byte-identical for every request
  and every NPC of a hub, and is cached once per server slot (warmed up before the first NPC asks).
- `situation_text`: the one varying message, in words and a few coarse facts. It never shows internal
  keys (any key starting with `_`, such as the server's request counter), raw entity ids or long
  numbers (integers of 5 or more digits), and shows numbers with one decimal (whole ones without) and
  memories by type and a coarse strength (equal ones counted, not repeated), so two requests for the
  same situation give the same text. Numbers equal to 0 are left out by default (an absent flag or
  score; `omit_zero`): every tail token costs prompt evaluation on each request.

Memories are duck-typed views (`memory_type`, `retrievability`, ...), as the memory pool's `top_k`
returns, or `MemoryFact`s.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from npc_mind.llm.schema import ANSWER_PREFIX, URGENCY_SUFFIX, DecisionSchema

LONG_NUMBER = 10_000  # a number this large is an id or a timestamp: nothing a model can reason about
MAX_TEXT = 120  # characters of one text value
MAX_PARTS = 4  # fields of a mapping, items of a sequence
SITUATION_KEY = "situation"  # a text value under this key leads the message, as a sentence


class MemoryFact(NamedTuple):
    """What a prompt shows of one memory, read on the main thread from the pool's view, so the prompt
    can be formatted on another thread without touching the pool."""

    memory_type: str
    entity: Any
    retrievability: float
    salience: float


def memory_facts(views: Sequence[Any], limit: int) -> tuple[MemoryFact, ...]:
    """The first `limit` memory views as plain, immutable facts (the fields `build_messages` shows)."""
    facts = []
    for view in list(views)[:limit]:
        kind = getattr(view, "memory_type", "memory")
        facts.append(
            MemoryFact(
                getattr(kind, "name", str(kind)).lower(),
                getattr(view, "entity", "?"),
                float(getattr(view, "retrievability", 0.0)),
                float(getattr(view, "salience", 0.0)),
            )
        )
    return tuple(facts)


class Example(NamedTuple):
    """A few-shot example: a situation (as `situation_text` would write it) and the intended answer."""

    situation: str
    intent: str
    urgency: float = 0.5


MAX_EXAMPLES = 8


@dataclasses.dataclass(frozen=True)
class PromptConfig:
    """persona: who the NPC is (<= 400 chars); max_facts: 1..64 blackboard entries;
    max_memories: 0..16 memories; digits: 0..6 decimals for numbers (1: coarse, stable);
    examples: 0..8 few-shot `Example`s (part of the stable prefix; their intents must be allowed);
    omit_zero: leave out facts whose value is the number 0."""

    persona: str = "a guard in a game world"
    max_facts: int = 16
    max_memories: int = 5
    digits: int = 1
    examples: tuple[Example, ...] = ()
    omit_zero: bool = True

    def __post_init__(self) -> None:
        if not 1 <= len(self.persona) <= 400:
            raise ValueError("persona must be 1..400 characters")
        if not 1 <= self.max_facts <= 64:
            raise ValueError(f"max_facts must be in 1..64, got {self.max_facts}")
        if not 0 <= self.max_memories <= 16:
            raise ValueError(f"max_memories must be in 0..16, got {self.max_memories}")
        if not 0 <= self.digits <= 6:
            raise ValueError(f"digits must be in 0..6, got {self.digits}")
        examples = tuple(Example(*example) for example in self.examples)
        object.__setattr__(self, "examples", examples)
        if len(examples) > MAX_EXAMPLES:
            raise ValueError(f"examples: at most {MAX_EXAMPLES}, got {len(examples)}")
        for example in examples:
            if not 0.0 <= example.urgency <= 1.0:
                raise ValueError(f"examples: urgency must be in 0..1, got {example.urgency}")


def examples_from(entries: Sequence[Any], intents: tuple[str, ...]) -> tuple[Example, ...]:
    """An AsyncLLMDecision's `examples` (an Array of `{"situation": String, "intent": one of the
    allowed intents, "urgency": 0..1, default 0.5}`) as few-shot `Example`s; a ValueError names the
    first bad entry."""
    found = []
    entries = list(entries)
    if len(entries) > MAX_EXAMPLES:
        raise ValueError(f"examples: at most {MAX_EXAMPLES}, got {len(entries)}")
    for index, entry in enumerate(entries):
        where = f"examples[{index}]"
        if not isinstance(entry, dict):
            raise ValueError(
                f'{where}: a Dictionary {{"situation": ..., "intent": ...}}, got {type(entry).__name__}'
            )
        unknown = sorted(str(key) for key in entry if str(key) not in ("situation", "intent", "urgency"))
        if unknown:
            raise ValueError(f"{where}: unknown key {unknown[0]!r} (situation, intent, urgency)")
        situation, intent = str(entry.get("situation", "")).strip(), str(entry.get("intent", ""))
        if not situation:
            raise ValueError(f"{where}: needs a non-empty situation")
        if intent not in intents:
            raise ValueError(f"{where}: intent {intent!r} is not one of the allowed intents {list(intents)}")
        urgency = entry.get("urgency", 0.5)
        if isinstance(urgency, bool) or not isinstance(urgency, (int, float)) or not 0.0 <= urgency <= 1.0:
            raise ValueError(f"{where}: urgency must be a number in 0..1, got {urgency!r}")
        found.append(Example(situation, intent, float(urgency)))
    return tuple(found)


def answer_json(intent: str, urgency: float) -> str:
    """An answer exactly as the grammar spells it."""
    return f"{ANSWER_PREFIX}{intent}{URGENCY_SUFFIX}{min(1.0, max(0.0, urgency)):.1f}}}"


def stable_messages(schema: DecisionSchema, config: PromptConfig | None = None) -> list[dict[str, str]]:
    """The prefix every request of a hub starts with: the same bytes for every NPC and request."""
    config = config or PromptConfig()
    for example in config.examples:
        if example.intent not in schema.intents:
            raise ValueError(f"examples: {example.intent!r} is not one of the allowed intents")
    system = (
        f"You are the tactical mind of {config.persona}. Read the situation and choose what to do next.\n"
        f"Intents: {', '.join(schema.intents)}.\n"
        f"Answer with JSON only: {ANSWER_PREFIX}<intent>{URGENCY_SUFFIX}<0.0 to 1.0>}}"
    )
    messages = [{"role": "system", "content": system}]
    for example in config.examples:
        messages.append({"role": "user", "content": example.situation})
        messages.append({"role": "assistant", "content": answer_json(example.intent, example.urgency)})
    return messages


def _value(value: Any, digits: int, nested: bool = False) -> str | None:
    """A blackboard value in words, or None when it tells a model nothing (ids, long numbers, objects).
    A small mapping of plain values (a vector, a colour by its fields) reads `x 3.5 y -1`, a short
    sequence `a, b`; an engine object (a mapping with an `id`) by its node name, never its id."""
    if isinstance(value, Mapping) and "id" in value:
        return _value(value.get("name"), digits, True)
    if isinstance(value, Mapping) and not nested:
        if len(value) > MAX_PARTS:
            return None
        parts = [(str(k), _value(v, digits, True)) for k, v in value.items()]
        if not parts or any(shown is None for _, shown in parts):
            return None
        return " ".join(f"{k} {shown}" for k, shown in parts)
    if isinstance(value, list | tuple) and not nested:
        shown = [_value(item, digits, True) for item in value[:MAX_PARTS]]
        return ", ".join(shown) if shown and None not in shown else None  # type: ignore[arg-type]  # None was ruled out just before
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value) if abs(value) < LONG_NUMBER else None
    if isinstance(value, float):
        if not math.isfinite(value) or abs(value) >= LONG_NUMBER:
            return None
        text = f"{value:.{digits}f}"
        # A whole number as an integer: "1.0" is three tokens, "1" one.
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(value, str):
        text = " ".join(value.split())  # one line
        return text[:MAX_TEXT] if text else None
    return None


def _strength(retrievability: float) -> str:
    if retrievability >= 0.66:
        return "vivid"
    return "faint" if retrievability >= 0.33 else "fading"


def situation_text(
    snapshot: Mapping[str, Any], memories: Sequence[Any] = (), config: PromptConfig | None = None
) -> str:
    """The varying message: the situation sentence, then the facts and memories, coarse."""
    config = config or PromptConfig()
    lines = []
    situation = snapshot.get(SITUATION_KEY)
    if isinstance(situation, str) and _value(situation, 0):
        lines.append(f"Situation: {_value(situation, 0)}.")
    facts = []
    for key in sorted(str(k) for k in snapshot):
        if key.startswith("_") or key == SITUATION_KEY:
            continue  # internal keys are for the machinery, never for the model
        value = snapshot[key]
        if config.omit_zero and not isinstance(value, bool) and isinstance(value, int | float) and value == 0:
            continue
        shown = _value(value, config.digits)
        if shown is not None:
            facts.append(f"{key.replace('_', ' ')}: {shown}")
    if facts:
        lines.append("Facts: " + ", ".join(facts[: config.max_facts]) + ".")
    recalled: dict[str, int] = {}  # in the pool's order, equal ones counted
    for view in list(memories)[: config.max_memories]:
        kind = getattr(view, "memory_type", "memory")
        kind = getattr(kind, "name", str(kind)).lower()
        shown = f"{kind} ({_strength(float(getattr(view, 'retrievability', 0.0)))})"
        recalled[shown] = recalled.get(shown, 0) + 1
    if recalled:
        counted = [text if count == 1 else f"{text} x{count}" for text, count in recalled.items()]
        lines.append("You remember: " + ", ".join(counted) + ".")
    return "\n".join(lines) or "Nothing is happening."


def build_messages(
    schema: DecisionSchema,
    snapshot: Mapping[str, Any],
    memories: Sequence[Any] = (),
    config: PromptConfig | None = None,
) -> list[dict[str, str]]:
    """The chat messages of one request: the hub's stable prefix, then the situation."""
    config = config or PromptConfig()
    situation = situation_text(snapshot, memories, config)
    return [*stable_messages(schema, config), {"role": "user", "content": situation}]
