"""An async OpenAI-compatible `/chat/completions` client with strict decision validation.

- Streams by default: llama-server notices a closed connection only while it is streaming, so a
  cancelled request frees its slot at once (measured in `benchmarks/bench_llm.py`).
- Explicit connect/read/write/pool timeouts; every failure is a typed `LLMError`.
- The API key comes only from `NPC_MIND_API_KEY` and is never part of a message, repr or setting.
- Per response, Python only parses and validates, to leave the GIL to the game's main thread.
- The request body follows the endpoint's `RequestShape` (`npc_mind.llm.shape`): decided once per
  endpoint and schema, at `prepare` (before the first NPC asks, with the warm-up) or at the first request.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import ssl
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import httpx

from npc_mind.llm.bodies import ACCEPT_ENCODING, BoundedBody
from npc_mind.llm.breaker import BreakerConfig
from npc_mind.llm.endpoints import Endpoint, EndpointPool, _Slot
from npc_mind.llm.errors import EndpointError, InvalidAnswerError, RejectedError
from npc_mind.llm.schema import Answer, ChoiceCollisionError, DecisionSchema
from npc_mind.llm.shape import (
    RequestShape,
    detect_kind,
    first_tokens,
    resolve_mode,
    server_slots,
    warm_up,
)

log = logging.getLogger(__name__)

API_KEY_ENV = "NPC_MIND_API_KEY"
MODEL_ENV = "NPC_MIND_LLM_MODEL"
# llama-server streams ~300 bytes per token (server-sent event and chunk framing, measured): the
# longest answer max_tokens=1024 allows is ~310 KB, the default 48 tokens ~15 KB.
DEFAULT_RESPONSE_CAP = 512 << 10


@dataclasses.dataclass(frozen=True)
class LLMSettings:
    """max_tokens: 1..1024, for `schema` mode (choice and json size their own from the answer);
    temperature: 0..2; timeouts in seconds, 0.01..120;
    model: the name sent to the server (llama-server ignores it; `NPC_MIND_LLM_MODEL` overrides);
    max_response_bytes: 1 KiB..64 MiB read from the wire, max_decoded_bytes: 1 KiB..64 MiB after
    decompression; a longer response ends as `too_large` (an invalid answer). The defaults (512 KiB
    each) hold the longest answer max_tokens=1024 allows, streamed, 1.6 times."""

    max_tokens: int = 48
    temperature: float = 0.0
    connect_timeout: float = 0.5
    read_timeout: float = 5.0
    write_timeout: float = 1.0
    pool_timeout: float = 1.0
    stream: bool = True
    model: str = "npc-mind"
    max_response_bytes: int = DEFAULT_RESPONSE_CAP
    max_decoded_bytes: int = DEFAULT_RESPONSE_CAP

    def __post_init__(self) -> None:
        if not 1 <= self.max_tokens <= 1024:
            raise ValueError(f"max_tokens must be in 1..1024, got {self.max_tokens}")
        if not 0.0 <= self.temperature <= 2.0:
            raise ValueError(f"temperature must be in 0..2, got {self.temperature}")
        for name in ("connect_timeout", "read_timeout", "write_timeout", "pool_timeout"):
            value = getattr(self, name)
            if not 0.01 <= value <= 120:
                raise ValueError(f"{name} must be in 0.01..120 s, got {value}")
        if not self.model:
            raise ValueError("model must be a non-empty name")
        for name in ("max_response_bytes", "max_decoded_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1024 <= value <= 64 << 20:
                raise ValueError(f"{name} must be in 1 KiB..64 MiB, got {value!r}")

    def timeout(self) -> httpx.Timeout:
        return httpx.Timeout(
            connect=self.connect_timeout,
            read=self.read_timeout,
            write=self.write_timeout,
            pool=self.pool_timeout,
        )


def _json(data: str | bytes, what: str) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # bad JSON or text, a huge number, nesting too deep
        raise InvalidAnswerError(f"{what} is not JSON", "invalid_json") from None


def _not_a(what: str) -> InvalidAnswerError:
    return InvalidAnswerError(f"the response is not a chat completion{what}", "invalid_answer")


def _first_choice(data: Any, what: str) -> dict[str, Any] | None:
    """`data["choices"][0]` checked at every step; None when `choices` is empty."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list):
        raise _not_a(what)
    if not choices:
        return None
    if not isinstance(choices[0], dict):
        raise _not_a(what)
    return choices[0]


def _text_of(message: Any, what: str) -> str:
    """The `content` of a message or delta: absent or null is no text, anything but a string is wrong."""
    if message is None:
        return ""
    if not isinstance(message, dict):
        raise _not_a(what)
    content = message.get("content")
    if content is None:
        return ""
    if not isinstance(content, str):
        raise _not_a(what)
    return content


def _content_of_stream_line(line: str) -> str | None:
    """The text a server-sent event line adds, or None for non-data lines and `[DONE]`; any malformed
    chunk raises `InvalidAnswerError`."""
    if not line.startswith("data:"):
        return None
    data = line[5:].strip()
    if data == "[DONE]":
        return None
    choice = _first_choice(_json(data, "a stream chunk"), " chunk")
    return "" if choice is None else _text_of(choice.get("delta"), " chunk")


def _content_of_body(body: bytes) -> str:
    choice = _first_choice(_json(body, "the response"), "")
    content = _text_of(None if choice is None else choice.get("message"), "")
    if not content:
        raise InvalidAnswerError("the completion has no text content", "invalid_json")
    return content


_tls: list[ssl.SSLContext] = []
_tls_lock = threading.Lock()


def _tls_context(https: bool) -> ssl.SSLContext:
    """httpx's default verifying TLS context, made once per process: making one (loading the CA
    bundle) costs ~100 ms, mostly holding the GIL, and each transport's client used to make its own.
    Without an https endpoint no TLS is ever used: a context that trusts no one (it fails closed)
    costs nothing to make."""
    if not https:
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies, with no CA: refuses every server
    with _tls_lock:
        if not _tls:
            _tls.append(httpx.create_ssl_context())
        return _tls[0]


def cancel_once(task: asyncio.Task[Any]) -> bool:
    """Cancel `task` unless a cancellation is already on its way: a second one would interrupt the
    first one's clean-up (httpx closing the connection, which tells the server to stop generating)."""
    if task.done() or task.cancelling():
        return False
    return task.cancel()


@contextlib.asynccontextmanager
async def cancel_at(seconds: float) -> AsyncIterator[None]:
    """Like `asyncio.timeout(seconds)` (TimeoutError once it expires), but it never cancels a task
    that is being cancelled already (see `cancel_once`)."""
    task = asyncio.current_task()
    assert task is not None
    expired = []

    def expire() -> None:
        if cancel_once(task):
            expired.append(True)

    timer = asyncio.get_running_loop().call_later(max(0.0, seconds), expire)
    try:
        yield
    except asyncio.CancelledError:
        if expired and task.uncancel() == 0:
            raise TimeoutError from None
        raise
    finally:
        timer.cancel()


class _Progress:
    """How far a response got: when its body's first byte came (the status line and headers do not
    count: llama-server sends them at once, its first byte of answer only after the prompt), and when
    its last complete `data:` line did. `last`: the later of the two, None while nothing came."""

    __slots__ = ("_clock", "begun", "line")

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.begun: float | None = None
        self.line: float | None = None

    @property
    def last(self) -> float | None:
        return self.line if self.line is not None else self.begun

    def arrived(self, piece: bytes) -> bytes:
        if piece and self.begun is None:
            self.begun = self._clock()
        return piece

    def advanced(self) -> None:
        """A complete data line: bytes or comment lines trickled without one (a slowloris) are none."""
        self.line = self._clock()


class LLMClient:
    """Use as `async with LLMClient(endpoints) as client: answer = await client.decide(messages, schema)`."""

    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        settings: LLMSettings | None = None,
        breaker: BreakerConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings or LLMSettings()
        self.pool = EndpointPool(endpoints, breaker, clock)
        self._clock = clock
        self._model = os.environ.get(MODEL_ENV) or self.settings.model
        key = os.environ.get(API_KEY_ENV, "")
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http: httpx.AsyncClient | None = None
        # Per endpoint URL: its detected kind; per (URL, intents): its request shape. Futures, so that
        # concurrent first requests and the warm-up share one detection.
        self._kinds: dict[str, asyncio.Future[str | None]] = {}
        self._shapes: dict[tuple[str, tuple[str, ...]], asyncio.Future[RequestShape]] = {}

    def __repr__(self) -> str:
        urls = [s["url"] for s in self.pool.states()]
        return f"LLMClient(endpoints={urls}, api_key={'set' if self._headers else 'unset'})"

    async def __aenter__(self) -> LLMClient:
        cap = self.pool.capacity
        limits = httpx.Limits(max_connections=cap, max_keepalive_connections=cap)
        self._http = httpx.AsyncClient(
            timeout=self.settings.timeout(),
            limits=limits,
            headers=self._headers,
            verify=_tls_context(any(str(s["url"]).startswith("https:") for s in self.pool.states())),
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def _body(
        self, messages: Sequence[dict[str, str]], schema: DecisionSchema, shape: RequestShape | None = None
    ) -> dict[str, Any]:
        shape = shape or RequestShape.for_mode(schema, "schema")
        settings = self.settings
        return shape.body(
            messages, model=self._model, max_tokens=settings.max_tokens,
            temperature=settings.temperature, stream=settings.stream,
        )  # fmt: skip

    async def _kind(self, endpoint: Endpoint) -> str | None:
        """The endpoint's server kind, or None while it cannot be reached (asked again next time)."""
        if endpoint.kind != "auto":
            return endpoint.kind
        assert self._http is not None
        future = self._kinds.get(endpoint.base_url)
        if future is None:
            future = asyncio.ensure_future(detect_kind(self._http, endpoint))
            self._kinds[endpoint.base_url] = future
        kind = await asyncio.shield(future)
        if kind is None:
            self._kinds.pop(endpoint.base_url, None)
        return kind

    async def _make_shape(self, endpoint: Endpoint, schema: DecisionSchema, kind: str) -> RequestShape:
        mode = resolve_mode(endpoint.mode, kind)
        tokens = None
        if mode == "choice":
            assert self._http is not None
            tokens = await first_tokens(self._http, endpoint, schema.intents)
        return RequestShape.for_mode(schema, mode, tokens)

    async def shape(self, endpoint: Endpoint, schema: DecisionSchema) -> RequestShape:
        """The request shape for `endpoint` and `schema` (made once; raises `RejectedError`
        `choice_collision` for intents choice mode cannot tell apart, `EndpointError` when the
        server could not be asked). While the server cannot be reached its kind is unknown: a plain
        `schema` request goes out (and fails like any request would), and the next one asks again."""
        key = (endpoint.base_url, schema.intents)
        future = self._shapes.get(key)
        if future is None:
            kind = await self._kind(endpoint)
            if kind is None:
                return RequestShape.for_mode(schema, "schema")
            future = self._shapes.get(key)  # made meanwhile by a concurrent request
            if future is None:
                future = asyncio.ensure_future(self._make_shape(endpoint, schema, kind))
                self._shapes[key] = future
        try:
            return await asyncio.shield(future)
        except ChoiceCollisionError as error:
            raise RejectedError(str(error), "choice_collision") from None
        except InvalidAnswerError:  # a start-up answer over the cap: too_large, asked again next time
            self._shapes.pop(key, None)
            raise
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as error:
            self._shapes.pop(key, None)  # ask the server again next time
            message = f"{endpoint.base_url}: no request shape ({error.__class__.__name__})"
            raise EndpointError(message, "connection_error") from None

    async def prepare(self, schema: DecisionSchema, prefix: Sequence[dict[str, str]]) -> dict[str, Any]:
        """Before the first NPC asks: each endpoint's kind and request shape, and on llama-server each
        slot's cache warmed with the stable prefix. Never raises: what fails is logged and retried by
        the first request. Returns {url: {"mode": ..., "warmed": slots} or {"error": ...}}."""
        if self._http is None:
            raise RuntimeError("LLMClient must be used inside `async with`")
        report: dict[str, Any] = {}
        for state in self.pool._slots:
            endpoint = state.endpoint
            try:
                shape = await self.shape(endpoint, schema)
                warmed = 0
                if await self._kind(endpoint) == "llama":
                    slots = await server_slots(self._http, endpoint)
                    self.pool.set_slots(endpoint.base_url, slots)  # never more in flight than it serves
                    took = await warm_up(self._http, endpoint, prefix, slots)
                    if took:
                        self.pool.seed_service(endpoint.base_url, sum(took) / len(took))
                    warmed = len(took)
                report[endpoint.base_url] = {"mode": shape.mode, "warmed": warmed}
            except (RejectedError, EndpointError) as error:
                log.warning("npc_mind: %s", error)
                report[endpoint.base_url] = {"error": str(error)}
        return report

    async def decide(
        self,
        messages: Sequence[dict[str, str]],
        schema: DecisionSchema,
        deadline: float | None = None,
        slot: _Slot | None = None,
    ) -> Answer:
        """One decision from the least busy endpoint; raises an `LLMError` subclass on any failure.

        deadline: a time on the client's clock by which the endpoint must have answered, else
        `EndpointError("timeout")`. slot: one already taken with `pool.try_acquire()` (the transport's
        admission control does), released here; None waits for one.

        What the breaker hears: an error of the endpoint's (refused, reset, HTTP error, a read timeout,
        a malformed or oversized response) is a failure; a well-formed completion, even one the schema
        refuses (a model's wrong answer), a success (it is alive); a cancellation before
        the deadline nothing. A missed deadline (its own, or a cancellation after it) is a failure only
        when `EndpointPool.hung` says the answer had begun and then stalled, with time enough by the
        endpoint's own measured service time: a saturated or slowed-down but healthy endpoint (no byte
        of the answer yet) is never opened by missed deadlines."""
        if self._http is None:
            raise RuntimeError("LLMClient must be used inside `async with`")
        if slot is None:
            slot = await self.pool.acquire()
        outcome = "neutral"
        acquired_at = self._clock()
        at_once = slot.in_flight  # this one among them
        budget = float("inf") if deadline is None else deadline - acquired_at
        progress = _Progress(self._clock)
        try:
            if budget <= 0:
                # It waited for a slot (every endpoint busy) past its deadline: too late to ask, and
                # says nothing about the endpoint.
                raise RejectedError(f"waited past its deadline for {slot.endpoint.base_url}", "timeout")

            async def ask() -> tuple[RequestShape, str]:
                nonlocal outcome
                # The shape (made once per endpoint and intents) may ask the server: inside the deadline.
                shape = await self.shape(slot.endpoint, schema)
                try:
                    body = self._body(messages, schema, shape)
                    return shape, await self._post(slot.endpoint, body, progress)
                except InvalidAnswerError:
                    outcome = "failure"  # a malformed response (not a chat completion, too large)
                    raise

            if deadline is None:
                shape, content = await ask()
            else:
                try:
                    async with cancel_at(budget):
                        shape, content = await ask()
                except TimeoutError:
                    outcome = self._missed(slot, budget, acquired_at, progress, at_once)
                    raise EndpointError(
                        f"{slot.endpoint.base_url}: no answer by the deadline", "timeout"
                    ) from None
            outcome = "success"
            answered_at = self._clock()
            self.pool.note_service(slot, answered_at - acquired_at, answered_at, budget, at_once)
            return shape.parse(content)
        except EndpointError:
            if outcome == "neutral":
                outcome = "failure"
            raise
        except InvalidAnswerError:
            if outcome == "neutral":
                outcome = "success"  # a well-formed completion the schema refuses: alive, if wrong
            raise
        finally:
            if outcome == "neutral" and deadline is not None and acquired_at < deadline <= self._clock():
                # The endpoint had it and was cancelled after its deadline (the watchdog's cancel).
                outcome = self._missed(slot, budget, acquired_at, progress, at_once)
            if outcome == "failure":
                slot.breaker.record_failure()
            elif outcome == "success":
                slot.breaker.record_success()
            else:  # cancelled, or a deadline the endpoint could not be blamed for
                slot.breaker.record_neutral()
            self.pool.release(slot)

    def _missed(
        self, slot: _Slot, budget: float, acquired_at: float, progress: _Progress, at_once: int
    ) -> str:
        """A request the endpoint held since `acquired_at`, among `at_once`, missed its deadline:
        "failure" when the endpoint is hung (`EndpointPool.hung`, judged by its service time before
        this miss), else "missed", the time it held the request then a lower bound of its service time."""
        now = self._clock()
        hung = self.pool.hung(slot, budget, acquired_at, progress.last, now)
        self.pool.note_miss(slot, 0.0 if hung else now - acquired_at, acquired_at, at_once)
        return "failure" if hung else "missed"

    async def _post(self, endpoint: Endpoint, body: dict[str, Any], progress: _Progress) -> str:
        assert self._http is not None
        try:
            # llama-server closes a streamed response's connection right after the last chunk, and a
            # pooled reuse would race that close ("disconnected without a response"): don't pool them.
            headers = dict(ACCEPT_ENCODING)  # only what `BoundedBody` decodes within its caps
            if body["stream"]:
                headers["Connection"] = "close"
            async with self._http.stream("POST", endpoint.chat_url, json=body, headers=headers) as response:
                if response.status_code != 200:
                    raise EndpointError(
                        f"{endpoint.base_url} answered HTTP {response.status_code}", "http_error"
                    )
                return await self._read(response, body["stream"], progress)
        except httpx.TimeoutException as error:
            raise EndpointError(f"{endpoint.base_url}: {error.__class__.__name__}", "timeout") from None
        except httpx.ConnectError:
            raise EndpointError(f"{endpoint.base_url}: connection refused", "connect_error") from None
        except (httpx.TransportError, httpx.DecodingError) as error:
            raise EndpointError(
                f"{endpoint.base_url}: {error.__class__.__name__}", "connection_error"
            ) from None

    async def _read(self, response: httpx.Response, stream: bool, progress: _Progress) -> str:
        """The answer's text, read within the caps; `progress` hears of every piece of it."""
        settings = self.settings
        reader = BoundedBody(
            response.headers.get("content-encoding", ""),
            settings.max_response_bytes,
            settings.max_decoded_bytes,
        )
        chunks = (reader.feed(progress.arrived(raw)) async for raw in response.aiter_raw())
        if not stream:
            return _content_of_body(b"".join([chunk async for chunk in chunks]))
        parts = []
        async for line in _lines(chunks):
            if line.startswith("data:"):
                progress.advanced()
            text = _content_of_stream_line(line)
            if text:
                parts.append(text)
        return "".join(parts)


async def _lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """Server-sent event lines (ended by LF, CRLF or CR) of a byte stream, as text. Only a chunk
    holding a line end is searched and joined: a line sent a byte at a time costs linear time."""
    pending: list[bytes] = []
    async for chunk in chunks:
        pending.append(chunk)
        if b"\n" not in chunk and b"\r" not in chunk:
            continue
        *lines, rest = b"".join(pending).replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        pending = [rest] if rest else []
        for line in lines:
            yield _text(line)
    if pending:
        yield _text(b"".join(pending))


def _text(line: bytes) -> str:
    try:
        return line.decode()
    except UnicodeDecodeError:
        raise InvalidAnswerError("a stream line is not UTF-8", "invalid_json") from None
