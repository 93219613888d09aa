"""The bridge between the game's main thread and the one asyncio loop thread that runs the client.

The main thread calls `submit` (never blocks: a full queue or all-open breakers are refused at once)
and `Ticket.cancel`; the loop thread runs the request and hands the `Outcome` to a callback that
only appends to a deque (the epoch-stamped commit slot), merged by the main thread at its next tick.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence

from npc_mind.llm.breaker import BreakerConfig
from npc_mind.llm.client import LLMClient, LLMSettings
from npc_mind.llm.endpoints import Endpoint
from npc_mind.llm.errors import LLMError, RejectedError
from npc_mind.llm.schema import Answer, DecisionSchema


@dataclasses.dataclass(frozen=True, slots=True)
class Request:
    """One decision request: built on the main thread from a frozen snapshot, then immutable."""

    npc: int
    epoch: int
    messages: tuple[dict[str, str], ...]
    schema: DecisionSchema
    started_at: float
    deadline: float  # seconds after start at which the worker gives up by itself


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """What came back for (npc, epoch): an answer, or the reason it failed; stamped with the clock."""

    npc: int
    epoch: int
    answer: Answer | None
    reason: str
    finished_at: float


class Ticket:
    """The main thread's handle on a submitted request."""

    __slots__ = ("_transport", "cancelled", "task")

    def __init__(self, transport: LLMTransport) -> None:
        self._transport = transport
        self.cancelled = False
        self.task: asyncio.Task[None] | None = None  # set on the loop thread

    def cancel(self) -> None:
        """Thread-safe; the loop cancels the task at once, which closes its connection."""
        if not self.cancelled:
            self.cancelled = True
            self._transport._cancels.append(self)
            self._transport._wake()


@dataclasses.dataclass(frozen=True)
class TransportConfig:
    """max_queue: 0..100000 requests waiting for an endpoint beyond the endpoints' in-flight caps;
    grace: 0..60 s the worker keeps a request past its deadline before giving up by itself."""

    max_queue: int = 64
    grace: float = 0.5

    def __post_init__(self) -> None:
        if not 0 <= self.max_queue <= 100_000:
            raise ValueError(f"max_queue must be in 0..100000, got {self.max_queue}")
        if not 0.0 <= self.grace <= 60.0:
            raise ValueError(f"grace must be in 0..60 s, got {self.grace}")


class LLMTransport:
    """Owns the asyncio loop thread and the `LLMClient`; use as a context manager or call `close()`."""

    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        settings: LLMSettings | None = None,
        breaker: BreakerConfig | None = None,
        config: TransportConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config or TransportConfig()
        self._clock = clock
        self.client = LLMClient(endpoints, settings, breaker, clock)
        self._lock = threading.Lock()
        self._outstanding = 0
        self.rejected = {"queue_full": 0, "breaker_open": 0}
        # Hand-over to the loop thread: deque appends (atomic) and at most one pending wake-up, so a
        # frame that dispatches many requests wakes the loop (and asks for the GIL) once, not per request.
        self._inbox: deque[tuple[Ticket, Request, Callable[[Outcome], None]]] = deque()
        self._cancels: deque[Ticket] = deque()
        self._wake_pending = False
        self._deferring = False
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run_loop, name="npc_mind-llm", daemon=True)
        self._thread.start()
        self._ready.wait()
        concurrent.futures.wait([asyncio.run_coroutine_threadsafe(self.client.__aenter__(), self._loop)])

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._ready.set)
        self._loop.run_forever()

    @property
    def capacity(self) -> int:
        return self.client.pool.capacity + self.config.max_queue

    @property
    def outstanding(self) -> int:
        return self._outstanding

    @property
    def queue_depth(self) -> int:
        """Requests submitted but not yet holding an endpoint slot."""
        in_flight = sum(int(s["in_flight"]) for s in self.client.pool.states())  # type: ignore[call-overload]
        return max(0, self._outstanding - in_flight)

    def submit(self, request: Request, on_done: Callable[[Outcome], None]) -> Ticket:
        """Start a request; raises `RejectedError` at once when the queue is full or every breaker is open."""
        if not self.client.pool.any_available():
            self.rejected["breaker_open"] += 1
            raise RejectedError("every endpoint's circuit breaker is open", "breaker_open")
        with self._lock:
            if self._outstanding >= self.capacity:
                self.rejected["queue_full"] += 1
                raise RejectedError(f"{self._outstanding} requests outstanding", "queue_full")
            self._outstanding += 1
        ticket = Ticket(self)
        self._inbox.append((ticket, request, on_done))
        if not self._deferring:
            self._wake()
        return ticket

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Within the block, submissions wait and leave in one wake-up at its end (`DecisionHub.tick_all`
        wraps each frame in it). Cancels always leave at once."""
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
            if self._inbox:
                self._wake()

    def _wake(self) -> None:
        if not self._wake_pending:
            self._wake_pending = True
            self._loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        """On the loop thread: start what was submitted, then cancel what was cancelled."""
        # Cleared first: anything appended after this line schedules another drain.
        self._wake_pending = False
        inbox = self._inbox
        while inbox:
            ticket, request, on_done = inbox.popleft()
            if ticket.cancelled:
                self._release(None)
                continue
            task = self._loop.create_task(self._run(request, on_done))
            # A done callback, not a `finally`: a task cancelled before its first step skips its body.
            task.add_done_callback(self._release)
            ticket.task = task
        cancels = self._cancels
        while cancels:
            task = cancels.popleft().task
            if task is not None:
                task.cancel()

    def _release(self, _task: object) -> None:
        with self._lock:
            self._outstanding -= 1

    async def _run(self, request: Request, on_done: Callable[[Outcome], None]) -> None:
        try:
            async with asyncio.timeout(request.deadline + self.config.grace):
                answer = await self.client.decide(request.messages, request.schema)
            outcome = Outcome(request.npc, request.epoch, answer, "", self._clock())
        except LLMError as error:
            outcome = Outcome(request.npc, request.epoch, None, error.reason, self._clock())
        except TimeoutError:
            outcome = Outcome(request.npc, request.epoch, None, "timeout", self._clock())
        on_done(outcome)

    def close(self) -> None:
        if not self._thread.is_alive():
            return
        closing = asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
        concurrent.futures.wait([closing], timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _shutdown(self) -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.client.__aexit__(None, None, None)

    def __enter__(self) -> LLMTransport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
