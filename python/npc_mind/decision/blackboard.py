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


class CommitSlot(deque[Outcome]):
    """The epoch-stamped commit slot: the loop thread `put`s (an atomic deque append, no lock), the main
    thread drains it at the start of a tick and keeps only outcomes whose epoch is still current."""

    __slots__ = ()

    put = deque.append

    def drain(self) -> Iterator[Outcome]:
        while self:
            yield self.popleft()
