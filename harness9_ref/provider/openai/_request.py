"""Build OpenAI Chat Completions requests (SPEC R-PRV-3 … R-PRV-7, R-USE-3).

Messages map one to one, in order. Tool-call arguments are sent as the raw text the model
produced, even when it is not valid JSON (R-MSG-3): the API takes a string there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from ...schema import ROLE_ASSISTANT, ROLE_SYSTEM, ROLE_USER, Message, ToolDefinition
from .._endpoint import OFFICIAL_BASE_URLS, is_official_endpoint, request_model
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
from .._provider_error import RequestBuildError

__all__ = ["DEFAULT_BASE_URL", "PROVIDER", "build_request", "reserved_output_tokens"]

PROVIDER: Final = "openai"  # R-ERR-2: the provider attribute of every error
DEFAULT_BASE_URL: Final = OFFICIAL_BASE_URLS[PROVIDER]  # R-PRV-3, R-PRV-27: the official endpoint
PATH: Final = "/chat/completions"  # R-PRV-4
METHOD: Final = "POST"  # R-PRV-4
HEADER_AUTHORIZATION: Final = "Authorization"  # R-PRV-4: "Bearer <api_key>"
ROLE_TOOL: Final = "tool"  # R-PRV-6: the wire role of a tool result
TOOL_TYPE_FUNCTION: Final = "function"  # R-PRV-6, R-PRV-7
MAX_TOKENS: Final = "max_tokens"  # R-PRV-29: a reply limit, as compatible servers read it
MAX_COMPLETION_TOKENS: Final = "max_completion_tokens"  # R-PRV-29: the official endpoint's name for it
STREAM_OPTIONS: Final[Mapping[str, bool]] = {"include_usage": True}  # R-PRV-5, R-USE-3


def _result(msg: Message, index: int) -> dict[str, Any]:
    return {"role": ROLE_TOOL, "tool_call_id": msg.tool_call_id, "content": msg.content}


def _plain(msg: Message, index: int) -> dict[str, Any]:
    if msg.tool_calls:
        raise RequestBuildError(
            f"{PROVIDER}: messages[{index}]: a {msg.role} message cannot carry tool calls "
            "(only assistant messages can); it cannot be sent",
            provider=PROVIDER,
        )
    return {"role": msg.role, "content": msg.content}


def _assistant(msg: Message, index: int) -> dict[str, Any]:
    if not msg.tool_calls:
        return {"role": ROLE_ASSISTANT, "content": msg.content}
    return {
        "role": ROLE_ASSISTANT,
        "content": msg.content or None,
        "tool_calls": [
            {
                "id": call.id,
                "type": TOOL_TYPE_FUNCTION,
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in msg.tool_calls
        ],
    }


# R-PRV-6: how each role of a non-result message is sent.
_BY_ROLE: Final[Mapping[str, Callable[[Message, int], dict[str, Any]]]] = {
    ROLE_SYSTEM: _plain,
    ROLE_USER: _plain,
    ROLE_ASSISTANT: _assistant,
}


def _message(msg: Message, index: int) -> dict[str, Any]:
    """R-PRV-6: a result is a ``tool`` message whatever its role; the calls a result carries
    are not sent (results are recognised by ``tool_call_id`` alone, R-MSG-1)."""
    if msg.is_tool_result:
        return _result(msg, index)
    return _BY_ROLE[msg.role](msg, index)


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    """R-PRV-7: ``parameters`` is left out when the schema is null."""
    function: dict[str, Any] = {"name": tool.name, "description": tool.description}
    if tool.input_schema is not None:
        function["parameters"] = tool.to_dict()["input_schema"]
    return {"type": TOOL_TYPE_FUNCTION, "function": function}


def reserved_output_tokens(model: str) -> int:
    """No ``max_tokens`` is sent (R-PRV-5), so the server reserves nothing for the reply (R-PRV-26)."""
    del model  # the same for every model
    return 0


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
    """The HTTP request for one chat completion (R-PRV-4, R-PRV-5).

    Args:
        model: the model name as configured; the request carries R-PRV-27's request model
            (``openai/`` removed on the official endpoint, kept for a router).
        messages: the conversation, sent one to one and in order (R-PRV-6).
        tools: the tool definitions (R-PRV-7); none means no ``tools`` member.
        stream: ask for an SSE stream with usage in its last chunk (R-USE-3).
        api_key: sent as ``Authorization: Bearer <api_key>``; empty: no such header (a local server).
        base_url: the API root; one trailing ``/`` is removed (R-PRV-3).
        reply_limit: when positive, the most tokens the reply may take (R-PRV-29): sent as
            ``max_completion_tokens`` on the official endpoint, which refuses ``max_tokens``
            for its newer models, and as ``max_tokens``, which every compatible server reads,
            elsewhere.

    Raises:
        RequestBuildError: a non-result system or user message carries tool calls.
    """
    sent = request_model(PROVIDER, model, base_url)
    body: dict[str, Any] = {"model": sent, "messages": [_message(m, i) for i, m in enumerate(messages)]}
    if tools:
        body["tools"] = [_tool(t) for t in tools]
    if reply_limit > 0:
        body[MAX_COMPLETION_TOKENS if is_official_endpoint(PROVIDER, base_url) else MAX_TOKENS] = reply_limit
    if stream:
        body["stream"] = True
        body["stream_options"] = dict(STREAM_OPTIONS)
    key = ((HEADER_AUTHORIZATION, f"Bearer {api_key}"),) if api_key else ()  # R-PRV-4: none without a key
    headers = (
        *key,
        (HEADER_CONTENT_TYPE, CONTENT_TYPE_JSON),
        (HEADER_ACCEPT, ACCEPT_STREAM if stream else ACCEPT_JSON),
    )
    return HttpRequest(METHOD, strip_base_url(base_url) + PATH, headers, json_body(body))
