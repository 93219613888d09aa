"""Inputs without code: a UtilityConsideration's input read from memory, the world or a blackboard."""

from __future__ import annotations

from typing import Any


def sources_of(selector: Any) -> list[Any]:
    return []


def auto_evaluates(selector: Any) -> bool:
    return False


def feed(members: list[tuple[int, Any]], now: float) -> None:
    return
