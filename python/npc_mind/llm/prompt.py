"""A short chat prompt from a frozen blackboard snapshot and the NPC's top recalled memories.

Kept short on purpose: prompt tokens are most of a small model's latency. Memories are duck-typed
views (`entity`, `memory_type`, `retrievability`, `salience`), as the memory pool's `top_k` returns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from npc_mind.llm.schema import DecisionSchema


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


@dataclasses.dataclass(frozen=True)
class PromptConfig:
    """persona: who the NPC is (<= 400 chars); max_facts: 1..64 blackboard entries;
    max_memories: 0..16 memories; digits: 0..6 decimals for numbers."""

    persona: str = "a guard in a game world"
    max_facts: int = 16
    max_memories: int = 5
    digits: int = 2

    def __post_init__(self) -> None:
        if not 1 <= len(self.persona) <= 400:
            raise ValueError("persona must be 1..400 characters")
        if not 1 <= self.max_facts <= 64:
            raise ValueError(f"max_facts must be in 1..64, got {self.max_facts}")
        if not 0 <= self.max_memories <= 16:
            raise ValueError(f"max_memories must be in 0..16, got {self.max_memories}")
        if not 0 <= self.digits <= 6:
            raise ValueError(f"digits must be in 0..6, got {self.digits}")


def _number(value: Any, digits: int) -> str:
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)[:40]


def _memory_line(view: Any, digits: int) -> str:
    kind = getattr(view, "memory_type", "memory")
    kind = getattr(kind, "name", str(kind)).lower()
    strength = _number(float(getattr(view, "retrievability", 0.0)), digits)
    salience = _number(float(getattr(view, "salience", 0.0)), digits)
    return f"- {kind} about entity {getattr(view, 'entity', '?')}: recall {strength}, salience {salience}"


def build_messages(
    schema: DecisionSchema,
    snapshot: Mapping[str, Any],
    memories: Sequence[Any] = (),
    config: PromptConfig | None = None,
) -> list[dict[str, str]]:
    config = config or PromptConfig()
    example = f'{{"intent": "{schema.intents[0]}", "urgency": 0.5}}'
    system = (
        f"You are the tactical mind of {config.persona}. Choose what to do next. "
        f"Reply with one JSON object: intent (one of {', '.join(schema.intents)}), "
        f"urgency (a number from 0.0 to 1.0) and optionally target_id (an entity id). "
        f"Example: {example}"
    )
    facts = [f"- {key}: {_number(value, config.digits)}" for key, value in sorted(snapshot.items())]
    lines = ["Situation:", *facts[: config.max_facts]]
    recalled = [_memory_line(view, config.digits) for view in list(memories)[: config.max_memories]]
    if recalled:
        lines += ["You remember:", *recalled]
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]
