"""Parse OpenAI Chat Completions responses and error bodies (SPEC R-PRV-13, R-USE-2, R-ERR-3).

The body is parsed as JSON, never matched as text (R-PRV-20); members not named here
(``system_fingerprint``, ``logprobs``, ``service_tier``, …) are ignored wherever they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ...schema import ROLE_ASSISTANT, Message, ToolCall, Usage
from ...schema.strict_json import describe
from .._classify import error_from_object, error_from_response
from .._parsing import parse_body
from .._provider_error import ProviderError
from .._shape import ShapeError, expect_object, expect_str, optional_int, optional_list, optional_object, optional_str
from ._request import PROVIDER, TOOL_TYPE_FUNCTION

__all__ = ["parse_error", "parse_response", "read_usage"]

LEGACY_FUNCTION_CALL: Final = "function_call"  # R-PRV-13: the pre-tools format, refused


def parse_error(status: int, headers: Sequence[tuple[str, str]], body: bytes) -> ProviderError:
    """The typed error for an HTTP error status, streaming or not (R-ERR-3, R-ERR-4)."""
    return error_from_response(PROVIDER, status, headers, body)


def read_usage(value: object, path: str = "usage") -> Usage:
    """R-USE-2: ``prompt_tokens`` (cached tokens included) and ``completion_tokens``; the cached
    tokens of ``prompt_tokens_details`` are also reported as ``cache_read_tokens``.

    Raises:
        ShapeError: ``value`` is not an object, or a count is not an integer.
    """
    usage = expect_object(value, path)
    details = optional_object(usage.get("prompt_tokens_details"), f"{path}.prompt_tokens_details")
    cached = None
    if details is not None:
        cached = optional_int(details.get("cached_tokens"), f"{path}.prompt_tokens_details.cached_tokens")
    return Usage(
        optional_int(usage.get("prompt_tokens"), f"{path}.prompt_tokens") or 0,
        optional_int(usage.get("completion_tokens"), f"{path}.completion_tokens") or 0,
        cache_read_tokens=cached,
    )


def _tool_call(item: object, path: str) -> ToolCall:
    call = expect_object(item, path)
    kind = call.get("type")
    if kind != TOOL_TYPE_FUNCTION:
        raise ShapeError(
            f"{path}.type", f"expected 'function', got {describe(kind)}; this tool-call format is not supported"
        )
    function = expect_object(call.get("function"), f"{path}.function")
    return ToolCall(
        expect_str(call.get("id"), f"{path}.id"),
        expect_str(function.get("name"), f"{path}.function.name"),
        optional_str(function.get("arguments"), f"{path}.function.arguments") or "",
    )


def _message(data: Mapping[str, Any]) -> Message:
    choices = optional_list(data.get("choices"), "choices")
    if not choices:
        raise ShapeError("choices", "expected at least one choice, got none")
    message = expect_object(expect_object(choices[0], "choices[0]").get("message"), "choices[0].message")
    path = "choices[0].message"
    if message.get(LEGACY_FUNCTION_CALL) is not None:
        raise ShapeError(f"{path}.{LEGACY_FUNCTION_CALL}", "the legacy function_call format is not supported")
    content = optional_str(message.get("content"), f"{path}.content") or ""
    content += optional_str(message.get("refusal"), f"{path}.refusal") or ""
    calls = optional_list(message.get("tool_calls"), f"{path}.tool_calls") or []
    return Message(
        ROLE_ASSISTANT, content, tuple(_tool_call(c, f"{path}.tool_calls[{i}]") for i, c in enumerate(calls))
    )


def parse_response(status: int, headers: Sequence[tuple[str, str]], body: bytes) -> tuple[Message, Usage | None]:
    """The assistant message and usage of a non-streaming response (R-PRV-13, R-USE-2).

    Args:
        status: the HTTP status.
        headers: the response headers.
        body: the whole response body.

    Returns:
        The message (role ``assistant``) and the usage, or None when the body has no ``usage``.

    Raises:
        ProviderError: the typed error of R-ERR-3 for an error status or an ``error`` object.
        MalformedResponse: a body that is not JSON, has no choices, uses ``function_call``, or
            holds a tool call that is not of type ``function``.
    """
    return parse_body(PROVIDER, parse_error, _read, status, headers, body)


def _read(data: Any, text: str, status: int, headers: Sequence[tuple[str, str]]) -> tuple[Message, Usage | None]:
    top = expect_object(data, "body")
    if top.get("error") is not None:
        raise error_from_object(PROVIDER, top, status=status, headers=headers)
    usage = optional_object(top.get("usage"), "usage")
    return _message(top), None if usage is None else read_usage(usage)
