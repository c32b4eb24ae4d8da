"""The HTTP exchange over urllib: the only module that does network I/O (SPEC R-PRV-2, R-PRV-3,
R-PRV-22, R-PRV-32, R-PRV-33, R-ERR-5).

It sends an ``HttpRequest`` and hands back the status, the headers and the body: whole
(``send``) or as the byte chunks the socket delivered (``open_stream``). An HTTP error status is
not an exception here; the wire format's ``parse_error`` classifies it. Failures without a
response become ``ProviderTimeout`` or ``ProviderConnectionError``; messages name the URL and
never a header, so the API key cannot leak. Nothing is retried (R-PRV-22), and redirects are
not followed: a redirected POST would silently lose its body.

A streamed exchange may carry an ``Exchange``, which another thread can ``interrupt()``
(R-PRV-3): the connection's socket is shut down, which wakes a read blocked on it at once,
whether it waits for the response's head (a local server reading a long prompt sends nothing
until it is done) or for the next piece of the body. The connection classes below hand their
socket to the exchange as soon as it is connected, so no blocking read happens before the
exchange can reach it.

The same shutdown ends a call at its deadline (R-PRV-33): every exchange starts a timer that
expires it, wherever its read blocks, so a server that drips a byte within
each per-read timeout cannot hold a call longer. A whole body is read in pieces up to its bound
(R-PRV-32): an error body's first ``ERROR_BODY_MAX_BYTES``, the rest left unread; a success
body beyond ``BODY_MAX_BYTES`` is refused without being held.
"""

from __future__ import annotations

import http.client
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Generator
from typing import Any, Final, TypeVar

from ._bounds import BODY_MAX_BYTES, ERROR_BODY_MAX_BYTES, deadline_for
from ._http import HttpRequest
from ._provider_error import MalformedResponse, ProviderConnectionError, ProviderError, ProviderTimeout
from ._streaming import is_success

__all__ = ["READ_SIZE", "Exchange", "Headers", "open_stream", "send"]

READ_SIZE: Final = 65_536  # bytes asked of one read1(); it returns what has arrived, up to this
Headers = list[tuple[str, str]]
_T = TypeVar("_T")


class Exchange:
    """One exchange that another thread, or its deadline, may end at once (R-PRV-3, R-PRV-33).

    ``interrupt()`` marks it and shuts its socket down (both directions), which makes a read
    blocked on that socket return; a socket attached later, still connecting when the interrupt
    came, is shut down as it is attached. ``start_deadline(seconds)`` does the same after that
    many seconds, marking it ``expired`` instead; ``stop_deadline()`` cancels that. Thread-safe.
    """

    __slots__ = ("_lock", "_socket", "_timer", "deadline", "expired", "interrupted")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._timer: threading.Timer | None = None
        self.deadline = 0.0  # seconds, once start_deadline has been called
        self.interrupted = False
        self.expired = False

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            self._socket = sock
            if self.interrupted or self.expired:
                _shut(sock)

    def interrupt(self) -> None:
        with self._lock:
            self.interrupted = True
            if self._socket is not None:
                _shut(self._socket)

    def start_deadline(self, seconds: float) -> None:
        self.deadline = seconds
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def stop_deadline(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            if self._socket is not None:
                _shut(self._socket)


def _shut(sock: socket.socket) -> None:
    """Shut ``sock`` down without closing it (its owner closes it): the plain socket's own
    ``shutdown``, also for a TLS socket, whose reader then sees the end of the stream."""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:  # already closed or never connected: nothing is blocked on it
        pass


class _ExchangeConnection(http.client.HTTPConnection):
    """An HTTP connection that hands its socket to its ``Exchange`` once connected."""

    def __init__(self, *args: Any, exchange: Exchange | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._exchange = exchange

    def connect(self) -> None:
        super().connect()
        if self._exchange is not None:
            self._exchange.attach(self.sock)


class _ExchangeHTTPSConnection(_ExchangeConnection, http.client.HTTPSConnection):
    """The same for HTTPS: the socket is handed over after the TLS handshake (HTTPSConnection's
    ``connect``, which comes after this class's in the method order, wraps it first)."""


class _Request(urllib.request.Request):
    """A urllib request that carries the ``Exchange`` its connection reports to."""

    def __init__(self, request: HttpRequest, exchange: Exchange) -> None:
        super().__init__(request.url, data=request.body, headers=dict(request.headers), method=request.method)
        self.exchange = exchange


def _exchange_of(req: urllib.request.Request) -> Exchange | None:
    return req.exchange if isinstance(req, _Request) else None


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_ExchangeConnection, req, exchange=_exchange_of(req))


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_ExchangeHTTPSConnection, req, exchange=_exchange_of(req))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Turn every redirect into an HTTPError carrying the 3xx status."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_OPENER: Final = urllib.request.build_opener(_NoRedirect, _HTTPHandler, _HTTPSHandler)


class _Response:
    """A response or an HTTP error response: status, headers and a readable body."""

    def __init__(self, status: int, headers: Headers, raw: http.client.HTTPResponse | urllib.error.HTTPError) -> None:
        self.status = status
        self.headers = headers
        self._raw = raw

    def read_upto(self, limit: int) -> tuple[bytes, bool]:
        """At most ``limit`` bytes of the body, read in pieces (no buffer of ``limit`` made
        ahead), and whether more followed them; the rest is left unread.

        Raises:
            http.client.IncompleteRead: the body ended before its ``Content-Length``: the
                connection broke (``read1`` itself reports that as an end).
        """
        body = bytearray()
        while len(body) <= limit:
            data = self._raw.read1(READ_SIZE)
            if not data:
                if getattr(self._raw, "length", None):
                    raise http.client.IncompleteRead(bytes(body))
                return bytes(body), False
            body += data
        return bytes(body[:limit]), True

    def read1(self) -> bytes:
        return self._raw.read1(READ_SIZE)

    def close(self) -> None:
        self._raw.close()


def _timeout(provider: str, request: HttpRequest, timeout: float, during: str) -> ProviderTimeout:
    return ProviderTimeout(
        f"{provider}: no answer within {timeout:g} s while {during} {request.method} {request.url}",
        provider=provider,
    )


def _expired(provider: str, request: HttpRequest, deadline: float, during: str) -> ProviderTimeout:
    """R-PRV-33: the call's deadline passed, however often the server sent within the timeout."""
    return ProviderTimeout(
        f"{provider}: no complete answer within {deadline:g} s, the deadline of one call, "
        f"while {during} {request.method} {request.url}",
        provider=provider,
    )


def _ended(exchange: Exchange, provider: str, request: HttpRequest, during: str) -> ProviderError | None:
    """Why a read failed or ended early when the exchange was ended on our side: its deadline
    (R-PRV-33) or an interrupt (R-PRV-3); None when it was not."""
    if exchange.expired:
        return _expired(provider, request, exchange.deadline, during)
    if exchange.interrupted:
        return _interrupted(provider, request, during)
    return None


def _interrupted(provider: str, request: HttpRequest, during: str) -> ProviderConnectionError:
    """R-PRV-3: the exchange was ended from another thread (a cancel), not by the server."""
    return ProviderConnectionError(
        f"{provider}: interrupted while {during} {request.method} {request.url}", provider=provider
    )


def _broken(provider: str, request: HttpRequest, during: str, exc: BaseException) -> ProviderConnectionError:
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    detail = str(reason) or type(reason).__name__
    return ProviderConnectionError(
        f"{provider}: connection failed while {during} {request.method} {request.url}: {detail}",
        provider=provider,
    )


def _guard(
    provider: str, request: HttpRequest, timeout: float, during: str, action: Callable[[], _T], exchange: Exchange
) -> _T:
    """Run one blocking step, mapping socket failures to the errors of R-ERR-5, or to the
    deadline's or the interrupt's when the exchange was ended on our side."""
    try:
        return _unguarded(provider, request, timeout, during, action)
    except (ProviderConnectionError, ProviderTimeout):
        ended = _ended(exchange, provider, request, during)
        if ended is not None:
            raise ended from None
        raise


def _unguarded(provider: str, request: HttpRequest, timeout: float, during: str, action: Callable[[], _T]) -> _T:
    try:
        return action()
    except TimeoutError:
        raise _timeout(provider, request, timeout, during) from None
    except urllib.error.HTTPError:
        raise
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise _timeout(provider, request, timeout, during) from None
        raise _broken(provider, request, during, exc) from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise _broken(provider, request, during, exc) from None


_SENDING: Final = "sending"
_STREAMING: Final = "streaming the response to"
_READING: Final = "reading the response to"


def _open(request: HttpRequest, timeout: float, provider: str, exchange: Exchange) -> _Response:
    req = _Request(request, exchange)

    def attempt() -> _Response:
        try:
            raw = _OPENER.open(req, timeout=timeout)
        except urllib.error.HTTPError as exc:
            return _Response(exc.code, list(exc.headers.items()), exc)
        return _Response(raw.status, list(raw.headers.items()), raw)

    response = _guard(provider, request, timeout, _SENDING, attempt, exchange)
    ended = _ended(exchange, provider, request, _SENDING)  # a head cut short reads as a whole one
    if ended is not None:
        response.close()
        raise ended
    return response


def _too_long(provider: str, request: HttpRequest, status: int) -> MalformedResponse:
    return MalformedResponse(
        f"{provider}: the response to {request.method} {request.url} is longer than {BODY_MAX_BYTES} bytes",
        provider=provider,
        status=status,
    )


def send(
    request: HttpRequest, *, timeout: float, provider: str, deadline: float | None = None
) -> tuple[int, Headers, bytes]:
    """Send ``request`` and read the whole response, within its bounds (R-PRV-32).

    Args:
        request: the request to send.
        timeout: seconds allowed for connecting and for each read (R-PRV-3).
        provider: ``"openai"`` or ``"anthropic"``, for the error messages and attributes.
        deadline: seconds allowed for the whole call (R-PRV-33); None: ``deadline_for(timeout)``.

    Returns:
        The status, the headers in their order, and the body: for an error status its first
        ``ERROR_BODY_MAX_BYTES`` bytes.

    Raises:
        ProviderTimeout: connecting or a read took longer than ``timeout``, or the whole call
            longer than ``deadline``.
        ProviderConnectionError: no connection, or it broke before the whole response arrived.
        MalformedResponse: a success body longer than ``BODY_MAX_BYTES``.
    """
    exchange = Exchange()
    exchange.start_deadline(deadline_for(timeout) if deadline is None else deadline)
    try:
        response = _open(request, timeout, provider, exchange)
        try:
            success = is_success(response.status)
            limit = BODY_MAX_BYTES if success else ERROR_BODY_MAX_BYTES
            body, more = _guard(provider, request, timeout, _READING, lambda: response.read_upto(limit), exchange)
        finally:
            response.close()
        ended = _ended(exchange, provider, request, _READING)  # a shut socket reads as the end
        if ended is not None:
            raise ended
    finally:
        exchange.stop_deadline()
    if more and success:
        raise _too_long(provider, request, response.status)
    return response.status, response.headers, body


def open_stream(
    request: HttpRequest,
    *,
    timeout: float,
    provider: str,
    exchange: Exchange | None = None,
    deadline: float | None = None,
) -> tuple[int, Headers, Generator[bytes, None, None]]:
    """Send ``request`` and return the body as the chunks that arrive from the socket.

    The chunks are what each ``read1`` returned, so a parser sees data as soon as it arrives.
    A connection that breaks in the middle of the body ends the chunks; the stream assembler
    then reports the missing terminal event (``StreamCutOff``). Close the generator to close the
    connection early. ``exchange.interrupt()`` from another thread ends it at once (R-PRV-3);
    ``deadline`` seconds after the call began it ends too (R-PRV-33; None:
    ``deadline_for(timeout)``).

    Raises:
        ProviderTimeout: connecting took longer than ``timeout`` (when opening), or one read did
            (while iterating); or the deadline passed.
        ProviderConnectionError: no connection, or it broke before a response arrived; or the
            exchange was interrupted, before the response's head or while iterating.
    """
    ours = exchange if exchange is not None else Exchange()
    ours.start_deadline(deadline_for(timeout) if deadline is None else deadline)
    try:
        response = _open(request, timeout, provider, ours)
    except ProviderError:
        ours.stop_deadline()
        raise

    def chunks() -> Generator[bytes, None, None]:
        try:
            while True:
                try:
                    data = response.read1()
                except TimeoutError:
                    raise _timeout(provider, request, timeout, _STREAMING) from None
                except (OSError, http.client.HTTPException):
                    data = b""  # the connection broke mid-body: the stream simply ends
                if not data:
                    ended = _ended(ours, provider, request, _STREAMING)
                    if ended is not None:
                        raise ended
                    return
                yield data
        finally:
            ours.stop_deadline()
            response.close()

    return response.status, response.headers, chunks()


