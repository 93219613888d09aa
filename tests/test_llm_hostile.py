"""The client against hostile endpoints (the fault server's oversized, gzip-bomb, slowloris and
malformed-chunk modes): every one ends in a typed `LLMError`, within the response caps, and hangs count
against the circuit breaker."""

from __future__ import annotations

import asyncio
import threading
import time
import tracemalloc

import pytest

from npc_mind.llm import (
    BreakerConfig,
    Endpoint,
    InvalidAnswerError,
    LLMClient,
    LLMSettings,
    LLMTransport,
    Outcome,
    RejectedError,
    build_messages,
)
from npc_mind.llm.transport import Request
from tests.support import decision_world as world
from tests.support.fault_llm_server import Fault, FaultServer

MESSAGES = build_messages(world.SCHEMA, world.board())
SAFETY = 20.0  # seconds: a bound on waiting loops, never an assertion


def decide_once(url: str, settings: LLMSettings | None = None, deadline: float | None = None) -> object:
    """One `decide` against `url`: the answer, or the exception it raised (whatever its type)."""

    async def run() -> object:
        async with LLMClient([Endpoint(url)], settings=settings) as client:
            limit = () if deadline is None else (time.monotonic() + deadline,)
            try:
                return await client.decide(MESSAGES, world.SCHEMA, *limit)
            except Exception as error:  # the test looks at the type
                return error

    return asyncio.run(run())


@pytest.mark.parametrize("stream", [True, False])
def test_a_padded_answer_under_the_cap_is_still_valid(fault_server: FaultServer, stream: bool) -> None:
    """The hostile modes are real answers: without a cap the padded one is accepted."""
    fault_server.default = Fault("oversized", size=50_000)
    answer = decide_once(fault_server.base_url, LLMSettings(stream=stream))
    assert getattr(answer, "intent", None) == "attack", answer


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", ["oversized", "gzip_bomb"])
def test_responses_over_the_caps_are_too_large(fault_server: FaultServer, kind: str, stream: bool) -> None:
    """A 10 MB body used to be read whole (233 MB added; 60 MB: 955 MB); a 1 MB gzip bomb inflated to
    over 500 MB. Now reading stops at the cap: too_large, and memory stays near the cap."""
    fault_server.default = Fault(kind, size=200 << 20)  # 200 MB of answer (gzip: ~200 KB on the wire)
    tracemalloc.start()
    try:
        error = decide_once(fault_server.base_url, LLMSettings(stream=stream, read_timeout=30.0))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(error, InvalidAnswerError), error
    assert error.reason == "too_large"
    assert peak < 16 << 20, peak  # bytes: the caps are 512 KiB; without them this is hundreds of MB


@pytest.mark.parametrize("answer", ["ok", "gzip_bomb"])
def test_a_gzip_bomb_at_the_props_probe_is_read_within_a_cap(fault_server: FaultServer, answer: str) -> None:
    """Issue 22 (7): the `/props` probe of an endpoint of kind `auto` read its whole answer: a gzip
    bomb there cost +1.6 GB and ended as `timeout`. It is read within `PROBE_CAP` now: not
    llama-server's answer, so the endpoint is taken as OpenAI-compatible, and its completions
    decide (an answer; a bomb there too is `too_large`, as with `#kind=openai`)."""
    fault_server.props = Fault("gzip_bomb", size=200 << 20)  # 200 MB inflated, ~200 KB on the wire
    fault_server.default = Fault(answer, size=200 << 20)
    tracemalloc.start()
    try:
        result = decide_once(fault_server.base_url, LLMSettings(read_timeout=30.0))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    if answer == "ok":
        assert getattr(result, "intent", None) == "attack", result
    else:
        assert isinstance(result, InvalidAnswerError) and result.reason == "too_large", result
    assert peak < 16 << 20, peak  # bytes: the probe's cap is 1 MiB; without it, hundreds of MB


def test_the_caps_are_settings(fault_server: FaultServer) -> None:
    fault_server.default = Fault("oversized", size=8_000)
    error = decide_once(fault_server.base_url, LLMSettings(max_response_bytes=4096))
    assert getattr(error, "reason", None) == "too_large", error
    fault_server.default = Fault("gzip_bomb", size=8_000)
    error = decide_once(fault_server.base_url, LLMSettings(max_decoded_bytes=4096))
    assert getattr(error, "reason", None) == "too_large", error
    for bad in (0, 1023, (64 << 20) + 1, 2.5, True):
        with pytest.raises(ValueError, match="max_response_bytes"):
            LLMSettings(max_response_bytes=bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="max_decoded_bytes"):
            LLMSettings(max_decoded_bytes=bad)  # type: ignore[arg-type]


MALFORMED = [
    '{"choices":["x"]}',
    '{"choices":[{"delta":{"content":5}}]}',
    '{"choices":[{"delta":{"content":["a"]}}]}',
    '{"choices":[{"delta":"x"}]}',
    '{"choices":{"0":{}}}',
    '{"choices":[{"message":{"content":{"intent":"attack"}}}]}',
    '{"error":{"message":"overloaded"}}',
    "[1, 2]",
    '"text"',
    "null",
    "not json",
    "[" * 100_000,
    "1" * 5000,
]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("chunk", MALFORMED, ids=range(len(MALFORMED)))
def test_every_malformed_chunk_is_an_invalid_answer(
    fault_server: FaultServer, chunk: str, stream: bool
) -> None:
    """`{"choices":["x"]}` or a non-string content raised AttributeError out of the client: the request
    task died and the NPC waited for its hard deadline, reported as `timeout`."""
    fault_server.default = Fault("malformed_chunk", chunk=chunk)
    error = decide_once(fault_server.base_url, LLMSettings(stream=stream))
    assert isinstance(error, InvalidAnswerError), repr(error)
    assert error.reason in ("invalid_answer", "invalid_json")


def test_a_malformed_chunk_ends_the_transport_request_at_once(fault_server: FaultServer) -> None:
    fault_server.default = Fault("malformed_chunk", chunk='{"choices":["x"]}')
    outcomes = submit_each(fault_server.base_url, 1, deadline=60.0)
    assert [o.reason for o in outcomes] == ["invalid_answer"]


def submit_each(url: str, count: int, deadline: float, **options: object) -> list[Outcome | RejectedError]:
    """Submit `count` requests one after another (each waits for the last), with `deadline` each."""
    results: list[Outcome | RejectedError] = []
    with LLMTransport([Endpoint(url)], **options) as transport:  # type: ignore[arg-type]
        for index in range(count):
            done = threading.Event()
            box: list[Outcome] = []

            def on_done(outcome: Outcome, box: list[Outcome] = box, done: threading.Event = done) -> None:
                box.append(outcome)
                done.set()

            request = Request(1, index, (), world.SCHEMA, time.monotonic(), deadline, world.board())
            try:
                transport.submit(request, on_done)
            except RejectedError as error:
                results.append(error)
                continue
            assert done.wait(SAFETY + deadline)
            results.append(box[0])
    return results


def reasons(results: list[Outcome | RejectedError]) -> list[str]:
    return [result.reason for result in results]


def test_a_slowloris_endpoint_opens_the_breaker(fault_server: FaultServer) -> None:
    """A byte every 50 ms never trips the read timeout: the breaker was still closed after 9 such
    requests (threshold 3). The deadline is the client's: past it the endpoint has failed."""
    fault_server.default = Fault("slowloris", latency=0.05)
    breaker = BreakerConfig(failure_threshold=3, cooldown=600.0)
    results = submit_each(fault_server.base_url, 5, deadline=0.3, breaker=breaker)
    assert reasons(results) == ["timeout"] * 3 + ["breaker_open"] * 2
    assert len(fault_server.seen) == 3


def test_a_request_cancelled_after_its_deadline_counts_as_a_hang(fault_server: FaultServer) -> None:
    """The watchdog cancels a request at its hard deadline; that cancellation said nothing to the
    breaker before, so an endpoint that never answered was never opened."""
    fault_server.default = Fault("never_ends")
    breaker = BreakerConfig(failure_threshold=2, cooldown=600.0)

    async def run() -> list[str]:
        async with LLMClient([Endpoint(fault_server.base_url)], breaker=breaker) as client:
            states = []
            for sent in (1, 2):
                task = asyncio.create_task(client.decide(MESSAGES, world.SCHEMA, time.monotonic() + 0.2))
                while len(fault_server.seen) < sent:
                    await asyncio.sleep(0.005)
                # Past the deadline, the cancel (the watchdog's) reaches the task before the client's
                # own timer runs: the loop is blocked until then.
                time.sleep(0.25)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                states.append(client.pool.states()[0]["breaker"])
            return states

    assert asyncio.run(run()) == ["closed", "open"]
    stop = time.monotonic() + SAFETY  # the server notices a close on its own thread
    while fault_server.closed_by_client() < 2 and time.monotonic() < stop:
        time.sleep(0.005)
    assert fault_server.closed_by_client() == 2  # each connection closed, though cancelled twice


def test_a_cancellation_before_the_deadline_says_nothing_about_the_endpoint(
    fault_server: FaultServer,
) -> None:
    fault_server.default = Fault(latency=30.0)
    breaker = BreakerConfig(failure_threshold=1, cooldown=600.0)

    async def run() -> str:
        async with LLMClient([Endpoint(fault_server.base_url)], breaker=breaker) as client:
            task = asyncio.create_task(client.decide(MESSAGES, world.SCHEMA, time.monotonic() + 30.0))
            await asyncio.sleep(0.1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return str(client.pool.states()[0]["breaker"])

    assert asyncio.run(run()) == "closed"


def test_through_the_watchdog_a_slowloris_endpoint_opens_the_breaker(fault_server: FaultServer) -> None:
    """The issue's case: NPCs ticked by a hub, the watchdog cancelling at the hard deadline; the
    breaker was still closed after 9 such requests with threshold 3."""
    from npc_mind.decision import DecisionConfig, DecisionFallback, DecisionHub

    fault_server.default = Fault("slowloris", latency=0.05)
    config = DecisionConfig(soft_deadline=0.1, hard_deadline=0.3, replan_interval=60.0, min_gap=0.0)
    breaker = BreakerConfig(failure_threshold=3, cooldown=600.0)
    endings = []
    with DecisionHub.connect(
        [Endpoint(fault_server.base_url)], world.SCHEMA, config=config, breaker=breaker
    ) as hub:
        for npc in range(5):  # one after another
            hub.add(npc, world.rules())
            stop = time.monotonic() + SAFETY
            hub.tick_all(time.monotonic(), {npc: world.board()})
            while hub.decisions[npc].pending and time.monotonic() < stop:
                time.sleep(0.005)
                hub.tick_all(time.monotonic(), {npc: world.board()})
            endings += [e.reason for e in hub.drain_events() if isinstance(e, DecisionFallback)]
            # The loop thread records the cancelled request's failure as it releases its slot: wait
            # for that, or the next request can go out before the breaker has counted this one.
            while hub.metrics()["in_flight"] and time.monotonic() < stop:
                time.sleep(0.005)
        breaker_state = hub.metrics()["breaker"]
    assert endings == ["timeout"] * 3 + ["breaker_open"] * 2
    assert breaker_state == "open"


def test_tls_is_verified_and_its_context_made_once() -> None:
    """Each client built httpx's verifying context (~130 ms, much of it holding the GIL): the first
    request_decision of every new endpoint stalled the frame. Now one per process for https, and for
    plain-http endpoints a context that trusts no one (never used; it would refuse every server)."""
    import ssl

    from npc_mind.llm.client import _tls_context

    verified = _tls_context(True)
    assert verified is _tls_context(True)
    assert verified.verify_mode == ssl.CERT_REQUIRED and verified.check_hostname
    unused = _tls_context(False)
    assert unused.verify_mode == ssl.CERT_REQUIRED and unused.check_hostname
    assert unused.cert_store_stats()["x509_ca"] == 0


def test_waiting_for_a_busy_endpoint_past_the_deadline_is_not_its_failure(fault_server: FaultServer) -> None:
    """The endpoint answers (slowly); a request queued behind the cap until after its own deadline
    ends as timeout without being sent, and the breaker (threshold 1) stays closed."""
    fault_server.default = Fault(latency=0.4)
    breaker = BreakerConfig(failure_threshold=1, cooldown=600.0)

    async def run() -> tuple[list[object], str]:
        async with LLMClient([Endpoint(fault_server.base_url, max_in_flight=1)], breaker=breaker) as client:
            now = time.monotonic()
            first = client.decide(MESSAGES, world.SCHEMA, now + 5.0)
            queued = client.decide(MESSAGES, world.SCHEMA, now + 0.2)  # its slot frees at ~0.4 s
            results = await asyncio.gather(first, queued, return_exceptions=True)
            return results, str(client.pool.states()[0]["breaker"])

    (answer, late), state = asyncio.run(run())
    assert getattr(answer, "intent", None) == "attack", answer
    assert isinstance(late, RejectedError) and late.reason == "timeout", late
    assert state == "closed" and len(fault_server.seen) == 1
