"""The double-buffered blackboard: the main thread owns the active board and writes it every tick;
a request works on a frozen snapshot; its result waits in an epoch-stamped commit slot until the main
thread merges it at the start of a tick, only if its epoch is still current."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from npc_mind.llm.transport import Outcome


def freeze(board: Mapping[str, Any]) -> Mapping[str, Any]:
    """A cheap, read-only copy of the active board (one dict copy)."""
    return MappingProxyType(dict(board))


class CommitSlot:
    """Written by the loop thread (`put`, an atomic deque append), drained on the main thread."""

    __slots__ = ("_outcomes",)

    def __init__(self) -> None:
        self._outcomes: deque[Outcome] = deque()

    def put(self, outcome: Outcome) -> None:
        self._outcomes.append(outcome)

    def __bool__(self) -> bool:
        return bool(self._outcomes)

    def drain(self) -> Iterator[Outcome]:
        outcomes = self._outcomes
        while outcomes:
            yield outcomes.popleft()
