"""The bridge between the game's main thread and the one asyncio loop thread that runs the client.

The main thread calls `submit` (never blocks: a full queue or all-open breakers are refused at once)
and `Ticket.cancel`; the loop thread builds the prompt from the request's frozen snapshot, runs the
request and hands the `Outcome` to a callback that only appends to a deque (the epoch-stamped commit
slot), merged by the main thread at its next tick.

Admission control: the endpoints get at most their slots' worth of requests at once (llama-server's
`total_slots`, else `Endpoint.max_in_flight`); the rest wait in one queue ordered by `Request.priority`,
then `Request.urgency` (higher first), then arrival. From the endpoints' measured service time the
transport knows how many answers a second they deliver, so it only takes (`submit`) or keeps queued a
request that can be answered within its deadline: one that cannot is refused at once (`queue_full`)
or, once queued, ended at once as `shed` (a more urgent request took its place, or the endpoints got
slower) - never left to wait out its deadline. Before the first answer is measured, `max_queue` bounds
the queue alone. A request admitted when it is asked (`refusal(promise=True)`: the server's `request`)
counts as outstanding until the step that submits it (`release_promises`), so a crowd asking in one
frame is admitted only as far as the endpoints can answer, best first, and the rest refused as they ask.

Main-thread cost is kept to a few small steps per request: `refusal()` is a check without an exception,
a request is one tuple (the prompt text and request JSON are made on the loop thread), the hand-over is
one deque append, and within `hold()`/`flush()` (one `DecisionHub.tick_all`) every submit and cancel of
the frame reaches the loop thread in one wake-up at the end.
"""

from __future__ import annotations

import asyncio
import bisect
import concurrent.futures
import contextlib
import ctypes
import dataclasses
import functools
import socket
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from npc_mind.llm.breaker import BreakerConfig, BreakerState
from npc_mind.llm.client import LLMClient, LLMSettings, cancel_at, cancel_once
from npc_mind.llm.endpoints import Endpoint, _Slot
from npc_mind.llm.errors import LLMError, RejectedError
from npc_mind.llm.prompt import PromptConfig, build_messages
from npc_mind.llm.schema import Answer, DecisionSchema

_OPEN = BreakerState.OPEN
_INF = float("inf")


def _gil_keeping_write() -> Callable[[int, bytes, int], int] | None:
    """libc `write` called without releasing the GIL (a `PyDLL` call), or None where unavailable.

    Waking the loop thread with a Python-level write releases the GIL around the system call; the
    woken loop thread then often takes the GIL first and the game's main thread waits until the loop
    thread's next pause (up to the 5 ms switch interval). A one-byte write to a non-blocking socket
    never blocks, so keeping the GIL through it is safe, and the loop thread runs once the main thread
    lets go of the GIL on its own."""
    try:
        write = ctypes.PyDLL(None).write
    except (OSError, AttributeError, TypeError):
        return None
    write.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t)
    write.restype = ctypes.c_ssize_t
    return write


_WRITE = _gil_keeping_write()


def _queue_key(ticket: Ticket) -> tuple[float, float, int]:
    return ticket.key


def _trace() -> str:
    """The exception being handled, as text made on this thread (logged later on the main thread)."""
    return traceback.format_exc(limit=8)


class Request(NamedTuple):
    """One decision request, immutable. Either `messages` is given ready-made, or (empty) the prompt is
    built by `chat()` from `board` (a frozen snapshot), `memories` (read-only views or `MemoryFact`s)
    and `prompt`: `LLMTransport` calls it on its loop thread, so the main thread never formats text."""

    npc: int
    epoch: int
    messages: tuple[dict[str, str], ...]
    schema: DecisionSchema
    started_at: float
    deadline: float  # seconds after start at which the worker gives up by itself
    board: Mapping[str, Any] | None = None
    memories: tuple[Any, ...] = ()
    prompt: PromptConfig | None = None
    priority: int = 0  # higher goes first when the endpoints are saturated (AsyncLLMDecision.priority)
    urgency: float = 0.0  # within a priority, higher first (the NPC's last answered urgency)

    def chat(self) -> Sequence[dict[str, str]]:
        """The chat messages to send."""
        if self.messages:
            return self.messages
        return build_messages(self.schema, self.board or {}, self.memories, self.prompt)


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """What came back for (npc, epoch): an answer, or the reason it failed; stamped with the clock.
    detail: for a failure that is a bug rather than the endpoint's doing (`prompt_error`,
    `internal_error`), the traceback, which the main thread logs when it merges the outcome."""

    npc: int
    epoch: int
    answer: Answer | None
    reason: str
    finished_at: float
    detail: str = ""


class Ticket:
    """The main thread's handle on a submitted request (it also carries the request to the loop thread)."""

    __slots__ = ("_transport", "cancelled", "key", "on_done", "request", "task")

    def __init__(
        self,
        transport: LLMTransport,
        request: Request | None = None,
        on_done: Callable[[Outcome], None] | None = None,
    ) -> None:
        self._transport = transport
        self.request = request
        self.on_done = on_done
        self.cancelled = False
        self.task: asyncio.Task[None] | None = None  # set on the loop thread
        self.key: tuple[float, float, int] = (0.0, 0.0, 0)  # its place in the queue (lower first)

    def cancel(self) -> None:
        """Thread-safe; the loop cancels the task at once (at the end of the frame inside `hold()`),
        which closes its connection."""
        if not self.cancelled:
            self.cancelled = True
            transport = self._transport
            transport._cancels.append(self)
            if not transport._holding:
                transport._wake()


@dataclasses.dataclass(frozen=True)
class TransportConfig:
    """max_queue: 0..100000 requests waiting for an endpoint beyond the endpoints' slots (the most ever
    queued; once service times are measured, fewer: only what can be answered within its deadline);
    grace: 0..60 s the worker keeps a request past its deadline before giving up by itself;
    margin: 0.1..1, the share of a request's deadline admission plans to fill (the rest absorbs
    service times longer than the average)."""

    max_queue: int = 64
    grace: float = 0.5
    margin: float = 0.8

    def __post_init__(self) -> None:
        if not 0.1 <= self.margin <= 1.0:
            raise ValueError(f"margin must be in 0.1..1, got {self.margin}")
        if not 0 <= self.max_queue <= 100_000:
            raise ValueError(f"max_queue must be in 0..100000, got {self.max_queue}")
        if not 0.0 <= self.grace <= 60.0:
            raise ValueError(f"grace must be in 0..60 s, got {self.grace}")


class LLMTransport:
    """Owns the asyncio loop thread and the `LLMClient`; use as a context manager or call `close()`.

    `submit`, `refusal`, `hold`/`flush` and `Ticket.cancel` are called from one thread, the game's
    main thread."""

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
        self._capacity = self.client.pool.capacity + self.config.max_queue  # the most ever outstanding
        self._breakers = [slot.breaker for slot in self.client.pool._slots]
        # Outstanding = submitted - finished, each counter with one writer (main thread, loop thread).
        self._submitted = 0
        self._finished = 0
        # Requests admitted when asked (`refusal(promise=True)`) that go out at the next step: counted as
        # outstanding until then, so that a crowd asking in one frame is not admitted whole while a slot
        # is free (each then copied its context, ticked and was refused at dispatch). Main thread only.
        self._promised = 0
        self._promised_worst: tuple[float, float] | None = None  # the lowest rank promised this frame
        self.rejected = {"queue_full": 0, "breaker_open": 0, "shed": 0}
        # Admission (loop thread writes, main thread reads: plain floats, a snapshot is enough): the
        # endpoints' slots, answers per second and mean service time when saturated (0: unmeasured),
        # and the queue's last place, which a more urgent request may take (None: queue empty).
        self._slots = self.client.pool.slots
        self._rate = 0.0
        self._service = 0.0
        self._measured = False  # any endpoint answered (else `max_queue` alone bounds the queue)
        # The deadline (seconds) of the requests asked lately (main thread writes): endpoints slower
        # than that do not count in `_rate` (`EndpointPool._pick` sends them only probes).
        self._horizon = _INF
        # (deadline, `_queue_room(deadline)`) for the deadline asked lately, made once per pump by the
        # loop thread (one tuple: read whole), so that a crowd's refusals do not each recompute it.
        self._room: tuple[float, int] = (-1.0, 0)
        self._asked_deadline = -1.0  # the deadline of the request submitted last (main thread writes)
        self._last: tuple[float, float, int] | None = None
        self._queue: list[Ticket] = []  # loop thread only: waiting for a slot, best first
        self._arrivals = 0  # main thread: the arrival number in queue keys
        self._timer: asyncio.TimerHandle | None = None
        # Hand-over to the loop thread: deque appends (atomic) and at most one pending wake-up, so a
        # frame that dispatches many requests wakes the loop (and asks for the GIL) once, not per request.
        self._inbox: deque[Ticket] = deque()
        self._cancels: deque[Ticket] = deque()
        self._wake_pending = False
        self._holding = 0
        self._closing = False
        # The wake-up line: one byte on a socket pair the loop thread watches.
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._wake_fd = self._wake_w.fileno()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run_loop, name="npc_mind-llm", daemon=True)
        self._thread.start()
        self._ready.wait()
        concurrent.futures.wait([asyncio.run_coroutine_threadsafe(self.client.__aenter__(), self._loop)])

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.add_reader(self._wake_r.fileno(), self._woken)
        self._loop.call_soon(self._ready.set)
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()
            self._wake_r.close()
            self._wake_w.close()

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def outstanding(self) -> int:
        return self._submitted - self._finished

    @property
    def queue_depth(self) -> int:
        """Requests submitted but not yet holding an endpoint slot."""
        in_flight = sum(int(s["in_flight"]) for s in self.client.pool.states())  # type: ignore[call-overload]  # states() values are objects; in_flight is an int
        return max(0, self.outstanding - in_flight)

    def refusal(
        self, priority: int = 0, urgency: float = 0.0, deadline: float = float("inf"), promise: bool = False
    ) -> str | None:
        """Why `submit` would refuse a request of this priority, urgency and deadline (seconds) now
        (`breaker_open` or `queue_full`, counted as refused), or None. Cheap, raises nothing: a
        dispatcher asks first and skips building a refused request. Only the loop thread changes the
        answer meanwhile, and only towards accepting (a slot frees) or `breaker_open`, which `submit`
        still checks. promise: the request is admitted now and submitted at the next step (see
        `release_promises`): until then it counts as outstanding for the next ones asked.

        `queue_full`: as many requests are outstanding as the endpoints can answer within `deadline`
        (their slots, plus the queue their measured rate clears in the deadline's `margin` share less
        one service time; at most `max_queue`), and this one would not rank above the last queued one."""
        for breaker in self._breakers:
            if breaker._state is not _OPEN or breaker.state is not _OPEN:  # no clock read when closed
                break
        else:
            self.rejected["breaker_open"] += 1
            return "breaker_open"
        outstanding = self._submitted - self._finished + self._promised
        rank = (-priority, -urgency)
        if outstanding < self._slots or (
            outstanding < self._capacity
            and (
                (room[1] if (room := self._room)[0] == deadline else self._queue_room(deadline))
                > outstanding - self._slots
                # a full queue: a request that outranks its last one, or one promised this frame (not
                # sent yet: the queue orders them when they go out), takes its place
                or (self._last is not None and rank < self._last[:2])
                or (self._promised_worst is not None and rank < self._promised_worst)
            )
        ):
            if promise:
                self._promised += 1
                worst = self._promised_worst
                self._promised_worst = rank if worst is None or rank > worst else worst
            return None
        self.rejected["queue_full"] += 1
        return "queue_full"

    def release_promises(self) -> None:
        """The step that submits the promised requests (`refusal(promise=True)`) begins: from here on
        each counts as what it becomes (submitted, or asked again at dispatch)."""
        self._promised = 0
        self._promised_worst = None

    def _queue_room(self, deadline: float) -> int:
        """How many requests may wait for a slot and still be answered within `deadline` seconds."""
        if not self._measured:
            return self.config.max_queue
        plan = deadline * self.config.margin - self._service
        return max(0, min(self.config.max_queue, int(plan * self._rate)))

    def submit(self, request: Request, on_done: Callable[[Outcome], None]) -> Ticket:
        """Start a request; raises `RejectedError` at once when the queue is full or every breaker is open."""
        reason = self.refusal(request.priority, request.urgency, request.deadline)
        if reason is not None:
            if reason == "queue_full":
                raise RejectedError(f"{self.outstanding} requests outstanding", reason)
            raise RejectedError("every endpoint's circuit breaker is open", reason)
        self._submitted += 1
        self._asked_deadline = request.deadline
        self._horizon = request.deadline
        ticket = Ticket(self, request, on_done)
        self._arrivals += 1
        key = ticket.key = (-request.priority, -request.urgency, self._arrivals)
        # The loop thread's snapshot of the last unsent request, kept current for this frame's later
        # requests: none of the frame's has been sent yet, so a better one may displace any of them.
        last = self._last
        if last is None or key > last:
            self._last = key
        self._inbox.append(ticket)
        if not self._holding:
            self._wake()
        return ticket

    def prepare(
        self, schema: DecisionSchema, prefix: Sequence[dict[str, str]]
    ) -> concurrent.futures.Future[dict[str, Any]]:
        """Detect each endpoint's request shape and warm its cache with `prefix` on the loop thread,
        before the first request; returns at once (the future gives `LLMClient.prepare`'s report, `{}`
        when the transport closed first). The coroutine is made on the loop thread, so one that a
        closing loop never runs is never made."""
        report: concurrent.futures.Future[dict[str, Any]] = concurrent.futures.Future()

        def finish(task: asyncio.Task[dict[str, Any]]) -> None:
            if task.cancelled():
                report.set_result({})
            elif (error := task.exception()) is not None:
                report.set_exception(error)
            else:
                report.set_result(task.result())

        def start() -> None:
            if self._closing:
                report.set_result({})
                return
            self._loop.create_task(self.client.prepare(schema, prefix)).add_done_callback(finish)

        try:
            self._loop.call_soon_threadsafe(start)
        except RuntimeError:  # the loop is closed already
            report.set_result({})
        return report

    def hold(self) -> None:
        """Until the matching `flush()`, submissions and cancels wait and leave in one wake-up
        (`DecisionHub.tick_all` holds for the whole frame). Nests."""
        self._holding += 1

    def flush(self) -> None:
        self._holding -= 1
        if not self._holding and (self._inbox or self._cancels):
            self._wake()

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """`hold()` ... `flush()` as a context manager."""
        self.hold()
        try:
            yield
        finally:
            self.flush()

    def _wake(self) -> None:
        if not self._wake_pending and self._wake_fd >= 0:  # -1: closed (never write to a reused fd)
            self._wake_pending = True
            if _WRITE is None or _WRITE(self._wake_fd, b"\0", 1) != 1:
                with contextlib.suppress(BlockingIOError):  # a full line is awake already
                    self._wake_w.send(b"\0")

    def _woken(self) -> None:
        with contextlib.suppress(BlockingIOError, InterruptedError):
            while self._wake_r.recv(4096):
                pass
        self._drain()

    def _drain(self) -> None:
        """On the loop thread: queue what was submitted, drop what was cancelled, then send what fits."""
        # Cleared first: anything appended after this line schedules another drain.
        self._wake_pending = False
        inbox = self._inbox
        queue = self._queue
        while inbox:
            ticket = inbox.popleft()
            if ticket.cancelled:
                ticket.request = ticket.on_done = None
                self._release(None)
                continue
            bisect.insort(queue, ticket, key=_queue_key)
        cancels = self._cancels
        while cancels:
            ticket = cancels.popleft()
            task = ticket.task
            if task is not None:
                cancel_once(task)  # not over the deadline's own cancel: it is closing the connection
            elif ticket.request is not None and ticket in queue:  # still waiting: it just leaves
                queue.remove(ticket)
                ticket.request = ticket.on_done = None
                self._release(None)
        self._pump()

    def _pump(self) -> None:
        """On the loop thread: send the best queued requests while an endpoint has a free slot, then
        end at once (`shed`) every queued request the endpoints' measured rate can no longer answer by
        its due time (`margin` of its deadline), and publish what admission reads."""
        if self._closing:  # a timer that fires while the transport closes: nothing more goes out
            return
        pool = self.client.pool
        queue = self._queue
        now = self._clock()
        while queue:
            head: Request = queue[0].request  # type: ignore[assignment]  # a queued ticket always holds its request
            due = self._due(head)
            # Sent while its due time (`margin`) allows, to an endpoint whose pace answers it before its
            # deadline; one too slow for that is sent it only as a probe (`EndpointPool._pick`): the
            # answer refreshes an estimate that may be stale (a slow spell over, a cold first answer).
            slot = pool.try_acquire(head.started_at + head.deadline - now) if now <= due else None
            if slot is None and now <= due:
                break
            ticket = queue.pop(0)
            request, on_done = ticket.request, ticket.on_done
            ticket.request = ticket.on_done = None
            if slot is None:  # due already: it cannot be answered in time, not sent
                self._shed(request, on_done)  # type: ignore[arg-type]  # a queued ticket always holds its request and callback
                continue
            held = [slot]  # the task's body takes it; a task cancelled before its first step never runs
            task = self._loop.create_task(self._run(request, on_done, held))  # type: ignore[arg-type]  # a queued ticket always holds its request and callback
            # A done callback, not a `finally`: a task cancelled before its first step skips its body.
            task.add_done_callback(functools.partial(self._released, held))
            ticket.task = task
        # The endpoints fast enough for the requests asked lately; unmeasured: all, at their caps. With
        # none fast enough, one request at a time goes out (a probe) and the rest end at once.
        measured = pool.rate(self._horizon)
        rate, service, slots = measured if measured else (0.0, 0.0, pool.slots)
        if queue:
            kept: list[Ticket] = []
            unmeasured = measured is None
            for ticket in queue:
                request = ticket.request
                # Answered when the requests ahead of it (and it) have had a slot, then one service time;
                # unmeasured, it is known to be too late once its due time has passed.
                wait = (len(kept) + 1) / rate + service if rate else 0.0 if unmeasured else _INF
                if now + wait > self._due(request):  # type: ignore[arg-type]  # a queued ticket always holds its request
                    on_done = ticket.on_done
                    ticket.request = ticket.on_done = None
                    self._shed(request, on_done)  # type: ignore[arg-type]  # a queued ticket always holds its request and callback
                else:
                    kept.append(ticket)
            queue[:] = kept
        self._slots, self._rate, self._service = max(slots, 1), rate, service
        self._measured = measured is not None
        deadline = self._asked_deadline
        self._room = (deadline, self._queue_room(deadline))
        self._last = queue[-1].key if queue else None
        self._schedule_pump(service)

    def _schedule_pump(self, service: float) -> None:
        """Look at the queue again when its most pressed request would be too late to send (a slot
        may never free: an endpoint that hangs must not keep it waiting out its deadline)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._queue:
            due = min(self._due(t.request) for t in self._queue)  # type: ignore[arg-type]  # a queued ticket always holds its request
            delay = max(0.0, due - service - self._clock())
            self._timer = self._loop.call_later(delay + 1e-3, self._pump)

    def _due(self, request: Request) -> float:
        """When admission plans `request` to be answered at the latest: `margin` of its deadline."""
        return request.started_at + request.deadline * self.config.margin

    def _shed(self, request: Request, on_done: Callable[[Outcome], None]) -> None:
        """End a queued request at once in tier 3: it could not be answered within its deadline."""
        self.rejected["shed"] += 1
        self._finished += 1
        on_done(Outcome(request.npc, request.epoch, None, "shed", self._clock()))

    def _released(self, held: list[_Slot], _task: object) -> None:
        self._finished += 1
        if held:  # cancelled before it started: its slot was never used
            slot = held.pop()
            slot.breaker.record_neutral()
            self.client.pool.release(slot)
        if not self._closing:
            self._pump()

    def _release(self, _task: object) -> None:
        self._finished += 1

    async def _run(self, request: Request, on_done: Callable[[Outcome], None], held: list[_Slot]) -> None:
        """Always ends in exactly one `on_done` (unless cancelled): an exception that is no `LLMError`
        is a bug, reported as `internal_error` with its traceback instead of ending the task silently
        (which left the request to time out)."""
        slot = held.pop()  # released by `decide` from here on
        try:
            messages = request.chat()
        except Exception:  # a snapshot the prompt cannot show: reported, with its traceback
            slot.breaker.record_neutral()
            self.client.pool.release(slot)
            failed = Outcome(request.npc, request.epoch, None, "prompt_error", self._clock(), _trace())
            on_done(failed)
            return
        deadline = request.started_at + request.deadline
        try:
            async with cancel_at(deadline - self._clock() + self.config.grace):
                answer = await self.client.decide(messages, request.schema, deadline, slot)
            outcome = Outcome(request.npc, request.epoch, answer, "", self._clock())
        except LLMError as error:
            outcome = Outcome(request.npc, request.epoch, None, error.reason, self._clock())
        except TimeoutError:
            outcome = Outcome(request.npc, request.epoch, None, "timeout", self._clock())
        except Exception:
            outcome = Outcome(request.npc, request.epoch, None, "internal_error", self._clock(), _trace())
        on_done(outcome)

    def close(self, wait: bool = True) -> None:
        """Cancel what is in flight, close the client and stop the loop thread, which then closes its
        loop and wake-up line itself. wait=False returns at once (the thread finishes on its own)."""
        if not self._closing and self._thread.is_alive():
            self._closing = True
            self._wake_fd = -1  # no more wake-ups (never write to a descriptor that may be reused)
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
        if wait:
            self._thread.join(timeout=10)

    async def _shutdown(self) -> None:
        try:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._loop.remove_reader(self._wake_r.fileno())
            await self.client.__aexit__(None, None, None)
        finally:
            self._loop.stop()

    def __enter__(self) -> LLMTransport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
