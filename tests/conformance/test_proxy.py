"""The recording proxy (``python -m conformance proxy``) against a real local upstream.

SPEC R-REC-1 (answers stream through, one exchange per request), R-REC-2 (no secret reaches
disk), R-REC-6 (Ctrl+C leaves complete exchanges only) and the one-line refusals of bad input.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.runner._cases import PROJECT_ROOT
from conformance.traffic._cassette import load_cassette
from conformance.traffic._record import EXCHANGE_FILE, load_exchange
from conformance.traffic._replay import MISMATCH_STATUS, ReplayServer
from tests.conformance.proxy_upstream import (
    PYTHON_ENV_KEYS,
    StandIn,
    recording,
    stand_in_server,
)
from tests.fakes import ctrl_c_default

pytestmark = pytest.mark.tooling  # tier 2 of tests/README.md: the suite's traffic tooling (replay, proxy, faults) as servers

KEY = "sk-proj-Vb7Nq2Lx9Kw4Hj6Gf3Ds1Aa8Zc5"
SECRETS = {
    "authorization": f"Bearer {KEY}",
    "x-api-key": "sk-ant-api03-Pp9Oo8Ii7Uu6Yy5Tt4",
    "cookie": "session=Cookie-Mm3Nn4Bb5; theme=dark-mode-on",
    "openai-organization": "org-Rr5Ee4Ww3Qq2",
    "openai-project": "proj_Ll8Kk7Jj6Hh5",
}
UP = "http://127.0.0.1:{port}"  # the stand-in's port is filled in by the test
SSE = (b'data: {"n":1}\n\n', b'data: {"n":2}\n\n', b"data: [DONE]\n\n")


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    with stand_in_server() as state:
        yield state


def send(
    port: int,
    body: object,
    *,
    path: str = "/v1/chat/completions",
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        sent = {"content-type": "application/json", **(headers or {})}
        connection.request("POST", path, body=json.dumps(body).encode(), headers=sent)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_the_client_reads_the_first_event_before_the_upstream_sends_the_last(
    stand_in: StandIn, tmp_path: Path
) -> None:
    stand_in.answers = [SSE]
    stand_in.headers = [("content-type", "text/event-stream")]
    stand_in.gate = threading.Event()
    with recording(stand_in.url, tmp_path / "cassette") as proxy:
        connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
        connection.request("POST", "/v1/chat/completions", body=b'{"stream": true}')
        response = connection.getresponse()
        first = response.read1(65536)
        stand_in.gate.set()
        rest = response.read()
        connection.close()
    assert first == SSE[0]
    assert not stand_in.gate_expired.is_set(), "the proxy held the answer back until the upstream ended"
    assert first + rest == b"".join(SSE)
    [exchange] = load_cassette(tmp_path / "cassette")
    assert exchange.body == b"".join(SSE)
    assert exchange.chunks[0] == len(SSE[0]) and sum(exchange.chunks) == len(exchange.body)
    assert exchange.stream and exchange.request_body == {"stream": True}
    assert ("content-type", "text/event-stream") in exchange.headers


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, made by the openssl command."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )
    return cert, key


def test_an_https_upstream_is_verified_and_streamed_through(
    certificate: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))  # trust the stand-in, as a CA bundle would
    with stand_in_server(tls=certificate) as state:
        state.answers = [SSE]
        state.headers = [("content-type", "text/event-stream")]
        assert state.url.startswith("https://")
        with recording(state.url, tmp_path / "c") as proxy:
            status, body = send(proxy.port, {"stream": True}, headers={"authorization": SECRETS["authorization"]})
    assert (status, body) == (200, b"".join(SSE))
    assert state.received[0][2].get("authorization") == SECRETS["authorization"]
    [exchange] = load_cassette(tmp_path / "c")
    assert exchange.body == b"".join(SSE) and len(exchange.chunks) >= 1


def test_an_https_upstream_with_an_untrusted_certificate_is_refused_and_nothing_is_written(
    certificate: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with stand_in_server(tls=certificate) as state, recording(state.url, tmp_path / "c") as proxy:
        status, body = send(proxy.port, {"stream": False})
    assert status == 502, body
    assert b"certificate" in body.lower() or b"ssl" in body.lower(), body
    assert state.received == []
    assert load_cassette(tmp_path / "c") == []


def test_every_request_is_its_own_exchange_and_identical_ones_replay_in_order(
    stand_in: StandIn, tmp_path: Path
) -> None:
    stand_in.answers = [(b'{"n": 1}\n',), (b'{"n": 2}\n',), (b'{"other": true}\n',)]
    question = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with recording(stand_in.url, tmp_path / "c") as proxy:
        answers = [send(proxy.port, question)]
        # a client that has read the whole answer finds its exchange on disk (R-REC-6)
        assert [e.name for e in load_cassette(tmp_path / "c")] == ["openai/0001-post-v1-chat-completions"]
        answers.append(send(proxy.port, question))
        answers.append(send(proxy.port, {}, path="/v1/messages"))
    assert answers == [(200, b'{"n": 1}\n'), (200, b'{"n": 2}\n'), (200, b'{"other": true}\n')]
    assert [r[1] for r in stand_in.received] == ["/v1/chat/completions"] * 2 + ["/v1/messages"]
    exchanges = load_cassette(tmp_path / "c")
    assert [e.name for e in exchanges] == [
        "openai/0001-post-v1-chat-completions",
        "openai/0002-post-v1-chat-completions",
        "anthropic/0003-post-v1-messages",
    ]
    with ReplayServer(exchanges, replay="once") as server:
        replayed = [send(server.port, question) for _ in range(3)]
    assert replayed[:2] == answers[:2]
    assert replayed[2][0] == MISMATCH_STATUS
    message = json.loads(replayed[2][1])["error"]["message"]
    assert "0001-post-v1-chat-completions, openai/0002" in message and "(replay once)" in message
    assert server.unused() == ["anthropic/0003-post-v1-messages"]


def test_no_secret_header_value_reaches_disk_and_redact_patterns_apply_to_bodies(
    stand_in: StandIn, tmp_path: Path
) -> None:
    echo = f'{{"echo": "{KEY}", "user": "alice@example.com", "sid": "{SECRETS["x-api-key"]}"}}\n'
    stand_in.answers = [(echo[:20].encode(), echo[20:].encode())]
    stand_in.headers = [
        ("set-cookie", "sid=Cookie-Mm3Nn4Bb5; Path=/"),
        ("openai-organization", "org-Rr5Ee4Ww3Qq2"),
        ("anthropic-organization-id", "6f1c2d3e-aaaa-bbbb-cccc-0123456789ab"),
        ("x-echo", KEY),
        ("x-session-token", "Tt-Fresh-9921"),  # its name says secret: not written (R-REC-15)
        ("x-ratelimit-remaining-tokens", "149984"),
        ("x-request-id", "req_123"),
    ]
    body = {"user": "alice@example.com", "messages": [{"role": "user", "content": f"my key {KEY}"}]}
    with recording(stand_in.url, tmp_path / "c", redact=[r"[a-z]+@example\.com"]) as proxy:
        path = f"/v1/chat/completions?key={KEY}"
        status, answer = send(proxy.port, body, path=path, headers=SECRETS)
    assert (status, answer) == (200, echo.encode())  # the client sees everything
    _, _, received, _ = stand_in.received[0]
    assert received["authorization"] == f"Bearer {KEY}"  # the key went upstream
    assert received["accept-encoding"] == "identity"
    written = [p for p in (tmp_path / "c").rglob("*") if p.is_file()]
    assert sorted(p.name for p in written) == ["exchange.json", "response.body"]
    forbidden = [KEY, "sk-ant-api03-Pp9Oo8Ii7Uu6Yy5Tt4", "Cookie-Mm3Nn4Bb5", "dark-mode-on",
                 "org-Rr5Ee4Ww3Qq2", "proj_Ll8Kk7Jj6Hh5", "6f1c2d3e", "alice@example.com", "Tt-Fresh-9921"]
    for file in written:
        data = file.read_bytes()
        found = [secret for secret in forbidden if secret.encode() in data]
        assert not found, f"{file.name} holds {found}"
    exchange = load_exchange(written[0].parent)
    assert exchange.path == "/v1/chat/completions?key=<redacted>"
    assert exchange.request_body["user"] == "<redacted>"
    assert exchange.request_body["messages"][0]["content"] == "my key <redacted>"
    assert dict(exchange.request_headers) == {"content-type": "application/json"}
    kept = [(n, v) for n, v in exchange.headers if n not in ("server", "date")]
    assert kept == [
        ("x-echo", "<redacted>"), ("x-ratelimit-remaining-tokens", "149984"), ("x-request-id", "req_123")
    ]
    assert exchange.body.count(b"<redacted>") == 3
    assert sum(exchange.chunks) == len(exchange.body) and len(exchange.chunks) == 2


def test_an_unreachable_upstream_gets_a_502_in_the_provider_shape_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with recording(f"http://127.0.0.1:{port}", tmp_path / "c") as proxy:
        status, body = send(proxy.port, {}, path="/v1/messages")
    assert status == 502
    error = json.loads(body)
    assert error["type"] == "error" and error["error"]["type"] == "proxy_error"
    assert "cannot reach" in error["error"]["message"]
    assert proxy.unexpected and proxy.unexpected[0].startswith("not recorded: cannot reach")
    assert not (tmp_path / "c").exists()  # made by the recording, removed as it stayed empty


# ---------------------------------------------------------------- the command


def proxy_command(*args: str | Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in PYTHON_ENV_KEYS}
    return subprocess.Popen(
        [sys.executable, "-m", "conformance", "proxy", *map(str, args)],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=ctrl_c_default,
    )


def test_ctrl_c_writes_the_complete_exchanges_and_nothing_half_done(
    stand_in: StandIn, tmp_path: Path
) -> None:
    stand_in.answers = [(b'{"n": 1}\n',), SSE]
    out = tmp_path / "cassette"
    process = proxy_command("--upstream", stand_in.url, "--out", out)
    try:
        assert process.stdout is not None
        head = [process.stdout.readline() for _ in range(4)]
        assert head[0] == f"recording {stand_in.url} into {out}\n"
        match = re.fullmatch(r"OpenAI base URL: http://127\.0\.0\.1:(\d+)/v1\n", head[1])
        assert match, head
        port = int(match.group(1))
        assert send(port, {"a": 1}) == (200, b'{"n": 1}\n')
        recorded = "POST /v1/chat/completions -> recorded openai/0001-post-v1-chat-completions\n"
        assert process.stdout.readline() == recorded
        stand_in.gate = threading.Event()  # the second answer stops after its first event
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("POST", "/v1/chat/completions", body=b'{"stream": true}')
        response = connection.getresponse()
        assert response.read1(65536) == SSE[0]
    finally:
        process.send_signal(signal.SIGINT)
        out_text, err_text = process.communicate(timeout=10)
    assert process.returncode == 0, err_text
    assert err_text == ""
    assert out_text.endswith(f"recorded 1 exchanges in {out}\n")
    assert sorted(p.name for p in out.iterdir()) == ["0001-post-v1-chat-completions"]
    assert load_exchange(out / "0001-post-v1-chat-completions").body == b'{"n": 1}\n'
    everything = sorted(p.name for p in out.rglob("*"))
    assert everything == ["0001-post-v1-chat-completions", EXCHANGE_FILE, "response.body"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--upstream", "api.openai.com"], "is not an http:// or https:// URL with a host"),
        (["--upstream", "ftp://example.com"], "is not an http:// or https:// URL with a host"),
        (["--upstream", "http://127.0.0.1:99999"], "has a port that is not a number from 0 to"),
        (["--upstream", UP, "--port", "70000"], "--port must be from 0 to 65535"),
        (["--upstream", UP, "--redact", "(unclosed"], "is not a regular expression"),
        (["--upstream", UP, "--redact", "x*"], "matches the empty text"),
    ],
    ids=["no-scheme", "ftp", "url-port", "listen-port", "bad-regex", "empty-regex"],
)
def test_bad_input_gets_one_line_and_exit_status_2(
    stand_in: StandIn, tmp_path: Path, args: list[str], message: str
) -> None:
    port = stand_in.url.rsplit(":", 1)[1]
    process = proxy_command(*[a.replace("{port}", port) for a in args], "--out", tmp_path / "c")
    out, err = process.communicate(timeout=10)
    assert process.returncode == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert out == "" and not (tmp_path / "c").exists()


def test_a_refusing_upstream_and_an_unwritable_folder_are_one_line_errors(
    stand_in: StandIn, tmp_path: Path
) -> None:
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    process = proxy_command("--upstream", f"http://127.0.0.1:{port}", "--out", tmp_path / "c")
    _, err = process.communicate(timeout=10)
    assert process.returncode == 2 and err.count("\n") == 1
    assert err.startswith(f"error: cannot reach the upstream http://127.0.0.1:{port}: ")
    assert not (tmp_path / "c").exists()
    (tmp_path / "file").write_text("not a folder")
    process = proxy_command("--upstream", stand_in.url, "--out", tmp_path / "file" / "c")
    _, err = process.communicate(timeout=10)
    assert process.returncode == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: cannot write in {tmp_path / 'file' / 'c'}: ")
    assert "Traceback" not in err


# ---------------------------------------------------------------- secrets in every form (R-REC-15)

SECRET = "sk/Ab+Cd=Ef/9x Yz-QwErTy"  # a slash, a plus, an equals sign and a space to escape


def percent_lower(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), text)


def forms_of(secret: str) -> dict[str, str]:
    """How an upstream may echo a secret, each written out here by hand."""
    raw = secret.encode()
    return {
        "plain": secret,
        "quote": urllib.parse.quote(secret, safe=""),
        "quote-keeping-slash": urllib.parse.quote(secret),
        "quote-plus": urllib.parse.quote_plus(secret),
        "quote-plus-keeping-slash": urllib.parse.quote_plus(secret, safe="/"),
        "quote-lower-hex": percent_lower(urllib.parse.quote(secret, safe="")),
        "base64": base64.b64encode(raw).decode(),
        "base64-url-safe": base64.urlsafe_b64encode(raw).decode(),
        "base64-unpadded": base64.b64encode(raw).decode().rstrip("="),
        "base64-inside-user-pass": base64.b64encode(b"alice:" + raw).decode(),
        "base64-inside-json": base64.urlsafe_b64encode(b'{"k": "' + raw + b'"}').decode(),
    }


BASIC = base64.b64encode(f"alice:{SECRET}".encode()).decode()
CARRIERS: dict[str, tuple[str, dict[str, str]]] = {
    **{
        f"query-{name}": (f"/v1/chat/completions?api-version=2024-10-21&{name}={urllib.parse.quote_plus(SECRET)}", {})
        for name in ("key", "api_key", "access_token", "sig", "X-Amz-Signature", "Password")
    },
    "header-api-key": ("/v1/chat/completions", {"api-key": SECRET}),
    "header-x-goog-api-key": ("/v1/chat/completions", {"x-goog-api-key": SECRET}),
    "header-x-auth-token": ("/v1/chat/completions", {"x-auth-token": SECRET}),
    "header-bearer": ("/v1/chat/completions", {"authorization": f"Bearer {SECRET}"}),
    "header-basic": ("/v1/chat/completions", {"authorization": f"Basic {BASIC}"}),
}


@pytest.mark.parametrize(("path", "headers"), CARRIERS.values(), ids=CARRIERS.keys())
def test_no_form_of_a_secret_reaches_the_cassette_or_the_output(
    stand_in: StandIn, tmp_path: Path, path: str, headers: dict[str, str]
) -> None:
    forms = forms_of(SECRET)
    # each form as text, then as JSON whose slashes are escaped, as PHP writes it
    echo = "\n".join(forms.values()).encode() + json.dumps(list(forms.values())).replace("/", "\\/").encode()
    written = len(forms)
    forms |= {f"{name}, JSON-escaped": form.replace("/", "\\/") for name, form in forms.items() if "/" in form}
    stand_in.answers = [(echo[:50], echo[50:])]
    stand_in.headers = [("content-type", "application/json"), ("x-echo", SECRET),
                        ("x-echo-quoted", forms["quote"]), ("x-goog-api-key", SECRET)]
    out = tmp_path / "cassette"
    process = proxy_command("--upstream", stand_in.url, "--out", out)
    try:
        assert process.stdout is not None
        head = [process.stdout.readline() for _ in range(4)]
        match = re.fullmatch(r"OpenAI base URL: http://127\.0\.0\.1:(\d+)/v1\n", head[1])
        assert match, head
        body = {"model": "m", "note": SECRET, "encoded": forms["quote"], "packed": forms["base64"]}
        assert send(int(match.group(1)), body, path=path, headers=headers) == (200, echo)
        head.append(process.stdout.readline())
        assert "-> recorded" in head[-1]
    finally:
        process.send_signal(signal.SIGINT)
        out_text, err_text = process.communicate(timeout=10)
    out_text = "".join(head) + out_text
    assert process.returncode == 0 and err_text == ""
    assert stand_in.received[0][1] == path  # the secret itself went upstream
    places = {file.name: file.read_bytes() for file in out.rglob("*") if file.is_file()}
    places |= {"stdout": out_text.encode(), "stderr": err_text.encode()}
    leaked = [f"{form} in {place}" for form, text in forms.items() for place, data in places.items()
              if text.encode() in data]
    assert not leaked, leaked
    [exchange] = load_cassette(out)
    assert exchange.body.count(b"<redacted>") >= 2 * written
    if "?" in path:
        assert exchange.path.endswith("&" + path.rpartition("&")[2].partition("=")[0] + "=<redacted>")
        assert exchange.path in out_text


def test_a_recorded_key_in_the_query_matches_any_key_on_replay(stand_in: StandIn, tmp_path: Path) -> None:
    with recording(stand_in.url, tmp_path / "c") as proxy:
        assert send(proxy.port, {"a": 1}, path=f"/v1/models/m?key={KEY}&alt=json")[0] == 200
    [exchange] = load_cassette(tmp_path / "c")
    assert exchange.path == "/v1/models/m?key=<redacted>&alt=json"
    with ReplayServer([exchange]) as server:
        assert send(server.port, {"a": 1}, path="/v1/models/m?key=another&alt=json")[0] == 200
        assert send(server.port, {"a": 1}, path="/v1/models/m?key=another&alt=xml")[0] == MISMATCH_STATUS
    assert [seen.path for seen in server.requests_seen] == [
        "/v1/models/m?key=<redacted>&alt=json", "/v1/models/m?key=<redacted>&alt=xml"
    ]


def test_an_upstream_url_with_a_user_or_password_is_refused(tmp_path: Path) -> None:
    process = proxy_command("--upstream", f"https://me:{KEY}@127.0.0.1:1", "--out", tmp_path / "c")
    out, err = process.communicate(timeout=10)
    assert process.returncode == 2 and out == "" and KEY not in err
    assert err == "error: --upstream an upstream URL has no user or password; the client sends its own key\n"
