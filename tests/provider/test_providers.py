"""The HTTP providers end to end over a loopback server (harness9_ref/provider/_base.py,
_providers.py; SPEC R-PRV-1, R-PRV-3, R-PRV-19, R-ERR-5)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

import pytest

from harness9_ref.provider import (
    AnthropicProvider,
    HttpProvider,
    LLMProvider,
    OpenAIProvider,
    ProviderConnectionError,
    ProviderTimeout,
    RequestBuildError,
)
from harness9_ref.schema import CHUNK_DONE, CHUNK_ERROR, Message, ToolCall, Usage
from tests.provider.helpers import Loopback, final, loopback, reply, texts

KEY = "sk-provider-test-KEY-42"
ASK = [Message("system", "Be brief."), Message("user", "hi")]

OPENAI_REPLY = b"""{
  "id": "chatcmpl-1",
  "object": "chat.completion",
  "choices": [
    {
      "index": 0,
      "message": {
        "role": "assistant",
        "content": "Hello!",
        "refusal": null
      },
      "finish_reason": "stop"
    }
  ],
  "usage": {
    "prompt_tokens": 12,
    "completion_tokens": 3,
    "total_tokens": 15
  }
}
"""
OPENAI_STREAM = (
    b'data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],'
    b'"usage":null}\n\n'
    b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}],"usage":null}\n\n'
    b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"lo!"},"finish_reason":null}],"usage":null}\n\n'
    b'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}\n\n'
    b'data: {"id":"c","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}\n\n'
    b"data: [DONE]\n\n"
)
ANTHROPIC_REPLY = (
    b'{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-20250514",'
    b'"content":[{"type":"text","text":"Sure."},'
    b'{"type":"tool_use","id":"toolu_1","name":"bash","input":{"command":"ls"}}],"stop_reason":"tool_use",'
    b'"usage":{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":30}}'
)
ANTHROPIC_STREAM = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],'
    b'"usage":{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":1}}    }'
    b"\n\n"
    b"event: content_block_start\n"
    b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}  }\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Sure."}  }\n\n'
    b"event: content_block_stop\n"
    b'data: {"type":"content_block_stop","index":0 }\n\n'
    b"event: content_block_start\n"
    b'data: {"type":"content_block_start","index":1,'
    b'"content_block":{"type":"tool_use","id":"toolu_1","name":"bash","input":{}}  }\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":1,'
    b'"delta":{"type":"input_json_delta","partial_json":"{\\"command\\":\\"ls\\"}"}  }\n\n'
    b"event: content_block_stop\n"
    b'data: {"type":"content_block_stop","index":1 }\n\n'
    b"event: message_delta\n"
    b'data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},'
    b'"usage":{"output_tokens":30}   }\n\n'
    b"event: message_stop\n"
    b'data: {"type":"message_stop"   }\n\n'
)


def openai_provider(url: str) -> HttpProvider:
    return OpenAIProvider("gpt-4o-mini", KEY, base_url=url, timeout=5)


def anthropic_provider(url: str) -> HttpProvider:
    return AnthropicProvider("claude-sonnet-4-20250514", KEY, base_url=url + "/", timeout=5)


Factory = Callable[[str], HttpProvider]
PROVIDERS: list[tuple[str, Factory, bytes, bytes]] = [
    ("openai", openai_provider, OPENAI_REPLY, OPENAI_STREAM),
    ("anthropic", anthropic_provider, ANTHROPIC_REPLY, ANTHROPIC_STREAM),
]


def by_stream_flag(whole: bytes, stream: bytes) -> Callable[[BaseHTTPRequestHandler, Loopback], None]:
    """Answer a streaming request with ``stream`` and any other with ``whole``."""

    def respond(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
        streaming = server.received[-1].header("Accept") == "text/event-stream"
        content_type = "text/event-stream" if streaming else "application/json"
        reply(200, stream if streaming else whole, [("Content-Type", content_type)])(handler, server)

    return respond


@pytest.mark.parametrize(("name", "make", "whole", "stream"), PROVIDERS, ids=[p[0] for p in PROVIDERS])
def test_generate_and_generate_stream_agree(name: str, make: Factory, whole: bytes, stream: bytes) -> None:
    with loopback(by_stream_flag(whole, stream)) as server:
        provider = make(server.url)
        assert isinstance(provider, LLMProvider)
        message, usage = provider.generate(ASK, [])
        chunks = list(provider.generate_stream(ASK, []))
    done = final(chunks)
    assert done.type == CHUNK_DONE
    assert (done.message, done.usage) == (message, usage)
    assert "".join(texts(chunks)) == message.content
    assert [r.header("Accept") for r in server.received] == ["application/json", "text/event-stream"]


def test_the_openai_reply_and_usage() -> None:
    with loopback(reply(200, OPENAI_REPLY)) as server:
        got = OpenAIProvider("gpt-4o-mini", KEY, base_url=server.url).generate(ASK, [])
    assert got == (Message("assistant", "Hello!"), Usage(12, 3))
    assert server.received[0].path == "/chat/completions"


def test_the_anthropic_reply_and_usage() -> None:
    with loopback(reply(200, ANTHROPIC_REPLY)) as server:
        got = AnthropicProvider("claude-sonnet-4-20250514", KEY, base_url=server.url).generate(ASK, [])
    call = ToolCall("toolu_1", "bash", '{"command":"ls"}')
    assert got == (Message("assistant", "Sure.", (call,)), Usage(120, 30, cache_read_tokens=100, cache_write_tokens=0))
    assert server.received[0].path == "/v1/messages"
    assert server.received[0].header("x-api-key") == KEY


def test_text_chunks_are_yielded_before_the_stream_ends() -> None:
    *first, rest = OPENAI_STREAM.split(b"\n\n", 2)
    head = b"\n\n".join(first) + b"\n\n"  # the role chunk and "Hel"

    def respond(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
        handler.send_response(200)
        handler.end_headers()
        handler.wfile.write(head)
        handler.wfile.flush()
        server.release.wait(5)
        handler.wfile.write(rest)

    with loopback(respond) as server:
        stream = OpenAIProvider("m", KEY, base_url=server.url).generate_stream(ASK, [])
        assert next(stream).delta == "Hel"  # the server still holds back the rest
        server.release.set()
        assert [c.type for c in stream] == ["text", "done"]


def test_a_stream_ends_at_done_even_when_the_server_keeps_the_connection_open() -> None:
    def respond(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
        handler.send_response(200)
        handler.end_headers()
        handler.wfile.write(OPENAI_STREAM)
        handler.wfile.flush()
        server.release.wait(5)

    with loopback(respond) as server:
        started = time.monotonic()
        chunks = list(OpenAIProvider("m", KEY, base_url=server.url, timeout=3).generate_stream(ASK, []))
        assert time.monotonic() - started < 2
    assert final(chunks).type == CHUNK_DONE


def test_a_connection_closed_mid_stream_is_a_cut_off() -> None:
    cut = ANTHROPIC_STREAM[: ANTHROPIC_STREAM.index(b"event: message_delta")]
    with loopback(reply(200, cut)) as server:
        chunks = list(AnthropicProvider("claude-3-5-haiku", KEY, base_url=server.url).generate_stream(ASK, []))
    assert texts(chunks) == ["Sure."]
    assert final(chunks).error.startswith("stream_cut_off: anthropic: the stream ended after 7 events")


def free_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_failures_before_the_stream_starts_end_in_an_error_chunk() -> None:
    refused = OpenAIProvider("m", KEY, base_url=free_url())
    chunks = list(refused.generate_stream(ASK, []))
    assert len(chunks) == 1 and chunks[0].type == CHUNK_ERROR
    assert chunks[0].error.startswith("connection_error: openai: connection failed")
    with pytest.raises(ProviderConnectionError):
        refused.generate(ASK, [])

    unbuildable = [Message("user", "x", (ToolCall("c", "bash", "{}"),))]
    chunks = list(AnthropicProvider("claude-3-5-haiku", KEY, base_url=free_url()).generate_stream(unbuildable, []))
    assert [c.type for c in chunks] == [CHUNK_ERROR] and chunks[0].error.startswith("request_build_error: anthropic: ")
    with pytest.raises(RequestBuildError):
        OpenAIProvider("m", KEY).generate(unbuildable, [])


def test_a_timeout_ends_a_stream_in_an_error_chunk() -> None:
    def stall(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
        server.release.wait(5)

    with loopback(stall) as server:
        provider = OpenAIProvider("m", KEY, base_url=server.url, timeout=0.2)
        chunks = list(provider.generate_stream(ASK, []))
        with pytest.raises(ProviderTimeout):
            provider.generate(ASK, [])
    assert [c.type for c in chunks] == [CHUNK_ERROR]
    assert chunks[0].error.startswith("timeout: openai: no answer within 0.2 s")


def test_an_error_status_on_a_stream_request_ends_in_the_classified_error_chunk() -> None:
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    with loopback(reply(529, body, [("x-should-retry", "true")])) as server:
        chunks = list(AnthropicProvider("claude-3-5-haiku", KEY, base_url=server.url).generate_stream(ASK, []))
    assert [c.error for c in chunks] == ["overloaded: anthropic: HTTP 529 overloaded_error: Overloaded"]


def test_the_key_appears_in_no_repr_and_no_streamed_error() -> None:
    message = f"invalid x-api-key {KEY}"
    body = json.dumps({"type": "error", "error": {"type": "authentication_error", "message": message}}).encode()
    with loopback(reply(401, body)) as server:
        provider = AnthropicProvider("claude-3-5-haiku", KEY, base_url=server.url)
        chunks = list(provider.generate_stream(ASK, []))
    assert KEY not in repr(provider)
    assert chunks[0].error == "authentication: anthropic: HTTP 401 authentication_error: invalid x-api-key [redacted]"
