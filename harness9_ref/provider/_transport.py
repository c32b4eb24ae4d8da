"""The HTTP exchange over urllib: the only module that does network I/O (SPEC R-PRV-2, R-PRV-3,
R-PRV-22, R-ERR-5).

It sends an ``HttpRequest`` and hands back the status, the headers and the body: whole
(``send``) or as the byte chunks the socket delivered (``open_stream``). An HTTP error status is
not an exception here; the wire format's ``parse_error`` classifies it. Failures without a
response become ``ProviderTimeout`` or ``ProviderConnectionError``; messages name the URL and
never a header, so the API key cannot leak. Nothing is retried (R-PRV-22), and redirects are
not followed: a redirected POST would silently lose its body.
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from collections.abc import Callable, Generator
from typing import Final, TypeVar

from ._errors import ProviderConnectionError, ProviderTimeout
from ._http import HttpRequest

__all__ = ["READ_SIZE", "Headers", "open_stream", "send"]

READ_SIZE: Final = 65_536  # bytes asked of one read1(); it returns what has arrived, up to this
Headers = list[tuple[str, str]]
_T = TypeVar("_T")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Turn every redirect into an HTTPError carrying the 3xx status."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_OPENER: Final = urllib.request.build_opener(_NoRedirect)


class _Response:
    """A response or an HTTP error response: status, headers and a readable body."""

    def __init__(self, status: int, headers: Headers, raw: http.client.HTTPResponse | urllib.error.HTTPError) -> None:
        self.status = status
        self.headers = headers
        self._raw = raw

    def read_all(self) -> bytes:
        return self._raw.read()

    def read1(self) -> bytes:
        return self._raw.read1(READ_SIZE)

    def close(self) -> None:
        self._raw.close()


def _timeout(provider: str, request: HttpRequest, timeout: float, during: str) -> ProviderTimeout:
    return ProviderTimeout(
        f"{provider}: no answer within {timeout:g} s while {during} {request.method} {request.url}",
        provider=provider,
    )


def _broken(provider: str, request: HttpRequest, during: str, exc: BaseException) -> ProviderConnectionError:
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    detail = str(reason) or type(reason).__name__
    return ProviderConnectionError(
        f"{provider}: connection failed while {during} {request.method} {request.url}: {detail}",
        provider=provider,
    )


def _guard(provider: str, request: HttpRequest, timeout: float, during: str, action: Callable[[], _T]) -> _T:
    """Run one blocking step, mapping socket failures to the errors of R-ERR-5."""
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


def _open(request: HttpRequest, timeout: float, provider: str) -> _Response:
    req = urllib.request.Request(request.url, data=request.body, headers=dict(request.headers), method=request.method)

    def attempt() -> _Response:
        try:
            raw = _OPENER.open(req, timeout=timeout)
        except urllib.error.HTTPError as exc:
            return _Response(exc.code, list(exc.headers.items()), exc)
        return _Response(raw.status, list(raw.headers.items()), raw)

    return _guard(provider, request, timeout, "sending", attempt)


def send(request: HttpRequest, *, timeout: float, provider: str) -> tuple[int, Headers, bytes]:
    """Send ``request`` and read the whole response.

    Args:
        request: the request to send.
        timeout: seconds allowed for connecting and for each read (R-PRV-3).
        provider: ``"openai"`` or ``"anthropic"``, for the error messages and attributes.

    Returns:
        The status, the headers in their order, and the body.

    Raises:
        ProviderTimeout: connecting or a read took longer than ``timeout``.
        ProviderConnectionError: no connection, or it broke before the whole response arrived.
    """
    response = _open(request, timeout, provider)
    try:
        body = _guard(provider, request, timeout, "reading the response to", response.read_all)
    finally:
        response.close()
    return response.status, response.headers, body


def open_stream(
    request: HttpRequest, *, timeout: float, provider: str
) -> tuple[int, Headers, Generator[bytes, None, None]]:
    """Send ``request`` and return the body as the chunks that arrive from the socket.

    The chunks are what each ``read1`` returned, so a parser sees data as soon as it arrives.
    A connection that breaks in the middle of the body ends the chunks; the stream assembler
    then reports the missing terminal event (``StreamCutOff``). Close the generator to close the
    connection early.

    Raises:
        ProviderTimeout: connecting took longer than ``timeout`` (when opening), or one read did
            (while iterating).
        ProviderConnectionError: no connection, or it broke before a response arrived.
    """
    response = _open(request, timeout, provider)

    def chunks() -> Generator[bytes, None, None]:
        try:
            while True:
                try:
                    data = response.read1()
                except TimeoutError:
                    raise _timeout(provider, request, timeout, "streaming the response to") from None
                except (OSError, http.client.HTTPException):
                    return  # the connection broke mid-body: the stream simply ends
                if not data:
                    return
                yield data
        finally:
            response.close()

    return response.status, response.headers, chunks()


