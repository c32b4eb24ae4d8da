"""The provider ops of the reference adapter: ``provider_request``, ``provider_parse``, ``provider_call``.

Outputs (conformance/PORTING.md): a request as method, URL, the headers that matter and the
parsed JSON body; a whole response as ``{"message", "usage"}``; a stream as ``{"chunks": […]}``
ending in a ``done`` or ``error`` chunk; an error as ``{"code"}`` plus, for the errors a
provider reports itself (REPORTED_CODES), the exact ``message`` of R-ERR-4. With ``"count":
true`` the three ops are about Anthropic's token count instead (R-PRV-24): the count request,
and ``{"input_tokens": N}`` or the error for its answer; ``provider_request`` with ``"reserve":
true`` answers ``{"reserved_output_tokens": N}`` (R-PRV-26).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any, Final, TypeVar

from harness9_ref.provider import (
    AnthropicProvider,
    HttpProvider,
    OpenAIProvider,
    ProviderError,
    TokenCounter,
    anthropic,
    openai,
    overflow_window,
    probe_requests,
    window_from_answer,
)
from harness9_ref.schema import CHUNK_ERROR, Message, StreamChunk, ToolDefinition, Usage, messages_from_list

__all__ = ["PROVIDER_OPS"]

WIRE_FORMATS: Final[Mapping[str, ModuleType]] = {"openai": openai, "anthropic": anthropic}
PROVIDERS: Final[Mapping[str, Callable[[str, str, str, float], HttpProvider]]] = {
    "openai": OpenAIProvider,
    "anthropic": AnthropicProvider,
}
# Headers whose values R-PRV-4 and R-PRV-8 fix; others (User-Agent, …) are an implementation's own.
REQUEST_HEADERS: Final = ("content-type", "accept", "authorization", "x-api-key", "anthropic-version")
# Errors reported by the provider itself: their message has the exact form of R-ERR-4.
REPORTED_CODES: Final = frozenset(
    {
        "authentication", "rate_limit", "overloaded", "context_length_exceeded", "invalid_request",
        "model_not_found", "server_error",
    }
)


def _error(code: str, message: str) -> dict[str, Any]:
    return {"code": code, "message": message} if code in REPORTED_CODES else {"code": code}


def _chunk(chunk: StreamChunk) -> dict[str, Any]:
    if chunk.type != CHUNK_ERROR:
        return chunk.to_dict()
    code, _, message = chunk.error.partition(": ")
    return {"type": CHUNK_ERROR, **_error(code, message)}


def _conversation(inp: Mapping[str, Any]) -> tuple[list[Any], list[ToolDefinition]]:
    tools = [ToolDefinition.from_dict(t, f"tools[{i}]") for i, t in enumerate(inp.get("tools", []))]
    return messages_from_list(inp["messages"]), tools


def op_provider_request(inp: Mapping[str, Any]) -> dict[str, Any]:
    if inp.get("reserve"):  # R-PRV-26: what the provider keeps of the window for the reply
        provider = PROVIDERS[inp["provider"]](inp["model"], "", WIRE_FORMATS[inp["provider"]].DEFAULT_BASE_URL, 10.0)
        return {"reserved_output_tokens": provider.reserved_output_tokens}
    messages, tools = _conversation(inp)
    wire = WIRE_FORMATS[inp["provider"]]
    options = {"base_url": inp["base_url"]} if "base_url" in inp else {}
    if inp.get("count"):
        request = anthropic.build_count_request(inp["model"], messages, tools, api_key=inp["api_key"], **options)
    else:
        limit = {"reply_limit": int(inp["reply_limit"])} if "reply_limit" in inp else {}  # absent: the default's
        request = wire.build_request(
            inp["model"], messages, tools, stream=inp["stream"], api_key=inp["api_key"], **limit, **options
        )
    headers = {name.lower(): value for name, value in request.headers}
    return {
        "method": request.method,
        "url": request.url,
        "headers": {name: headers[name] for name in REQUEST_HEADERS if name in headers},
        "body": json.loads(request.body),
    }


def _attributes(exc: ProviderError) -> dict[str, Any]:
    """R-ERR-2's attributes of an error the provider reported in a whole response."""
    return {
        "status": exc.status, "error_type": exc.error_type, "request_id": exc.request_id,
        "retry_after": exc.retry_after, "should_retry": exc.should_retry,
    }


Answer = TypeVar("Answer")


def _answer(call: Callable[[], Answer], output: Callable[[Answer], dict[str, Any]]) -> dict[str, Any]:
    """``output`` of what ``call`` returns, or the error it raised with R-ERR-2's attributes."""
    try:
        answer = call()
    except ProviderError as exc:
        error = _error(exc.code, str(exc))
        return {"error": {**error, **_attributes(exc)} if exc.code in REPORTED_CODES else error}
    return output(answer)


def _whole(call: Callable[[], tuple[Message, Usage | None]]) -> dict[str, Any]:
    def output(answer: tuple[Message, Usage | None]) -> dict[str, Any]:
        message, usage = answer
        return {"message": message.to_dict(), "usage": None if usage is None else usage.to_dict()}

    return _answer(call, output)


def _count(call: Callable[[], int]) -> dict[str, Any]:
    """R-PRV-24: ``{"input_tokens": N}`` or the error."""
    return _answer(call, lambda n: {"input_tokens": n})


def _stream(chunks: Iterable[StreamChunk]) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    try:
        out.extend(_chunk(c) for c in chunks)
    except ProviderError as exc:
        out.append({"type": CHUNK_ERROR, **_error(exc.code, str(exc))})
    return {"chunks": out}


def op_provider_parse(inp: Mapping[str, Any]) -> dict[str, Any]:
    wire = WIRE_FORMATS[inp["provider"]]
    status, headers = inp["status"], [tuple(pair) for pair in inp["headers"]]
    pieces = [base64.b64decode(c) for c in inp["chunks"]]
    if inp.get("count"):
        return _count(lambda: anthropic.parse_count_response(status, headers, b"".join(pieces)))
    if inp["stream"]:
        return _stream(wire.parse_stream(status, headers, pieces))
    return _whole(lambda: wire.parse_response(status, headers, b"".join(pieces)))


def op_provider_call(inp: Mapping[str, Any]) -> dict[str, Any]:
    messages, tools = _conversation(inp)
    provider = PROVIDERS[inp["provider"]](inp["model"], inp["api_key"], inp["base_url"], float(inp.get("timeout", 10)))
    if "reply_limit" in inp:  # absent: the provider's default (none, R-PRV-29)
        provider.reply_limit = int(inp["reply_limit"])
    if inp.get("count") and isinstance(provider, TokenCounter):
        return _count(lambda: provider.count_tokens(messages, tools))
    if inp["stream"]:
        return _stream(provider.generate_stream(messages, tools))
    return _whole(lambda: provider.generate(messages, tools))


def op_model_window(inp: Mapping[str, Any]) -> dict[str, Any]:
    """R-WIN-2 and R-WIN-4: the probe requests, one probe answer's window, or an overflow message's."""
    if "error_message" in inp:
        return {"window": overflow_window(inp["error_message"])}
    if "server" in inp:
        body = inp["body"].encode("utf-8")
        return {"window": window_from_answer(inp["server"], inp["status"], body, inp["model"])}
    return {
        "probes": [
            {
                "server": probe.server,
                "method": probe.method,
                "url": probe.url,
                "body": None if probe.body is None else json.loads(probe.body),
            }
            for probe in probe_requests(inp["base_url"], inp["model"])
        ]
    }


PROVIDER_OPS: Final = {
    "provider_request": op_provider_request,
    "provider_parse": op_provider_parse,
    "provider_call": op_provider_call,
    "model_window": op_model_window,
}
