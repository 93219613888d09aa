"""`npc_mind.llm`: an OpenAI-compatible client for NPC decisions, strict about what it accepts.

- `LLMClient`: async `/chat/completions`, streaming, timeouts; the body follows the endpoint's
  `RequestShape` (choice / json on llama-server, a JSON-schema `response_format` elsewhere).
- `Endpoint` / `EndpointPool`: several endpoints, routing by pace (one too slow rests), a cap each.
- `CircuitBreaker`: stop calling a failing endpoint for a cooldown, then probe.
- `DecisionSchema`: the allowed intents, the schema, strict validation into an `Answer`.
- `build_messages`: a stable prefix per hub (`stable_messages`) and a short, coarse situation.
- `LLMTransport`: the one asyncio loop thread the game's main thread submits to and cancels on.
- `LocalLlamaServer`: a local llama-server on a free loopback port (`python -m npc_mind.llm`).
"""

from npc_mind.llm.breaker import BreakerConfig, BreakerState, CircuitBreaker
from npc_mind.llm.client import API_KEY_ENV, LLMClient, LLMSettings
from npc_mind.llm.endpoints import URL_ENV, Endpoint, EndpointPool, endpoints_from_env
from npc_mind.llm.errors import EndpointError, InvalidAnswerError, LLMError, RejectedError
from npc_mind.llm.local_server import LocalLlamaServer, LocalServerError, resolve_endpoints
from npc_mind.llm.prompt import (
    Example,
    MemoryFact,
    PromptConfig,
    build_messages,
    memory_facts,
    stable_messages,
)
from npc_mind.llm.schema import Answer, ChoiceCollisionError, DecisionSchema
from npc_mind.llm.shape import RequestShape
from npc_mind.llm.transport import LLMTransport, Outcome, Request, Ticket, TransportConfig

__all__ = [
    "API_KEY_ENV",
    "URL_ENV",
    "Answer",
    "BreakerConfig",
    "BreakerState",
    "ChoiceCollisionError",
    "CircuitBreaker",
    "DecisionSchema",
    "Endpoint",
    "EndpointError",
    "EndpointPool",
    "Example",
    "InvalidAnswerError",
    "LLMClient",
    "LLMError",
    "LLMSettings",
    "LLMTransport",
    "LocalLlamaServer",
    "LocalServerError",
    "MemoryFact",
    "Outcome",
    "PromptConfig",
    "RejectedError",
    "Request",
    "RequestShape",
    "Ticket",
    "TransportConfig",
    "build_messages",
    "endpoints_from_env",
    "memory_facts",
    "resolve_endpoints",
    "stable_messages",
]
