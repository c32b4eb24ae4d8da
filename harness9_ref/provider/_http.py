"""The HTTP request value and header lookup (SPEC R-PRV-2, R-PRV-3).

``HttpRequest`` is what the pure request builders return and the transport sends. Its ``repr``
hides the API-key headers, so a request can be logged or shown in a failed assertion without
leaking the key (R-PRV-3).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["HttpRequest"]

HEADER_ACCEPT: Final = "Accept"
HEADER_CONTENT_TYPE: Final = "Content-Type"
CONTENT_TYPE_JSON: Final = "application/json"  # R-PRV-4, R-PRV-8
ACCEPT_STREAM: Final = "text/event-stream"  # R-PRV-4, R-PRV-8 when streaming
ACCEPT_JSON: Final = "application/json"  # R-PRV-4, R-PRV-8 otherwise

# Header names (lower case) whose values are secrets: never shown by repr (R-PRV-3).
SECRET_HEADERS: Final = frozenset({"authorization", "x-api-key"})

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True, repr=False)
class HttpRequest:
    """One HTTP request, as bytes ready to send (R-PRV-2).

    Attributes:
        method: ``"POST"``.
        url: the full URL.
        headers: (name, value) pairs in the order they are sent.
        body: the UTF-8 JSON body.
    """

    method: str
    url: str
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        """The value of header ``name`` (case-insensitive), or None."""
        return header_value(self.headers, name)

    def __repr__(self) -> str:
        shown = tuple((k, "***" if k.lower() in SECRET_HEADERS else v) for k, v in self.headers)
        return f"HttpRequest(method={self.method!r}, url={self.url!r}, headers={shown!r}, body={self.body!r})"


def header_value(headers: Sequence[tuple[str, str]], name: str) -> str | None:
    """The first value of header ``name``, compared case-insensitively (RFC 9110), or None."""
    wanted = name.lower()
    for key, value in headers:
        if key.lower() == wanted:
            return value
    return None


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_body(value: object) -> bytes:
    """Compact UTF-8 JSON for a request body.

    A lone surrogate can only come from tool-call arguments decoded from a ``\\ud800`` escape
    (R-PRV-11); it is written back as that escape, which keeps the value and stays valid UTF-8.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _LONE_SURROGATE.sub(_escape_surrogate, text).encode("utf-8")


def strip_base_url(base_url: str) -> str:
    """``base_url`` without its trailing ``/`` (R-PRV-3)."""
    return base_url[:-1] if base_url.endswith("/") else base_url
