"""A deterministic in-process transport and a fake clock, to drive `AsyncDecision` without threads,
sockets or sleeping (so hypothesis can shrink failures). The test decides when and how each request
ends, including answers that arrive after an abort or a timeout (the race a real transport has)."""

from __future__ import annotations

from collections.abc import Callable

from npc_mind.llm.schema import Answer
from npc_mind.llm.transport import Outcome, Request


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        self.now += seconds
        return self.now


class ScriptedTicket:
    def __init__(self, transport: ScriptedTransport, key: tuple[int, int]) -> None:
        self.transport = transport
        self.key = key

    def cancel(self) -> None:
        self.transport.cancelled.add(self.key)


class ScriptedTransport:
    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.requests: dict[tuple[int, int], tuple[Request, Callable[[Outcome], None]]] = {}
        self.cancelled: set[tuple[int, int]] = set()
        self.answered: set[tuple[int, int]] = set()

    def submit(self, request: Request, on_done: Callable[[Outcome], None]) -> ScriptedTicket:
        key = (request.npc, request.epoch)
        assert key not in self.requests, "an epoch was reused"
        self.requests[key] = (request, on_done)
        return ScriptedTicket(self, key)

    def open_keys(self) -> list[tuple[int, int]]:
        """Requests that have not been answered yet (cancelled ones included: their answer may be late)."""
        return sorted(key for key in self.requests if key not in self.answered)

    def finish(self, key: tuple[int, int], answer: Answer | None, reason: str = "") -> None:
        self.answered.add(key)
        _, on_done = self.requests[key]
        on_done(Outcome(key[0], key[1], answer, reason, self.clock()))
