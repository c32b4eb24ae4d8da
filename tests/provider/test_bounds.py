"""The bounds of one provider call's I/O (harness9_ref/provider/_bounds.py, _sse.py, _streaming.py,
_transport.py; SPEC R-PRV-30 … R-PRV-33).

The decoder and the assembly are fed bodies built here; the transport and the providers talk to
real loopback servers that send more than any bound allows (50 MB replies, 50 MB error bodies)
or drip a byte at a time, and the tests measure what the client held (tracemalloc) and how long
it waited.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from harness9_ref.engine import PARTIAL_MARKER, AgentEngine, SaveAsItGoes
from harness9_ref.memory.storage import MemorySession
from harness9_ref.provider import (
    BODY_MAX_BYTES,
    DEADLINE_FACTOR,
    ERROR_BODY_MAX_BYTES,
    EVENT_MAX_CHARS,
    LINE_MAX_CHARS,
    REPLY_CUT_NOTE,
    REPLY_MAX_CHARS,
    AnthropicProvider,
    MalformedResponse,
    OpenAIProvider,
    Probe,
    ProviderConnectionError,
    ProviderTimeout,
    ServerError,
    SSEDecoder,
    SSELimitExceeded,
    anthropic,
    ask_window,
    deadline_for,
    openai,
)
from harness9_ref.provider._streaming import assemble_stream
from harness9_ref.schema import CHUNK_DONE, CHUNK_ERROR, CHUNK_TEXT, Message, StreamChunk
from harness9_ref.tools import Registry
from tests.provider.helpers import Loopback, chunkings, loopback, reply, sse_data

ASK = [Message("user", "hi")]
MIB = 1024 * 1024
PIECE = 64 * 1024  # what the servers below write at a time

Parse = Callable[[int, list[tuple[str, str]], list[bytes]], list[StreamChunk]]


def openai_text(text: str) -> dict[str, object]:
    return {"choices": [{"index": 0, "delta": {"content": text}}]}


def openai_arguments(arguments: str) -> dict[str, object]:
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "bash", "arguments": arguments}}
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}


def anthropic_body(*blocks: tuple[str, str]) -> bytes:
    """An Anthropic stream with one block per (kind, text): ``"text"`` or ``"tool_use"``."""
    events: list[dict[str, object]] = [{"type": "message_start", "message": {"usage": {"input_tokens": 3}}}]
    for index, (kind, text) in enumerate(blocks):
        if kind == "text":
            start: dict[str, object] = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": text}
        else:
            start = {"type": "tool_use", "id": "c1", "name": "bash"}
            delta = {"type": "input_json_delta", "partial_json": text}
        events += [
            {"type": "content_block_start", "index": index, "content_block": start},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index},
        ]
    events.append({"type": "message_stop"})
    return sse_data(*events, event=True)


def openai_body(*blocks: tuple[str, str]) -> bytes:
    payloads: list[object] = [openai_text(t) if kind == "text" else openai_arguments(t) for kind, t in blocks]
    return sse_data(*payloads, {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}, "[DONE]")


BODIES = {"openai": (openai_body, openai.parse_stream), "anthropic": (anthropic_body, anthropic.parse_stream)}


def in_pieces(body: bytes, size: int = PIECE) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def texts_of(chunks: list[StreamChunk]) -> str:
    return "".join(c.delta for c in chunks if c.type == CHUNK_TEXT)


# --- R-PRV-30: the decoder is linear and bounds a line and an event ---


def best_of(runs: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def test_a_line_in_many_chunks_decodes_as_fast_as_as_many_short_lines() -> None:
    # The same bytes in the same 1 KiB chunks: one line of almost 8 MiB, or a line per chunk.
    # Joining the unfinished line anew at each chunk made the first a hundred times slower.
    size = 1024
    long_line = in_pieces(b"data: " + b"x" * (LINE_MAX_CHARS - 16) + b"\n\n", size)
    short_lines = in_pieces(b"".join(b"data: " + b"x" * (size - 8) + b"\n\n" for _ in long_line), size)

    def decode(chunks: list[bytes]) -> Callable[[], object]:
        def run() -> object:
            decoder = SSEDecoder()
            return [decoder.feed(c) for c in chunks], decoder.close()

        return run

    ratio = best_of(3, decode(long_line)) / best_of(3, decode(short_lines))
    assert ratio < 5, f"one long line took {ratio:.1f} times as long as short lines"


def test_a_line_up_to_its_bound_is_kept_and_one_beyond_it_is_refused_in_every_chunking() -> None:
    fits = b"data: " + b"x" * 94 + b"\n\n"  # a line of 100 characters
    for name, chunks in chunkings(fits):
        decoder = SSEDecoder(line_max=100)
        events = [e for c in chunks for e in decoder.feed(c)] + decoder.close()
        assert [e.data for e in events] == ["x" * 94], name
    for body in (b"data: " + b"x" * 95 + b"\n\n", b"data: " + b"x" * 95, b": " + b"x" * 99 + b"\r\n"):
        for _name, chunks in chunkings(body):
            decoder = SSEDecoder(line_max=100)
            with pytest.raises(SSELimitExceeded, match=r"^a line longer than 100 characters$"):
                for chunk in chunks:
                    decoder.feed(chunk)
                decoder.close()


def test_a_line_that_never_ends_is_refused_once_past_its_bound_not_at_its_end() -> None:
    decoder = SSEDecoder(line_max=1000)
    decoder.feed(b"data: " + b"x" * 990)
    with pytest.raises(SSELimitExceeded):
        decoder.feed(b"x" * 10)  # the body goes on, but nothing more is held


def test_the_events_before_a_line_beyond_its_bound_come_with_the_error() -> None:
    for body in (b"data: a\n\ndata: " + b"x" * 100 + b"\n", b"data: a\n\ndata: " + b"x" * 100):
        with pytest.raises(SSELimitExceeded) as info:
            SSEDecoder(line_max=100).feed(body)
        assert [e.data for e in info.value.events] == ["a"]


def test_an_event_up_to_its_bound_is_dispatched_and_one_beyond_it_is_refused() -> None:
    decoder = SSEDecoder(event_max=10)
    assert [e.data for e in decoder.feed(b"data: abcd\ndata: efgh\n\ndata: abcd\ndata: efgh\n\n")] == [
        "abcd\nefgh",
        "abcd\nefgh",
    ]  # each event's buffer is 10 characters: two values and their "\n"
    with pytest.raises(SSELimitExceeded, match=r"^an event's data longer than 10 characters$"):
        decoder.feed(b"data: abcd\ndata:efgh\ndata\n")


@pytest.mark.parametrize("provider", BODIES)
def test_a_line_or_an_event_beyond_the_pinned_bounds_ends_the_stream_with_a_stream_error(provider: str) -> None:
    make, parse = BODIES[provider]
    text = make(("text", "kept"))
    head = text[: text.index(b"\n\n", text.index(b"kept")) + 2]  # the events up to the text
    long_line = head + b"data: " + b"x" * (LINE_MAX_CHARS - 5) + b"\n"
    long_event = head + (b"data: " + b"x" * MIB + b"\n") * (EVENT_MAX_CHARS // MIB)
    for body, what in ((long_line, f"a line longer than {LINE_MAX_CHARS}"), (long_event, "an event's data longer")):
        for pieces in (in_pieces(body), [body]):  # the text before the bound in the same piece or not
            chunks = parse(200, [], pieces)
            assert texts_of(chunks) == "kept"  # what came before stays
            assert chunks[-1].type == CHUNK_ERROR
            assert chunks[-1].error.startswith(f"malformed_stream: {provider}: the stream sent {what}")


def test_a_durable_run_keeps_the_text_before_a_line_beyond_its_bound(tmp_path: Path) -> None:
    body = openai_body(("text", "kept"))
    body = body[: body.index(b"data: [DONE]")] + b"data: " + b"x" * LINE_MAX_CHARS
    session = MemorySession()
    with loopback(reply(200, body, [("Content-Type", "text/event-stream")])) as server, Registry(tmp_path) as registry:
        provider = OpenAIProvider("m", "", base_url=server.url, timeout=5)
        engine = AgentEngine(provider, registry, session=session, saving=SaveAsItGoes())
        list(engine.run_stream("go"))
    message = f"openai: the stream sent a line longer than {LINE_MAX_CHARS} characters"
    assert session.get_messages()[-1] == Message("assistant", "kept" + PARTIAL_MARKER + message + "]")


# --- R-PRV-31: a reply beyond its bound ends cut off ---


@pytest.mark.parametrize("provider", BODIES)
def test_a_reply_at_its_bound_is_whole(provider: str) -> None:
    make, parse = BODIES[provider]
    chunks = parse(200, [], in_pieces(make(("text", "x" * (REPLY_MAX_CHARS - 10)), ("tool", "y" * 10))))
    done = chunks[-1]
    assert done.type == CHUNK_DONE and done.message is not None and done.usage is not None
    assert len(done.message.content) == REPLY_MAX_CHARS - 10 and len(done.message.tool_calls) == 1


@pytest.mark.parametrize("provider", BODIES)
def test_a_reply_beyond_its_bound_keeps_the_text_up_to_it_and_ends_cut_off(provider: str) -> None:
    make, parse = BODIES[provider]
    half = REPLY_MAX_CHARS // 2
    note = REPLY_CUT_NOTE.format(limit=REPLY_MAX_CHARS)
    assert note.startswith(PARTIAL_MARKER) and note.endswith(f"longer than {REPLY_MAX_CHARS} characters]")
    cases = {
        "text": ((("text", "a" * half), ("text", "b" * half), ("text", "c")), "a" * half + "b" * half),
        "text crossing": ((("text", "a" * half), ("text", "b" * (half + 5))), "a" * half + "b" * half),
        "arguments": ((("tool", "{" * (half + 1)), ("text", "t" * half)), "t" * half),
    }
    for name, (blocks, kept) in cases.items():
        chunks = parse(200, [], in_pieces(make(*blocks)))
        assert texts_of(chunks) == kept + note, name
        assert chunks[-2] == StreamChunk(CHUNK_TEXT, delta=note)
        assert chunks[-1] == StreamChunk(CHUNK_DONE, message=Message("assistant", kept + note), usage=None), name


def test_a_whole_reply_beyond_its_bound_is_cut_as_a_stream_is() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}

    def generate(text: str) -> tuple[Message, object]:
        message = {"role": "assistant", "content": text, "tool_calls": [call]}
        body = json.dumps({"choices": [{"message": message}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
        with loopback(reply(200, body.encode())) as server:
            return OpenAIProvider("m", "", base_url=server.url, timeout=5).generate(ASK, [])

    at_bound, usage = generate("x" * (REPLY_MAX_CHARS - 2))  # and 2 characters of arguments
    assert len(at_bound.content) == REPLY_MAX_CHARS - 2 and at_bound.tool_calls and usage is not None
    beyond = "x" * (REPLY_MAX_CHARS - 1)
    assert generate(beyond) == (Message("assistant", beyond + REPLY_CUT_NOTE.format(limit=REPLY_MAX_CHARS)), None)


def test_an_injected_bound_cuts_the_same_way() -> None:
    body = openai_body(("text", "abc"), ("text", "def"))
    chunks = list(
        assemble_stream(openai.parse_error, openai.StreamAssembler, 200, [], in_pieces(body, 7), reply_max=4)
    )
    note = REPLY_CUT_NOTE.format(limit=4)
    assert [c.delta for c in chunks[:-1]] == ["abc", "d", note]
    assert chunks[-1].message == Message("assistant", "abcd" + note)


# --- R-PRV-32: bounded body reads ---


def endless(status: int, head: bytes, fill: bytes, total: int, content_type: str) -> Callable[..., None]:
    """A responder that sends ``head`` and then ``fill`` until ``total`` bytes, unless the client
    hangs up first; it counts what it managed to send in ``server.sent``."""

    def respond(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(total))
        handler.end_headers()
        sent = 0
        try:
            handler.wfile.write(head)
            sent = len(head)
            while sent < total:
                piece = fill[: total - sent]
                handler.wfile.write(piece)
                sent += len(piece)
        except OSError:
            pass  # the client stopped reading: what the bound is for
        finally:
            SENT.append(sent)
            handler.close_connection = True

    return respond


SENT: list[int] = []


@pytest.fixture(autouse=True)
def _no_sent() -> Iterator[None]:
    SENT.clear()
    yield


def first_sent(timeout: float = 5.0) -> int:
    """The bytes the server had written when its handler ended. The client can be done before
    the handler's thread notices the closed connection (the server does not wait for its
    handlers), so wait for it, a bounded time."""
    deadline = time.monotonic() + timeout
    while not SENT and time.monotonic() < deadline:
        time.sleep(0.01)
    assert SENT, "the server's handler did not end"
    return SENT[0]


def peak_of(action: Callable[[], object]) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = action()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_50_mb_error_body_is_read_for_its_first_64_kib_only() -> None:
    total = 50 * 1000 * 1000
    with loopback(endless(500, b"<html>", b"x" * PIECE, total, "text/html")) as server:
        provider = OpenAIProvider("m", "", base_url=server.url, timeout=5)
        started = time.monotonic()
        with pytest.raises(ServerError) as info:
            provider.generate(ASK, [])
        (chunks, peak) = peak_of(lambda: list(provider.generate_stream(ASK, [])))
        took = time.monotonic() - started
    assert str(info.value).startswith("openai: HTTP 500: <html>xxx")
    assert isinstance(chunks, list) and chunks[-1].error.startswith("server_error: openai: HTTP 500: <html>xxx")
    assert peak < 4 * ERROR_BODY_MAX_BYTES + MIB and took < 5


def test_a_json_error_body_cut_at_its_bound_is_classified_by_status() -> None:
    body = json.dumps({"error": {"message": "prompt is too long " + "x" * ERROR_BODY_MAX_BYTES}}).encode()
    with loopback(reply(400, body)) as server:
        [chunk] = list(AnthropicProvider("claude-3-5-haiku", "", base_url=server.url, timeout=5).generate_stream(ASK, []))
    assert chunk.error.startswith('invalid_request: anthropic: HTTP 400: {"error": {"message": "prompt is too long')


def test_a_whole_success_body_beyond_its_bound_is_refused_unread() -> None:
    total = 50 * 1000 * 1000
    with loopback(endless(200, b'{"choices":[{"message":{"content":"', b"x" * PIECE, total, "application/json")) as server:
        provider = OpenAIProvider("m", "", base_url=server.url, timeout=5)
        with pytest.raises(MalformedResponse) as info:
            provider.generate(ASK, [])
    assert str(info.value) == f"openai: the response to POST {server.url}/chat/completions is longer than {BODY_MAX_BYTES} bytes"
    assert first_sent() < total


def test_a_whole_body_cut_short_is_still_a_broken_connection() -> None:
    def cut(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        handler.wfile.write(b'{"choices":')
        handler.close_connection = True

    with loopback(cut) as server, pytest.raises(ProviderConnectionError, match="connection failed while reading"):
        OpenAIProvider("m", "", base_url=server.url, timeout=5).generate(ASK, [])


# --- R-PRV-31, R-PRV-32: a 50 MB reply over a real connection ---


def fifty_mb_reply(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
    event = sse_data(openai_text("x" * (PIECE - 100)))
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.end_headers()
    sent = 0
    try:
        while sent < 50 * 1000 * 1000:
            handler.wfile.write(event)
            sent += len(event)
        handler.wfile.write(b"data: [DONE]\n\n")
    except OSError:
        pass
    finally:
        SENT.append(sent)
        handler.close_connection = True


def test_a_50_mb_reply_is_cut_at_its_bound_with_flat_memory_and_the_rest_unread() -> None:
    with loopback(fifty_mb_reply) as server:
        provider = OpenAIProvider("m", "", base_url=server.url, timeout=5)

        def consume() -> tuple[str, StreamChunk]:
            deltas: list[str] = []  # as a consumer shows and keeps them
            last = StreamChunk(CHUNK_ERROR)
            for chunk in provider.generate_stream(ASK, []):
                if chunk.type == CHUNK_TEXT:
                    deltas.append(chunk.delta)
                last = chunk
            return "".join(deltas), last

        started = time.monotonic()
        result, peak = peak_of(consume)
        took = time.monotonic() - started
    assert isinstance(result, tuple)
    text, done = result
    note = REPLY_CUT_NOTE.format(limit=REPLY_MAX_CHARS)
    assert done.type == CHUNK_DONE and done.message == Message("assistant", "x" * REPLY_MAX_CHARS + note)
    assert text == done.message.content
    assert peak < 6 * REPLY_MAX_CHARS, f"peak {peak / MIB:.1f} MiB"
    assert first_sent() < 20 * MIB and took < 10


def test_the_engine_stores_a_50_mb_reply_cut_at_its_bound(tmp_path: Path) -> None:
    session = MemorySession()
    with loopback(fifty_mb_reply) as server, Registry(tmp_path) as registry:
        engine = AgentEngine(OpenAIProvider("m", "", base_url=server.url, timeout=5), registry, session=session)
        _, peak = peak_of(lambda: list(engine.run_stream("talk a lot")))
    stored = session.get_messages()[-1]
    assert stored == Message("assistant", "x" * REPLY_MAX_CHARS + REPLY_CUT_NOTE.format(limit=REPLY_MAX_CHARS))
    assert peak < 6 * REPLY_MAX_CHARS, f"peak {peak / MIB:.1f} MiB"


# --- R-PRV-33: a deadline per call ---


DRIP_FOR = 5.0  # seconds a dripping server goes on, so that a call without a deadline fails, not hangs


def drip(head: bytes, byte_every: float, *, status_line_too: bool = False) -> Callable[..., None]:
    """A responder that sends ``head`` (after its status line and headers, unless
    ``status_line_too``: then they are dripped too) and then one byte every ``byte_every``
    seconds, for ``DRIP_FOR`` seconds each."""

    def respond(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
        try:
            if status_line_too:
                pad = b"p" * int(DRIP_FOR / byte_every)
                for byte in b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nX-Pad: " + pad:
                    handler.wfile.write(bytes([byte]))
                    handler.wfile.flush()
                    if server.release.wait(byte_every):
                        return
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream")
            handler.end_headers()
            handler.wfile.write(head)
            handler.wfile.flush()
            for _ in range(int(DRIP_FOR / byte_every)):
                if server.release.wait(byte_every):
                    return
                handler.wfile.write(b" ")
                handler.wfile.flush()
        except OSError:
            pass
        finally:
            handler.close_connection = True

    return respond


def test_a_stream_dripping_a_byte_within_each_timeout_ends_at_the_deadline() -> None:
    first = sse_data(openai_text("early"))
    with loopback(drip(first + b": ", 0.1)) as server:
        provider = OpenAIProvider("m", "", base_url=server.url, timeout=1, deadline=1.5)
        started = time.monotonic()
        chunks = list(provider.generate_stream(ASK, []))
        took = time.monotonic() - started
    assert texts_of(chunks) == "early"
    assert chunks[-1].error == (
        f"timeout: openai: no complete answer within 1.5 s, the deadline of one call, "
        f"while streaming the response to POST {server.url}/chat/completions"
    )
    assert 1.4 < took < 3


@pytest.mark.parametrize(
    ("status_line_too", "during"), [(False, "reading the response to"), (True, "sending")], ids=["body", "head"]
)
def test_a_whole_body_or_a_head_dripping_ends_at_the_deadline(status_line_too: bool, during: str) -> None:
    with loopback(drip(b'{"choices":', 0.1, status_line_too=status_line_too)) as server:
        provider = AnthropicProvider("claude-3-5-haiku", "", base_url=server.url, timeout=1, deadline=1.2)
        started = time.monotonic()
        with pytest.raises(ProviderTimeout) as info:
            provider.generate(ASK, [])
        took = time.monotonic() - started
    assert str(info.value) == (
        f"anthropic: no complete answer within 1.2 s, the deadline of one call, while {during} POST {server.url}/v1/messages"
    )
    assert 1.1 < took < 3


def test_a_window_probe_dripping_ends_at_thirty_of_its_timeouts() -> None:
    with loopback(drip(b'{"data":[', 0.02)) as server:
        started = time.monotonic()
        found = ask_window(server.url, "m", timeout=0.05, requests=[Probe("vllm", "POST", server.url, None)])
        took = time.monotonic() - started
    assert found is None
    # The deadline, 30 times 0.05 s, ends it well before the server's 5 s of dripping (a loaded
    # machine may end it sooner, by a gap longer than the read timeout: a bound all the same).
    assert took < 3


def test_the_deadline_is_thirty_timeouts_unless_given() -> None:
    assert DEADLINE_FACTOR == 30 and deadline_for(120) == 3600
    assert OpenAIProvider("m", "", timeout=7).deadline == 210
    assert AnthropicProvider("m", "", timeout=600).deadline == 18_000
    assert AnthropicProvider("m", "", timeout=600, deadline=5).deadline == 5


def test_a_call_within_its_deadline_is_not_ended_later() -> None:
    # The deadline's timer is stopped when the call ends: the next call on the same provider
    # has a deadline of its own.
    body = openai_body(("text", "hi"))
    with loopback(reply(200, body, [("Content-Type", "text/event-stream")])) as server:
        provider = OpenAIProvider("m", "", base_url=server.url, timeout=1, deadline=0.5)
        for _ in range(3):
            assert texts_of(list(provider.generate_stream(ASK, []))) == "hi"
            time.sleep(0.2)


def test_the_bounds_are_the_figures_of_the_spec() -> None:
    assert (LINE_MAX_CHARS, EVENT_MAX_CHARS, REPLY_MAX_CHARS) == (8_388_608, 8_388_608, 4_194_304)
    assert (ERROR_BODY_MAX_BYTES, BODY_MAX_BYTES) == (65_536, 16_777_216)
