"""Faults on demand: one small grammar for ``--fault``, the pytest plugin and the request header.

An application's tests must be able to rehearse what the real APIs do on a bad day (SPEC
R-REC-8 … R-REC-12): a rate limit with ``Retry-After``, a 5xx or Anthropic's 529, a stream cut
in the middle, a stall, a body no parser accepts. A *rule* is a comma-separated list of items,
``request=2, status=429, retry-after=1``: selectors say which requests it applies to, faults what
happens to them. The same text without selectors is what a test sends in ``x-harness9-fault``.
``Faulted`` wraps the server's answer so that the same fault applies to a replayed exchange, a
refusal and a proxied answer alike.
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Protocol

__all__ = [
    "FAULT_HEADER", "FAULT_STATUSES", "Fault", "FaultError", "FaultRule", "Faulted",
    "parse_fault", "parse_rule", "status_body",
]

FAULT_HEADER: Final = "x-harness9-fault"
FAULT_STATUSES: Final = (429, 500, 502, 503, 529)
# SPEC R-REC-12: what no JSON or SSE parser accepts, in front of the body.
MALFORMED_STREAM: Final = b"data: {malformed\n\n"
MALFORMED_JSON: Final = b"{malformed"
_SELECTORS: Final = ("request", "exchange", "times")
_FAULTS: Final = ("status", "retry-after", "cut", "stall", "after", "malformed")
_COUNT: Final = re.compile(r"\d+")
_SECONDS: Final = re.compile(r"\d+(?:\.\d+)?")
_RANGE: Final = re.compile(r"(\d+)(?:-(\d+))?")
# The providers' own bodies (SPEC R-REC-9): (type, message) by status, and OpenAI's code.
_OPENAI: Final = MappingProxyType({
    429: ("requests", "Rate limit reached for requests per min (RPM). Please try again in {retry}s."),
    500: ("server_error", "The server had an error while processing your request. Sorry about that!"),
    502: ("cf_bad_gateway", "Bad gateway."),
    503: ("server_error", "The server is overloaded or not ready yet."),
    529: ("overloaded_error", "Overloaded"),
})
_OPENAI_CODES: Final = MappingProxyType({429: "rate_limit_exceeded", 502: 502})
_ANTHROPIC: Final = MappingProxyType({
    429: ("rate_limit_error", "This request would exceed the rate limit for your organization. Try again later."),
    500: ("api_error", "Internal server error"),
    502: ("api_error", "Bad gateway"),
    503: ("api_error", "Service unavailable"),
    529: ("overloaded_error", "Overloaded"),
})


class FaultError(ValueError):
    """A fault rule or header that does not follow the grammar; the message is one line."""


@dataclass(frozen=True)
class Fault:
    """What happens to one answer: an error status instead of it, a cut, a stall, a broken body."""

    text: str
    status: int | None = None
    retry_after: int | None = None
    cut: int | None = None
    stall: float = 0.0
    after: int | None = None
    malformed: bool = False


@dataclass
class FaultRule:
    """A fault and the requests it is given to; ``given`` counts them for ``times``."""

    fault: Fault
    first: int | None = None
    last: int | None = None
    exchange: str | None = None
    times: int | None = None
    given: int = field(default=0, compare=False)

    def selects(self, number: int, exchange: str | None) -> bool:
        """Whether the rule applies to request ``number`` (from 1) answered by ``exchange``."""
        if self.times is not None and self.given >= self.times:
            return False
        if self.first is not None and self.last is not None and not self.first <= number <= self.last:
            return False
        return self.exchange is None or self.exchange == exchange


def _items(text: str, where: str) -> dict[str, str]:
    items: dict[str, str] = {}
    for raw in text.split(","):
        item = raw.strip()
        name, equals, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not item:
            raise FaultError(f"{where} {text!r}: an empty item")
        if name not in _SELECTORS + _FAULTS:
            known = ", ".join(_SELECTORS + _FAULTS)
            raise FaultError(f"{where} {text!r}: unknown item {name!r} (known: {known})")
        if name in items:
            raise FaultError(f"{where} {text!r}: {name} is given twice")
        if (name == "malformed") == bool(equals):
            form = "malformed takes no value" if name == "malformed" else f"{name} needs a value: {name}=…"
            raise FaultError(f"{where} {text!r}: {form}")
        items[name] = value
    return items


def _number(items: dict[str, str], name: str, where: str, pattern: re.Pattern[str], least: int = 0) -> Any:
    value = items.get(name)
    if value is None:
        return None
    if not pattern.fullmatch(value) or float(value) < least:
        kind = "a number of seconds such as 0.2" if pattern is _SECONDS else f"a whole number from {least}"
        raise FaultError(f"{where}: {name}={value} should be {kind}")
    return float(value) if pattern is _SECONDS else int(value)


def _fault(text: str, items: dict[str, str], where: str) -> Fault:
    if not any(name in items for name in _FAULTS):
        raise FaultError(f"{where} {text!r}: names no fault (status, cut, stall or malformed)")
    status = _number(items, "status", where, _COUNT)
    if status is not None and status not in FAULT_STATUSES:
        allowed = ", ".join(map(str, FAULT_STATUSES))
        raise FaultError(f"{where}: status={status} should be one of {allowed}")
    retry_after = _number(items, "retry-after", where, _COUNT)
    if retry_after is not None and status is None:
        raise FaultError(f"{where} {text!r}: retry-after is given with status only")
    after = _number(items, "after", where, _COUNT)
    if after is not None and "stall" not in items:
        raise FaultError(f"{where} {text!r}: after is given with stall only")
    return Fault(
        text=", ".join(f"{n}={v}" if v else n for n, v in items.items() if n in _FAULTS),
        status=status,
        retry_after=1 if status == 429 and retry_after is None else retry_after,
        cut=_number(items, "cut", where, _COUNT),
        stall=_number(items, "stall", where, _SECONDS) or 0.0,
        after=after,
        malformed="malformed" in items,
    )


def parse_fault(text: str) -> Fault:
    """The fault an ``x-harness9-fault`` header asks for; FaultError when it is not one."""
    where = FAULT_HEADER
    items = _items(text, where)
    chosen = [name for name in _SELECTORS if name in items]
    if chosen:
        raise FaultError(f"{where} {text!r}: {chosen[0]} selects requests, a header applies to its own")
    return _fault(text, items, where)


def parse_rule(text: str, exchanges: Iterable[str] | None = ()) -> FaultRule:
    """A ``--fault`` rule; ``exchanges`` are the names an ``exchange=`` may give (None: any
    name is refused, as by the proxy, which serves none)."""
    where = "--fault"
    items = _items(text, where)
    first = last = None
    if "request" in items:
        found = _RANGE.fullmatch(items["request"])
        first, last = (int(found.group(1)), int(found.group(2) or found.group(1))) if found else (0, 0)
        if not found or first < 1 or last < first:
            raise FaultError(f"{where}: request={items['request']} should be N or N-M, 1 <= N <= M")
    exchange = items.get("exchange")
    if exchange is not None and exchanges is None:
        raise FaultError(f"{where} {text!r}: exchange= selects a recorded exchange; the proxy serves none")
    if exchange is not None and exchanges is not None and exchange not in set(exchanges):
        raise FaultError(f"{where}: exchange={exchange} is not an exchange this server serves")
    times = _number(items, "times", where, _COUNT, least=1)
    return FaultRule(_fault(text, items, where), first, last, exchange, times)


def status_body(provider: str, fault: Fault) -> bytes:
    """The provider's own error body for a ``status`` fault (SPEC R-REC-9)."""
    assert fault.status is not None
    if provider == "anthropic":
        kind, message = _ANTHROPIC[fault.status]
        error: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        kind, message = _OPENAI[fault.status]
        message = message.format(retry=fault.retry_after)
        code = _OPENAI_CODES.get(fault.status)
        error = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return json.dumps(error).encode("utf-8") + b"\n"


class _Answer(Protocol):
    """The server's way of answering (``conformance.traffic._replay.Responder`` and its socket)."""

    connection: socket.socket

    def begin(self, status: int, headers: Iterable[tuple[str, str]], length: int | None) -> None: ...

    def piece(self, piece: bytes) -> None: ...

    def end_body(self) -> None: ...


class Faulted:
    """A ``Responder`` that gives an answer its fault on the way to the client.

    After a cut nothing more reaches the client, yet the calls go on succeeding, so that the
    recording proxy still reads and records the upstream's whole answer (SPEC R-REC-10).
    """

    def __init__(self, answer: _Answer, fault: Fault | None) -> None:
        self.answer = answer
        self.fault = fault
        self.sent = 0
        self.closed = False

    def begin(self, status: int, headers: Iterable[tuple[str, str]], length: int | None) -> None:
        fault = self.fault
        headers = list(headers)
        prefix = b""
        if fault is not None and fault.malformed:
            kinds = [value for name, value in headers if name.lower() == "content-type"]
            stream = any("text/event-stream" in kind for kind in kinds)
            prefix = MALFORMED_STREAM if stream else MALFORMED_JSON
        if fault is not None and fault.stall and fault.after is None:
            time.sleep(fault.stall)
        self.answer.begin(status, headers, None if length is None else length + len(prefix))
        if prefix:
            self.answer.piece(prefix)
        if fault is not None and fault.cut == 0:
            self._close()

    def piece(self, piece: bytes) -> None:
        if self.closed or not piece:
            return
        self.answer.piece(piece)
        self.sent += 1
        fault = self.fault
        if fault is None:
            return
        if fault.stall and fault.after == self.sent:
            time.sleep(fault.stall)
        if fault.cut is not None and self.sent >= fault.cut:
            self._close()

    def end_body(self) -> None:
        """End the body, or, under a cut with pieces to spare, the connection."""
        if self.fault is not None and self.fault.cut is not None:
            if not self.closed:
                self._close()
        else:
            self.answer.end_body()

    def _close(self) -> None:
        """End the connection here, in the middle of the body (SPEC R-REC-10)."""
        self.closed = True
        try:
            self.answer.connection.shutdown(socket.SHUT_RDWR)
        except OSError:  # the client has gone already
            pass
