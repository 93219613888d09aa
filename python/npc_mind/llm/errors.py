"""Typed failures of an LLM request. Each has a stable `reason` string used in fallback events and metrics.

Messages never contain an API key: only endpoint URLs, status codes and exception class names.
"""

from __future__ import annotations


class LLMError(Exception):
    """Any failure of one request; the request falls back, it is never applied."""

    reason = "error"

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason


class EndpointError(LLMError):
    """The endpoint misbehaved (connect error, reset, timeout, HTTP error): counts against its breaker."""

    reason = "endpoint_error"


class InvalidAnswerError(LLMError):
    """The endpoint answered, but not with a schema-valid decision (bad JSON, missing field, bad intent)."""

    reason = "invalid_answer"


class RejectedError(LLMError):
    """Refused before any call was made: `queue_full` or `breaker_open`."""

    reason = "rejected"
