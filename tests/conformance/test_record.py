"""``python -m conformance record`` against a local stand-in for the provider APIs.

The stand-in listens on 127.0.0.1, keeps what it received, and answers like the APIs do,
including headers that must not be recorded and, in one test, a body that echoes the key.
The key must reach the stand-in and must never reach a written file.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance._cli import main
from conformance.traffic._record import RecordError, load_exchange, record
from conformance.traffic._replay import ReplayServer
from harness9_ref.provider import get_model_limits
from tests.conformance.proxy_upstream import StandIn, stand_in_server

KEY = "sk-test-Zq8Yx7Wv6Ut5Sr4Qp3On2Ml1"
SSE_PIECES = (
    b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n',
    b'data: {"choices":[{"index":0,"delta":{"content":"Hel',
    b'lo"}}]}\n\ndata: [DONE]\n\n',
)


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    with stand_in_server() as state:
        yield state


def written_bytes(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(folder.iterdir()))


def test_openai_recording_keeps_the_exchange_and_never_the_key(
    stand_in: StandIn, tmp_path: Path
) -> None:
    stand_in.headers = [
        ("Content-Type", "application/json"),
        ("OpenAI-Organization", "user-abc123"),
        ("Set-Cookie", "__cf_bm=secret; path=/"),
        ("X-Request-Id", "req_0123456789abcdef"),
        ("X-Echo", f"Bearer {KEY}"),
    ]
    stand_in.answers = [(b'{\n  "id": "chatcmpl-1",\n', b'  "echo": "' + KEY.encode() + b'"\n}\n')]
    out = tmp_path / "openai" / "hello"
    exchange = record(
        "openai", "gpt-4o-mini", "Say hello.", out, base_url=stand_in.url + "/v1/", api_key=KEY
    )

    _, path, headers, body = stand_in.received[0]
    assert path == "/v1/chat/completions"
    assert headers["authorization"] == f"Bearer {KEY}"
    assert headers["accept"] == "application/json"
    assert json.loads(body) == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "Say hello."}],
    }
    assert KEY.encode() not in written_bytes(out)
    assert sorted(p.name for p in out.iterdir()) == ["exchange.json", "response.body"]

    assert exchange.name == "openai/hello"
    assert exchange.request_body == json.loads(body)
    kept = {"content-type": "application/json", "accept": "application/json"}
    assert dict(exchange.request_headers) == kept
    assert exchange.status == 200 and exchange.stream is False and dict(exchange.expect) == {}
    names = [name for name, _ in exchange.headers]
    assert names == ["server", "date", "content-type", "x-request-id", "x-echo"]
    assert dict(exchange.headers)["x-echo"] == "Bearer <redacted>"
    assert exchange.body == b'{\n  "id": "chatcmpl-1",\n  "echo": "<redacted>"\n}\n'
    assert exchange.chunks == (len(exchange.body),)
    assert exchange.provenance.startswith(
        f"Recorded from {stand_in.url}/v1/chat/completions on "
    )
    assert "by python -m conformance record." in exchange.provenance
    assert "replaced by <redacted>" in exchange.provenance


def test_anthropic_stream_recording_keeps_every_read_and_replays_byte_for_byte(
    stand_in: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    stand_in.headers = [
        ("Content-Type", "text/event-stream; charset=utf-8"),
        ("anthropic-organization-id", "5f0c8d2e-3b7a-4c19-9e64-a1d2b3c4e5f6"),
        ("request-id", "req_011CabcdefGHIJKLMNOP"),
    ]
    stand_in.answers = [SSE_PIECES]
    out = tmp_path / "stream"
    exchange = record(
        "anthropic", "claude-sonnet-4-20250514", "Hi", out, stream=True, base_url=stand_in.url
    )

    _, path, headers, body = stand_in.received[0]
    assert path == "/v1/messages"
    assert headers["x-api-key"] == KEY and "authorization" not in headers
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["accept"] == "text/event-stream"
    sent = json.loads(body)
    assert sent["model"] == "claude-sonnet-4-20250514" and sent["stream"] is True
    assert sent["max_tokens"] == get_model_limits("claude-sonnet-4-20250514").output_tokens
    assert sent["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    assert KEY.encode() not in written_bytes(out)

    assert exchange.stream is True
    assert exchange.request_headers["anthropic-version"] == "2023-06-01"
    assert "anthropic-organization-id" not in dict(exchange.headers)
    assert exchange.body == b"".join(SSE_PIECES)
    assert sum(exchange.chunks) == len(exchange.body) and len(exchange.chunks) >= 1
    assert "redacted" not in exchange.provenance

    with ReplayServer([load_exchange(out)]) as server:
        request = urllib.request.Request(server.base_url + "/v1/messages", data=body)
        with urllib.request.urlopen(request, timeout=5) as response:
            assert response.read() == exchange.body
    assert server.unexpected == []


def test_an_error_status_is_recorded_too(stand_in: StandIn, tmp_path: Path) -> None:
    stand_in.status = 401
    stand_in.headers = [("Content-Type", "application/json")]
    stand_in.answers = [(b'{"error": {"message": "Incorrect key: ' + KEY.encode() + b'"}}\n',)]
    exchange = record(
        "openai", "gpt-4o", "Hi", tmp_path / "e", base_url=stand_in.url, api_key=KEY
    )
    assert exchange.status == 401
    assert b"<redacted>" in exchange.body and KEY.encode() not in written_bytes(tmp_path / "e")


def test_refusals_name_what_is_missing(
    stand_in: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def hi(out: str, text: str = "Hi", **options: Any) -> object:
        options.setdefault("base_url", stand_in.url)
        return record("openai", "gpt-4o", text, tmp_path / out, **options)

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(RecordError, match="set OPENAI_API_KEY"):
        hi("a")
    with pytest.raises(RecordError, match="message is empty"):
        hi("a", "  ", api_key=KEY)
    hi("a", api_key=KEY)
    with pytest.raises(RecordError, match="exists; pass --force"):
        hi("a", api_key=KEY)
    hi("a", api_key=KEY, overwrite=True)
    with pytest.raises(RecordError, match="cannot reach"):
        hi("b", api_key=KEY, base_url="http://127.0.0.1:9")
    assert not (tmp_path / "b").exists()


def test_record_command_writes_the_fixture_and_says_what_to_fill_in(
    stand_in: StandIn,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    stand_in.answers = [SSE_PIECES]
    out = tmp_path / "cli"
    argv = ["record", "--provider", "openai", "--model", "gpt-4o-mini", "--stream"]
    argv += ["--message", "Hi"]
    code = main([*argv, "--out", str(out), "--base-url", stand_in.url + "/v1"])
    printed = capsys.readouterr().out
    assert code == 0
    assert "recorded HTTP 200" in printed
    assert "fill in its description, quirks and expect" in printed
    sent = json.loads(stand_in.received[0][3])
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert KEY.encode() not in written_bytes(out)
    monkeypatch.delenv("OPENAI_API_KEY")
    assert main([*argv, "--out", str(tmp_path / "x"), "--base-url", stand_in.url]) == 2
    assert "set OPENAI_API_KEY" in capsys.readouterr().err


def test_a_recording_keeps_the_gaps_between_its_reads(stand_in: StandIn, tmp_path: Path) -> None:
    """SPEC R-REC-13: one gap fewer than reads (each HTTP chunk of the stand-in is one read)."""
    stand_in.headers = [("Content-Type", "text/event-stream")]
    stand_in.answers = [SSE_PIECES]
    out = tmp_path / "stream"
    exchange = record("openai", "gpt-4o-mini", "Hi", out, stream=True, base_url=stand_in.url + "/v1", api_key=KEY)
    assert len(exchange.chunks) == len(SSE_PIECES) and len(exchange.gaps) == len(SSE_PIECES) - 1
    assert all(gap >= 0 for gap in exchange.gaps)
    assert '"gaps": [' in (out / "exchange.json").read_text(encoding="utf-8")
