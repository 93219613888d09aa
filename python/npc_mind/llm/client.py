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
import dataclasses
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from npc_mind.llm.breaker import BreakerConfig
from npc_mind.llm.endpoints import Endpoint, EndpointPool
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


@dataclasses.dataclass(frozen=True)
class LLMSettings:
    """max_tokens: 1..1024, for `schema` mode (choice and json size their own from the answer);
    temperature: 0..2; timeouts in seconds, 0.01..120;
    model: the name sent to the server (llama-server ignores it; `NPC_MIND_LLM_MODEL` overrides)."""

    max_tokens: int = 48
    temperature: float = 0.0
    connect_timeout: float = 0.5
    read_timeout: float = 5.0
    write_timeout: float = 1.0
    pool_timeout: float = 1.0
    stream: bool = True
    model: str = "npc-mind"

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

    def timeout(self) -> httpx.Timeout:
        return httpx.Timeout(
            connect=self.connect_timeout,
            read=self.read_timeout,
            write=self.write_timeout,
            pool=self.pool_timeout,
        )


def _content_of_stream_line(line: str) -> str | None:
    """The text a server-sent event line adds, or None for non-data lines and `[DONE]`."""
    if not line.startswith("data:"):
        return None
    data = line[5:].strip()
    if data == "[DONE]":
        return None
    try:
        choice = json.loads(data)["choices"][0]
    except (json.JSONDecodeError, KeyError, IndexError, TypeError):
        raise InvalidAnswerError("a stream chunk is not a chat completion chunk", "invalid_json") from None
    return (choice.get("delta") or {}).get("content") or ""


def _content_of_body(body: bytes) -> str:
    try:
        content = json.loads(body)["choices"][0]["message"]["content"]
    except (json.JSONDecodeError, KeyError, IndexError, TypeError):
        raise InvalidAnswerError("the response is not a chat completion", "invalid_json") from None
    if not isinstance(content, str):
        raise InvalidAnswerError("the completion has no text content", "invalid_json")
    return content


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
        self._http = httpx.AsyncClient(timeout=self.settings.timeout(), limits=limits, headers=self._headers)
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
                    warmed = await warm_up(self._http, endpoint, prefix, slots)
                report[endpoint.base_url] = {"mode": shape.mode, "warmed": warmed}
            except (RejectedError, EndpointError) as error:
                log.warning("npc_mind: %s", error)
                report[endpoint.base_url] = {"error": str(error)}
        return report

    async def decide(self, messages: Sequence[dict[str, str]], schema: DecisionSchema) -> Answer:
        """One decision from the least busy endpoint; raises an `LLMError` subclass on any failure."""
        if self._http is None:
            raise RuntimeError("LLMClient must be used inside `async with`")
        slot = await self.pool.acquire()
        outcome = "neutral"
        try:
            shape = await self.shape(slot.endpoint, schema)
            content = await self._post(slot.endpoint, self._body(messages, schema, shape))
            outcome = "success"
            return shape.parse(content)
        except EndpointError:
            outcome = "failure"
            raise
        finally:
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
            headers = {"Connection": "close"} if body["stream"] else None
            async with self._http.stream("POST", endpoint.chat_url, json=body, headers=headers) as response:
                if response.status_code != 200:
                    raise EndpointError(
                        f"{endpoint.base_url} answered HTTP {response.status_code}", "http_error"
                    )
                if not body["stream"]:
                    return _content_of_body(await response.aread())
                parts = []
                async for line in response.aiter_lines():
                    text = _content_of_stream_line(line)
                    if text:
                        parts.append(text)
                return "".join(parts)
        except httpx.TimeoutException as error:
            raise EndpointError(f"{endpoint.base_url}: {error.__class__.__name__}", "timeout") from None
        except httpx.ConnectError:
            raise EndpointError(f"{endpoint.base_url}: connection refused", "connect_error") from None
        except (httpx.TransportError, httpx.DecodingError) as error:
            raise EndpointError(
                f"{endpoint.base_url}: {error.__class__.__name__}", "connection_error"
            ) from None
