"""Classify provider errors (SPEC R-ERR-2, R-ERR-3, R-ERR-4, R-ERR-8 … R-ERR-11).

The rules of R-ERR-3 are data: ``BODY_RULES`` (by the provider's own error type or code, or by
the words of its message) are tried first, in order, then ``STATUS_RULES`` (by HTTP status);
the first match wins. Both wire formats call ``error_from_response`` for an HTTP error status
(streaming or not) and ``error_from_object`` for an error object inside a successful body or
stream, so an overflow is recognised wherever it arrives.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timezone
from typing import Any, Final, Literal

from ._http import header_value
from ._provider_error import (
    AuthenticationError,
    ContextLengthExceeded,
    InvalidRequestError,
    ModelNotFound,
    OverloadedError,
    ProviderError,
    RateLimitError,
    ServerError,
)
from ._shape import decode_body, loads

__all__ = ["ANTHROPIC_OVERFLOW_PHRASES", "ERROR_EXCERPT_CHARS", "OPENAI_OVERFLOW_PHRASES"]

ERROR_EXCERPT_CHARS: Final = 500  # R-ERR-3: a non-JSON error body is quoted up to this many characters
STREAM_WHERE: Final = "stream"  # R-ERR-4: stands for "HTTP <status>" for an error event inside a stream

HEADER_RETRY_AFTER: Final = "retry-after"  # R-ERR-2: seconds, or an HTTP date
HEADER_SHOULD_RETRY: Final = "x-should-retry"  # R-ERR-2: "true" / "false"
REQUEST_ID_HEADERS: Final = ("request-id", "x-request-id")  # R-ERR-2, tried in this order
_SHOULD_RETRY_VALUES: Final = {"true": True, "false": False}
# RFC 9110 delta-seconds, plus a fraction as some servers send ("1.5").
_SECONDS: Final = re.compile(r"[0-9]+(?:\.[0-9]+)?")


# R-ERR-3, R-ERR-8: the words of Anthropic's two context-window refusals, one per line: the
# prompt alone is too long, or the prompt plus ``max_tokens`` exceeds the window.
ANTHROPIC_OVERFLOW_PHRASES: Final = "prompt is too long\nexceed context limit"
# R-ERR-9: what OpenAI-compatible servers say when a request does not fit, one per line: OpenAI,
# vLLM and OpenRouter; llama.cpp server; LiteLLM proxy; Ollama; Anthropic's words relayed by a proxy.
OPENAI_OVERFLOW_PHRASES: Final = (
    "maximum context length\n"
    "exceeds the available context size\n"
    "contextwindowexceedederror\n"
    "longer than the context length\n"
    + ANTHROPIC_OVERFLOW_PHRASES
)
LLAMA_CPP_OVERFLOW_TYPE: Final = "exceed_context_size_error"  # R-ERR-9: llama.cpp server's error.type
VLLM_ERROR_OBJECT: Final = "error"  # R-ERR-10: the top-level "object" of vLLM's older error body


@dataclass(frozen=True, slots=True)
class BodyRule:
    """One R-ERR-3 rule on an error object: ``error.<field>`` in ``values`` (any error object when
    ``field`` is None) and, when ``message_contains`` is not empty, ``error.message`` containing
    one of those phrases (ignoring case), gives ``error``."""

    provider: str
    field: Literal["type", "code"] | None
    values: frozenset[str]
    error: type[ProviderError]
    message_contains: tuple[str, ...] = ()


# R-ERR-3 (with R-ERR-8 and R-ERR-9), first match wins.
BODY_RULES: Final[tuple[BodyRule, ...]] = (
    BodyRule("anthropic", "type", frozenset({"authentication_error", "permission_error"}), AuthenticationError),
    BodyRule("anthropic", "type", frozenset({"rate_limit_error"}), RateLimitError),
    BodyRule("anthropic", "type", frozenset({"overloaded_error"}), OverloadedError),
    BodyRule(
        "anthropic",
        "type",
        frozenset({"invalid_request_error"}),
        ContextLengthExceeded,
        tuple(ANTHROPIC_OVERFLOW_PHRASES.splitlines()),
    ),
    BodyRule("anthropic", "type", frozenset({"not_found_error"}), ModelNotFound),
    BodyRule("anthropic", "type", frozenset({"invalid_request_error", "request_too_large"}), InvalidRequestError),
    BodyRule("anthropic", "type", frozenset({"api_error"}), ServerError),
    BodyRule("openai", "code", frozenset({"context_length_exceeded"}), ContextLengthExceeded),
    BodyRule("openai", "type", frozenset({LLAMA_CPP_OVERFLOW_TYPE}), ContextLengthExceeded),
    BodyRule("openai", None, frozenset(), ContextLengthExceeded, tuple(OPENAI_OVERFLOW_PHRASES.splitlines())),
    BodyRule("openai", "code", frozenset({"model_not_found"}), ModelNotFound),
)

# R-ERR-3, by HTTP status when no body rule matched: (lowest, highest, class), first match wins.
# A 2xx status means an error object inside a successful body or stream.
STATUS_RULES: Final[tuple[tuple[int, int, type[ProviderError]], ...]] = (
    (401, 401, AuthenticationError),
    (403, 403, AuthenticationError),
    (429, 429, RateLimitError),
    (529, 529, OverloadedError),
    (400, 499, InvalidRequestError),
    (500, 599, ServerError),
    (200, 299, ServerError),
)


@dataclass(frozen=True, slots=True)
class _ErrorObject:
    type: str | None
    code: str | None
    message: str | None


def _error_object(data: object, provider: str) -> _ErrorObject | None:
    """The ``error`` member of an error body in either provider's shape, or None when absent.

    An OpenAI-compatible body without an ``error`` object whose ``object`` is ``"error"`` (vLLM
    before its error bodies took OpenAI's shape) is itself the error object (R-ERR-10).
    """
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if not isinstance(error, dict):
        if provider != "openai" or data.get("object") != VLLM_ERROR_OBJECT:
            return None
        error = data

    def text(key: str) -> str | None:
        value = error.get(key)
        return value if isinstance(value, str) and value else None

    return _ErrorObject(text("type"), text("code"), error["message"] if isinstance(error.get("message"), str) else None)


def _rule_matches(rule: BodyRule, provider: str, obj: _ErrorObject) -> bool:
    if rule.provider != provider:
        return False
    if rule.field is not None and (obj.type if rule.field == "type" else obj.code) not in rule.values:
        return False
    words = (obj.message or "").lower()
    return not rule.message_contains or any(phrase in words for phrase in rule.message_contains)


def _classify(provider: str, status: int | None, obj: _ErrorObject | None) -> type[ProviderError]:
    if obj is not None:
        for rule in BODY_RULES:
            if _rule_matches(rule, provider, obj):
                return rule.error
    if status is None:  # an error event inside a stream that arrived with HTTP 200
        return ServerError
    for lowest, highest, error in STATUS_RULES:
        if lowest <= status <= highest:
            return error
    return ProviderError  # 1xx or 3xx: nothing more specific can be said


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a ``retry-after`` value: a number of seconds, or an HTTP date (R-ERR-2).

    Args:
        value: the header value, or None.
        now: the current Unix time for an HTTP date (default: ``time.time()``).

    Returns:
        The seconds to wait (never negative), or None when the value is absent or unreadable.
    """
    if value is None:
        return None
    value = value.strip()
    if _SECONDS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": RFC 9110 dates are GMT anyway
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def parse_should_retry(value: str | None) -> bool | None:
    """``x-should-retry: true|false`` as a bool, else None (R-ERR-2)."""
    return None if value is None else _SHOULD_RETRY_VALUES.get(value.strip().lower())


def find_request_id(data: object, headers: Sequence[tuple[str, str]]) -> str | None:
    """The body's ``request_id``, else a ``request-id`` / ``x-request-id`` header, else None (R-ERR-2)."""
    if isinstance(data, dict) and isinstance(data.get("request_id"), str) and data["request_id"]:
        return str(data["request_id"])
    for name in REQUEST_ID_HEADERS:
        found = header_value(headers, name)
        if found:
            return found
    return None


def _message(provider: str, where: str, obj: _ErrorObject, fallback: str) -> str:
    """R-ERR-4: ``<provider>: <where> <error type>: <provider message>``."""
    kind = obj.type or obj.code
    words = obj.message if obj.message is not None else fallback
    return f"{provider}: {where} {kind}: {words}" if kind else f"{provider}: {where}: {words}"


def error_from_response(
    provider: str,
    status: int,
    headers: Sequence[tuple[str, str]],
    body: bytes,
    *,
    now: float | None = None,
) -> ProviderError:
    """The typed error for an HTTP error status (R-ERR-2, R-ERR-3, R-ERR-4).

    A body in the provider's JSON error shape (an object with an ``error`` object) is classified
    by BODY_RULES and then by status; any other body by status alone, with its first
    ERROR_EXCERPT_CHARS characters as the message.

    Args:
        provider: ``"openai"`` or ``"anthropic"``; selects the body rules.
        status: the HTTP status.
        headers: the response headers.
        body: the whole response body.
        now: the current Unix time, for a ``retry-after`` HTTP date.
    """
    text = decode_body(body)
    excerpt = text.strip()[:ERROR_EXCERPT_CHARS]
    try:
        data: Any = loads(text)
    except ValueError:
        data = None
    obj = _error_object(data, provider)
    where = f"HTTP {status}"
    if obj is None:
        message = f"{provider}: {where}: {excerpt or '(empty body)'}"
        error_type = None
    else:
        message = _message(provider, where, obj, excerpt)
        error_type = obj.type or obj.code
    return _classify(provider, status, obj)(
        message,
        provider=provider,
        status=status,
        error_type=error_type,
        request_id=find_request_id(data, headers),
        retry_after=parse_retry_after(header_value(headers, HEADER_RETRY_AFTER), now),
        should_retry=parse_should_retry(header_value(headers, HEADER_SHOULD_RETRY)),
        body_excerpt=excerpt,
    )


def error_from_object(
    provider: str,
    data: Mapping[str, Any],
    *,
    status: int | None = None,
    headers: Sequence[tuple[str, str]] = (),
) -> ProviderError:
    """The typed error for an error object inside a successful body or stream (R-ERR-3, R-ERR-4).

    Args:
        provider: ``"openai"`` or ``"anthropic"``; selects the body rules.
        data: the whole payload holding the ``error`` member.
        status: the (2xx) HTTP status of a body; None for an event inside a stream.
        headers: the response headers, for the request id when the payload has none.
    """
    obj = _error_object(dict(data), provider) or _ErrorObject(None, None, None)
    where = STREAM_WHERE if status is None else f"HTTP {status}"
    return _classify(provider, status, obj)(
        _message(provider, where, obj, "(no message)"),
        provider=provider,
        status=status,
        error_type=obj.type or obj.code,
        request_id=find_request_id(data, headers),
    )
