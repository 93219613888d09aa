"""Request shapes: what one endpoint is sent for one decision schema, and how its answer is read.

Three modes (`Endpoint.mode`; `auto`, the default, is `choice` on llama-server and `schema` elsewhere):

- `choice` (llama-server): the answer is prefilled with `{"intent":"` and the model generates one
  token, constrained by a grammar to the first tokens of the allowed intents (their ids come from the
  server's `/tokenize` at start; intents sharing a first token are refused, `ChoiceCollisionError`),
  then the end token: the fastest shape (only the situation to evaluate, one token to generate);
  urgency is left to the local selector.
- `json` (llama-server): the same prefill, then a grammar with one spelling per answer and no
  whitespace (`pursue","urgency":0.7}`), `max_tokens` sized from the longest valid answer: never cut.
- `schema` (any OpenAI-compatible server): `response_format` with the JSON schema, `max_tokens` from
  the settings.

`detect_kind`, `first_tokens` and `warm_up` are the start-up requests; they run on the client's loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from npc_mind.llm.bodies import ACCEPT_ENCODING, read_capped
from npc_mind.llm.endpoints import Endpoint
from npc_mind.llm.errors import InvalidAnswerError
from npc_mind.llm.schema import ANSWER_PREFIX, Answer, ChoiceCollisionError, DecisionSchema

PROBE_TIMEOUT = 2.0  # seconds for a start-up request (detection, tokenization)
# bytes a start-up answer may take, on the wire and decoded (llama-server's `/props`, with a long
# chat template, is tens of KB); past it the answer is `too_large`, as a completion over its caps is
PROBE_CAP = 1 << 20
WARM_UP_TIMEOUT = 30.0  # a cold prefix on a busy one-thread server takes a while


def resolve_mode(mode: str, kind: str) -> str:
    """The mode an endpoint of `kind` uses when `mode` is declared (`auto`: the documented default)."""
    if kind != "llama":
        return "schema"  # choice and json need llama-server's grammar, prefill and tokenizer
    return "choice" if mode == "auto" else mode


@dataclasses.dataclass(frozen=True)
class RequestShape:
    """mode: `choice`, `json` or `schema`; grammar: GBNF or None; max_tokens: None to take the
    settings'; choices: for `choice`, the text of each intent's first token -> the intent."""

    schema: DecisionSchema
    mode: str
    grammar: str | None = None
    max_tokens: int | None = None
    choices: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @classmethod
    def for_mode(
        cls, schema: DecisionSchema, mode: str, tokens: Mapping[str, tuple[int, str]] | None = None
    ) -> RequestShape:
        """tokens: intent -> (first token id, its text), needed by `choice`."""
        if mode == "schema":
            return cls(schema, mode)
        if mode == "json":
            # Every token is at least one character; +1 for the end token the grammar leaves room for.
            return cls(schema, mode, schema.answer_grammar(), len(schema.longest_answer()) + 1)
        if mode == "choice":
            if tokens is None:
                raise ValueError("choice mode needs each intent's first token")
            grammar = schema.choice_grammar({name: token for name, (token, _) in tokens.items()})
            return cls(schema, mode, grammar, 2, {text: name for name, (_, text) in tokens.items()})
        raise ValueError(f"unknown mode {mode!r}")

    @property
    def prefilled(self) -> bool:
        return self.mode != "schema"

    def body(
        self, messages: Sequence[Mapping[str, str]], *, model: str, max_tokens: int, temperature: float,
        stream: bool,
    ) -> dict[str, Any]:  # fmt: skip
        """The `/chat/completions` body; `max_tokens` is the settings' (used in `schema` mode)."""
        chat = [dict(message) for message in messages]
        body: dict[str, Any] = {"model": model}
        if self.prefilled:
            chat.append({"role": "assistant", "content": ANSWER_PREFIX})
            body["grammar"] = self.grammar
        else:
            body["response_format"] = self.schema.response_format()
        body |= {
            "messages": chat,
            "max_tokens": self.max_tokens or max_tokens,
            "temperature": temperature,
            "stream": stream,
        }
        return body

    def parse(self, content: str) -> Answer:
        """The validated answer; `InvalidAnswerError` unless it is one."""
        if not self.prefilled:
            return self.schema.parse(content)
        # llama-server repeats the prefilled text in a whole message; a stream carries only what follows.
        tail = content.removeprefix(ANSWER_PREFIX)
        if self.mode == "json":
            return self.schema.parse(ANSWER_PREFIX + tail)
        intent = self.choices.get(tail)
        if intent is None:
            raise InvalidAnswerError(f"{tail[:48]!r} is not the first token of an allowed intent")
        return Answer(intent, None)


async def probe(http: httpx.AsyncClient, method: str, url: str, **options: Any) -> Any:
    """A start-up request's JSON answer, its body read within `PROBE_CAP`: raises
    `httpx.HTTPStatusError` for a status other than 200 (its body unread), `InvalidAnswerError`
    (`too_large`, or not JSON) and any other `httpx.HTTPError`."""
    request = http.stream(method, url, headers=ACCEPT_ENCODING, timeout=PROBE_TIMEOUT, **options)
    async with request as response:
        if response.status_code != 200:
            message = f"{url} answered HTTP {response.status_code}"
            raise httpx.HTTPStatusError(message, request=response.request, response=response)
        body = await read_capped(response, PROBE_CAP, PROBE_CAP)
    try:
        return json.loads(body)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError
        raise InvalidAnswerError(f"{url}: the answer is not JSON", "invalid_json") from None


async def detect_kind(http: httpx.AsyncClient, endpoint: Endpoint) -> str | None:
    """`llama` if the endpoint's server answers llama-server's `/props`, `openai` if it answers
    otherwise (an answer over `PROBE_CAP` is not llama-server's), None if it could not be reached
    (ask again later)."""
    try:
        props = await probe(http, "GET", f"{endpoint.root_url}/props")
    except (httpx.HTTPStatusError, InvalidAnswerError):
        return "openai"
    except httpx.HTTPError:
        return None
    return "llama" if isinstance(props, dict) and "default_generation_settings" in props else "openai"


async def first_tokens(
    http: httpx.AsyncClient, endpoint: Endpoint, intents: Sequence[str]
) -> dict[str, tuple[int, str]]:
    """Each intent's first token (id, text) in the answer's context (after `{"intent":"`), from the
    server's `/tokenize`; raises `httpx.HTTPError` when it cannot ask, `ChoiceCollisionError` when an
    intent has no first token of its own there."""
    prefix = await _tokenize(http, endpoint, ANSWER_PREFIX)
    tokens = {}
    for name in intents:
        pieces = await _tokenize(http, endpoint, ANSWER_PREFIX + name)
        if pieces[: len(prefix)] != prefix or len(pieces) <= len(prefix):
            raise ChoiceCollisionError(
                f"choice mode: the tokenizer merges {name!r} with the answer's prefix; use mode 'json'"
            )
        tokens[name] = pieces[len(prefix)]
    return tokens


async def _tokenize(http: httpx.AsyncClient, endpoint: Endpoint, text: str) -> list[tuple[int, str]]:
    body = {"content": text, "with_pieces": True}
    answer = await probe(http, "POST", f"{endpoint.root_url}/tokenize", json=body)
    return [(int(t["id"]), str(t["piece"])) for t in answer["tokens"]]


async def warm_up(
    http: httpx.AsyncClient, endpoint: Endpoint, prefix: Sequence[Mapping[str, str]], slots: int
) -> list[float]:
    """Have each of the server's slots evaluate and cache the stable prefix (one request per slot, sent
    to it by `id_slot`: left to itself the server gives a prompt it has just cached to the same slot);
    returns the seconds each one that succeeded took (all slots busy at once, as under load)."""

    async def one(slot: int) -> float | None:
        body = {
            "messages": [*prefix, {"role": "user", "content": ""}],
            "max_tokens": 1,
            "temperature": 0.0,
            "cache_prompt": True,
            "id_slot": slot,
        }
        started = time.monotonic()
        try:
            response = await http.post(endpoint.chat_url, json=body, timeout=WARM_UP_TIMEOUT)
        except httpx.HTTPError:
            return None
        return time.monotonic() - started if response.status_code == 200 else None

    done = await asyncio.gather(*(one(slot) for slot in range(slots)))
    return [seconds for seconds in done if seconds is not None]


async def server_slots(http: httpx.AsyncClient, endpoint: Endpoint) -> int:
    """llama-server's slot count (`/props` total_slots), at most the endpoint's in-flight cap."""
    try:
        props = await probe(http, "GET", f"{endpoint.root_url}/props")
        return max(1, min(endpoint.max_in_flight, int(props.get("total_slots", 1))))
    except (httpx.HTTPError, InvalidAnswerError, ValueError, TypeError, AttributeError):
        return 1
