"""OpenAI-compatible endpoints and routing between them by pace (fewest in flight among equals).

One local llama-server is the default; a team that outgrows it lists several hosts or a vLLM
cluster (`NPC_MIND_LLM_URL=http://a:8000/v1,http://b:8000/v1`). Each endpoint has its own
concurrency cap and circuit breaker. All routing state lives on the client's asyncio loop.

Each endpoint has a server `kind` and a request `mode` (see `npc_mind.llm.shape`), declared in the
URL's fragment (`http://host:8080/v1#kind=llama&mode=json`) or for all endpoints in `NPC_MIND_LLM_MODE`;
by default the kind is detected at start and the mode follows from it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from npc_mind.llm.breaker import BreakerConfig, BreakerState, CircuitBreaker
from npc_mind.llm.errors import RejectedError

URL_ENV = "NPC_MIND_LLM_URL"
MODE_ENV = "NPC_MIND_LLM_MODE"
KINDS = ("auto", "llama", "openai")
# choice: one token among the intents' first tokens; json: a short grammar-bound JSON answer;
# schema: OpenAI `response_format` (any OpenAI-compatible server); auto: choice on llama-server,
# schema elsewhere.
MODES = ("auto", "choice", "json", "schema")


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """base_url: an http(s) URL ending at the API root (e.g. `http://127.0.0.1:8080/v1`), optionally
    with `#kind=...&mode=...`; max_in_flight: 1..1024 concurrent requests (match the server's slots);
    kind: `auto` (detected: llama-server answers `/props`), `llama` or `openai`; mode: `auto`,
    `choice`, `json` or `schema` (`NPC_MIND_LLM_MODE` when not given; choice and json need llama-server,
    elsewhere they become schema)."""

    base_url: str
    max_in_flight: int = 4
    kind: str = "auto"
    mode: str = ""

    def __post_init__(self) -> None:
        base, _, fragment = self.base_url.partition("#")
        object.__setattr__(self, "base_url", base)
        for item in filter(None, fragment.split("&")):
            key, _, value = item.partition("=")
            if key not in ("kind", "mode"):
                raise ValueError(f"base_url fragment: unknown setting {key!r} (kind=..., mode=...)")
            object.__setattr__(self, key, value.strip().lower())
        if not self.mode:
            object.__setattr__(self, "mode", os.environ.get(MODE_ENV, "").strip().lower() or "auto")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL, got {self.base_url!r}")
        if parts.username or parts.password:
            raise ValueError("base_url must not carry credentials; use NPC_MIND_API_KEY")
        try:
            port = parts.port  # urlsplit checks the range only when asked
        except ValueError:
            port = 0
        if port == 0 and parts.netloc.rpartition("]")[2].count(":"):  # a port given, but not 1..65535
            raise ValueError(f"base_url port must be in 1..65535, got {self.base_url!r}")
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        if not 1 <= self.max_in_flight <= 1024:
            raise ValueError(f"max_in_flight must be in 1..1024, got {self.max_in_flight}")

    @property
    def chat_url(self) -> str:
        return f"{self.base_url}/chat/completions"

    @property
    def root_url(self) -> str:
        """The server's root (llama-server's own routes, `/props` and `/tokenize`, live there)."""
        return self.base_url.removesuffix("/v1")


def endpoints_from_env(max_in_flight: int = 4) -> list[Endpoint] | None:
    """The endpoints named by `NPC_MIND_LLM_URL` (comma-separated), or None when it is unset."""
    value = os.environ.get(URL_ENV, "").strip()
    if not value:
        return None
    return [Endpoint(url.strip(), max_in_flight) for url in value.split(",") if url.strip()]


# An endpoint's service time is smoothed like TCP's round-trip time (RFC 6298): the newest answer
# weighs 1/8 in the mean and 1/4 in the mean deviation.
SERVICE_WEIGHT = 0.125
SPREAD_WEIGHT = 0.25
# A request that misses its deadline counts against the endpoint only when it was sent with at least
# this many mean service times left, and with the mean plus 4 deviations (see `EndpointPool.hung`).
HANG_FACTOR = 4.0
# An endpoint whose pace says it cannot answer a request in time rests (is sent nothing while others
# work) until this many of its paces have passed since it was last sent one; then one request probes
# whether it got faster. Endpoints on one machine share its cores: each busy one slows the others.
REST_FACTOR = 4.0
# An endpoint's window grows to one more request at once only while the requests it was last sent
# that many at once took at most GROW_SHARE of their time (0..1), on average (LEVEL_WEIGHT: the
# newest's weight, a missed one's counting its held time); a mean older than LEVEL_MEMORY seconds is
# tried again (the load of the machine it shares may have changed).
GROW_SHARE = 0.8
LEVEL_WEIGHT = 0.25
LEVEL_MEMORY = 30.0


class _Slot:
    def __init__(self, endpoint: Endpoint, breaker: CircuitBreaker) -> None:
        self.endpoint = endpoint
        self.breaker = breaker
        self.in_flight = 0
        # Requests it is sent at once: its configured cap, lowered to llama-server's `total_slots`
        # (more would wait inside the server, where no deadline can see them).
        self.limit = endpoint.max_in_flight
        # How many of those it is sent now, like TCP's congestion window: halved by a missed deadline
        # (a model slower with more requests at once), grown back by one per window of answers while
        # the requests last sent one more at once were in time with room (`_may_grow`).
        self.window = float(self.limit)
        self.service: float | None = None  # seconds from send to answer, averaged; None until one
        self.spread = 0.0  # their mean deviation
        self.seeded = False  # `service` is the warm-up's time, replaced by the first answer's
        # The seconds a request takes as admission plans them: `service`, raised by each missed
        # deadline to the time the endpoint held that request (a censored sample) until the next
        # answer sets it anew. `service` itself, which judges hangs, learns from answers only.
        self.pace: float | None = None
        self.pace_raised = False  # `pace` is a miss's lower bound: the next answer replaces it
        self.answered_at = float("-inf")  # when it last answered a request (the client's clock)
        self.sent_at = float("-inf")  # when it was last sent one
        # Per number of requests held at once: the mean share of their time those requests took (a
        # miss: 1), and when it was last measured.
        self.levels: dict[int, tuple[float, float]] = {}
        # Requests sent, answered and missed (deadline) since start: how the work was spread.
        self.sent = self.answered = self.missed = 0

    @property
    def cap(self) -> int:
        return max(1, min(self.limit, int(self.window)))


def _rests(slot: _Slot, left: float) -> bool:
    """Whether `slot` is too slow for a request `left` seconds before its deadline: its pace is longer
    (it would only be cancelled at the deadline, its work taking cores from the other endpoints on a
    shared machine), or its pace is a miss's lower bound (`note_miss` raised it: nothing answered
    since; the next answer, a probe's, tells its pace again). Compared with the deadline itself, not
    admission's `margin` of it: mean service times of 0.5-0.65 s against 0.64 s (80% of 0.8 s) made
    each endpoint of two rest by turns whenever its mean crossed, until one did all the work."""
    return slot.pace_raised or (slot.pace or 0.0) > left


def _note_level(slot: _Slot, at_once: int, share: float, at: float) -> None:
    """A request sent while the endpoint held `at_once` took `share` of its time (a miss: 1). Those
    sent after it and still held at its end slowed it too: it counts at the larger of the two."""
    level = max(at_once, slot.in_flight)
    mean, _ = slot.levels.get(level, (share, at))
    slot.levels[level] = (mean + LEVEL_WEIGHT * (share - mean), at)


def _may_grow(slot: _Slot, now: float) -> bool:
    """Whether `slot` may be sent one request more at once than its window: the requests last sent
    that many at once took at most `GROW_SHARE` of their time, or none was lately (`LEVEL_MEMORY`).
    Grown back by the next answer after a miss halved it, a window went straight back to the load
    that missed (measured: 2 and 3 llama-servers of one thread on 2 cores, each sent 2 at once:
    20-45% of the requests cancelled at the deadline, their work lost; held to one at a time, 35-40%
    more answers)."""
    measured = slot.levels.get(int(slot.window) + 1)
    return measured is None or now - measured[1] > LEVEL_MEMORY or measured[0] <= GROW_SHARE


def _probes(slot: _Slot, now: float) -> bool:
    """Whether a resting `slot` is due for a probe at `now`: nothing in flight, and `REST_FACTOR` of
    its paces passed since it was last sent a request."""
    return not slot.in_flight and now - slot.sent_at >= REST_FACTOR * (slot.pace or 0.0)


class EndpointPool:
    """Picks the available endpoint with the fewest requests in flight (relative to its slots); waits
    while all are at their cap. Measures each endpoint's service time, from which `rate` says how many
    answers per second the pool delivers when saturated (the transport's admission control)."""

    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        breaker: BreakerConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not endpoints:
            raise ValueError("at least one endpoint is needed")
        self._slots = [_Slot(e, CircuitBreaker(breaker, clock)) for e in endpoints]
        self._clock = clock
        self._waiters: list[asyncio.Future[None]] = []
        self.waiting = 0

    @property
    def capacity(self) -> int:
        """The configured in-flight caps' sum (what the HTTP client's connection pool is sized for)."""
        return sum(s.endpoint.max_in_flight for s in self._slots)

    @property
    def slots(self) -> int:
        """Requests the endpoints take at once now (llama-server's slots where it said how many), an
        endpoint whose breaker is open not counted (admission would queue requests for it)."""
        return sum(s.cap for s in self._slots if s.breaker.state is not BreakerState.OPEN)

    def set_slots(self, url: str, slots: int) -> None:
        """The endpoint's own slot count (llama-server's `/props`), within its configured cap."""
        for slot in self._slots:
            if slot.endpoint.base_url == url:
                slot.limit = max(1, min(slot.endpoint.max_in_flight, slots))
                slot.window = float(slot.limit)

    def seed_service(self, url: str, seconds: float) -> None:
        """The endpoint answered its warm-up (every slot at once) in `seconds` on average: its service
        time until its first answer, so that an endpoint slower than the deadlines is known to be slow,
        not hung, before any request is answered in time (which, when none can be, never happens)."""
        for slot in self._slots:
            if slot.endpoint.base_url == url and slot.service is None:
                slot.service, slot.spread, slot.seeded = seconds, seconds / 2, True
                slot.pace = seconds

    def note_service(
        self, slot: _Slot, seconds: float, at: float, budget: float = float("inf"), at_once: int = 1
    ) -> None:
        """An answer came `seconds` after its request was sent with `budget` seconds to its deadline,
        while the endpoint held `at_once` requests, at `at` (only answers: a timeout is censored)."""
        slot.answered_at = max(slot.answered_at, at)
        slot.answered += 1
        _note_level(slot, at_once, seconds / budget if budget > 0.0 else 1.0, at)
        if _may_grow(slot, at):
            slot.window = min(float(slot.limit), slot.window + 1.0 / slot.window)
        last = slot.service
        if last is None or slot.seeded:  # the warm-up (a whole uncached prefix) was only a stand-in
            slot.seeded = False
            slot.service, slot.spread, slot.pace = seconds, seconds / 2, seconds
        else:
            slot.spread += SPREAD_WEIGHT * (abs(seconds - last) - slot.spread)
            slot.service = last + SERVICE_WEIGHT * (seconds - last)
            pace = slot.pace if slot.pace is not None else last
            # After a miss the first answer is the endpoint's pace now (a probe that came back in
            # time: a resting endpoint is used again at once, not after many answers).
            slot.pace = seconds if slot.pace_raised else pace + SERVICE_WEIGHT * (seconds - pace)
        slot.pace_raised = False

    @staticmethod
    def note_miss(slot: _Slot, held: float, sent_at: float, at_once: int = 1) -> None:
        """A request the endpoint was sent at `sent_at`, holding `at_once` requests, and held `held`
        seconds missed its deadline: send it half as many at once (at least one), and plan its
        requests (`pace`) to take longer (a censored sample: the answer would have come later; 0: a
        hung endpoint, nothing learned).

        How much longer depends on whether it answered another request meanwhile. Not: it may have
        slowed past the deadlines, and its pace jumps to `held` (planned by answers only, an endpoint
        slowed past the deadlines kept the pace of its last answer in time: admission queued for it
        what it could not answer, every request missed, and no answer came to correct it; measured:
        0 answers a second from 2 healthy servers on a loaded machine). It did: it is answering at
        about its pace, and this was one slow answer among them, weighed into the pace like an answer
        (SERVICE_WEIGHT). Jumping then too made one late answer in thirty rest a healthy endpoint for
        REST_FACTOR deadlines (measured: 2 and 3 llama-servers on 2 cores, one of them did 85% of the
        answers and the others idled; 1.01x and 1.07x the answers of one)."""
        slot.missed += 1
        slot.window = max(1.0, slot.window / 2.0)
        _note_level(slot, at_once, 1.0, sent_at + held)
        pace = slot.pace
        if held <= 0.0 or (pace is not None and held <= pace):
            return
        if pace is None or slot.answered_at <= sent_at:
            slot.pace = held
            slot.pace_raised = True
        else:
            slot.pace = pace + SERVICE_WEIGHT * (held - pace)

    def rate(self, horizon: float = float("inf")) -> tuple[float, float, int] | None:
        """(answers per second when every slot is busy, mean seconds a request, slots) at their
        `pace`, over the endpoints that take requests and can answer within `horizon` seconds (see
        `_rests`), the slots counting one more for each resting endpoint due for a probe (`_probes`);
        None before any has answered (nothing measured: nothing to size by); (0, 0, probes) when none
        is fast enough (every request asked now would be late).

        The probes count because admission sizes the queue by these slots: without them, a resting
        endpoint beside a saturated fast one was never probed (the fast one's slots were all that
        admission let through, so no request waited when the probe fell due) and rested for good
        (measured: 2 llama-servers, one idle for the whole run after 2 misses at its start)."""
        rate = 0.0
        slots = probes = 0
        measured = False
        now = self._clock()
        for slot in self._slots:
            if slot.pace is not None and slot.breaker.state is not BreakerState.OPEN:
                measured = True
                if not _rests(slot, horizon):
                    rate += slot.cap / max(slot.pace, 1e-3)
                    slots += slot.cap
                elif _probes(slot, now):
                    probes += 1
        if not measured:
            return None
        return (rate, slots / rate, slots + probes) if rate else (0.0, 0.0, probes)

    @staticmethod
    def hung(slot: _Slot, budget: float, sent_at: float, progress_at: float | None, now: float) -> bool:
        """Whether a request sent to `slot` at `sent_at` with `budget` seconds left that missed its
        deadline at `now` shows a failing endpoint: its answer had begun and then stopped, a stalled
        stream (`progress_at`: its last complete data line, else its first byte; None: nothing came).

        An answer not begun is a slow endpoint, not a failing one: llama-server sends its first byte
        only once the prompt is evaluated, and a machine that other work loads slows every answer
        down at once (measured: 1.25 s an answer against the 800 ms deadline), so counting such misses
        opened healthy endpoints' breakers. Bytes or comment lines trickled without a data line (a
        slowloris) are no progress. The request held one of the endpoint's own slots (nothing waits inside the
        server), so a healthy endpoint answers within its mean service time plus 4 mean deviations
        (TCP's rule for when a reply is lost), and at least HANG_FACTOR means: a stream quiet that
        long, sent with that much time left, has stalled. A miss never counts when the endpoint
        answered another request meanwhile (alive), and always when it never answered, not even a
        warm-up (`seed_service`): nothing to compare to."""
        if slot.answered_at > sent_at:
            return False
        service = slot.service
        if service is None:  # it never answered, not even a warm-up: nothing to compare to
            return True
        if progress_at is None:
            return False
        window = max(HANG_FACTOR * service, service + 4.0 * slot.spread)
        return budget >= window and now - progress_at >= window

    def try_acquire(self, left: float = float("inf")) -> _Slot | None:
        """A free slot taken at once for a request due in `left` seconds, or None (every endpoint
        busy, refusing, or resting: too slow for it while others work, see `_pick`)."""
        slot = self._pick(left)
        if slot is not None:
            self._take(slot)
        return slot

    def _take(self, slot: _Slot) -> None:
        slot.in_flight += 1
        slot.sent += 1
        slot.sent_at = self._clock()
        slot.breaker.before_call()

    def any_available(self) -> bool:
        """False when every breaker is open (safe to read from another thread: a snapshot)."""
        return any(s.breaker.state is not BreakerState.OPEN for s in self._slots)

    def _pick(self, left: float = float("inf")) -> _Slot | None:
        """The free endpoint that answers soonest by its pace, (in flight + 1) / slots x pace (the
        fewest in flight for its slots, among equals or unmeasured ones). One that rests while another
        endpoint has work (`_rests`) is sent a request only as a probe, once `REST_FACTOR` paces have
        passed since it was last sent one."""
        best = None
        best_key = (0.0, 0.0)
        busy = any(slot.in_flight for slot in self._slots)
        now = self._clock() if busy else 0.0
        for slot in self._slots:
            if slot.in_flight >= slot.cap or not slot.breaker.available():
                continue
            if busy and _rests(slot, left) and not _probes(slot, now):
                continue
            load = (slot.in_flight + 1) / slot.cap
            key = (load * (slot.pace or 0.0), load)
            if best is None or key < best_key:
                best, best_key = slot, key
        return best

    async def acquire(self) -> _Slot:
        self.waiting += 1
        try:
            while (slot := self._pick()) is None:
                if not self.any_available():
                    raise RejectedError("every endpoint's circuit breaker is open", "breaker_open")
                waiter = asyncio.get_running_loop().create_future()
                self._waiters.append(waiter)
                try:
                    await waiter
                finally:
                    if waiter in self._waiters:
                        self._waiters.remove(waiter)
        finally:
            self.waiting -= 1
        self._take(slot)
        return slot

    def release(self, slot: _Slot) -> None:
        """Synchronous, so it also runs in the `finally` of a cancelled request."""
        slot.in_flight -= 1
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def states(self) -> list[dict[str, object]]:
        return [
            {
                "url": s.endpoint.base_url,
                "in_flight": s.in_flight,
                "breaker": s.breaker.state.value,
                "breaker_opened": s.breaker.opened_count,
                "slots": s.limit,
                "window": s.cap,
                "service_ms": None if s.service is None else round(s.service * 1000.0, 1),
                "pace_ms": None if s.pace is None else round(s.pace * 1000.0, 1),
                "sent": s.sent,
                "answered": s.answered,
                "missed": s.missed,
            }
            for s in self._slots
        ]
