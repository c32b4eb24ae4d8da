"""The loopback server that replays recorded provider exchanges (``python -m conformance serve``).

``ReplayServer`` answers requests on 127.0.0.1 with the fixtures of ``fixtures/providers``
(loaded by ``conformance.traffic._record.load_exchange``), so a port's real HTTP client can be pointed
at them: the ``provider_call`` op of SUITE.md. It delivers a body whole, in its recorded reads,
line by line or one byte at a time, and every chunking must give the same parse (SPEC R-PRV-16).

A request is matched on its method, its exact path and its body compared as JSON (key order
free, ``conformance.runner._compare`` rules; an empty body is ``null``), optionally leaving out listed
body members (SPEC R-REC-4). Each exchange answers any number of requests (``repeat``) or one
(``once``); identical requests get identical exchanges in recorded order (R-REC-3). A request
that matches nothing is answered with status ``MISMATCH_STATUS`` and a provider-shaped error
body whose message is the first difference from the closest recorded request (R-REC-5), so a
port's own error message shows it; the same line is kept in ``ReplayServer.unexpected``, and
``ReplayServer.unused()`` lists what no request asked for. With a ``forward`` callback (the
recording proxy of ``conformance.traffic._proxy``) an unmatched request goes upstream instead.

Faults on demand (``conformance.traffic._faults``, SPEC R-REC-8 … R-REC-12) are decided with the
match, so that a status fault uses up no exchange; ``--timing`` paces a body by the gaps the
proxy recorded between its reads (R-REC-13).

Every request gets an answer (SPEC R-REC-16): a length that is not one whole number, a body over
``MAX_BODY`` or nested deeper than ``_matching.MAX_DEPTH`` is refused with 400 or 413, and a
failure of the server itself with 500, each counted as unexpected. The search for the closest
recorded request runs outside the lock, with a bounded cost, and its line is cut to
``DIFFERENCE_LIMIT`` characters (R-REC-17), so one large request holds up no other.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType, TracebackType
from typing import Any, Final, Literal, Protocol, get_args

from ..runner._compare import describe_difference, first_difference
from ._faults import FAULT_HEADER, Fault, Faulted, FaultError, FaultRule, parse_fault, parse_rule, status_body
from ._matching import DepthError, conceal_query, distance, error_body, parse_body, provider_of, without_members
from ._record import FRAMING_HEADERS, Exchange

__all__ = [
    "CHUNKINGS", "DIFFERENCE_LIMIT", "MAX_BODY", "MISMATCH_STATUS", "REPLAYS", "Chunking", "Forward",
    "Replay", "ReplayServer", "Responder", "SeenRequest", "paced", "parse_timing", "split_body",
]

Chunking = Literal["whole", "recorded", "lines", "bytes"]
CHUNKINGS: Final = get_args(Chunking)
Replay = Literal["repeat", "once"]
REPLAYS: Final = get_args(Replay)
# Where each provider's client is pointed: its request path (SPEC R-PRV-4, R-PRV-8) then
# starts with the recorded one.
BASE_PATHS: Final = MappingProxyType({"openai": "/v1", "anthropic": ""})
MISMATCH_STATUS: Final = 418
_REASONS: Final = MappingProxyType({MISMATCH_STATUS: "Replay Mismatch", 529: "Overloaded"})
_HANDLER_TIMEOUT: Final = 30.0  # seconds a silent client may hold a handler thread
# The largest request body read (SPEC R-REC-16): above the providers' own limits (32 MB for
# Anthropic's Messages, 50 MB of images in one OpenAI request), so no real request is refused.
MAX_BODY: Final = 64 * 1024 * 1024
# Connections the kernel queues before the server accepts them (Python's default is 5): a test
# suite's parallel clients all connect at once (SPEC R-REC-16); the kernel caps it at somaxconn.
_BACKLOG: Final = 1024
_CHUNK_LINE: Final = 1024  # bytes of one chunk-size or trailer line of a chunked request body
# A refused body is still read, so closing resets no client before it reads the refusal: until
# the client is silent this long, or for this long in all.
_LINGER: Final = (1.0, 10.0)
# Characters of a mismatch message: it quotes the request, which may be megabytes (R-REC-17).
DIFFERENCE_LIMIT: Final = 2000
_REFUSALS: Final = MappingProxyType({400: "invalid_request_error", 413: "request_too_large", 500: "internal_error"})
_DRAIN_SECONDS: Final = 1.0  # how long stop() waits for answers (and recordings) in flight
_TIMING: Final = re.compile(r"x(\d+(?:\.\d+)?)")
FAULT_ERROR_STATUS: Final = 400


def split_body(body: bytes, chunking: Chunking, chunks: Sequence[int] = ()) -> list[bytes]:
    """Cut a body into the pieces a server sends one by one.

    ``whole`` is one piece; ``recorded`` uses the recorded read sizes, or lines when there are
    none; ``lines`` ends each piece after a line end (LF, CR or CRLF); ``bytes`` sends one byte
    per piece. The pieces always join to the body, and none is empty.
    """
    if chunking == "whole":
        return [body] if body else []
    if chunking == "bytes":
        return [body[i : i + 1] for i in range(len(body))]
    if chunking == "recorded" and chunks:
        pieces, start = [], 0
        for size in chunks:
            pieces.append(body[start : start + size])
            start += size
        return [piece for piece in pieces if piece]
    if chunking in ("lines", "recorded"):
        return body.splitlines(keepends=True)
    raise ValueError(f"chunking must be one of {', '.join(CHUNKINGS)}, got {chunking!r}")


def parse_timing(text: str) -> float:
    """The factor ``--timing`` applies to the recorded gaps: ``fast`` 0, ``recorded`` 1, ``xF`` F
    (SPEC R-REC-13); ValueError with one line for anything else."""
    if text in ("fast", "recorded"):
        return 0.0 if text == "fast" else 1.0
    found = _TIMING.fullmatch(text)
    if found is None:
        raise ValueError(f"--timing should be fast, recorded or xF (x0.5, x2), got {text!r}")
    return float(found.group(1))


def _cut(line: str) -> str:
    """A mismatch line cut to ``DIFFERENCE_LIMIT`` characters (SPEC R-REC-17)."""
    return line if len(line) <= DIFFERENCE_LIMIT else line[: DIFFERENCE_LIMIT - 1] + "…"


class _Refused(Exception):
    """A request the server answers itself with ``status`` and why (SPEC R-REC-16)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def paced(exchange: Exchange, pieces: Sequence[bytes], factor: float) -> list[float]:
    """The seconds to wait before each piece: ``factor`` times the recorded gaps of the read
    boundaries inside it (SPEC R-REC-13); none for an exchange recorded without gaps."""
    boundaries = list(itertools.accumulate(exchange.chunks))[:-1]
    waits, start = [], 0
    for piece in pieces:
        end = start + len(piece)
        waits.append(factor * sum(g for b, g in zip(boundaries, exchange.gaps) if start <= b < end))
        start = end
    return waits


@dataclass(frozen=True)
class SeenRequest:
    """A request the server received; ``exchange`` is the name of the one that answered it,
    or, when ``recorded``, the name it was forwarded and recorded under; ``fault`` the fault it
    got; ``status`` that of an answer of the server's own (a refusal, a status fault). It is
    unexpected when ``difference`` says why it was not answered as recorded."""

    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    exchange: str | None
    difference: str = ""
    recorded: bool = False
    fault: Fault | None = None
    status: int | None = None


class Responder(Protocol):
    """How a ``Forward`` callback answers the client, piece by piece as the pieces arrive."""

    def begin(self, status: int, headers: Iterable[tuple[str, str]], length: int | None) -> None:
        """Send the status and headers; ``length`` is the body's, or None to stream it."""

    def piece(self, piece: bytes) -> None: ...

    def end_body(self) -> None: ...


class Forward(Protocol):
    """Answers a request that matched no exchange; returns the name it was recorded under,
    or raises ``OSError`` with the reason when it was not recorded."""

    def __call__(
        self,
        responder: Responder,
        method: str,
        path: str,
        headers: Sequence[tuple[str, str]],
        body: bytes,
    ) -> str: ...

    def conceal(self, text: str, path: str, headers: Sequence[tuple[str, str]]) -> str:
        """``text`` without the secrets of the request to ``path`` with ``headers``, to be
        printed (SPEC R-REC-15)."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = _BACKLOG
    replay: ReplayServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = _HANDLER_TIMEOUT
    server: _Server
    _chunked = False
    _begun = False

    def setup(self) -> None:
        super().setup()
        # Each piece leaves at once instead of waiting to be coalesced with the next.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: ``ReplayServer.on_request`` is the place to report requests."""

    def _read_body(self) -> bytes:
        """The request body: chunked, or as long as its one Content-Length says, or empty when
        it has neither (RFC 9112 section 6.3).

        Raises:
            _Refused: 400 for a length that is not one whole number of bytes or a chunk size
                that is not hexadecimal, 413 for a body over ``MAX_BODY`` (SPEC R-REC-16).
        """
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        lengths = sorted({value.strip() for value in self.headers.get_all("Content-Length") or ()})
        if not lengths:
            return b""
        if len(lengths) > 1 or not re.fullmatch(r"[0-9]+", lengths[0]):
            raise _Refused(400, f"Content-Length {', '.join(lengths)!r} is not one whole number of bytes")
        length = int(lengths[0])
        if length > MAX_BODY:
            raise _Refused(413, f"the request body of {length} bytes is over the limit of {MAX_BODY}")
        return self.rfile.read(length)

    def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(_CHUNK_LINE + 1)
            if not line:
                raise ConnectionResetError("the client closed the connection inside the body")
            digits = line.split(b";")[0].strip()
            if len(line) > _CHUNK_LINE or not re.fullmatch(rb"[0-9A-Fa-f]+", digits):
                raise _Refused(400, f"the chunk size {line[:40]!r} is not a hexadecimal number")
            size = int(digits, 16)
            total += size
            if total > MAX_BODY:
                raise _Refused(413, f"the chunked request body is over the limit of {MAX_BODY} bytes")
            if not size:
                break
            parts.append(self.rfile.read(size))
            self.rfile.readline(_CHUNK_LINE + 1)
        while (line := self.rfile.readline(_CHUNK_LINE + 1)) not in (b"\r\n", b"\n", b""):
            total += len(line)  # trailers count, so an endless one is refused too
            if total > MAX_BODY:
                raise _Refused(413, f"the chunked request body is over the limit of {MAX_BODY} bytes")
        return b"".join(parts)

    def _answer(self) -> None:
        with self.server.replay.in_flight():
            try:
                self._respond()
            except (TimeoutError, BrokenPipeError, ConnectionResetError):
                raise
            except Exception as exc:  # a bug is one unexpected request, not a traceback
                self._refuse(_Refused(500, f"the server failed: {type(exc).__name__}: {exc}"))

    def _seen(self, body: bytes = b"") -> SeenRequest:
        """This request as the server compares and keeps it: the values of its secret query
        parameters hidden (SPEC R-REC-15); ``_note`` hides the rest of its secrets in the proxy."""
        headers = tuple((k.lower(), v) for k, v in self.headers.items())
        return SeenRequest(self.command, conceal_query(self.path), headers, body, None)

    def _note(self, seen: SeenRequest) -> None:
        """Keep (and so print) a request; the proxy hides every form of its secrets first."""
        forward = self.server.replay.forward
        if forward is not None:
            path, headers = self.path, seen.headers
            hidden = forward.conceal(seen.path, path, headers)
            seen = dataclasses.replace(seen, path=hidden, difference=forward.conceal(seen.difference, path, headers))
        self.server.replay.note(seen)

    def _refuse(self, refused: _Refused, body: bytes = b"") -> None:
        """Answer a request the server will not take with its status, in the provider's shape,
        counted as unexpected (SPEC R-REC-16); an answer already begun is only cut short."""
        seen = self._seen(body)
        line = _cut(f"{seen.method} {seen.path}: {refused.reason}")
        self._note(dataclasses.replace(seen, difference=line, status=refused.status))
        if self._begun:
            self.close_connection = True
            return
        provider = provider_of(self.path, seen.headers)
        self._whole(Faulted(self, None), refused.status, error_body(provider, line, _REFUSALS[refused.status]))

    def _discard_unread(self) -> None:
        """Read what the client is still sending (``_LINGER``), so that closing the connection
        with a body unread does not reset it before it reads the refusal."""
        silence, longest = _LINGER
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + longest
            while (left := deadline - time.monotonic()) > 0:
                self.connection.settimeout(min(silence, left))
                if not self.connection.recv(65536):
                    break

    def _respond(self) -> None:
        try:
            body = self._read_body()
        except _Refused as refused:
            self._refuse(refused)
            self._discard_unread()
            return
        replay = self.server.replay
        seen = self._seen(body)
        headers = seen.headers
        provider = provider_of(self.path, headers)
        try:
            got, not_json = parse_body(body), ""
        except DepthError as exc:
            self._refuse(_Refused(400, str(exc)), body)
            return
        except ValueError as exc:
            got, not_json = None, str(exc)
        try:
            exchange, difference, fault = replay.decide(self.command, seen.path, got, headers, not_json)
        except FaultError as exc:  # a header the grammar refuses (SPEC R-REC-8)
            self._note(dataclasses.replace(seen, difference=str(exc), status=FAULT_ERROR_STATUS))
            self._whole(Faulted(self, None), FAULT_ERROR_STATUS, error_body(provider, str(exc), "fault_error"))
            return
        seen = dataclasses.replace(seen, difference=difference, fault=fault)
        answer = Faulted(self, fault)
        if fault is not None and fault.status is not None:
            self._note(dataclasses.replace(seen, status=fault.status))
            retry = [] if fault.retry_after is None else [("retry-after", str(fault.retry_after))]
            self._whole(answer, fault.status, status_body(provider, fault), retry)
            return
        if exchange is not None:
            pieces = split_body(exchange.body, replay.chunking, exchange.chunks)
            self._note(dataclasses.replace(seen, exchange=exchange.name))
            whole = replay.chunking == "whole"
            answer.begin(exchange.status, exchange.headers, sum(map(len, pieces)) if whole else None)
            for number, wait in enumerate(paced(exchange, pieces, replay.timing)):
                if answer.closed:  # cut: nothing more reaches the client
                    break
                wait += replay.pause if number else 0.0
                if wait:
                    time.sleep(wait)
                answer.piece(pieces[number])
            answer.end_body()
            return
        if replay.forward is not None:
            sent = tuple((name, value) for name, value in headers if name != FAULT_HEADER)
            try:
                name = replay.forward(answer, self.command, self.path, sent, body)
            except OSError as exc:
                seen = dataclasses.replace(seen, difference=f"not recorded: {exc}")
            else:
                seen = dataclasses.replace(seen, exchange=name, difference="", recorded=True)
            self._note(seen)
            return
        self._note(dataclasses.replace(seen, status=MISMATCH_STATUS))
        self._whole(answer, MISMATCH_STATUS, error_body(provider, difference))

    def _whole(
        self, answer: Faulted, status: int, body: bytes, headers: Sequence[tuple[str, str]] = ()
    ) -> None:
        """Answer with one JSON body of the server's own: a refusal or a status fault."""
        answer.begin(status, [("content-type", "application/json"), *headers], len(body))
        answer.piece(body)
        answer.end_body()

    def begin(self, status: int, headers: Iterable[tuple[str, str]], length: int | None) -> None:
        """Send the status line and headers; the connection closes after this one answer."""
        self.close_connection = True
        self._begun = True
        self.send_response_only(status, _REASONS.get(status))
        for name, value in headers:
            if name not in FRAMING_HEADERS:
                self.send_header(name, value)
        # An HTTP/1.0 client cannot read chunked coding: its body ends when the connection closes.
        self._chunked = length is None and self.request_version != "HTTP/1.0"
        if length is not None:
            self.send_header("Content-Length", str(length))
        elif self._chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()

    def piece(self, piece: bytes) -> None:
        """Send one piece now (one HTTP chunk when chunked); an empty piece sends nothing."""
        if piece:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if self._chunked else piece)

    def end_body(self) -> None:
        """End the body (not ``finish``, which the server calls to close the streams after every request)."""
        if self._chunked:
            self.wfile.write(b"0\r\n\r\n")

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (TimeoutError, BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_POST = do_GET = do_PUT = do_PATCH = do_DELETE = _answer


class ReplayServer:
    """Serve recorded exchanges on 127.0.0.1 from a daemon thread.

    Use it as a context manager (or call ``start()`` and ``stop()``)::

        with ReplayServer([load_exchange(path)], chunking="bytes") as server:
            client = OpenAIProvider(model, api_key="test", base_url=server.base_url_for("openai"))

    Args:
        exchanges: what to serve, in recorded order. A request gets the first exchange with
            its method, path and JSON body that has been served the fewest times, so identical
            requests recorded several times are answered in their order (SPEC R-REC-3).
        replay: ``repeat`` lets an exchange answer again once its equals are used up; with
            ``once`` it answers one request only and a further one is a mismatch.
        ignore: body members left out of the comparison, such as ``temperature`` or
            ``metadata.user_id`` (SPEC R-REC-4).
        forward: called for a request that matches nothing, instead of the mismatch answer.
        chunking: how bodies are delivered (``CHUNKINGS``): ``whole`` with a Content-Length,
            the others as HTTP/1.1 chunked transfer coding with one chunk per piece (to an
            HTTP/1.0 client: piece by piece, ended by closing the connection).
        pause: seconds to wait between pieces (0 sends them back to back).
        timing: ``fast``, ``recorded`` or ``xF``: how the recorded gaps pace a body (R-REC-13).
        faults: ``--fault`` rules, in order (R-REC-8); ``add_fault`` adds one while serving.
        port: the port to listen on; 0 picks a free one.
        on_request: called in the handler thread after each request is matched.

    Attributes:
        requests_seen: every request received, in order.
        unexpected: one difference line per request that matched no exchange.
    """

    def __init__(
        self,
        exchanges: Sequence[Exchange],
        chunking: Chunking = "recorded",
        *,
        pause: float = 0.0,
        port: int = 0,
        on_request: Callable[[SeenRequest], None] | None = None,
        replay: Replay = "repeat",
        ignore: Sequence[str] = (),
        forward: Forward | None = None,
        timing: str = "fast",
        faults: Sequence[str] = (),
    ) -> None:
        if chunking not in CHUNKINGS:
            raise ValueError(f"chunking must be one of {', '.join(CHUNKINGS)}, got {chunking!r}")
        if replay not in REPLAYS:
            raise ValueError(f"replay must be one of {', '.join(REPLAYS)}, got {replay!r}")
        self.exchanges = tuple(exchanges)
        self.chunking: Chunking = chunking
        self.replay: Replay = replay
        self.ignore = tuple(ignore)
        self.forward = forward
        self.pause = pause
        self.timing = parse_timing(timing)
        self.on_request = on_request
        self.requests_seen: list[SeenRequest] = []
        self.unexpected: list[str] = []
        self._served = [0] * len(self.exchanges)
        # What a request is compared with, computed once: exchanges never change (SPEC R-REC-17).
        self._bodies = [without_members(e.request_body, self.ignore) for e in self.exchanges]
        self._routes: dict[str, list[int]] = {}
        for index, exchange in enumerate(self.exchanges):
            route = f"{exchange.method} {conceal_query(exchange.path)}"  # as requests are (R-REC-15)
            self._routes.setdefault(route, []).append(index)
        self._received = 0
        self._lock = threading.RLock()
        self.faults: list[FaultRule] = []
        for rule in faults:
            self.add_fault(rule)
        self._port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._busy = 0
        self._idle = threading.Condition()

    @property
    def port(self) -> int:
        """The port listened on (only meaningful once started)."""
        return self._server.server_address[1] if self._server else self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``; see ``base_url_for`` for what a client is given."""
        return f"http://127.0.0.1:{self.port}"

    def base_url_for(self, provider: str) -> str:
        """The base URL a provider client is configured with (SPEC R-PRV-3) to reach this server."""
        return self.base_url + BASE_PATHS[provider]

    def start(self) -> ReplayServer:
        """Bind 127.0.0.1 and serve from a daemon thread."""
        if self._server is None:
            self._server = _Server(("127.0.0.1", self._port), _Handler)
            self._server.replay = self
            self._thread = threading.Thread(
                target=self._server.serve_forever, kwargs={"poll_interval": 0.005}, daemon=True
            )
            self._thread.start()
        return self

    @contextlib.contextmanager
    def in_flight(self) -> Iterator[None]:
        """Count an answer being given, so that ``stop`` can wait for it."""
        with self._idle:
            self._busy += 1
        try:
            yield
        finally:
            with self._idle:
                self._busy -= 1
                self._idle.notify_all()

    def stop(self) -> None:
        """Stop serving, wait a little for answers in flight, close the socket; safe to call twice.

        A client may stop reading as soon as it has what it needs (an SSE client at its last
        event), before the answer, and the recording of a proxied exchange, are complete; an
        answer still streaming after ``_DRAIN_SECONDS`` is cut off (and not recorded).
        """
        server, self._server = self._server, None
        if server is not None:
            self._port = server.server_address[1]
            server.shutdown()
            with self._idle:
                self._idle.wait_for(lambda: self._busy == 0, timeout=_DRAIN_SECONDS)
            server.server_close()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def add_fault(self, rule: str) -> None:
        """Add a ``--fault`` rule after those given (SPEC R-REC-8); FaultError when it is not one.

        The proxy serves no exchange, so ``exchange=`` is refused there.
        """
        names = [e.name for e in self.exchanges] if self.forward is None or self.exchanges else None
        parsed = parse_rule(rule, names)
        with self._lock:
            self.faults.append(parsed)

    def decide(
        self, method: str, path: str, got: Any, headers: Sequence[tuple[str, str]], not_json: str = ""
    ) -> tuple[Exchange | None, str, Fault | None]:
        """Number a request, pick its exchange and its fault (SPEC R-REC-8).

        ``got`` is the request's JSON body, or ``not_json`` says why it has none. The search
        for equal and closest recorded bodies reads only what never changes and runs without
        the lock, which is held only to number the request, use up an exchange and count a
        rule (SPEC R-REC-17). A status fault takes the answer's place, so it uses up no
        exchange (SPEC R-REC-9).

        Raises:
            FaultError: the request's ``x-harness9-fault`` header is not a fault.
        """
        asked = [value for name, value in headers if name == FAULT_HEADER]
        with self._lock:
            self._received += 1
            number = self._received
        fault = parse_fault(asked[0]) if asked else None
        equal, difference = self._search(method, path, got, not_json)
        with self._lock:
            usable = [i for i in equal if self.replay == "repeat" or not self._served[i]]
            index = min(usable, key=lambda i: (self._served[i], i)) if usable else None
            if equal and index is None:
                names = ", ".join(self.exchanges[i].name for i in equal)
                difference = f"{method} {path}: {names} answered this body already (replay once)"
            if fault is None:
                name = None if index is None else self.exchanges[index].name
                rule = next((r for r in self.faults if r.selects(number, name)), None)
                if rule is not None:
                    rule.given += 1
                    fault = rule.fault
            if fault is not None and fault.status is not None:
                return None, "", fault
            if index is None:
                return None, _cut(difference), fault
            self._served[index] += 1
            return self.exchanges[index], "", fault

    def _search(self, method: str, path: str, got: Any, not_json: str) -> tuple[list[int], str]:
        """The exchanges whose request equals this one, or, when none does, why: the closest
        one and the first difference from it (SPEC R-REC-5, R-REC-17)."""
        where = f"{method} {path}"
        same_route = self._routes.get(where, [])
        if not same_route:
            known = ", ".join(sorted(self._routes)) or "none"
            return [], f"{where}: no recorded exchange has this method and path (recorded: {known})"
        if not_json:
            return [], f"{where}: the request body is not JSON ({not_json})"
        got = without_members(got, self.ignore)
        differences = {i: first_difference(self._bodies[i], got) for i in same_route}
        equal = [i for i, found in differences.items() if found is None]
        if equal:
            return equal, ""
        # The closest recorded request differs in the fewest places.
        index = min(same_route, key=lambda i: distance(self._bodies[i], got))
        found = differences[index]
        assert found is not None
        closest = f"closest is {self.exchanges[index].name}, body {describe_difference(*found)}"
        return [], f"{where}: the body matches no recorded request; {closest}"

    def unused(self) -> list[str]:
        """The names of the exchanges no request has received yet, in recorded order."""
        with self._lock:
            return [e.name for e, n in zip(self.exchanges, self._served) if not n]

    def note(self, seen: SeenRequest) -> None:
        """Record a request (called by the handler)."""
        with self._lock:
            self.requests_seen.append(seen)
            if seen.difference:
                self.unexpected.append(seen.difference)
        if self.on_request is not None:
            self.on_request(seen)
