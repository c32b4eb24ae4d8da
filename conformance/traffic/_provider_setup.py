"""What the runner prepares for the provider ops: response bytes and a replay server.

``provider_parse`` cases name a recorded exchange (or give a small body inline) and a chunking;
the runner cuts the body into the chunks the adapter must feed its parser, so every port sees
the same splits (SPEC R-PRV-16). An inline body may carry its own read sizes (``reads``, in
bytes, adding up to the body), which ``recorded`` then delivers as a fixture's: a case can put a
read boundary inside a line where it matters (R-PRV-30b). ``provider_call`` cases name one or
more exchanges; the runner serves them from a loopback ReplayServer and tells the adapter its
base URL, then reports what the server saw: a request the recording does not match fails the
case with the difference.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Final

from ..runner._cases import FIXTURES_DIR
from ._record import load_exchange
from ._replay import ReplayServer, split_body

__all__ = ["PROVIDER_DIR", "PROVIDER_SETUPS", "TEST_API_KEY", "call_setup", "cli_servers", "parse_setup"]

PROVIDER_DIR: Final = FIXTURES_DIR / "providers"
TEST_API_KEY: Final = "test-key-not-secret"  # what adapters send to the replay server
CALL_TIMEOUT: Final = 10.0  # seconds the adapter's client waits; the server answers at once
_LAYOUT: Final = ("fixture", "fixtures", "chunking", "line_ends", "drop_final_newline", "body", "reads")


def _transform(body: bytes, spec: Mapping[str, Any]) -> bytes:
    """Optional line-end variants of R-PRV-16: CRLF line ends, a final line end missing."""
    if spec.get("line_ends") == "crlf":
        body = body.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    if spec.get("drop_final_newline"):
        body = body.rstrip(b"\r\n")
    return body


@contextmanager
def parse_setup(spec: Mapping[str, Any]) -> Iterator[tuple[dict[str, Any], Callable[[], dict[str, Any]]]]:
    """Input for ``provider_parse``: provider, stream, status, headers and base64 chunks."""
    send = {k: v for k, v in spec.items() if k not in _LAYOUT}
    if "fixture" in spec:
        exchange = load_exchange(PROVIDER_DIR / spec["fixture"])
        body, recorded = _transform(exchange.body, spec), exchange.chunks
        send.update(
            provider=exchange.provider, stream=exchange.stream, status=exchange.status,
            headers=[list(pair) for pair in exchange.headers],
        )
    else:
        body, recorded = _transform(spec["body"].encode("utf-8"), spec), tuple(spec.get("reads", ()))
        if recorded and sum(recorded) != len(body):
            raise ValueError(f"reads should add up to the body's {len(body)} bytes, not {sum(recorded)}")
    pieces = split_body(body, spec.get("chunking", "whole"), recorded)
    send["chunks"] = [base64.b64encode(piece).decode("ascii") for piece in pieces]
    yield send, dict


@contextmanager
def call_setup(spec: Mapping[str, Any]) -> Iterator[tuple[dict[str, Any], Callable[[], dict[str, Any]]]]:
    """Input for ``provider_call``: the conversation plus the replay server's base URL and a key
    (the case's ``api_key``, else ``TEST_API_KEY``)."""
    names = spec.get("fixtures") or [spec["fixture"]]
    exchanges = [load_exchange(PROVIDER_DIR / name) for name in names]
    send = {k: v for k, v in spec.items() if k not in _LAYOUT}
    with ReplayServer(exchanges, spec.get("chunking", "recorded")) as server:
        send.update(base_url=server.base_url_for(send["provider"]), timeout=CALL_TIMEOUT)
        send.setdefault("api_key", TEST_API_KEY)  # a case may choose the key (R-ERR-7's cases do)
        yield send, lambda: {
            "replay": {"requests": len(server.requests_seen), "unexpected": list(server.unexpected)}
        }


@contextmanager
def cli_servers(names: Sequence[str], ignore: Sequence[str] = (), faults: Sequence[str] = ()) -> Iterator[
        tuple[dict[str, str], Callable[[], dict[str, Any]]]]:
    """For a ``cli`` case: a replay server of the exchanges ``names`` (none: no server), its base
    URL by provider, and a function reporting what it saw, as ``provider_call``'s ``replay``.

    ``ignore`` lists request body members left out of matching (R-REC-4): a program's request
    holds its own system prompt and tools, which a recording of another client's cannot.
    ``faults`` are rules of ``--fault`` (R-REC-8): a stall makes the program wait for the model.
    """
    if not names:
        yield {}, dict
        return
    exchanges = [load_exchange(PROVIDER_DIR / name) for name in names]
    with ReplayServer(exchanges, "recorded", ignore=ignore, faults=faults) as server:
        urls = {provider: server.base_url_for(provider) for provider in ("openai", "anthropic")}
        yield urls, lambda: {
            "replay": {"requests": len(server.requests_seen), "unexpected": list(server.unexpected)}
        }


# What the runner sends a provider op's adapter, and observes after it, by op.
PROVIDER_SETUPS: Final = {"provider_parse": parse_setup, "provider_call": call_setup}
