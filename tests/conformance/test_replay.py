"""The provider fixtures and the loopback replay server (conformance/traffic/_replay.py).

The fixtures' ``expect`` blocks are checked against their own bytes by a deliberately small
reading of SPEC R-PRV-13/14/17/18, R-USE and R-ERR written here, independent of
harness9_ref.provider, so a slip in a hand-written expectation shows up before any
implementation is run against it.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conformance.runner._cases import PROJECT_ROOT
from conformance.traffic._provider_setup import parse_setup
from conformance.traffic._record import Exchange, FixtureError, find_exchanges, load_exchange
from conformance.traffic._replay import CHUNKINGS, MISMATCH_STATUS, ReplayServer, split_body
from harness9_ref.provider import get_model_limits
from tests.fakes import ctrl_c_default

PROVIDERS_DIR = PROJECT_ROOT / "fixtures" / "providers"
EXCHANGES = find_exchanges([PROVIDERS_DIR])
BY_NAME = {exchange.name: exchange for exchange in EXCHANGES}
QUIRKS = json.loads((PROVIDERS_DIR / "quirks.json").read_text(encoding="utf-8"))
WINDOW_PATHS = ("/props", "/v1/models")  # where a local server says its window (fixtures/README.md)
ERROR_CODES = {
    "authentication", "rate_limit", "overloaded", "context_length_exceeded", "invalid_request",
    "model_not_found", "server_error", "malformed_response", "malformed_stream", "stream_cut_off",
}


def post(url: str, body: Any, *, raw: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    data = raw if raw is not None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers.items()), response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers.items()), error.read()


def url_for(server: ReplayServer, exchange: Exchange) -> str:
    return server.base_url + exchange.path


def raw_pieces(server: ReplayServer, exchange: Exchange) -> tuple[bytes, list[bytes]]:
    """POST over a raw socket; return the response head and the chunked-coding pieces."""
    body = json.dumps(exchange.request_body).encode("utf-8")
    head = (
        f"POST {exchange.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode("ascii")
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(head + body)
        received = b""
        while data := sock.recv(65536):
            received += data
    response_head, _, rest = received.partition(b"\r\n\r\n")
    pieces: list[bytes] = []
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return response_head, pieces
        pieces.append(rest[:size])
        assert rest[size : size + 2] == b"\r\n"
        rest = rest[size + 2 :]


# ---------------------------------------------------------------- the server


@pytest.mark.parametrize("name", ["openai/stream-text", "anthropic/error-rate-limit"])
def test_every_chunking_delivers_the_identical_bytes_status_and_headers(name: str) -> None:
    exchange = BY_NAME[name]
    for chunking in CHUNKINGS:
        with ReplayServer([exchange], chunking) as server:
            status, headers, body = post(url_for(server, exchange), exchange.request_body)
        assert (status, body) == (exchange.status, exchange.body), chunking
        for header, value in exchange.headers:
            assert headers[header] == value
        assert server.unexpected == [] and [s.exchange for s in server.requests_seen] == [name]


def test_recorded_chunking_sends_one_http_chunk_per_recorded_read() -> None:
    exchange = BY_NAME["anthropic/stream-text"]
    assert exchange.chunks
    with ReplayServer([exchange]) as server:
        head, pieces = raw_pieces(server, exchange)
    assert head.startswith(b"HTTP/1.1 200 ")
    assert [len(piece) for piece in pieces] == list(exchange.chunks)
    assert b"".join(pieces) == exchange.body


def test_lines_and_bytes_chunkings_send_lines_and_single_bytes() -> None:
    exchange = BY_NAME["openai/stream-no-usage"]
    with ReplayServer([exchange], "lines") as server:
        _, pieces = raw_pieces(server, exchange)
    assert pieces == exchange.body.splitlines(keepends=True)
    small = BY_NAME["anthropic/error-overloaded"]
    with ReplayServer([small], "bytes") as server:
        head, pieces = raw_pieces(server, small)
    assert head.startswith(b"HTTP/1.1 529 Overloaded\r\n")
    assert pieces == [bytes([b]) for b in small.body]


def test_an_http_1_0_client_gets_the_pieces_ended_by_closing_the_connection() -> None:
    exchange = BY_NAME["anthropic/stream-tool-use"]
    body = json.dumps(exchange.request_body).encode("utf-8")
    with ReplayServer([exchange], "lines") as server, socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"POST /v1/messages HTTP/1.0\r\nContent-Length: %d\r\n\r\n" % len(body))
        sock.sendall(body)
        received = b""
        while data := sock.recv(65536):
            received += data
    head, _, rest = received.partition(b"\r\n\r\n")
    assert b"Transfer-Encoding" not in head and rest == exchange.body


def test_whole_chunking_sets_content_length_and_drops_recorded_framing_headers() -> None:
    exchange = dataclasses.replace(
        BY_NAME["openai/text"],
        headers=(("content-type", "application/json"), ("transfer-encoding", "chunked")),
    )
    with ReplayServer([exchange], "whole") as server:
        status, headers, body = post(url_for(server, exchange), exchange.request_body)
    assert status == 200 and body == exchange.body
    assert headers["Content-Length"] == str(len(exchange.body))
    assert "Transfer-Encoding" not in headers


def test_split_body_pieces_join_to_the_body_in_every_mode() -> None:
    body = b"data: a\r\n\r\ndata: \xe2\x80\x94\n\ndata: [DONE]"
    for chunking in CHUNKINGS:
        pieces = split_body(body, chunking, (5, 20, len(body) - 25))
        assert b"".join(pieces) == body and all(pieces)
    assert split_body(body, "recorded") == split_body(body, "lines")
    with pytest.raises(ValueError, match="chunking must be one of"):
        split_body(body, "words")  # type: ignore[arg-type]


def test_an_inline_body_is_delivered_in_its_own_reads_which_must_add_up_to_it() -> None:
    # R-CASE-2: a case puts a read boundary inside a line (R-PRV-30b): "recorded" cuts an inline
    # body at its "reads" as a fixture's recorded reads, after the line-end variant.
    spec = {"provider": "openai", "stream": True, "status": 200, "headers": [], "body": "data: a\n\n:xy\n"}
    with parse_setup({**spec, "chunking": "recorded", "reads": [11, 2]}) as (send, _):
        assert [base64.b64decode(c) for c in send["chunks"]] == [b"data: a\n\n:x", b"y\n"]
        assert send.keys() == {"provider", "stream", "status", "headers", "chunks"}
    with parse_setup({**spec, "chunking": "recorded", "line_ends": "crlf", "reads": [13, 3]}) as (send, _):
        assert [base64.b64decode(c) for c in send["chunks"]] == [b"data: a\r\n\r\n:x", b"y\r\n"]
    cut_short = {**spec, "chunking": "recorded", "line_ends": "crlf", "drop_final_newline": True, "reads": [13, 1]}
    with parse_setup(cut_short) as (send, _):
        assert [base64.b64decode(c) for c in send["chunks"]] == [b"data: a\r\n\r\n:x", b"y"]
        assert send.keys() == {"provider", "stream", "status", "headers", "chunks"}
    with (
        pytest.raises(ValueError, match="reads should add up to the body's 13 bytes, not 12"),
        parse_setup({**spec, "chunking": "recorded", "reads": [11, 1]}),
    ):
        pass


def test_unexpected_body_gets_418_with_the_first_difference_from_the_closest_request() -> None:
    exchange = BY_NAME["openai/stream-text"]
    changed = json.loads(json.dumps(exchange.request_body))
    changed["messages"][1]["content"] = "Name four uses of a hash map."
    with ReplayServer(EXCHANGES) as server:
        status, _, body = post(server.base_url_for("openai") + "/chat/completions", changed)
    assert status == MISMATCH_STATUS
    message = json.loads(body)["error"]["message"]
    assert "closest is openai/stream-text" in message
    assert '/messages/1/content: expected "Name three uses' in message
    assert '"Name four uses of a hash map."' in message
    assert server.unexpected == [message]
    assert server.requests_seen[0].exchange is None


def test_unexpected_path_and_non_json_body_are_explained_in_the_provider_error_shape() -> None:
    exchange = BY_NAME["anthropic/text"]
    with ReplayServer([exchange]) as server:
        status, _, body = post(server.base_url + "/v1/message", exchange.request_body)
        assert status == MISMATCH_STATUS
        assert "no recorded exchange has this method and path" in body.decode()
        assert "POST /v1/messages" in body.decode()
        status, _, body = post(url_for(server, exchange), None, raw=b"{not json")
        answer = json.loads(body)
    assert status == MISMATCH_STATUS
    assert answer["type"] == "error" and answer["error"]["type"] == "replay_mismatch"
    assert "not JSON" in answer["error"]["message"]
    assert len(server.unexpected) == 2


def test_key_order_does_not_matter_and_repeated_requests_are_served_in_recorded_order() -> None:
    first = BY_NAME["openai/text"]
    second = dataclasses.replace(first, name="openai/text-again", body=b"{}\n", chunks=())
    reordered = dict(reversed(list(first.request_body.items())))
    with ReplayServer([first, second]) as server:
        answers = [post(url_for(server, first), reordered)[2] for _ in range(3)]
    assert answers == [first.body, b"{}\n", first.body]
    served = [seen.exchange for seen in server.requests_seen]
    assert served == ["openai/text", "openai/text-again", "openai/text"]


def test_server_listens_on_loopback_only_and_stops_on_exit() -> None:
    with ReplayServer([BY_NAME["openai/text"]]) as server:
        port = server.port
        assert server.base_url == f"http://127.0.0.1:{port}"
        assert server.base_url_for("openai") == f"http://127.0.0.1:{port}/v1"
        assert server.base_url_for("anthropic") == f"http://127.0.0.1:{port}"
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    with pytest.raises(ValueError, match="chunking"):
        ReplayServer([], "words")  # type: ignore[arg-type]


def test_serve_command_prints_base_urls_and_answers_until_interrupted() -> None:
    fixture = BY_NAME["anthropic/stream-tool-no-args"]
    process = subprocess.Popen(
        [sys.executable, "-m", "conformance", "serve", "--chunking", "bytes", fixture.directory],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_default,
    )
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
        assert lines[0].startswith("serving 1 recorded exchanges (chunking: bytes)")
        match = re.fullmatch(r"Anthropic base URL: (http://127\.0\.0\.1:\d+)\n", lines[1])
        assert match, lines
        status, _, body = post(match.group(1) + "/v1/messages", fixture.request_body)
        assert (status, body) == (200, fixture.body)
        assert process.stdout.readline() == "POST /v1/messages -> anthropic/stream-tool-no-args\n"
    finally:
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=5)
    assert process.returncode == 0
    assert "1 requests, 0 unexpected" in out


def test_ignored_members_are_left_out_of_matching_and_an_empty_body_is_null() -> None:
    text = BY_NAME["openai/text"]
    empty = dataclasses.replace(
        text, name="openai/models", method="GET", path="/v1/models", request_body=None
    )
    changed = {**text.request_body, "temperature": 0.3, "user": "someone"}
    with ReplayServer([text, empty], ignore=["temperature", "user", "metadata.run"]) as server:
        assert post(url_for(server, text), changed)[0] == 200
        nested = {**changed, "metadata": {"run": 7}}
        assert post(url_for(server, text), nested)[0] == MISMATCH_STATUS
        with urllib.request.urlopen(server.base_url + "/v1/models", timeout=5) as response:
            assert response.read() == text.body
    assert server.unexpected == [
        "POST /v1/chat/completions: the body matches no recorded request; "
        "closest is openai/text, body /metadata: expected nothing, got {}"
    ]
    with ReplayServer([dataclasses.replace(text, request_body={"metadata": {"run": 1, "a": 2}})],
                      ignore=["metadata.run"]) as server:
        assert post(url_for(server, text), {"metadata": {"run": 9, "a": 2}})[0] == 200
    with pytest.raises(ValueError, match="replay must be one of repeat, once"):
        ReplayServer([], replay="twice")  # type: ignore[arg-type]


def test_serve_replays_once_with_ignored_members_and_lists_what_was_never_asked_for() -> None:
    text, other = BY_NAME["openai/text"], BY_NAME["anthropic/text"]
    process = subprocess.Popen(
        [sys.executable, "-m", "conformance", "serve", "--replay", "once", "--ignore",
         "temperature, user", text.directory, other.directory],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_default,
    )
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(4)]
        match = re.fullmatch(r"OpenAI base URL: (http://127\.0\.0\.1:\d+/v1)\n", lines[1])
        assert match, lines
        changed = {**text.request_body, "temperature": 0, "user": "u-1"}
        assert post(match.group(1) + "/chat/completions", changed)[0] == 200
        status, _, body = post(match.group(1) + "/chat/completions", changed)
        assert status == MISMATCH_STATUS and b"answered this body already (replay once)" in body
    finally:
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=5)
    assert process.returncode == 1
    assert out.endswith("2 requests, 1 unexpected\n1 unused: anthropic/text\n")


def test_serve_refuses_a_port_out_of_range_in_one_line() -> None:
    fixture = BY_NAME["openai/text"].directory
    command = [sys.executable, "-m", "conformance", "serve", "--port", "70000", str(fixture)]
    done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "error: --port must be from 0 to 65535 (0: any free port), got 70000\n"


# ---------------------------------------------------------------- loading


def test_sha256_mismatch_names_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "text"
    shutil.copytree(BY_NAME["openai/text"].directory, folder)
    (folder / "response.body").write_bytes(BY_NAME["openai/text"].body + b" ")
    with pytest.raises(FixtureError, match=r"exchange\.json: sha256 of response\.body is"):
        load_exchange(folder)


def test_chunks_that_do_not_add_up_and_secret_headers_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "stream"
    shutil.copytree(BY_NAME["openai/stream-text"].directory, folder)
    data = json.loads((folder / "exchange.json").read_text(encoding="utf-8"))
    data["response"]["chunks"][0] += 1
    (folder / "exchange.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(FixtureError, match="chunks add up to"):
        load_exchange(folder / "exchange.json")
    data["response"]["chunks"][0] -= 1
    data["request"]["headers"]["authorization"] = "Bearer sk-test"
    (folder / "exchange.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(FixtureError, match="'authorization' is not one a fixture keeps"):
        load_exchange(folder)
    with pytest.raises(FixtureError, match=r"no exchange\.json"):
        find_exchanges([tmp_path / "nothing"])


# ---------------------------------------------------------------- the fixtures themselves


def test_every_fixture_loads_and_carries_only_known_quirks() -> None:
    assert len(EXCHANGES) >= 40
    carried = {quirk for exchange in EXCHANGES for quirk in exchange.quirks}
    assert carried == set(QUIRKS), "each quirk of quirks.json is carried, and no other"
    requests = [json.dumps([e.method, e.path, e.request_body], sort_keys=True) for e in EXCHANGES]
    assert len(set(requests)) == len(requests), "two fixtures share a request"
    readme = (PROVIDERS_DIR.parent / "README.md").read_text(encoding="utf-8")
    assert [e.name for e in EXCHANGES if f"| `{e.name}` |" not in readme] == []


@pytest.mark.parametrize("exchange", EXCHANGES, ids=lambda e: e.name)
def test_fixture_request_is_what_the_spec_builds(exchange: Exchange) -> None:
    body = exchange.request_body
    assert exchange.provenance.startswith(("Written by hand on ", "Recorded from "))
    if exchange.method == "GET":  # a local server's answer about its window: no body, JSON asked for
        assert exchange.path in WINDOW_PATHS and body is None and not exchange.stream
        assert exchange.request_headers == {"accept": "application/json"}
        return
    assert exchange.method == "POST"
    accept = "text/event-stream" if exchange.stream else "application/json"
    assert exchange.request_headers["accept"] == accept
    assert exchange.request_headers["content-type"] == "application/json"
    if exchange.provider == "openai":
        assert exchange.path == "/v1/chat/completions"
        assert set(body) <= {"model", "messages", "tools", "stream", "stream_options"}
        streaming = {"stream": True, "stream_options": {"include_usage": True}}
        assert {k: body[k] for k in ("stream", "stream_options") if k in body} == (
            streaming if exchange.stream else {}
        )
    elif exchange.path == "/v1/messages/count_tokens":  # R-PRV-24: a message body without these two
        assert exchange.request_headers["anthropic-version"] == "2023-06-01"
        assert set(body) <= {"model", "system", "messages", "tools"}
    else:
        assert exchange.path == "/v1/messages"
        assert exchange.request_headers["anthropic-version"] == "2023-06-01"
        assert set(body) <= {"model", "max_tokens", "system", "messages", "tools", "stream"}
        assert body["max_tokens"] == get_model_limits(body["model"]).output_tokens
        assert body.get("stream", False) is exchange.stream
        for turn in body["messages"]:
            assert isinstance(turn["content"], list) and turn["content"]


@pytest.mark.parametrize("exchange", EXCHANGES, ids=lambda e: e.name)
def test_fixture_expect_agrees_with_its_own_bytes(exchange: Exchange) -> None:
    expect = dict(exchange.expect)
    if exchange.stream:
        assert "text_chunks" in expect
    else:
        assert "text_chunks" not in expect
    if "error" in expect:
        assert set(expect["error"]) == {"code", "message"}
        assert expect["error"]["code"] in ERROR_CODES
    assert read_exchange(exchange) == expect


# ---------------------------------------------------------------- a small reading of the spec

_ANTHROPIC_ERRORS = {
    "authentication_error": "authentication",
    "permission_error": "authentication",
    "rate_limit_error": "rate_limit",
    "overloaded_error": "overloaded",
    "invalid_request_error": "invalid_request",
    "not_found_error": "model_not_found",
    "request_too_large": "invalid_request",
    "api_error": "server_error",
}
_USAGE_FIELDS = (
    "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"
)


def sse(body: bytes) -> list[tuple[str, str]]:
    """(event, data) for each event of an LF-delimited stream, as the fixtures are written."""
    events = []
    for block in body.decode("utf-8").split("\n\n"):
        name, data = "", []
        for line in block.split("\n"):
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        if data:
            events.append((name, "\n".join(data)))
    return events


def message(content: str, calls: list[tuple[str, str, str]]) -> dict[str, Any]:
    result: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        result["tool_calls"] = [{"id": i, "name": n, "arguments": a} for i, n, a in calls]
    return result


_ANTHROPIC_OVERFLOW = ("prompt is too long", "exceed context limit")  # R-ERR-8
_OPENAI_OVERFLOW = (  # R-ERR-9
    "maximum context length", "exceeds the available context size", "contextwindowexceedederror",
    "longer than the context length", *_ANTHROPIC_OVERFLOW,
)


def error(provider: str, status: int, body: dict[str, Any], in_stream: bool) -> dict[str, Any]:
    """SPEC R-ERR-3, R-ERR-4 and R-ERR-8 … R-ERR-11."""
    err = body["error"] if "error" in body or provider == "anthropic" else body  # R-ERR-10
    kind, text = err.get("type"), err.get("message")
    words = (text or "").lower()
    code = None
    if provider == "anthropic":
        code = _ANTHROPIC_ERRORS.get(kind or "")
        if kind == "invalid_request_error" and any(p in words for p in _ANTHROPIC_OVERFLOW):
            code = "context_length_exceeded"
    else:
        overflow = err.get("code") == "context_length_exceeded" or kind == "exceed_context_size_error"
        if overflow or any(p in words for p in _OPENAI_OVERFLOW):
            code = "context_length_exceeded"
        elif err.get("code") == "model_not_found":  # R-ERR-11
            code = "model_not_found"
    if code is None:
        by_status = {401: "authentication", 403: "authentication", 429: "rate_limit"}
        by_status[529] = "overloaded"
        code = by_status.get(status) or (
            "invalid_request" if 400 <= status < 500 and not in_stream else "server_error"
        )
    where = "stream" if in_stream else f"HTTP {status}"
    kind = kind or (err.get("code") if isinstance(err.get("code"), str) else None)
    shown = f"{where} {kind}" if kind else where
    return {"error": {"code": code, "message": f"{provider}: {shown}: {text}"}}


def openai_usage(usage: dict[str, Any] | None) -> dict[str, int] | None:
    """SPEC R-USE-2."""
    if not usage:
        return None
    result = {
        "input_tokens": usage.get("prompt_tokens") or 0,
        "output_tokens": usage.get("completion_tokens") or 0,
    }
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict) and details.get("cached_tokens") is not None:
        result["cache_read_tokens"] = details["cached_tokens"]
    return result


def anthropic_usage(usage: dict[str, Any] | None) -> dict[str, int] | None:
    """SPEC R-USE-4."""
    if usage is None:
        return None
    result = {
        "input_tokens": sum(usage.get(k) or 0 for k in _USAGE_FIELDS if k != "output_tokens"),
        "output_tokens": usage.get("output_tokens") or 0,
    }
    if usage.get("cache_read_input_tokens") is not None:
        result["cache_read_tokens"] = usage["cache_read_input_tokens"]
    if usage.get("cache_creation_input_tokens") is not None:
        result["cache_write_tokens"] = usage["cache_creation_input_tokens"]
    return result


def openai_body(body: dict[str, Any]) -> dict[str, Any]:
    """SPEC R-PRV-13."""
    reply = body["choices"][0]["message"]
    calls = reply.get("tool_calls") or []
    if "function_call" in reply or any(call.get("type") != "function" for call in calls):
        return {"error": {"code": "malformed_response", "message": None}}
    content = (reply.get("content") or "") + (reply.get("refusal") or "")
    found = [(c["id"], c["function"]["name"], c["function"].get("arguments", "")) for c in calls]
    return {"message": message(content, found), "usage": openai_usage(body.get("usage"))}


def anthropic_body(body: dict[str, Any], raw: str) -> dict[str, Any]:
    """SPEC R-PRV-14: a call's arguments are the exact source text of its input."""
    decoder, sources = json.JSONDecoder(), []
    for found in re.finditer(r'"input":', raw):
        _, end = decoder.raw_decode(raw, found.end())
        sources.append(raw[found.end() : end])
    with_input = [block for block in body["content"] if "input" in block]
    assert len(sources) == len(with_input)
    text = "".join(block["text"] for block in body["content"] if block["type"] == "text")
    calls = [
        (block["id"], block["name"], source)
        for block, source in zip(with_input, sources)
        if block["type"] == "tool_use"
    ]
    return {"message": message(text, calls), "usage": anthropic_usage(body.get("usage"))}


def openai_stream(body: bytes) -> dict[str, Any]:
    """SPEC R-PRV-17 and R-USE-3."""
    pieces: list[str] = []
    calls: dict[int, list[str]] = {}
    usage = None
    for _, data in sse(body):
        if data == "[DONE]":
            found = [(c[0], c[1], c[2]) for _, c in sorted(calls.items())]
            result = {"message": message("".join(pieces), found), "usage": openai_usage(usage)}
            return {**result, "text_chunks": pieces}
        chunk = json.loads(data)
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            pieces += [delta[k] for k in ("content", "refusal") if isinstance(delta.get(k), str)]
            pieces = [piece for piece in pieces if piece]
            for position, fragment in enumerate(delta.get("tool_calls") or []):
                call = calls.setdefault(fragment.get("index", position), ["", "", ""])
                function = fragment.get("function") or {}
                call[0] = call[0] or fragment.get("id") or ""
                call[1] = call[1] or function.get("name") or ""
                call[2] += function.get("arguments") or ""
    return {"error": {"code": "stream_cut_off", "message": None}, "text_chunks": pieces}


def anthropic_stream(body: bytes) -> dict[str, Any]:
    """SPEC R-PRV-18 and R-USE-5."""
    pieces: list[str] = []
    blocks: dict[int, dict[str, str]] = {}
    fields: dict[str, int] = {}
    seen_usage = False
    for name, data in sse(body):
        event = json.loads(data)
        kind = event.get("type", name)
        if kind in ("message_start", "message_delta"):
            usage = event["message"].get("usage") if kind == "message_start" else event.get("usage")
            seen_usage = seen_usage or usage is not None
            given = (usage or {}).items()
            fields.update({k: v for k, v in given if k in _USAGE_FIELDS and v is not None})
        elif kind == "content_block_start":
            block = event["content_block"]
            blocks[event["index"]] = {"type": block["type"], "arguments": ""}
            if block["type"] == "tool_use":
                blocks[event["index"]].update(id=block["id"], name=block["name"])
            if block["type"] == "text" and block["text"]:
                pieces.append(block["text"])
        elif kind == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "text_delta" and delta["text"]:
                pieces.append(delta["text"])
            elif delta["type"] == "input_json_delta":
                blocks[event["index"]]["arguments"] += delta["partial_json"]
        elif kind == "message_stop":
            calls = [
                (b["id"], b["name"], b["arguments"] or "{}")
                for _, b in sorted(blocks.items())
                if b["type"] == "tool_use"
            ]
            usage_out = anthropic_usage(fields if seen_usage else None)
            result = {"message": message("".join(pieces), calls), "usage": usage_out}
            return {**result, "text_chunks": pieces}
        elif kind == "error":
            return {**error("anthropic", 200, event, in_stream=True), "text_chunks": pieces}
    return {"error": {"code": "stream_cut_off", "message": None}, "text_chunks": pieces}


def window(path: str, body: dict[str, Any]) -> dict[str, Any]:
    """The window a local server's answer reports (fixtures/README.md): llama.cpp's ``/props``
    and the ``meta`` of the first model of ``/v1/models``; never ``n_ctx_train``."""
    if path == "/props":
        return {"context_window": body["default_generation_settings"]["n_ctx"]}
    return {"context_window": body["data"][0]["meta"]["n_ctx"]}


def read_exchange(exchange: Exchange) -> dict[str, Any]:
    """What SPEC.md makes of a fixture's response, in the shape of its ``expect`` block."""
    if exchange.method == "GET":
        return window(exchange.path, json.loads(exchange.body))
    if not 200 <= exchange.status < 300:
        try:
            body = json.loads(exchange.body)
        except ValueError:  # not the provider's error shape: by status, with an unpinned excerpt
            body = {"error": {"message": None}}
        result = error(exchange.provider, exchange.status, body, False)
        if body.get("error", body)["message"] is None:
            result["error"]["message"] = None
        return {**result, "text_chunks": []} if exchange.stream else result
    if exchange.stream:
        reader = openai_stream if exchange.provider == "openai" else anthropic_stream
        return reader(exchange.body)
    if exchange.provider == "openai":
        return openai_body(json.loads(exchange.body))
    if exchange.path == "/v1/messages/count_tokens":  # R-PRV-24
        return {"input_tokens": json.loads(exchange.body)["input_tokens"]}
    return anthropic_body(json.loads(exchange.body), exchange.body.decode("utf-8"))
