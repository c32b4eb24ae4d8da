"""Build Anthropic Messages and token-count requests (SPEC R-PRV-3, R-PRV-8 … R-PRV-12,
R-PRV-24, R-PRV-26, R-LIM-5).

The Messages API wants what a chat history does not have: a top-level ``system`` text, strictly
alternating user and assistant turns, tool results as blocks of a user turn, and tool inputs as
JSON objects. Theory of operation:

1. Non-result system messages with visible text are joined into ``system`` (R-PRV-9).
2. Every other message becomes content blocks on the user side (results, user text) or the
   assistant side (assistant text and ``tool_use``); a message with no block is skipped.
3. Consecutive messages of one side merge into one turn; a merged user turn lists its
   ``tool_result`` blocks first, as the API requires them to lead the turn (R-PRV-10).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ...schema import ROLE_ASSISTANT, ROLE_SYSTEM, ROLE_USER, Message, ToolDefinition, strict_json
from .._endpoint import OFFICIAL_BASE_URLS, request_model
from .._http import (
    ACCEPT_JSON,
    ACCEPT_STREAM,
    CONTENT_TYPE_JSON,
    HEADER_ACCEPT,
    HEADER_CONTENT_TYPE,
    HttpRequest,
    json_body,
    strip_base_url,
)
from .._limits import get_model_limits
from .._provider_error import RequestBuildError

__all__ = [
    "API_VERSION",
    "DEFAULT_BASE_URL",
    "PROVIDER",
    "build_count_request",
    "build_request",
    "reserved_output_tokens",
    "tool_input",
]

PROVIDER: Final = "anthropic"  # R-ERR-2: the provider attribute of every error
DEFAULT_BASE_URL: Final = OFFICIAL_BASE_URLS[PROVIDER]  # R-PRV-3, R-PRV-27: the official endpoint
PATH: Final = "/v1/messages"  # R-PRV-8
COUNT_PATH: Final = "/v1/messages/count_tokens"  # R-PRV-24
METHOD: Final = "POST"  # R-PRV-8
HEADER_API_KEY: Final = "x-api-key"  # R-PRV-8
HEADER_VERSION: Final = "anthropic-version"  # R-PRV-8
API_VERSION: Final = "2023-06-01"  # R-PRV-8
SYSTEM_SEPARATOR: Final = "\n\n"  # R-PRV-9: between the texts of several system messages
RAW_ARGUMENTS_KEY: Final = "_raw"  # R-PRV-11: holds arguments that are not a JSON object
EMPTY_INPUT_SCHEMA: Final[Mapping[str, Any]] = {"type": "object", "properties": {}}  # R-PRV-12

BLOCK_TEXT: Final = "text"
BLOCK_TOOL_USE: Final = "tool_use"
BLOCK_TOOL_RESULT: Final = "tool_result"


def _has_text(text: str) -> bool:
    """R-PRV-9, R-PRV-10: a text counts when it holds a non-white-space character (str.isspace)."""
    return bool(text) and not text.isspace()


def tool_input(arguments: str) -> dict[str, Any]:
    """The ``tool_use.input`` object for a call's raw arguments (R-PRV-11).

    ``""`` gives ``{}``; RFC 8259 JSON whose value is an object gives that object; anything else
    gives ``{"_raw": arguments}`` (RAW_ARGUMENTS_KEY), so the request stays valid and the model
    still sees what it sent. The stored arguments are never changed.
    """
    if arguments == "":
        return {}
    try:
        value = strict_json.loads(arguments)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {RAW_ARGUMENTS_KEY: arguments}


@dataclass(slots=True)
class _Turn:
    role: str
    results: list[dict[str, Any]] = field(default_factory=list)
    blocks: list[dict[str, Any]] = field(default_factory=list)

    def content(self) -> list[dict[str, Any]]:
        return self.results + self.blocks


def _no_calls(msg: Message, index: int) -> None:
    if msg.tool_calls:
        raise RequestBuildError(
            f"{PROVIDER}: messages[{index}]: a {msg.role} message cannot carry tool calls "
            "(only assistant messages can); it cannot be sent",
            provider=PROVIDER,
        )


def _text_blocks(text: str) -> list[dict[str, Any]]:
    return [{"type": BLOCK_TEXT, "text": text}] if _has_text(text) else []


def _add(turns: list[_Turn], msg: Message, index: int) -> None:
    """Append ``msg``'s blocks to the last turn of its side, or open a new turn (R-PRV-10)."""
    if msg.is_tool_result:
        role, results, blocks = ROLE_USER, [_tool_result(msg)], []
    elif msg.role == ROLE_USER:
        _no_calls(msg, index)
        role, results, blocks = ROLE_USER, [], _text_blocks(msg.content)
    else:
        role, results = ROLE_ASSISTANT, []
        blocks = _text_blocks(msg.content) + [
            {"type": BLOCK_TOOL_USE, "id": c.id, "name": c.name, "input": tool_input(c.arguments)}
            for c in msg.tool_calls
        ]
    if not results and not blocks:
        return
    if not turns or turns[-1].role != role:
        turns.append(_Turn(role))
    turns[-1].results.extend(results)
    turns[-1].blocks.extend(blocks)


def _tool_result(msg: Message) -> dict[str, Any]:
    block: dict[str, Any] = {"type": BLOCK_TOOL_RESULT, "tool_use_id": msg.tool_call_id}
    if msg.content:
        block["content"] = msg.content
    return block


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    schema = tool.to_dict()["input_schema"] if tool.input_schema is not None else dict(EMPTY_INPUT_SCHEMA)
    return {"name": tool.name, "description": tool.description, "input_schema": schema}


def reserved_output_tokens(model: str) -> int:
    """The ``max_tokens`` every Messages request sends: the model's output limit (R-PRV-9, R-PRV-26)."""
    return get_model_limits(model).output_tokens


def _conversation(model: str, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> dict[str, Any]:
    """``model``, ``system``, ``messages`` and ``tools``: what a message request and a count share."""
    system_parts: list[str] = []
    turns: list[_Turn] = []
    for index, msg in enumerate(messages):
        if msg.role == ROLE_SYSTEM and not msg.is_tool_result:
            _no_calls(msg, index)
            if _has_text(msg.content):
                system_parts.append(msg.content)
        else:
            _add(turns, msg, index)
    if not turns:
        raise RequestBuildError(
            f"{PROVIDER}: nothing to send: no message gives a user or assistant turn "
            "(every message is a system message or has only white space)",
            provider=PROVIDER,
        )
    body: dict[str, Any] = {"model": model}
    if system_parts:
        body["system"] = SYSTEM_SEPARATOR.join(system_parts)
    body["messages"] = [{"role": t.role, "content": t.content()} for t in turns]
    if tools:
        body["tools"] = [_tool(t) for t in tools]
    return body


def _headers(api_key: str, stream: bool) -> tuple[tuple[str, str], ...]:
    """R-PRV-8: ``x-api-key`` only with a key; a local server or a key-adding proxy gets none."""
    key = ((HEADER_API_KEY, api_key),) if api_key else ()
    return (
        *key,
        (HEADER_VERSION, API_VERSION),
        (HEADER_CONTENT_TYPE, CONTENT_TYPE_JSON),
        (HEADER_ACCEPT, ACCEPT_STREAM if stream else ACCEPT_JSON),
    )


def build_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition],
    *,
    stream: bool,
    api_key: str,
    base_url: str = DEFAULT_BASE_URL,
    reply_limit: int = 0,
) -> HttpRequest:
    """The HTTP request for one Messages call (R-PRV-8, R-PRV-9).

    A result is recognised by its ``tool_call_id`` whatever its role; the tool calls a result
    carries are not sent. ``max_tokens`` is the model's output limit from the registry.

    Args:
        model: the model name as configured; the request carries R-PRV-27's request model
            (``anthropic/`` removed on the official endpoint), the same limits either way (R-LIM-5).
        messages: the conversation (R-PRV-9, R-PRV-10).
        tools: the tool definitions (R-PRV-12); none means no ``tools`` member.
        stream: ask for an SSE stream.
        api_key: sent as ``x-api-key``; empty: no such header (R-PRV-8).
        base_url: the API root; one trailing ``/`` is removed (R-PRV-3).
        reply_limit: when positive, ``max_tokens`` is at most this (R-PRV-29).

    Raises:
        RequestBuildError: a non-result system or user message carries tool calls, or no
            user or assistant turn remains.
    """
    sent = request_model(PROVIDER, model, base_url)
    conversation = _conversation(sent, messages, tools)
    limit = reserved_output_tokens(model)
    if reply_limit > 0:
        limit = min(limit, reply_limit)
    body: dict[str, Any] = {"model": sent, "max_tokens": limit, **conversation}
    if stream:
        body["stream"] = True
    return HttpRequest(METHOD, strip_base_url(base_url) + PATH, _headers(api_key, stream), json_body(body))


def build_count_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition],
    *,
    api_key: str,
    base_url: str = DEFAULT_BASE_URL,
) -> HttpRequest:
    """The HTTP request that counts a Messages request's input tokens (R-PRV-24).

    The body is the one ``build_request`` sends without ``max_tokens`` and ``stream``, which the
    counting endpoint does not accept; the headers are those of a non-streaming request.

    Raises:
        RequestBuildError: as ``build_request``.
    """
    body = _conversation(request_model(PROVIDER, model, base_url), messages, tools)
    return HttpRequest(METHOD, strip_base_url(base_url) + COUNT_PATH, _headers(api_key, False), json_body(body))
