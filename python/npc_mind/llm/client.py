"""An async OpenAI-compatible `/chat/completions` client with strict decision validation.

- Streams by default: llama-server notices a closed connection only while it is streaming, so a
  cancelled request frees its slot at once (measured in `benchmarks/bench_llm.py`).
- Explicit connect/read/write/pool timeouts; every failure is a typed `LLMError`.
- The API key comes only from `NPC_MIND_API_KEY` and is never part of a message, repr or setting.
- Per response, Python only parses and validates, to leave the GIL to the game's main thread.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from npc_mind.llm.breaker import BreakerConfig
from npc_mind.llm.endpoints import Endpoint, EndpointPool
from npc_mind.llm.errors import EndpointError, InvalidAnswerError
from npc_mind.llm.schema import Answer, DecisionSchema

API_KEY_ENV = "NPC_MIND_API_KEY"
MODEL_ENV = "NPC_MIND_LLM_MODEL"


@dataclasses.dataclass(frozen=True)
class LLMSettings:
    """max_tokens: 1..1024 (a decision needs ~30); temperature: 0..2; timeouts in seconds, 0.01..120;
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

    def _body(self, messages: Sequence[dict[str, str]], schema: DecisionSchema) -> dict[str, Any]:
        return {
            "model": self._model,
            "messages": list(messages),
            "max_tokens": self.settings.max_tokens,
            "temperature": self.settings.temperature,
            "response_format": schema.response_format(),
            "stream": self.settings.stream,
        }

    async def decide(self, messages: Sequence[dict[str, str]], schema: DecisionSchema) -> Answer:
        """One decision from the least busy endpoint; raises an `LLMError` subclass on any failure."""
        if self._http is None:
            raise RuntimeError("LLMClient must be used inside `async with`")
        slot = await self.pool.acquire()
        outcome = "neutral"
        try:
            content = await self._post(slot.endpoint, self._body(messages, schema))
            outcome = "success"
            return schema.parse(content)
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
