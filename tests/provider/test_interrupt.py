"""A streamed exchange ended at once from another thread, and a request without a key, over a real
loopback server (harness9_ref/provider/_base.py, _transport.py; SPEC R-PRV-3, R-PRV-4, R-PRV-8).

The servers are silent the way a local model server is while it reads a long prompt: the request
is taken and nothing comes back, before the response's head or between two pieces of the body.
The providers' timeout is far longer than any test waits, so only ``interrupt()`` can end them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

import pytest

from harness9_ref.provider import AnthropicProvider, HttpProvider, OpenAIProvider
from harness9_ref.schema import CHUNK_DONE, CHUNK_ERROR, CHUNK_TEXT, Message, StreamChunk
from tests.provider.helpers import Loopback, loopback, reply, sse_data

ASK = [Message("user", "hi")]
TIMEOUT = 60.0  # never reached: the tests end long before
SOON = 2.0  # an interrupted exchange ends within this, after the interrupt


def silent(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
    """Take the request and answer nothing until the test ends (a server reading a long prompt)."""
    server.release.wait(30)


def one_piece_then_silent(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.end_headers()
    handler.wfile.write(sse_data({"choices": [{"index": 0, "delta": {"content": "Hel"}}]}))
    handler.wfile.flush()
    server.release.wait(30)


def streamed(provider: HttpProvider, chunks: list[StreamChunk], arrived: threading.Event | None = None) -> threading.Thread:
    """``generate_stream`` on a thread, collecting its chunks; ``arrived`` is set at the first one."""

    def run() -> None:
        for chunk in provider.generate_stream(ASK, []):
            chunks.append(chunk)
            if arrived is not None:
                arrived.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def wait_until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.mark.parametrize("make", [OpenAIProvider, AnthropicProvider])
def test_an_interrupt_ends_a_wait_for_the_responses_head_at_once(make: Callable[..., HttpProvider]) -> None:
    """R-PRV-3: the stream ends with a connection error that says it was interrupted."""
    with loopback(silent) as server:
        provider = make("m", "", server.url, TIMEOUT)
        chunks: list[StreamChunk] = []
        thread = streamed(provider, chunks)
        wait_until(lambda: len(server.received) == 1)
        time.sleep(0.2)  # the client is now blocked reading the head
        started = time.monotonic()
        provider.interrupt()
        thread.join(SOON)
        assert not thread.is_alive(), "the stream did not end after interrupt()"
        assert time.monotonic() - started < SOON
    [last] = chunks
    assert last.type == CHUNK_ERROR
    name, path = ("openai", "/chat/completions") if make is OpenAIProvider else ("anthropic", "/v1/messages")
    assert last.error == f"connection_error: {name}: interrupted while sending POST {server.url}{path}"


def test_an_interrupt_ends_a_wait_between_two_pieces_and_keeps_what_came() -> None:
    """R-PRV-3: the text already streamed stays streamed; then the interrupted error chunk."""
    with loopback(one_piece_then_silent) as server:
        provider = OpenAIProvider("m", "k", server.url, TIMEOUT)
        chunks: list[StreamChunk] = []
        arrived = threading.Event()
        thread = streamed(provider, chunks, arrived)
        assert arrived.wait(5)
        provider.interrupt()
        thread.join(SOON)
        assert not thread.is_alive(), "the stream did not end after interrupt()"
    assert [c.type for c in chunks] == [CHUNK_TEXT, CHUNK_ERROR]
    assert chunks[0].delta == "Hel"
    url = f"{server.url}/chat/completions"
    assert chunks[1].error == f"connection_error: openai: interrupted while streaming the response to POST {url}"


def test_an_interrupt_with_nothing_in_progress_changes_nothing_later() -> None:
    """R-PRV-3: an exchange started after the interrupt is not affected."""
    body = sse_data({"choices": [{"index": 0, "delta": {"content": "ok"}}]}, "[DONE]")
    with loopback(reply(200, body, [("Content-Type", "text/event-stream")])) as server:
        provider = OpenAIProvider("m", "k", server.url, TIMEOUT)
        provider.interrupt()
        chunks = list(provider.generate_stream(ASK, []))
    assert [c.type for c in chunks] == [CHUNK_TEXT, CHUNK_DONE]


def test_a_whole_body_exchange_is_left_to_finish() -> None:
    """R-PRV-3: generate (the summarizer's call) is not interrupted, so a summary is not cut short."""
    body = b'{"choices":[{"index":0,"message":{"role":"assistant","content":"summary"}}]}'

    def slow(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
        server.release.wait(0.6)
        reply(200, body, [("Content-Type", "application/json")])(handler, server)

    with loopback(slow) as server:
        provider = OpenAIProvider("m", "k", server.url, TIMEOUT)
        answer: list[Message] = []
        thread = threading.Thread(target=lambda: answer.append(provider.generate(ASK, [])[0]), daemon=True)
        thread.start()
        wait_until(lambda: len(server.received) == 1)
        provider.interrupt()
        thread.join(5)
    assert [m.content for m in answer] == ["summary"]


@pytest.mark.parametrize(
    ("make", "header"), [(OpenAIProvider, "Authorization"), (AnthropicProvider, "x-api-key")]
)
def test_an_empty_key_sends_no_key_header_over_the_wire(make: Callable[..., HttpProvider], header: str) -> None:
    """R-PRV-4, R-PRV-8: a local server gets no key header at all; with a key, it gets the key."""
    with loopback(reply(500, b"{}")) as server:
        list(make("m", "", server.url, 5).generate_stream(ASK, []))
        list(make("m", "sk-local", server.url, 5).generate_stream(ASK, []))
    keyless, keyed = server.received
    assert keyless.header(header) is None
    assert keyed.header(header) in ("Bearer sk-local", "sk-local")
