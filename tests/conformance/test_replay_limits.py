"""The replay server answers every request, and one request holds up no other.

SPEC R-REC-16 (a bad length, a body over the cap or nested too deep gets 400 or 413 in the
provider's shape and counts as unexpected, with nothing on standard error; 200 clients at once
are all answered) and R-REC-17 (the search for the closest recorded request runs outside the
lock, at a bounded cost, and reports in a bounded line), over real sockets.
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from conformance.runner._cases import PROJECT_ROOT
from conformance.traffic import _replay
from conformance.traffic._matching import MAX_DEPTH, distance
from conformance.traffic._record import Exchange, load_exchange
from conformance.traffic._replay import DIFFERENCE_LIMIT, MAX_BODY, MISMATCH_STATUS, ReplayServer
from tests.fakes import ctrl_c_default

pytestmark = pytest.mark.tooling  # tier 2 of tests/README.md: the suite's traffic tooling (replay, proxy, faults) as servers

TEXT = load_exchange(PROJECT_ROOT / "fixtures" / "providers" / "openai" / "text")
PATH = TEXT.path


def nested(depth: int) -> str:
    """A JSON text of ``depth`` arrays, one inside the other."""
    return "[" * depth + "]" * depth


def exchange_with(body: Any, name: str = "openai/custom") -> Exchange:
    return dataclasses.replace(TEXT, name=name, request_body=body)


def raw(port: int, head: str, body: bytes = b"", timeout: float = 10) -> tuple[int, bytes]:
    """Send a request written by hand and read the answer until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(head.encode("ascii") + b"\r\n" + body)
        received = b""
        while data := sock.recv(65536):
            received += data
    status_line, _, rest = received.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


def post_head(extra: str) -> str:
    return f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{extra}"


def post(port: int, body: bytes, timeout: float = 30) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", PATH, body=body, headers={"content-type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


BAD_REQUESTS = {
    "negative-length": (post_head("Content-Length: -5\r\n"), b"{}", 400, "is not one whole number of bytes"),
    "text-length": (post_head("Content-Length: ten\r\n"), b"{}", 400, "is not one whole number of bytes"),
    "two-lengths": (post_head("Content-Length: 2\r\nContent-Length: 3\r\n"), b"{}", 400, "'2, 3' is not one whole"),
    "huge-length": (post_head(f"Content-Length: {10**30}\r\n"), b"{}", 413, f"over the limit of {MAX_BODY}"),
    "length-over-cap": (post_head(f"Content-Length: {MAX_BODY + 1}\r\n"), b"{}", 413, f"{MAX_BODY + 1} bytes is over"),
    "chunk-size-not-hex": (post_head("Transfer-Encoding: chunked\r\n"), b"zz\r\n{}\r\n0\r\n\r\n", 400, "not a hexadecimal"),
    "chunks-over-cap": (
        post_head("Transfer-Encoding: chunked\r\n"), b"%x\r\n" % (MAX_BODY + 1), 413, "chunked request body is over"
    ),
    "nested-100000": (post_head("Content-Length: 200000\r\n"), nested(100_000).encode(), 400, f"deeper than {MAX_DEPTH}"),
    "nested-one-too-deep": (
        post_head(f"Content-Length: {2 * MAX_DEPTH + 2}\r\n"), nested(MAX_DEPTH + 1).encode(), 400, f"deeper than {MAX_DEPTH}"
    ),
}


@pytest.mark.parametrize(("head", "body", "status", "reason"), BAD_REQUESTS.values(), ids=BAD_REQUESTS.keys())
def test_a_bad_request_gets_its_status_in_the_provider_shape_and_counts_as_unexpected(
    head: str, body: bytes, status: int, reason: str
) -> None:
    with ReplayServer([TEXT]) as server:
        answered = raw(server.port, head, body)
        assert post(server.port, json.dumps(TEXT.request_body).encode())[0] == 200  # still serving
    assert answered[0] == status
    error = json.loads(answered[1])["error"]
    assert error["type"] == ("request_too_large" if status == 413 else "invalid_request_error")
    assert reason in error["message"], error
    assert len(server.unexpected) == 1 and reason in server.unexpected[0]
    assert [seen.status for seen in server.requests_seen] == [status, None]


def test_a_chunked_body_with_a_trailer_and_a_body_without_a_length_are_read() -> None:
    body = json.dumps(TEXT.request_body).encode()
    chunked = b"%x;ext=1\r\n%s\r\n%x\r\n%s\r\n0\r\nX-Trailer: 1\r\n\r\n" % (5, body[:5], len(body) - 5, body[5:])
    with ReplayServer([TEXT, exchange_with(None, "openai/empty")], replay="once") as server:
        assert raw(server.port, post_head("Transfer-Encoding: chunked\r\n"), chunked)[0] == 200
        assert raw(server.port, post_head(""))[0] == 200  # no length: an empty body, null
    assert [seen.exchange for seen in server.requests_seen] == ["openai/text", "openai/empty"]


def test_a_client_still_sending_a_refused_body_reads_the_refusal() -> None:
    body = b"x" * (MAX_BODY + 1)
    with ReplayServer([TEXT]) as server:
        status, answer = post(server.port, body)
    assert status == 413 and b"is over the limit" in answer


def test_json_at_the_depth_limit_is_compared_matched_and_reported() -> None:
    deep: Any = []
    for _ in range(MAX_DEPTH - 1):
        deep = [deep]
    recorded = exchange_with(deep)
    other = [[*deep[0], 1]]
    with ReplayServer([recorded]) as server:
        assert post(server.port, json.dumps(deep).encode())[0] == 200
        status, answer = post(server.port, json.dumps(other).encode())
    assert status == MISMATCH_STATUS, answer
    assert server.unexpected and "closest is openai/custom" in server.unexpected[0]


def test_serve_counts_every_refusal_and_writes_no_traceback() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "conformance", "serve", TEXT.directory],
        cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_default,
    )
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
        match = re.fullmatch(r"OpenAI base URL: http://127\.0\.0\.1:(\d+)/v1\n", lines[1])
        assert match, lines
        statuses = [raw(int(match.group(1)), head, body)[0] for head, body, _, _ in BAD_REQUESTS.values()]
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10)
    assert statuses == [status for _, _, status, _ in BAD_REQUESTS.values()]
    assert err == ""
    count = len(BAD_REQUESTS)
    assert f"{count} requests, {count} unexpected\n" in out
    assert process.returncode == 1


def test_two_hundred_clients_at_once_are_all_answered() -> None:
    clients = 200
    start = threading.Barrier(clients)
    answers: list[int | str] = []
    body = json.dumps(TEXT.request_body).encode()

    def client() -> None:
        start.wait()
        try:
            answers.append(post(server.port, body, timeout=20)[0])
        except OSError as exc:
            answers.append(repr(exc))

    with ReplayServer([TEXT]) as server:
        threads = [threading.Thread(target=client) for _ in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    assert answers == [200] * clients


@dataclasses.dataclass
class HeldSearch:
    """The closest-match search of a request with a long string, held until ``released``."""

    entered: threading.Event = dataclasses.field(default_factory=threading.Event)
    released: threading.Event = dataclasses.field(default_factory=threading.Event)
    waited_out: bool = False


@pytest.fixture
def held_search(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldSearch]:
    """Makes the search for the closest recorded request of a request with a long string wait
    until released (ten seconds at most), as a search over a large body takes its time: another
    request is answered meanwhile only if the search holds no lock."""
    held = HeldSearch()
    search = distance

    def slow(recorded: Any, got: Any) -> float:
        if "x" * 1000 in json.dumps(got)[:2000]:
            held.entered.set()
            held.waited_out = not held.released.wait(10)
        return search(recorded, got)

    monkeypatch.setattr(_replay, "distance", slow)
    yield held
    held.released.set()


def test_a_large_mismatched_body_holds_up_no_other_client(held_search: HeldSearch) -> None:
    big = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * (8 << 20)}]}).encode()
    finished: list[str] = []
    with ReplayServer([TEXT]) as server:
        large = threading.Thread(target=lambda: finished.append(f"large {post(server.port, big)[0]}"))
        large.start()
        assert held_search.entered.wait(30), "the large request was never searched"
        finished.append(f"small {post(server.port, json.dumps(TEXT.request_body).encode())[0]}")
        held_search.released.set()
        large.join(30)
    assert not held_search.waited_out, "the small request waited for the large one's search"
    assert finished == ["small 200", f"large {MISMATCH_STATUS}"]


def test_the_closest_match_of_a_large_body_is_found_at_a_bounded_cost_and_reported_in_a_bounded_line() -> None:
    # 8 MB of text from an alphabet large enough that difflib treats no character as junk.
    letters = random.Random(9).choices([chr(c) for c in range(0x4E00, 0x4E00 + 4000)], k=(8 << 20) // 3)
    text = "".join(letters)
    recorded = exchange_with({"messages": [{"role": "user", "content": "a" + text}]})
    sent = json.dumps({"messages": [{"role": "user", "content": "b" + text}]}, ensure_ascii=False).encode()
    with ReplayServer([recorded]) as server:
        began = time.monotonic()
        status, answer = post(server.port, sent, timeout=20)
        took = time.monotonic() - began
    assert status == MISMATCH_STATUS
    message = json.loads(answer)["error"]["message"]
    assert "closest is openai/custom, body /messages/0/content" in message
    assert len(message) <= DIFFERENCE_LIMIT and len(server.unexpected[0]) <= DIFFERENCE_LIMIT
    assert took < 15, f"the search took {took:.1f} s"


def test_a_body_of_many_strings_is_compared_at_a_bounded_cost() -> None:
    # Strings of one letter repeated are difflib's slowest case; 8 MB hold some 26,000 of them.
    count = (8 << 20) // 320
    recorded = exchange_with({"messages": [{"content": "a" * 300}] * count})
    sent = json.dumps({"messages": [{"content": "a" * 299 + "b"}] * count}).encode()
    with ReplayServer([recorded, dataclasses.replace(recorded, name="openai/second")]) as server:
        began = time.monotonic()
        status, answer = post(server.port, sent, timeout=20)
        took = time.monotonic() - began
    assert status == MISMATCH_STATUS
    assert "closest is openai/custom, body /messages/0/content" in json.loads(answer)["error"]["message"]
    assert took < 15, f"the search took {took:.1f} s"


def test_a_mismatch_line_is_cut_to_its_limit() -> None:
    with ReplayServer([TEXT]) as server:
        long_path = "/v1/" + "a" * 10_000
        status, answer = raw(server.port, f"POST {long_path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n", b"{}")
    message = json.loads(answer)["error"]["message"]
    assert status == MISMATCH_STATUS
    assert len(message) == DIFFERENCE_LIMIT and message.endswith("…")
    assert message.startswith(f"POST {long_path[:100]}")
    assert server.unexpected == [message]


def test_a_failure_of_the_server_is_a_500_counted_as_unexpected(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any) -> list[bytes]:
        raise RuntimeError("the body cannot be cut")

    monkeypatch.setattr(_replay, "split_body", broken)
    with ReplayServer([TEXT]) as server:
        status, answer = post(server.port, json.dumps(TEXT.request_body).encode())
    assert status == 500
    error = json.loads(answer)["error"]
    assert error["type"] == "internal_error"
    assert error["message"] == f"POST {PATH}: the server failed: RuntimeError: the body cannot be cut"
    assert server.unexpected == [error["message"]] and len(server.requests_seen) == 1
