"""A stand-in for a provider API on 127.0.0.1, and the recording proxy in front of it.

The stand-in keeps what it received and answers with chunked pieces; between its first piece
and the rest it can wait for ``gate``, so a test can tell whether the proxy passed the first
piece on before the upstream sent the last: ``gate_expired`` is set when nobody opened the
gate within ten seconds, which only a proxy that holds the first piece back makes happen.
``recording`` runs the proxy of ``python -m conformance proxy`` in the test process: a
``ReplayServer`` with a ``Forwarder``.
"""

from __future__ import annotations

import contextlib
import ssl
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from conformance.traffic._cassette import Cassette, compile_redactions
from conformance.traffic._proxy import Forwarder, Upstream
from conformance.traffic._record import PROVIDERS
from conformance.traffic._replay import ReplayServer

PYTHON_ENV_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


@dataclass
class StandIn:
    """What the stand-in answers (``answers`` in turn, the last one again when used up)."""

    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    answers: list[tuple[bytes, ...]] = field(default_factory=lambda: [(b'{"ok": true}\n',)])
    gate: threading.Event | None = None
    received: list[tuple[str, str, dict[str, str], bytes]] = field(default_factory=list)
    gate_expired: threading.Event = field(default_factory=threading.Event)
    url: str = ""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Any

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        stand_in: StandIn = self.server.stand_in
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        stand_in.received.append((self.command, self.path, headers, body))
        pieces = stand_in.answers[min(len(stand_in.received), len(stand_in.answers)) - 1]
        self.send_response(stand_in.status)
        for name, value in stand_in.headers:
            self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        for number, piece in enumerate(pieces):
            if number == 1 and stand_in.gate is not None and not stand_in.gate.wait(10):
                stand_in.gate_expired.set()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True

    do_POST = do_GET = _answer


@contextlib.contextmanager
def stand_in_server(tls: tuple[Path, Path] | None = None) -> Iterator[StandIn]:
    """The stand-in on 127.0.0.1; with ``tls`` (certificate, key) it speaks HTTPS."""
    state = StandIn()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.stand_in = state  # type: ignore[attr-defined]
    scheme = "http"
    if tls is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    state.url = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield state
    finally:
        if state.gate is not None:
            state.gate.set()
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def recording(upstream: str, folder: Path, redact: Sequence[str] = ()) -> Iterator[ReplayServer]:
    """The recording proxy in front of ``upstream``, writing into ``folder``."""
    cassette = Cassette(folder, compile_redactions(redact)).open()
    target = Upstream.parse(upstream)
    forwarder = Forwarder({provider: target for provider in PROVIDERS}, cassette, timeout=10)
    try:
        with ReplayServer([], forward=forwarder) as server:
            yield server
    finally:
        cassette.close()
