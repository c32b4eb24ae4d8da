"""The agent retries a failed model call against a real loopback server (SPEC R-ENG-18 … R-ENG-22).

A 429 with ``Retry-After: 1`` twice and then a stream: the answer comes after about 2 s and
the program says so twice; a 500 once; a 400 never; Ctrl+C during a 30 s backoff ends the
program at once, the prompt stored (R-ENG-21, R-ENG-23).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness9_ref.memory.storage import Manager
from tests.cli.helpers import cli, serving, session_of

ANSWER = {
    "id": "c1",
    "object": "chat.completion.chunk",
    "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hello."}, "finish_reason": None}],
}
FINISH = {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


class Failing(ThreadingHTTPServer):
    """Answers the first ``failures`` requests with ``status`` (``Retry-After: 1``), then a stream."""

    def __init__(self, status: int, failures: int) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.status = status
        self.failures = failures
        self.retry_after = "1"
        self.calls = 0


class _Handler(BaseHTTPRequestHandler):
    server: Failing

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        if not self.path.endswith("/chat/completions"):  # a window probe (R-WIN-2): not served here
            self.send_error(404)
            return
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.server.calls += 1
        if self.server.calls <= self.server.failures:
            body = json.dumps({"error": {"type": "requests", "code": "rate_limit_exceeded", "message": "slow down"}})
            self.send_response(self.server.status)
            self.send_header("content-type", "application/json")
            self.send_header("retry-after", self.server.retry_after)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for chunk in (ANSWER, FINISH):
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")


def _serve(status: int, failures: int) -> Iterator[Failing]:
    yield from serving(Failing(status, failures))


@pytest.fixture
def rate_limited() -> Iterator[Failing]:
    yield from _serve(429, 2)


@pytest.fixture
def refusing() -> Iterator[Failing]:
    yield from _serve(400, 1)


def _run(server: Failing, env: dict[str, str], work: Path, *options: str) -> tuple[int, str, list[str]]:
    result = cli(
        [*options, "--lang", "en", "run", "hi"],
        env,
        work,
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}/v1",
    )
    session_of(result)
    return result.returncode, result.stdout, result.stderr.splitlines()[:-1]


def test_two_429s_with_retry_after_are_retried_and_shown(rate_limited: Failing, env: dict[str, str], work: Path) -> None:
    status, out, lines = _run(rate_limited, env, work)
    assert status == 0 and out == "Hello.\n"
    assert lines == [
        f"↻ retrying in 1.0 s: openai: HTTP 429 requests: slow down (attempt {n} of 3)" for n in (2, 3)
    ]
    assert rate_limited.calls == 3


def test_max_retries_0_turns_retrying_off(rate_limited: Failing, env: dict[str, str], work: Path) -> None:
    status, out, lines = _run(rate_limited, env, work, "--max-retries", "0")
    assert status == 1 and out == ""
    assert lines == ["harness9-ref: error: openai: HTTP 429 requests: slow down"]
    assert rate_limited.calls == 1


def test_a_400_is_never_retried(refusing: Failing, env: dict[str, str], work: Path) -> None:
    status, _, lines = _run(refusing, env, work)
    assert status == 1 and len(lines) == 1 and lines[0].startswith("harness9-ref: error: openai: HTTP 400")
    assert refusing.calls == 1


def test_max_retries_must_be_a_count(env: dict[str, str], work: Path) -> None:
    result = cli(["--max-retries", "-1", "run", "hi"], env, work)
    assert result.returncode == 2 and "expected 0 or a positive integer" in result.stderr


@pytest.fixture
def failing_500() -> Iterator[Failing]:
    yield from _serve(500, 1)


@pytest.fixture
def slow_down() -> Iterator[Failing]:
    server = Failing(429, 1)
    server.retry_after = "30"
    yield from serving(server)


def test_a_500_then_a_200_is_retried_once(failing_500: Failing, env: dict[str, str], work: Path) -> None:
    status, out, lines = _run(failing_500, env, work)
    assert status == 0 and out == "Hello.\n"
    assert lines == ["↻ retrying in 1.0 s: openai: HTTP 500 requests: slow down (attempt 2 of 3)"]
    assert failing_500.calls == 2


def test_ctrl_c_during_the_backoff_stops_at_once(slow_down: Failing, env: dict[str, str], work: Path, db: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness9_ref", "--lang", "en", "run", "hi"], cwd=work,
        env={**env, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": f"http://127.0.0.1:{slow_down.server_address[1]}/v1"},
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()  # the retry notice: the program now waits 30 s
    assert first.startswith("↻ retrying in 30.0 s: openai: HTTP 429"), first
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=10)  # well before the 30 s the server asked for
    assert proc.returncode == 130
    lines = rest.splitlines()
    assert lines[-2] == "harness9-ref: error: cancelled" and lines[-1].startswith("session: ")
    assert slow_down.calls == 1
    with Manager(db) as manager:
        [info] = manager.list_sessions()
        assert [m.content for m in manager.open_session(info.id).get_messages()] == ["hi"]
