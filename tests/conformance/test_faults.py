"""Faults on demand and recorded timing in the replay server and the recording proxy.

Real servers on 127.0.0.1 and real clients (raw sockets, ``http.client``, ``urllib``, the
commands as processes): SPEC R-REC-8 (the grammar and how a fault is chosen), R-REC-9 (error
statuses with the provider's body), R-REC-10 (a cut), R-REC-11 (a stall), R-REC-12 (a broken
body), R-REC-13 (the gaps the proxy records and ``--timing``) and R-REC-14 (SIGTERM). A stall
is checked by what arrives, never by how long anything took: a client whose read timeout is
shorter than the stall sees nothing, one that waits sees the whole answer.
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conformance.runner._cases import PROJECT_ROOT
from conformance.traffic._cassette import Cassette, compile_redactions, load_cassette
from conformance.traffic._faults import FaultError, parse_fault, parse_rule
from conformance.traffic._proxy import Forwarder, Upstream
from conformance.traffic._record import PROVIDERS, FixtureError, find_exchanges, load_exchange
from conformance.traffic._replay import MISMATCH_STATUS, ReplayServer, paced, parse_timing, split_body
from tests.conformance.proxy_upstream import stand_in_server
from tests.conformance.test_proxy import proxy_command
from tests.fakes import ctrl_c_default

pytestmark = pytest.mark.tooling  # tier 2 of tests/README.md: the suite's traffic tooling (replay, proxy, faults) as servers

FIXTURES = PROJECT_ROOT / "fixtures" / "providers"
BY_NAME = {e.name: e for e in find_exchanges([FIXTURES])}
STREAM = BY_NAME["openai/stream-text"]
TEXT = BY_NAME["openai/text"]
ANTHROPIC_TEXT = BY_NAME["anthropic/text"]
SSE = (b'data: {"n":1}\n\n', b'data: {"n":2}\n\n', b"data: [DONE]\n\n")


def post(
    server: ReplayServer, exchange: Any, headers: dict[str, str] | None = None, timeout: float = 10
) -> tuple[int, dict[str, str], bytes]:
    """``urllib`` sends the exchange's request; the status, headers and body it reads."""
    data = json.dumps(exchange.request_body).encode("utf-8")
    sent = {"content-type": "application/json", **(headers or {})}
    request = urllib.request.Request(server.base_url + exchange.path, data=data, headers=sent)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def raw(server: ReplayServer, exchange: Any, headers: str = "", timeout: float = 10) -> tuple[bytes, bytes, bool]:
    """Send over a raw socket; return the response head, the bytes after it, and whether the
    read ended by a timeout (True) rather than by the server closing the connection."""
    body = json.dumps(exchange.request_body).encode("utf-8")
    head = (
        f"POST {exchange.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"{headers}Content-Length: {len(body)}\r\n\r\n"
    ).encode("ascii")
    received, timed_out = b"", False
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
        sock.sendall(head + body)
        try:
            while data := sock.recv(65536):
                received += data
        except TimeoutError:
            timed_out = True
    response_head, _, rest = received.partition(b"\r\n\r\n")
    return response_head, rest, timed_out


def chunks_of(rest: bytes) -> tuple[list[bytes], bool]:
    """The chunks of a chunked body, and whether its last (empty) chunk arrived."""
    pieces: list[bytes] = []
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return pieces, True
        pieces.append(rest[:size])
        rest = rest[size + 2 :]
    return pieces, False


# ---------------------------------------------------------------- the grammar (R-REC-8)


def test_rules_and_headers_read_as_the_grammar_says() -> None:
    rule = parse_rule(" request=2-3 , status=429, retry-after=7 ,times=1")
    assert (rule.first, rule.last, rule.times, rule.exchange) == (2, 3, 1, None)
    assert (rule.fault.status, rule.fault.retry_after) == (429, 7)
    assert parse_rule("status=429").fault.retry_after == 1  # the default of a 429
    assert parse_rule("status=503").fault.retry_after is None
    fault = parse_fault("stall=0.25, after=2, cut=4, malformed")
    assert (fault.stall, fault.after, fault.cut, fault.malformed) == (0.25, 2, 4, True)
    assert fault.text == "stall=0.25, after=2, cut=4, malformed"
    assert parse_rule("exchange=openai/text, cut=0", ["openai/text"]).exchange == "openai/text"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "an empty item"),
        ("status=429,,cut=1", "an empty item"),
        ("status=418", "status=418 should be one of 429, 500, 502, 503, 529"),
        ("status=429, status=500", "status is given twice"),
        ("explode=1", "unknown item 'explode' (known: request, exchange, times, status"),
        ("request=2", "names no fault"),
        ("request=0, cut=1", "request=0 should be N or N-M"),
        ("request=3-2, cut=1", "request=3-2 should be N or N-M"),
        ("times=0, cut=1", "times=0 should be a whole number from 1"),
        ("cut=-1", "cut=-1 should be a whole number"),
        ("stall=1e3", "stall=1e3 should be a number of seconds such as 0.2"),
        ("stall=inf", "stall=inf should be a number of seconds"),
        ("retry-after=2", "retry-after is given with status only"),
        ("status=429, retry-after=1.5", "retry-after=1.5 should be a whole number"),
        ("after=2, cut=3", "after is given with stall only"),
        ("malformed=yes", "malformed takes no value"),
        ("cut", "cut needs a value"),
        ("exchange=openai/nothing, cut=1", "exchange=openai/nothing is not an exchange this server serves"),
    ],
)
def test_a_bad_rule_is_refused_in_one_line(text: str, message: str) -> None:
    with pytest.raises(FaultError, match=re.escape(message)) as caught:
        parse_rule(text, ["openai/text"])
    assert "\n" not in str(caught.value) and str(caught.value).startswith("--fault")


def test_a_header_holds_faults_only() -> None:
    with pytest.raises(FaultError, match="request selects requests, a header applies to its own"):
        parse_fault("request=1, status=429")
    with pytest.raises(FaultError, match="exchange= selects a recorded exchange; the proxy serves none"):
        parse_rule("exchange=openai/text, cut=1", None)


# ---------------------------------------------------------------- selection (R-REC-8)


def test_faults_are_chosen_by_order_header_and_exchange_and_times_stops_a_rule() -> None:
    rules = [f"exchange={ANTHROPIC_TEXT.name}, status=529, times=1", "request=2-3, status=500", "request=3, status=503"]
    with ReplayServer([TEXT, ANTHROPIC_TEXT], faults=rules) as server:
        statuses = [post(server, TEXT)[0]]  # 1: no rule
        statuses.append(post(server, TEXT)[0])  # 2: request=2-3
        statuses.append(post(server, TEXT, {"x-harness9-fault": "status=502"})[0])  # 3: the header wins
        statuses.append(post(server, ANTHROPIC_TEXT)[0])  # 4: exchange=, once
        statuses.append(post(server, ANTHROPIC_TEXT)[0])  # 5: times=1 used up
    assert statuses == [200, 500, 502, 529, 200]
    faults = [seen.fault.text if seen.fault else None for seen in server.requests_seen]
    assert faults == [None, "status=500", "status=502", "status=529", None]
    assert server.unexpected == []


def test_a_status_fault_uses_up_no_exchange_so_a_retry_gets_the_recording() -> None:
    with ReplayServer([TEXT], replay="once", faults=["request=1, status=429"]) as server:
        first = post(server, TEXT)
        second = post(server, TEXT)
    assert first[0] == 429 and (second[0], second[2]) == (200, TEXT.body)
    assert server.unexpected == [] and server.unused() == []
    assert [seen.exchange for seen in server.requests_seen] == [None, TEXT.name]


def test_a_bad_header_gets_400_in_the_provider_shape_and_counts_as_unexpected() -> None:
    with ReplayServer([ANTHROPIC_TEXT]) as server:
        status, _, body = post(server, ANTHROPIC_TEXT, {"x-harness9-fault": "status=404"})
        after = post(server, ANTHROPIC_TEXT)  # the refused request was numbered, and used nothing
    assert status == 400
    error = json.loads(body)
    assert error["type"] == "error" and error["error"]["type"] == "fault_error"
    assert "status=404 should be one of 429, 500, 502, 503, 529" in error["error"]["message"]
    assert server.unexpected == [error["error"]["message"]]
    assert after[0] == 200 and len(server.requests_seen) == 2


# ---------------------------------------------------------------- error statuses (R-REC-9)

OPENAI_KINDS = {429: "requests", 500: "server_error", 502: "cf_bad_gateway", 503: "server_error", 529: "overloaded_error"}
ANTHROPIC_KINDS = {429: "rate_limit_error", 500: "api_error", 502: "api_error", 503: "api_error", 529: "overloaded_error"}


@pytest.mark.parametrize("status", sorted(OPENAI_KINDS))
def test_a_status_fault_answers_with_the_providers_own_error_body(status: int) -> None:
    with ReplayServer([TEXT, ANTHROPIC_TEXT], faults=[f"status={status}"]) as server:
        got, headers, body = post(server, TEXT)
        anthropic_got, anthropic_headers, anthropic_body = post(server, ANTHROPIC_TEXT)
    assert got == anthropic_got == status
    assert headers["content-type"] == anthropic_headers["content-type"] == "application/json"
    assert headers.get("retry-after") == anthropic_headers.get("retry-after") == ("1" if status == 429 else None)
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["type"] == OPENAI_KINDS[status]
    assert error["code"] == {429: "rate_limit_exceeded", 502: 502}.get(status)
    anthropic = json.loads(anthropic_body)
    assert anthropic["type"] == "error" and anthropic["error"]["type"] == ANTHROPIC_KINDS[status]
    if status == 529:
        assert anthropic["error"]["message"] == "Overloaded"
    assert server.unexpected == [] and server.unused() == [TEXT.name, ANTHROPIC_TEXT.name]


REFERENCE_CODES = {429: "rate_limit", 500: "server_error", 502: "server_error", 503: "server_error", 529: "overloaded"}


@pytest.mark.parametrize("status", sorted(REFERENCE_CODES))
def test_the_reference_provider_reads_each_error_answer_and_its_retry_after(status: int) -> None:
    from harness9_ref.provider import ProviderError
    from harness9_ref.provider import anthropic as anthropic_wire
    from harness9_ref.provider import openai as openai_wire

    with ReplayServer([TEXT, ANTHROPIC_TEXT], faults=[f"status={status}, retry-after=4"]) as server:
        answers = {"openai": post(server, TEXT), "anthropic": post(server, ANTHROPIC_TEXT)}
    for provider, wire in (("openai", openai_wire), ("anthropic", anthropic_wire)):
        got, headers, body = answers[provider]
        with pytest.raises(ProviderError) as caught:
            wire.parse_response(got, tuple(headers.items()), body)
        assert caught.value.code == REFERENCE_CODES[status], provider
        assert caught.value.retry_after == 4.0


# ---------------------------------------------------------------- a cut (R-REC-10)


def test_a_cut_sends_n_chunks_and_closes_without_the_last_chunk() -> None:
    lines = split_body(STREAM.body, "lines")
    with ReplayServer([STREAM], "lines", faults=["cut=3"]) as server:
        head, rest, timed_out = raw(server, STREAM)
    assert head.startswith(b"HTTP/1.1 200 ") and not timed_out
    pieces, ended = chunks_of(rest)
    assert pieces == lines[:3] and not ended
    assert b"[DONE]" not in rest


def test_a_cut_of_a_body_with_a_length_leaves_it_short_and_http_client_sees_it() -> None:
    with ReplayServer([TEXT], "whole", faults=["cut=0"]) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("POST", TEXT.path, body=json.dumps(TEXT.request_body))
        response = connection.getresponse()
        assert response.status == 200 and response.getheader("content-length") == str(len(TEXT.body))
        with pytest.raises(http.client.IncompleteRead):
            response.read()
        connection.close()


def test_a_cut_past_the_last_piece_still_leaves_the_body_unended() -> None:
    with ReplayServer([STREAM], "lines", faults=["cut=1000"]) as server:
        _, rest, _ = raw(server, STREAM, "x-harness9-fault: cut=1000\r\n")
    pieces, ended = chunks_of(rest)
    assert b"".join(pieces) == STREAM.body and not ended


# ---------------------------------------------------------------- a stall (R-REC-11)


def test_a_stall_before_the_first_byte_holds_back_everything_then_the_answer_continues() -> None:
    with ReplayServer([STREAM], "lines") as server:
        head, rest, timed_out = raw(server, STREAM, "x-harness9-fault: stall=5\r\n", timeout=1)
        assert timed_out and head == b"" and rest == b""  # not even the status line
        status, _, body = post(server, STREAM, {"x-harness9-fault": "stall=0.2"})
    assert (status, body) == (200, STREAM.body)


def test_a_stall_after_n_pieces_sends_the_head_and_those_pieces_first() -> None:
    lines = split_body(STREAM.body, "lines")
    with ReplayServer([STREAM], "lines") as server:
        head, rest, timed_out = raw(server, STREAM, "x-harness9-fault: stall=5, after=2\r\n", timeout=1)
        assert timed_out and head.startswith(b"HTTP/1.1 200 ")
        assert chunks_of(rest) == (lines[:2], False)
        _, rest, timed_out = raw(server, STREAM, "x-harness9-fault: stall=0.2, after=2\r\n")
    assert not timed_out and chunks_of(rest) == (lines, True)


# ---------------------------------------------------------------- a broken body (R-REC-12)


def test_malformed_breaks_json_and_the_first_event_but_keeps_the_framing() -> None:
    with ReplayServer([TEXT, STREAM], "whole", faults=["malformed"]) as server:
        status, headers, body = post(server, TEXT)
        stream_status, _, stream = post(server, STREAM)
    assert status == 200 and headers["content-length"] == str(len(body))
    assert body == b"{malformed" + TEXT.body
    with pytest.raises(ValueError):
        json.loads(body)
    assert stream_status == 200 and stream == b"data: {malformed\n\n" + STREAM.body
    first = stream.split(b"\n\n")[0].removeprefix(b"data: ")
    with pytest.raises(ValueError):
        json.loads(first)


# ---------------------------------------------------------------- the proxy


def proxy_server(upstream: str, folder: Path, faults: list[str]) -> tuple[ReplayServer, Cassette]:
    """The recording proxy, as the command makes it, with its faults."""
    cassette = Cassette(folder).open()
    target = Upstream.parse(upstream)
    forwarder = Forwarder({provider: target for provider in PROVIDERS}, cassette, timeout=10)
    return ReplayServer([], forward=forwarder, faults=faults).start(), cassette


def test_the_proxy_gives_faults_without_forwarding_a_status_and_records_a_cut_answer_whole(
    tmp_path: Path,
) -> None:
    with stand_in_server() as stand_in:
        stand_in.answers = [SSE]
        stand_in.headers = [("content-type", "text/event-stream")]
        server, cassette = proxy_server(stand_in.url, tmp_path / "c", ["request=1, status=529"])
        try:
            status, _, body = post(server, ANTHROPIC_TEXT)
            assert stand_in.received == []  # the status fault was not forwarded
            _, rest, _ = raw(server, STREAM, "x-harness9-fault: cut=1\r\n")
        finally:
            server.stop()
            cassette.close()
    assert status == 529 and json.loads(body)["error"]["type"] == "overloaded_error"
    pieces, ended = chunks_of(rest)
    assert len(pieces) == 1 and not ended and b"[DONE]" not in rest
    [(_, _, headers, _)] = stand_in.received
    assert "x-harness9-fault" not in headers  # the header is the proxy's, not the API's
    [exchange] = load_cassette(tmp_path / "c")
    assert exchange.body == b"".join(SSE)  # recorded as the upstream sent it
    assert server.unexpected == []


def test_the_proxy_records_the_gaps_between_reads(tmp_path: Path) -> None:
    with stand_in_server() as stand_in:
        stand_in.answers = [SSE]
        stand_in.headers = [("content-type", "text/event-stream")]
        stand_in.gate = threading.Event()
        server, cassette = proxy_server(stand_in.url, tmp_path / "c", [])
        try:
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            connection.request("POST", "/v1/chat/completions", body=b'{"stream": true}')
            response = connection.getresponse()
            assert response.read1(65536) == SSE[0]
            time.sleep(0.3)  # the upstream's second read arrives after this, whatever the machine does
            stand_in.gate.set()
            assert response.read() == b"".join(SSE[1:])
            connection.close()
        finally:
            server.stop()
            cassette.close()
    [exchange] = load_cassette(tmp_path / "c")
    assert len(exchange.gaps) == len(exchange.chunks) - 1 >= 1
    assert exchange.gaps[0] >= 0.3 and all(gap >= 0 for gap in exchange.gaps)
    text = (exchange.directory / "exchange.json").read_text(encoding="utf-8")
    assert re.search(r'"gaps": \[[0-9., ]+\]', text), "the gaps stay on one line"


def test_redaction_merges_the_gaps_of_the_reads_it_merges(tmp_path: Path) -> None:
    cassette = Cassette(tmp_path / "c", compile_redactions(["SECRET"])).open()
    pieces = [b'{"a": "SEC', b"RE", b'T", "b": 1}', b"\n"]
    request: tuple[str, str, list[tuple[str, str]], bytes] = ("POST", "/v1/chat/completions", [], b"{}")
    cassette.write(cassette.reserve(), "http://up", request, 200, [], pieces, [10.0, 10.5, 11.25, 12.0])
    [exchange] = load_cassette(tmp_path / "c")
    assert exchange.body == b'{"a": "<redacted>", "b": 1}\n'
    # The boundaries inside the match move to its end: the first two reads become one.
    assert exchange.chunks == (len('{"a": "<redacted>'), len('", "b": 1}'), 1)
    assert exchange.gaps == (0.75, 0.75)


# ---------------------------------------------------------------- recorded timing (R-REC-13)


def with_gaps(exchange: Any, chunks: tuple[int, ...], gaps: tuple[float, ...]) -> Any:
    return dataclasses.replace(exchange, chunks=chunks, gaps=gaps)


def test_paced_waits_the_gaps_of_the_boundaries_inside_each_piece() -> None:
    timed = with_gaps(STREAM, (10, 10, len(STREAM.body) - 20), (0.5, 2.0))
    recorded = split_body(timed.body, "recorded", timed.chunks)
    assert paced(timed, recorded, 1.0) == [0.0, 0.5, 2.0]
    assert paced(timed, recorded, 0.5) == [0.0, 0.25, 1.0]
    assert paced(timed, [timed.body], 1.0) == [2.5]  # whole: their sum first
    assert paced(timed, split_body(timed.body, "bytes"), 1.0)[10] == 0.5
    assert paced(timed, recorded, 0.0) == [0.0, 0.0, 0.0]
    assert paced(STREAM, split_body(STREAM.body, "recorded", STREAM.chunks), 1.0) == [0.0] * len(STREAM.chunks)
    assert [parse_timing(t) for t in ("fast", "recorded", "x2", "x0.5")] == [0.0, 1.0, 2.0, 0.5]
    with pytest.raises(ValueError, match="--timing should be fast, recorded or xF"):
        parse_timing("slow")


def test_recorded_timing_waits_the_gaps_and_fast_and_old_cassettes_do_not() -> None:
    timed = with_gaps(STREAM, (10, len(STREAM.body) - 10), (5.0,))
    with ReplayServer([timed], timing="recorded") as server:
        _, rest, timed_out = raw(server, STREAM, timeout=1)
    assert timed_out and chunks_of(rest) == ([STREAM.body[:10]], False)
    for timing, exchange in (("fast", timed), ("x0.04", timed), ("recorded", STREAM)):
        with ReplayServer([exchange], timing=timing) as server:
            _, rest, timed_out = raw(server, STREAM, timeout=3)
        assert not timed_out and b"".join(chunks_of(rest)[0]) == STREAM.body, timing


def test_gaps_that_do_not_fit_the_chunks_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "stream"
    shutil.copytree(STREAM.directory, folder)
    data = json.loads((folder / "exchange.json").read_text(encoding="utf-8"))
    count = len(data["response"]["chunks"])
    data["response"]["gaps"] = [0.1]
    (folder / "exchange.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(FixtureError, match=f"1 gaps for {count} chunks; there is one fewer gap than chunks"):
        load_exchange(folder)
    data["response"]["gaps"] = [0.1, -1] + [0] * (count - 3)
    (folder / "exchange.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(FixtureError, match="gaps should be a list of non-negative numbers"):
        load_exchange(folder)
    data["response"]["gaps"] = [0.1, 2] + [0] * (count - 3)
    (folder / "exchange.json").write_text(json.dumps(data), encoding="utf-8")
    assert load_exchange(folder).gaps == (0.1, 2.0) + (0.0,) * (count - 3)


# ---------------------------------------------------------------- the commands (R-REC-8, R-REC-14)


def serve_command(*args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "conformance", "serve", *map(str, args)],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_default,
    )


def test_serve_gives_its_faults_says_so_and_sigterm_prints_the_summary() -> None:
    process = serve_command("--fault", "request=1, status=429", "--timing", "x0", TEXT.directory)
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
        assert lines[0] == "serving 1 recorded exchanges (chunking: recorded, timing: x0)\n"
        match = re.fullmatch(r"OpenAI base URL: (http://127\.0\.0\.1:(\d+))/v1\n", lines[1])
        assert match, lines
        server = ReplayServer([], port=int(match.group(2)))  # only its address, to reuse post()
        assert post(server, TEXT)[0] == 429
        assert process.stdout.readline() == "POST /v1/chat/completions -> HTTP 429 (fault: status=429)\n"
        assert post(server, TEXT, {"x-harness9-fault": "stall=0"})[2] == TEXT.body
        assert process.stdout.readline() == "POST /v1/chat/completions -> openai/text (fault: stall=0)\n"
        assert post(server, ANTHROPIC_TEXT)[0] == MISMATCH_STATUS
        assert process.stdout.readline().startswith("POST /v1/messages -> HTTP 418: POST /v1/messages: no recorded")
        assert post(server, TEXT, {"x-harness9-fault": "cut=x"})[0] == 400
        assert process.stdout.readline() == (
            "POST /v1/chat/completions -> HTTP 400: x-harness9-fault: cut=x should be a whole number from 0\n"
        )
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=10)
    assert process.returncode == 1, err  # as after Ctrl+C: a request went unanswered
    assert err == ""
    assert out.endswith("4 requests, 2 unexpected\n0 unused\n")


def test_sigterm_stops_the_proxy_as_ctrl_c_does(tmp_path: Path) -> None:
    with stand_in_server() as stand_in:
        stand_in.answers = [(b'{"n": 1}\n',)]
        process = proxy_command("--upstream", stand_in.url, "--out", tmp_path / "c", "--fault", "request=2, cut=0")
        try:
            assert process.stdout is not None
            head = [process.stdout.readline() for _ in range(4)]
            match = re.fullmatch(r"OpenAI base URL: http://127\.0\.0\.1:(\d+)/v1\n", head[1])
            assert match, head
            server = ReplayServer([], port=int(match.group(1)))
            assert post(server, TEXT)[2] == b'{"n": 1}\n'
            with pytest.raises(http.client.IncompleteRead):
                post(server, TEXT)
        finally:
            process.send_signal(signal.SIGTERM)
            out, err = process.communicate(timeout=10)
    assert process.returncode == 0 and err == ""
    assert "-> recorded openai/0002-post-v1-chat-completions (fault: cut=0)\n" in out
    assert out.endswith(f"recorded 2 exchanges in {tmp_path / 'c'}\n")


@pytest.mark.parametrize(
    ("command", "args", "message"),
    [
        ("serve", ["--fault", "status=418"], "error: --fault: status=418 should be one of 429, 500, 502, 503, 529\n"),
        ("serve", ["--fault", "exchange=openai/nothing, cut=1"], "is not an exchange this server serves\n"),
        ("serve", ["--timing", "x-1"], "error: --timing should be fast, recorded or xF (x0.5, x2), got 'x-1'\n"),
        ("proxy", ["--fault", "exchange=openai/text, cut=1"], "exchange= selects a recorded exchange; the proxy serves none\n"),
    ],
    ids=["status", "exchange", "timing", "proxy-exchange"],
)
def test_a_bad_fault_or_timing_is_one_line_and_exit_status_2(
    command: str, args: list[str], message: str, tmp_path: Path
) -> None:
    with stand_in_server() as stand_in:
        where = [TEXT.directory] if command == "serve" else ["--upstream", stand_in.url, "--out", tmp_path / "c"]
        process = serve_command(*args, *where) if command == "serve" else proxy_command(*args, *where)
        out, err = process.communicate(timeout=20)
    assert process.returncode == 2 and out == ""
    assert err.startswith("error: ") and err.endswith(message) and err.count("\n") == 1, err
    assert not (tmp_path / "c").exists()


# ---------------------------------------------------------------- another language


NODE_CLIENT = """
const base = process.argv[2];
const body = JSON.parse(process.argv[3]);
const send = (fault) => fetch(`${base}/chat/completions`, {
  method: "POST",
  headers: { "content-type": "application/json", "x-harness9-fault": fault },
  body: JSON.stringify(body),
});
const limited = await send("status=429, retry-after=2");
const error = await limited.json();
// A cut ends the stream without its terminating event; some clients also report an error.
let cut = "cut";
try { if ((await (await send("cut=2")).text()).includes("[DONE]")) cut = "whole"; } catch (e) {}
console.log(JSON.stringify([limited.status, limited.headers.get("retry-after"), error.error.code, cut]));
"""


def test_a_node_client_sees_the_faults_its_header_asks_for(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = tmp_path / "client.mjs"
    script.write_text(NODE_CLIENT, encoding="utf-8")
    with ReplayServer([STREAM], "lines") as server:
        done = subprocess.run(
            [node, str(script), server.base_url_for("openai"), json.dumps(STREAM.request_body)],
            capture_output=True, text=True, timeout=60, check=False,
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [429, "2", "rate_limit_exceeded", "cut"]
