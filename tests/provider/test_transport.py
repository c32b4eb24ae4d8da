"""The urllib transport against a real loopback server (harness9_ref/provider/_transport.py;
SPEC R-PRV-2, R-PRV-3, R-PRV-22, R-ERR-5)."""

from __future__ import annotations

import re
import shutil
import socket
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import harness9_ref.provider as provider_package
from harness9_ref.provider import (
    OpenAIProvider,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeout,
    RateLimitError,
    anthropic,
    openai,
)
from harness9_ref.provider._transport import open_stream, send
from harness9_ref.schema import Message
from tests.provider.helpers import Loopback, Respond, loopback, reply

KEY = "sk-secret-transport-KEY-0123456789"
ASK = [Message("user", "hi")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_request_arrives_as_built() -> None:
    with loopback(reply(200, b"{}")) as server:
        request = anthropic.build_request("claude-3-5-haiku", ASK, [], stream=False, api_key=KEY, base_url=server.url)
        status, _headers, body = send(request, timeout=5, provider="anthropic")
    assert (status, body) == (200, b"{}")
    [got] = server.received
    assert (got.method, got.path, got.body) == ("POST", "/v1/messages", request.body)
    for name, value in request.headers:
        assert got.header(name) == value
    assert got.header("Content-Length") == str(len(request.body))


def test_a_call_over_https_goes_through_the_transports_own_handler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # R-PRV-3a: the default base URLs are https, which the transport opens with its own HTTPS
    # handler (the one that hands the socket to its exchange); a loopback TLS server shows it.
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl to make the loopback server's certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client trusts this certificate only
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        url = f"https://127.0.0.1:{server.server_address[1]}/v1"
        request = openai.build_request("m", ASK, [], stream=False, api_key=KEY, base_url=url)
        status, _headers, body = send(request, timeout=5, provider="openai")
    finally:
        server.shutdown()
        server.server_close()
    assert (status, body) == (200, b"{}")


def test_response_headers_come_back_in_order() -> None:
    with loopback(reply(200, b"{}", [("request-id", "req_1"), ("x-extra", "a")])) as server:
        request = openai.build_request("m", ASK, [], stream=False, api_key=KEY, base_url=server.url)
        _, headers, _ = send(request, timeout=5, provider="openai")
    names = [k.lower() for k, _ in headers]
    assert names.index("request-id") < names.index("x-extra")


def gated_stream(parts: list[bytes], chunked: bool = False) -> Respond:
    """Send ``parts[0]``, wait until the client has it (``server.release``), then the rest."""

    def respond(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
        if chunked:
            handler.protocol_version = "HTTP/1.1"
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        if chunked:
            handler.send_header("Transfer-Encoding", "chunked")
        handler.send_header("Connection", "close")
        handler.end_headers()
        for i, part in enumerate(parts):
            if i == 1:
                server.release.wait(5)
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
            handler.wfile.flush()
        if chunked:
            handler.wfile.write(b"0\r\n\r\n")
        handler.close_connection = True

    return respond


@pytest.mark.parametrize("chunked", [False, True], ids=["until-close", "chunked"])
def test_a_streamed_body_arrives_in_chunks_as_they_are_sent(chunked: bool) -> None:
    parts = [b"data: first\n\n", b"data: second\n\n"]
    with loopback(gated_stream(parts, chunked)) as server:
        request = openai.build_request("m", ASK, [], stream=True, api_key=KEY, base_url=server.url)
        status, _, chunks = open_stream(request, timeout=5, provider="openai")
        received = b""
        while len(received) < len(parts[0]):
            received += next(chunks)  # arrives although the server still holds back part two
        assert received == parts[0]
        server.release.set()
        assert received + b"".join(chunks) == b"".join(parts)
    assert status == 200


def test_a_slow_server_gives_a_timeout() -> None:
    def stall(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
        server.release.wait(5)

    with loopback(stall) as server:
        request = openai.build_request("m", ASK, [], stream=False, api_key=KEY, base_url=server.url)
        started = time.monotonic()
        with pytest.raises(ProviderTimeout) as info:
            send(request, timeout=0.3, provider="openai")
        assert time.monotonic() - started < 4
    assert info.value.code == "timeout" and info.value.provider == "openai"
    assert "0.3 s" in str(info.value) and server.url in str(info.value)
    assert KEY not in str(info.value)


def test_a_stream_that_stalls_mid_body_times_out_on_the_read() -> None:
    with loopback(gated_stream([b"data: a\n\n", b"data: b\n\n"])) as server:
        request = openai.build_request("m", ASK, [], stream=True, api_key=KEY, base_url=server.url)
        _, _, chunks = open_stream(request, timeout=0.3, provider="openai")
        assert next(chunks) == b"data: a\n\n"
        with pytest.raises(ProviderTimeout):
            next(chunks)


def test_a_refused_connection_gives_a_connection_error() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    request = openai.build_request("m", ASK, [], stream=False, api_key=KEY, base_url=url)
    with pytest.raises(ProviderConnectionError) as info:
        send(request, timeout=5, provider="openai")
    assert info.value.code == "connection_error"
    assert url in str(info.value) and KEY not in str(info.value)
    with pytest.raises(ProviderConnectionError):
        open_stream(request, timeout=5, provider="openai")


def test_a_server_that_hangs_up_without_answering_gives_a_connection_error() -> None:
    def hang_up(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
        handler.close_connection = True
        handler.connection.shutdown(socket.SHUT_RDWR)

    with loopback(hang_up) as server:
        request = openai.build_request("m", ASK, [], stream=False, api_key=KEY, base_url=server.url)
        with pytest.raises(ProviderConnectionError):
            send(request, timeout=5, provider="openai")


def test_an_http_error_status_is_returned_not_raised() -> None:
    body = b'{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}'
    with loopback(reply(429, body, [("retry-after", "3")])) as server:
        request = openai.build_request("m", ASK, [], stream=False, api_key=KEY, base_url=server.url)
        status, _headers, got = send(request, timeout=5, provider="openai")
        stream_status, _, chunks = open_stream(request, timeout=5, provider="openai")
        streamed = b"".join(chunks)
    assert (status, got, stream_status, streamed) == (429, body, 429, body)


def test_a_redirect_is_not_followed() -> None:
    with loopback(reply(307, b"", [("Location", "/elsewhere")])) as server:
        request = openai.build_request("m", ASK, [], stream=False, api_key=KEY, base_url=server.url)
        status, _, _ = send(request, timeout=5, provider="openai")
    assert status == 307
    assert len(server.received) == 1


def test_a_429_with_a_json_body_is_a_rate_limit_error_with_retry_after_and_no_key() -> None:
    # The body even echoes the key: the provider must not repeat it.
    body = (
        b'{\n    "error": {\n        "message": "Rate limit reached for key ' + KEY.encode() + b'",\n'
        b'        "type": "requests",\n        "param": null,\n        "code": "rate_limit_exceeded"\n    }\n}\n'
    )
    with loopback(reply(429, body, [("retry-after", "20"), ("x-request-id", "req_429")])) as server:
        provider = OpenAIProvider("gpt-4o-mini", KEY, base_url=server.url, timeout=5)
        with pytest.raises(RateLimitError) as info:
            provider.generate(ASK, [])
        chunks = list(provider.generate_stream(ASK, []))
    error = info.value
    assert (error.status, error.retry_after, error.request_id, error.error_type) == (429, 20, "req_429", "requests")
    assert KEY not in str(error) and KEY not in repr(error) and KEY not in (error.body_excerpt or "")
    assert "[redacted]" in str(error)
    assert chunks[-1].error.startswith("rate_limit: openai: HTTP 429 requests: Rate limit reached for key [redacted]")
    assert KEY not in repr(provider)
    assert len(server.received) == 2  # no retries (R-PRV-22)


def test_nothing_is_retried_after_a_server_error() -> None:
    with loopback(reply(500, b'{"error":{"message":"boom","type":"server_error"}}')) as server:
        provider = OpenAIProvider("m", KEY, base_url=server.url, timeout=5)
        with pytest.raises(ProviderError):
            provider.generate(ASK, [])
    assert len(server.received) == 1


def test_closing_a_stream_early_closes_the_connection() -> None:
    with loopback(gated_stream([b"data: a\n\n", b"data: b\n\n"])) as server:
        request = openai.build_request("m", ASK, [], stream=True, api_key=KEY, base_url=server.url)
        _, _, chunks = open_stream(request, timeout=5, provider="openai")
        next(chunks)
        chunks.close()
        server.release.set()
        assert list(chunks) == []


def test_only_the_transport_module_imports_urllib() -> None:
    package = Path(provider_package.__file__).parent
    importers = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if re.search(r"^\s*(import|from)\s+urllib\b", path.read_text(encoding="utf-8"), re.MULTILINE)
    )
    assert importers == ["_transport.py"]
