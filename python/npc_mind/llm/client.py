"""An async OpenAI-compatible `/chat/completions` client with strict decision validation.

- Streams by default: llama-server notices a closed connection only while it is streaming, so a
  cancelled request frees its slot at once (measured in `benchmarks/bench_llm.py`).
- Explicit connect/read/write/pool timeouts; every failure is a typed `LLMError`.
- The API key comes only from `NPC_MIND_API_KEY` and is never part of a message, repr or setting.
- Per response, Python only parses and validates, to leave the GIL to the game's main thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import ssl
import threading
import time
import zlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import httpx

from npc_mind.llm.breaker import BreakerConfig
from npc_mind.llm.endpoints import Endpoint, EndpointPool
from npc_mind.llm.errors import EndpointError, InvalidAnswerError, RejectedError
from npc_mind.llm.schema import Answer, DecisionSchema

API_KEY_ENV = "NPC_MIND_API_KEY"
MODEL_ENV = "NPC_MIND_LLM_MODEL"
# llama-server streams ~300 bytes per token (server-sent event and chunk framing, measured): the
# longest answer max_tokens=1024 allows is ~310 KB, the default 48 tokens ~15 KB.
DEFAULT_RESPONSE_CAP = 512 << 10


@dataclasses.dataclass(frozen=True)
class LLMSettings:
    """max_tokens: 1..1024 (a decision needs ~30); temperature: 0..2; timeouts in seconds, 0.01..120;
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


class _BoundedBody:
    """A response body decoded (identity, gzip or deflate) within two caps: `max_bytes` read from the
    wire and `max_decoded` after decompression, so a huge body or a compression bomb costs at most the
    caps (zlib is asked for no more than what is left of them) and ends as `too_large`."""

    def __init__(self, encoding: str, max_bytes: int, max_decoded: int) -> None:
        encoding = encoding.strip().lower()
        if encoding in ("", "identity"):
            self._zlib = None
        elif encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj()
        else:
            raise InvalidAnswerError(f"unsupported content-encoding {encoding[:32]!r}", "invalid_answer")
        self._max_bytes = max_bytes
        self._left = max_decoded
        self.read = 0

    def feed(self, raw: bytes) -> bytes:
        self.read += len(raw)
        if self.read > self._max_bytes:
            raise InvalidAnswerError(f"the response is over {self._max_bytes} bytes", "too_large")
        if self._zlib is None:
            data = raw
        else:
            try:
                data = self._zlib.decompress(raw, self._left + 1)
            except zlib.error:
                raise InvalidAnswerError("the response body does not decompress", "invalid_answer") from None
        self._left -= len(data)
        if self._left < 0:
            raise InvalidAnswerError("the response decompresses to over the cap", "too_large")
        return data


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
            verify=_tls_context(any(s["url"].startswith("https:") for s in self.pool.states())),
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def _body(self, messages: Sequence[dict[str, str]], schema: DecisionSchema) -> dict[str, Any]:
        return {
            "model": self._model,
            "messages": list(messages),
            "max_tokens": self.settings.max_tokens,
            "temperature": self.settings.temperature,
            "response_format": schema.response_format(),
            "stream": self.settings.stream,
        }

    async def decide(
        self, messages: Sequence[dict[str, str]], schema: DecisionSchema, deadline: float | None = None
    ) -> Answer:
        """One decision from the least busy endpoint; raises an `LLMError` subclass on any failure.

        deadline: a time on the client's clock by which the endpoint must have answered, else
        `EndpointError("timeout")`. Timeouts and hangs count against the endpoint's breaker: so does
        a cancellation after the deadline (the watchdog giving up on an endpoint that never ended)."""
        if self._http is None:
            raise RuntimeError("LLMClient must be used inside `async with`")
        slot = await self.pool.acquire()
        outcome = "neutral"
        acquired_at = self._clock()
        try:
            if deadline is not None and acquired_at >= deadline:
                # It waited for a slot (every endpoint busy) past its deadline: too late to ask, and
                # says nothing about the endpoint.
                raise RejectedError(f"waited past its deadline for {slot.endpoint.base_url}", "timeout")
            body = self._body(messages, schema)
            if deadline is None:
                content = await self._post(slot.endpoint, body)
            else:
                try:
                    async with cancel_at(deadline - self._clock()):
                        content = await self._post(slot.endpoint, body)
                except TimeoutError:
                    raise EndpointError(
                        f"{slot.endpoint.base_url}: no answer by the deadline", "timeout"
                    ) from None
            outcome = "success"
            return schema.parse(content)
        except EndpointError:
            outcome = "failure"
            raise
        except InvalidAnswerError:
            outcome = "success"  # it answered: alive, if wrong
            raise
        finally:
            if outcome == "neutral" and deadline is not None and acquired_at < deadline <= self._clock():
                outcome = "failure"  # the endpoint had it and was cancelled after its deadline: it hung
            # Invalid answers still prove the endpoint alive; cancellations say nothing about it.
            if outcome == "failure":
                slot.breaker.record_failure()
            elif outcome == "success":
                slot.breaker.record_success()
            else:
                slot.breaker.record_neutral()
            self.pool.release(slot)

    async def _post(self, endpoint: Endpoint, body: dict[str, Any]) -> str:
        assert self._http is not None
        try:
            # llama-server closes a streamed response's connection right after the last chunk, and a
            # pooled reuse would race that close ("disconnected without a response"): don't pool them.
            # Only encodings `_BoundedBody` decodes within its caps are asked for.
            headers = {"Accept-Encoding": "gzip, deflate"}
            if body["stream"]:
                headers["Connection"] = "close"
            async with self._http.stream("POST", endpoint.chat_url, json=body, headers=headers) as response:
                if response.status_code != 200:
                    raise EndpointError(
                        f"{endpoint.base_url} answered HTTP {response.status_code}", "http_error"
                    )
                return await self._read(response, body["stream"])
        except httpx.TimeoutException as error:
            raise EndpointError(f"{endpoint.base_url}: {error.__class__.__name__}", "timeout") from None
        except httpx.ConnectError:
            raise EndpointError(f"{endpoint.base_url}: connection refused", "connect_error") from None
        except (httpx.TransportError, httpx.DecodingError) as error:
            raise EndpointError(
                f"{endpoint.base_url}: {error.__class__.__name__}", "connection_error"
            ) from None

    async def _read(self, response: httpx.Response, stream: bool) -> str:
        """The answer's text, read within the caps."""
        settings = self.settings
        reader = _BoundedBody(
            response.headers.get("content-encoding", ""),
            settings.max_response_bytes,
            settings.max_decoded_bytes,
        )
        chunks = (reader.feed(raw) async for raw in response.aiter_raw())
        if not stream:
            return _content_of_body(b"".join([chunk async for chunk in chunks]))
        parts = []
        async for line in _lines(chunks):
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
