"""The local chooser protocol, and the deterministic fallback rules (the last tier, and the default
chooser when no utility selector is given)."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from typing import Protocol


class Chooser(Protocol):
    """Anything that picks a behavior from a context: `npc_mind.utility`'s selector, or `RuleChooser`."""

    def choose(
        self, context: Mapping[str, float], now: float, allowed_tags: Collection[str] | None = None
    ) -> str: ...


@dataclasses.dataclass(frozen=True)
class Rule:
    """Do `behavior` when `context[key]` >= `at_least` (or, with `below`, when it is < `at_least`)."""

    behavior: str
    key: str
    at_least: float
    below: bool = False
    tags: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not self.behavior or not self.key:
            raise ValueError("a rule needs a behavior and a key")
        if isinstance(self.tags, str):  # frozenset("flee") would be its letters
            raise ValueError(f"rule {self.behavior!r}: tags must be a collection of strings, not one string")
        tags = frozenset(self.tags)
        if not all(isinstance(tag, str) and tag for tag in tags):
            raise ValueError(
                f"rule {self.behavior!r}: tags must be non-empty strings, got {sorted(map(repr, tags))}"
            )
        object.__setattr__(self, "tags", tags)

    def matches(self, context: Mapping[str, float]) -> bool:
        value = context.get(self.key)
        if value is None:
            return False
        return value < self.at_least if self.below else value >= self.at_least


class RuleChooser:
    """Ordered rules, the first that matches wins; `default` when none does. With `allowed_tags`, rules
    carrying one of those tags are tried first, so a recent intent still shapes the choice."""

    def __init__(self, rules: Sequence[Rule], default: str) -> None:
        if not default:
            raise ValueError("default behavior must be named")
        self.rules = tuple(rules)
        self.default = default

    def choose(
        self, context: Mapping[str, float], now: float, allowed_tags: Collection[str] | None = None
    ) -> str:
        if allowed_tags:
            for rule in self.rules:
                if rule.tags and not rule.tags.isdisjoint(allowed_tags) and rule.matches(context):
                    return rule.behavior
        for rule in self.rules:
            if rule.matches(context):
                return rule.behavior
        return self.default
