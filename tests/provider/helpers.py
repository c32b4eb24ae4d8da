"""Shared test code for the provider tests: every-chunking parse checks and a loopback HTTP server.

``assert_same_parse`` is the h11 ``tr()`` idea applied to SSE (R-PRV-16): a parse must not
depend on how the body was cut into chunks or which line ends it uses.
"""

from __future__ import annotations

import itertools
import json
import random
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar, overload

from harness9_ref.provider import SSEDecoder, SSEEvent, anthropic, openai
from harness9_ref.schema import CHUNK_DONE, CHUNK_ERROR, CHUNK_TEXT, StreamChunk

__all__ = [
    "Exchange",
    "Loopback",
    "Respond",
    "anthropic_stream",
    "assert_same_parse",
    "chunkings",
    "event_stream",
    "final",
    "loopback",
    "openai_stream",
    "reply",
    "split_at",
    "sse_data",
    "sse_events",
    "texts",
]

T = TypeVar("T")
RANDOM_SPLITS = 5  # random chunkings tried per line-end variant


def sse_events(chunks: Sequence[bytes]) -> list[SSEEvent]:
    """Every event of a body delivered as ``chunks``."""
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    return events + decoder.close()


def openai_stream(chunks: Sequence[bytes]) -> list[StreamChunk]:
    return openai.parse_stream(200, [], chunks)


def anthropic_stream(chunks: Sequence[bytes]) -> list[StreamChunk]:
    return anthropic.parse_stream(200, [], chunks)


def split_at(body: bytes, cuts: Sequence[int]) -> list[bytes]:
    """``body`` cut at the given offsets."""
    bounds = [0, *sorted(cuts), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds)]


def chunkings(body: bytes, seed: int = 0) -> Iterator[tuple[str, list[bytes]]]:
    """(label, chunks) for the body whole, one byte at a time and at random split points."""
    yield "whole", [body]
    yield "byte by byte", [body[i : i + 1] for i in range(len(body))]
    rng = random.Random(seed)
    for trial in range(RANDOM_SPLITS):
        cuts = rng.sample(range(1, len(body)), min(len(body) - 1, rng.randint(1, 12))) if len(body) > 1 else []
        yield f"random split {trial} at {sorted(cuts)}", split_at(body, cuts)


def _line_end_variants(body: bytes) -> Iterator[tuple[str, bytes, bool]]:
    """(label, body, split every way) for LF, CRLF and CR line ends and a missing final line end."""
    lf = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    yield "LF", lf, True
    yield "CRLF", lf.replace(b"\n", b"\r\n"), True
    yield "CR", lf.replace(b"\n", b"\r"), True
    if lf.endswith(b"\n"):
        yield "without the final newline", lf[:-1], True
        yield "without any trailing newline", lf.rstrip(b"\n"), False
        yield "CRLF without any trailing line end", lf.rstrip(b"\n").replace(b"\n", b"\r\n"), False


@overload
def assert_same_parse(body: bytes) -> list[SSEEvent]: ...
@overload
def assert_same_parse(body: bytes, parse: Callable[[Sequence[bytes]], T]) -> T: ...
def assert_same_parse(body: bytes, parse: Callable[[Sequence[bytes]], Any] = sse_events) -> Any:
    """Parse ``body`` every way (R-PRV-16) and check that every way gives the same result.

    The body is fed whole, byte by byte and at random split points, with LF, CRLF and CR-only
    line ends, and with the final line end missing. Returns the result of the whole body.
    """
    expected = parse([body])
    for ends, variant, split_every_way in _line_end_variants(body):
        for how, chunks in chunkings(variant) if split_every_way else [("whole", [variant])]:
            got = parse(chunks)
            assert got == expected, f"{ends}, {how}: got {got!r}, expected {expected!r}"
    return expected


def texts(chunks: Sequence[StreamChunk]) -> list[str]:
    """The deltas of the text chunks."""
    return [c.delta for c in chunks if c.type == CHUNK_TEXT]


def final(chunks: Sequence[StreamChunk]) -> StreamChunk:
    """The last chunk, checked to be the only done/error chunk (R-PRV-19)."""
    assert chunks, "no chunks at all"
    assert chunks[-1].type in (CHUNK_DONE, CHUNK_ERROR), chunks[-1]
    assert all(c.type == CHUNK_TEXT for c in chunks[:-1]), chunks
    return chunks[-1]


def sse_data(*payloads: Any, event: bool = False) -> bytes:
    """An SSE body with one ``data:`` event per payload (dicts as compact JSON, str verbatim)."""
    lines = []
    for payload in payloads:
        text = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
        if event and isinstance(payload, dict):
            lines.append(f"event: {payload['type']}\n")
        lines.append(f"data: {text}\n\n")
    return "".join(lines).encode("utf-8")


def event_stream(*payloads: Any) -> bytes:
    """An Anthropic-style body: ``event: <type>`` before each ``data:`` line."""
    return sse_data(*payloads, event=True)


# --- a real loopback HTTP server (127.0.0.1 on a free port, a daemon thread, shut down in finally) ---


@dataclass
class Exchange:
    """One request the server received."""

    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


@dataclass
class Loopback:
    url: str
    received: list[Exchange] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


Respond = Callable[[BaseHTTPRequestHandler, Loopback], None]


@contextmanager
def loopback(respond: Respond) -> Iterator[Loopback]:
    """Serve every POST with ``respond(handler, server)`` on 127.0.0.1 and a free port.

    ``server.release`` is set on exit, so a handler that waits on it (to simulate a slow
    server) finishes.
    """
    state: list[Loopback] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            state[0].received.append(Exchange("POST", self.path, list(self.headers.items()), body))
            respond(self, state[0])

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.block_on_close = False
    host, port = server.server_address[:2]
    assert isinstance(host, str)
    state.append(Loopback(f"http://{host}:{port}"))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="loopback-http", daemon=True)
    thread.start()
    try:
        yield state[0]
    finally:
        state[0].release.set()
        server.shutdown()
        server.server_close()


def reply(status: int, body: bytes, headers: Sequence[tuple[str, str]] = ()) -> Respond:
    """A responder that sends one whole response."""

    def respond(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
        handler.send_response(status)
        for name, value in headers:
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return respond
