"""Parse Anthropic Messages responses, token counts and error bodies (SPEC R-PRV-14, R-PRV-24,
R-USE-4, R-ERR-3).

A ``tool_use`` block's arguments are the exact source text of its ``input`` value in the body
(R-PRV-14), not a re-serialisation: ``strict_json.member_spans`` finds where the value lies in
the text that was parsed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ...schema import ROLE_ASSISTANT, Message, ToolCall, Usage
from ...schema.strict_json import describe, element_spans, member_spans, value_start
from .._classify import error_from_object, error_from_response
from .._parsing import parse_body
from .._provider_error import ProviderError
from .._shape import ShapeError, expect_object, expect_str, optional_int
from ._request import BLOCK_TEXT, BLOCK_TOOL_USE, PROVIDER

__all__ = ["parse_count_response", "parse_error", "parse_response"]

TYPE_ERROR: Final = "error"  # R-PRV-14: a body or event of this type is an error (R-ERR-3)
COUNT_FIELD: Final = "input_tokens"  # R-PRV-24: the member of a count's answer

# R-USE-4, R-USE-5: the usage members read, each an integer or null.
USAGE_FIELDS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def parse_error(status: int, headers: Sequence[tuple[str, str]], body: bytes) -> ProviderError:
    """The typed error for an HTTP error status, streaming or not (R-ERR-3, R-ERR-4)."""
    return error_from_response(PROVIDER, status, headers, body)


def read_usage_fields(usage: Mapping[str, Any], path: str) -> dict[str, int]:
    """The USAGE_FIELDS of a ``usage`` object that are present and not null."""
    found = {name: optional_int(usage.get(name), f"{path}.{name}") for name in USAGE_FIELDS}
    return {name: value for name, value in found.items() if value is not None}


def usage_from_fields(fields: Mapping[str, int]) -> Usage:
    """R-USE-4: input counts the cache reads and writes too; the cache fields are reported when present."""
    cache_write = fields.get("cache_creation_input_tokens")
    cache_read = fields.get("cache_read_input_tokens")
    return Usage(
        fields.get("input_tokens", 0) + (cache_write or 0) + (cache_read or 0),
        fields.get("output_tokens", 0),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )


def _tool_call(block: Mapping[str, Any], text: str, block_start: int, path: str) -> ToolCall:
    span = member_spans(text, block_start).get("input")
    if span is None:
        raise ShapeError(f"{path}.input", "a tool_use block needs an input")
    call_id = expect_str(block.get("id"), f"{path}.id")
    return ToolCall(call_id, expect_str(block.get("name"), f"{path}.name"), text[span[0] : span[1]])


def _block_starts(text: str) -> list[int]:
    content = member_spans(text, value_start(text))["content"]  # the parsed body has a content list
    return [start for start, _ in element_spans(text, content[0])]


def _message(data: Mapping[str, Any], text: str) -> Message:
    blocks = data.get("content")
    if not isinstance(blocks, list):
        raise ShapeError("content", f"expected a list of content blocks, got {describe(blocks)}")
    starts: list[int] = []  # where each block begins in ``text``; found when a tool_use needs it
    parts: list[str] = []
    calls: list[ToolCall] = []
    for i, item in enumerate(blocks):
        block = expect_object(item, f"content[{i}]")
        kind = block.get("type")
        if kind == BLOCK_TEXT:
            parts.append(expect_str(block.get("text"), f"content[{i}].text"))
        elif kind == BLOCK_TOOL_USE:
            starts = starts or _block_starts(text)
            calls.append(_tool_call(block, text, starts[i], f"content[{i}]"))
        # thinking, redacted_thinking, server-tool and unknown blocks are skipped (R-PRV-14)
    return Message(ROLE_ASSISTANT, "".join(parts), tuple(calls))


def parse_response(status: int, headers: Sequence[tuple[str, str]], body: bytes) -> tuple[Message, Usage | None]:
    """The assistant message and usage of a non-streaming response (R-PRV-14, R-USE-4).

    Args:
        status: the HTTP status.
        headers: the response headers.
        body: the whole response body.

    Returns:
        The message (role ``assistant``) and the usage, or None when the body has no ``usage``.

    Raises:
        ProviderError: the typed error of R-ERR-3 for an error status or a ``"type": "error"`` body.
        MalformedResponse: a body that is not JSON, or whose ``content`` is not a list of blocks.
    """
    return parse_body(PROVIDER, parse_error, _read, status, headers, body)


def _top(data: Any, status: int, headers: Sequence[tuple[str, str]]) -> Mapping[str, Any]:
    """The body's object; a ``"type": "error"`` body raises its typed error (R-PRV-14, R-ERR-3)."""
    top = expect_object(data, "body")
    if top.get("type") == TYPE_ERROR:
        raise error_from_object(PROVIDER, top, status=status, headers=headers)
    return top


def _read(data: Any, text: str, status: int, headers: Sequence[tuple[str, str]]) -> tuple[Message, Usage | None]:
    top = _top(data, status, headers)
    message = _message(top, text)
    usage = top.get("usage")
    if usage is None:
        return message, None
    return message, usage_from_fields(read_usage_fields(expect_object(usage, "usage"), "usage"))


def parse_count_response(status: int, headers: Sequence[tuple[str, str]], body: bytes) -> int:
    """The ``input_tokens`` of a token-count answer (R-PRV-24).

    Raises:
        ProviderError: the typed error of R-ERR-3 for an error status or a ``"type": "error"`` body.
        MalformedResponse: a body that is not JSON, or without a non-negative integer ``input_tokens``.
    """
    return parse_body(PROVIDER, parse_error, _read_count, status, headers, body)


def _read_count(data: Any, text: str, status: int, headers: Sequence[tuple[str, str]]) -> int:
    top = _top(data, status, headers)
    count = optional_int(top.get(COUNT_FIELD), COUNT_FIELD)
    if count is None or count < 0:
        raise ShapeError(COUNT_FIELD, f"expected a non-negative integer, got {describe(top.get(COUNT_FIELD))}")
    return count
