"""The recording proxy: forward an application's requests upstream and record each exchange.

``python -m conformance proxy --upstream URL --out DIR`` is a ``ReplayServer`` with no
exchanges whose ``forward`` is a ``Forwarder``: every request goes to the upstream API, the
answer goes back to the client piece by piece as it arrives (an event stream is never held
back, SPEC R-REC-1), and the ``Cassette`` writes the exchange with its arrival chunks and the
gaps between them (R-REC-13). The
pytest plugin uses the same pieces with recorded exchanges in front (``new_episodes``).
"""

from __future__ import annotations

import http.client
import socket
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ._cassette import Cassette
from ._matching import error_body, provider_of
from ._record import READ_SIZE
from ._replay import Responder

__all__ = ["Forwarder", "Upstream"]

# Headers about one connection or one hop, ``expect`` (the proxy has the whole body already),
# and those the proxy sets itself: the upstream's host, and an identity encoding so that bodies
# are recorded as the client reads them.
_NOT_FORWARDED: Final = frozenset(
    {
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
        "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host",
        "content-length", "accept-encoding", "expect",
    }
)


@dataclass(frozen=True)
class Upstream:
    """Where requests are forwarded: ``http`` or ``https``, a host, a port, a base path."""

    url: str
    secure: bool
    host: str
    port: int
    base_path: str

    @classmethod
    def parse(cls, url: str) -> Upstream:
        """Read an upstream URL; ValueError with one line when it is not ``http(s)://host…``."""
        parts = urllib.parse.urlsplit(url)
        try:
            port = parts.port
        except ValueError:
            raise ValueError(f"{url!r} has a port that is not a number from 0 to 65535") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{url!r} is not an http:// or https:// URL with a host")
        if parts.query or parts.fragment:
            raise ValueError(f"{url!r}: an upstream URL has no query or fragment")
        if parts.username is not None or parts.password is not None:  # printed and recorded
            raise ValueError("an upstream URL has no user or password; the client sends its own key")
        secure = parts.scheme == "https"
        default = 443 if secure else 80
        return cls(url, secure, parts.hostname, port or default, parts.path.rstrip("/"))

    def check(self, timeout: float) -> None:
        """Open and close one TCP connection; OSError when the upstream refuses it."""
        socket.create_connection((self.host, self.port), timeout=timeout).close()

    def connection(self, timeout: float) -> http.client.HTTPConnection:
        """A new connection to the upstream (TLS with the system's certificates for https)."""
        kind = http.client.HTTPSConnection if self.secure else http.client.HTTPConnection
        return kind(self.host, self.port, timeout=timeout)


class Forwarder:
    """A ``Forward`` for ``ReplayServer``: sends a request upstream, streams the answer back,
    and records the exchange.

    Args:
        upstreams: the upstream for each provider (``conformance.traffic._matching.provider_of``).
        cassette: where exchanges are written; it must be open.
        timeout: seconds for connecting and for each read.
    """

    def __init__(
        self, upstreams: Mapping[str, Upstream], cassette: Cassette, timeout: float = 600.0
    ) -> None:
        self.upstreams = dict(upstreams)
        self.cassette = cassette
        self.timeout = timeout

    def conceal(self, text: str, path: str, headers: Sequence[tuple[str, str]]) -> str:
        """``text`` without the request's secrets, as the cassette hides them (SPEC R-REC-15)."""
        return self.cassette.conceal(text, path, headers)

    def __call__(
        self,
        responder: Responder,
        method: str,
        path: str,
        headers: Sequence[tuple[str, str]],
        body: bytes,
    ) -> str:
        number = self.cassette.reserve()
        provider = provider_of(path, headers)
        upstream = self.upstreams[provider]
        sent = {name: value for name, value in headers if name.lower() not in _NOT_FORWARDED}
        sent["Accept-Encoding"] = "identity"
        connection = upstream.connection(self.timeout)
        try:
            try:
                connection.request(method, upstream.base_path + path, body=body, headers=sent)
                response = connection.getresponse()
            except (OSError, http.client.HTTPException) as exc:
                reason = f"cannot reach {upstream.url}: {exc}"
                answer = error_body(provider, reason, "proxy_error")
                responder.begin(502, [("content-type", "application/json")], len(answer))
                responder.piece(answer)
                responder.end_body()
                raise OSError(reason) from None
            received = [(name.lower(), value) for name, value in response.getheaders()]
            responder.begin(response.status, received, None)
            pieces: list[bytes] = []
            arrivals: list[float] = []
            while True:
                try:
                    piece = response.read1(READ_SIZE)
                except (OSError, http.client.HTTPException):
                    break  # the upstream broke off: what arrived is the exchange, as it was seen
                if not piece:
                    break
                pieces.append(piece)
                arrivals.append(time.monotonic())
                responder.piece(piece)
        finally:
            connection.close()
        request = (method, path, headers, body)
        try:  # written before the answer ends, so a client that read it all finds it on disk
            return self.cassette.write(
                number, upstream.url, request, response.status, received, pieces, arrivals
            )
        finally:
            responder.end_body()
