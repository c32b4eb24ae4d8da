"""Local model servers as a user meets them: no key, a slow first piece, a timeout, Ctrl+C
(SPEC R-CLI-4, R-CLI-13, R-CLI-21 … R-CLI-23, R-PRV-3, R-PRV-4, R-PRV-8).

The real command in a subprocess, pointed by OPENAI_BASE_URL or ANTHROPIC_BASE_URL at a real
HTTP server on 127.0.0.1 that speaks the provider's streaming format as llama.cpp's
``llama-server`` does: it takes the request, says nothing while it "reads the prompt"
(``delay`` seconds, before the response's head), then streams the reply. No key is set.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness9_ref.cli import offline_notice
from tests.cli.helpers import EXCEPTION_NAME, cli, one_error, session_of, stored
from tests.local_server import REPLY, LocalServer

WAITING = "waiting for the model\u2026 5 s"


@pytest.fixture
def local() -> Iterator[LocalServer]:
    server = LocalServer().start()
    yield server
    server.close()


def keyless(server: str, anthropic: bool = False) -> str:
    """R-CLI-21's notice for ``server``."""
    key = "ANTHROPIC_API_KEY" if anthropic else "OPENAI_API_KEY"
    return f"harness9-ref: no API key set ({key}); sending requests to {server} without one"


def test_a_local_server_needs_no_key_and_gets_none(env: dict[str, str], work: Path, local: LocalServer) -> None:
    """R-CLI-21a, R-CLI-21b, R-PRV-4: the server answers (not the offline provider), the notice names it."""
    result = cli(["--model", "smollm2", "run", "hello"], env, work, OPENAI_BASE_URL=local.url)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "".join(REPLY) + "\n"
    assert result.stderr.splitlines()[0] == keyless(local.server)
    assert "offline" not in result.stderr
    [headers] = local.headers
    assert "authorization" not in headers and "x-api-key" not in headers


def test_an_anthropic_compatible_proxy_needs_no_key_either(env: dict[str, str], work: Path) -> None:
    """R-CLI-21b, R-PRV-8: with --provider given too, no error, and no x-api-key header."""
    proxy = LocalServer(anthropic=True).start()
    try:
        result = cli(["--provider", "anthropic", "--model", "claude-x", "run", "hi"], env, work, ANTHROPIC_BASE_URL=proxy.url)
    finally:
        proxy.close()
    assert result.returncode == 0, result.stderr
    assert result.stdout == "".join(REPLY) + "\n"
    assert result.stderr.splitlines()[0] == keyless(proxy.server, anthropic=True)
    [headers] = proxy.headers
    assert "x-api-key" not in headers and headers["anthropic-version"] == "2023-06-01"


def test_a_key_that_is_set_is_sent_to_the_local_server(env: dict[str, str], work: Path, local: LocalServer) -> None:
    result = cli(["run", "hello"], env, work, OPENAI_BASE_URL=local.url, OPENAI_API_KEY="sk-local")
    assert result.returncode == 0, result.stderr
    assert "no API key" not in result.stderr
    assert local.headers[0]["authorization"] == "Bearer sk-local"


def test_the_official_endpoint_without_a_key_stays_offline(env: dict[str, str], work: Path) -> None:
    """R-CLI-4b, R-CLI-13a: as today, with the official URL written out; with --provider, an error."""
    official = "https://api.openai.com/v1/"
    result = cli(["run", "hello"], env, work, OPENAI_BASE_URL=official)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == offline_notice("OPENAI_API_KEY")
    refused = cli(["--provider", "openai", "run", "hello"], env, work, OPENAI_BASE_URL=official)
    assert one_error(refused) == "--provider openai needs OPENAI_API_KEY"


def test_the_timeout_ends_a_silent_wait(env: dict[str, str], work: Path) -> None:
    """R-CLI-22a: --timeout, else HARNESS9_TIMEOUT, bounds each read; the error names it."""
    silent = LocalServer(delay=30).start()
    try:
        by_option = cli(["--timeout", "0.5", "--max-retries", "0", "run", "hello"], env, work, OPENAI_BASE_URL=silent.url)
        by_variable = cli(["--max-retries", "0", "run", "hello"], env, work, OPENAI_BASE_URL=silent.url, HARNESS9_TIMEOUT="0.5")
    finally:
        silent.close()
    for result in (by_option, by_variable):
        assert result.returncode == 1, result.stderr
        error = f"harness9-ref: error: openai: no answer within 0.5 s while sending POST {silent.url}/chat/completions"
        assert error in result.stderr.splitlines()


@pytest.mark.parametrize(
    ("args", "variable", "lang", "line"),
    [
        (["--timeout", "0"], "", "en", "argument --timeout: expected a number of seconds in (0, 86400], got '0'"),
        ([], "soon", "en", "HARNESS9_TIMEOUT: expected a number of seconds in (0, 86400], got 'soon'"),
        ([], "-5", "zh", "HARNESS9_TIMEOUT：应为 (0, 86400] 中的秒数，实际为 '-5'"),
    ],
)
def test_an_invalid_timeout_is_a_one_line_usage_error(
    env: dict[str, str], work: Path, args: list[str], variable: str, lang: str, line: str
) -> None:
    """R-CLI-22c: exit 2, in the program's language for the variable (R-LANG-3), nothing sent."""
    result = cli(["--lang", lang, *args, "run", "hello"], env, work, HARNESS9_TIMEOUT=variable)
    assert result.returncode == 2 and result.stdout == ""
    prefix = "harness9-ref: 错误：" if lang == "zh" else "harness9-ref: error: "
    assert result.stderr == prefix + line + "\n"


def test_a_long_wait_for_the_first_piece_is_told_on_standard_error(env: dict[str, str], work: Path) -> None:
    """R-CLI-23b: off a terminal, one whole line at five seconds; the answer on standard output intact."""
    slow = LocalServer(delay=6).start()
    try:
        plain = subprocess.Popen(
            [sys.executable, "-m", "harness9_ref", "run", "hello"], cwd=work, env={**env, "OPENAI_BASE_URL": slow.url},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        as_json = cli(["--json", "run", "hello"], env, work, OPENAI_BASE_URL=slow.url)
        out, err = plain.communicate(timeout=60)
    finally:
        slow.close()
    assert plain.returncode == 0, err
    assert out.decode() == "".join(REPLY) + "\n"
    lines = err.decode().splitlines()
    assert lines[0] == keyless(slow.server) and lines[1] == WAITING and len(lines) == 3
    assert as_json.returncode == 0, as_json.stderr
    events = [json.loads(line) for line in as_json.stdout.splitlines()]  # R-CLI-16: only JSON lines
    assert [e["type"] for e in events][-1] == "done" and WAITING not in as_json.stdout
    assert as_json.stderr.splitlines()[1:] == [WAITING]


def test_on_a_terminal_the_waiting_line_is_rewritten_in_place_and_erased(env: dict[str, str], work: Path) -> None:
    """R-CLI-23b: standard error a terminal: ``\\r<line>\\x1b[K`` each second, then ``\\r\\x1b[K``
    before the answer; standard output (a pipe) holds the answer alone."""
    slow = LocalServer(delay=6.5).start()
    leader, follower = os.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "harness9_ref", "run", "hello"], cwd=work, env={**env, "OPENAI_BASE_URL": slow.url},
            stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(follower)
        out, _ = process.communicate(timeout=60)
        screen = b""
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the terminal's other side is closed: all was read
                break
            if not data:
                break
            screen += data
    finally:
        os.close(leader)
        slow.close()
    assert process.returncode == 0
    assert out.decode() == "".join(REPLY) + "\n"
    text = screen.decode().replace("\r\n", "\n")  # the terminal's own line ends
    assert f"\r{WAITING}\x1b[K\r{WAITING.replace('5 s', '6 s')}\x1b[K\r\x1b[K" in text
    assert text.count("\r\x1b[K") == 1


def test_ctrl_c_ends_the_wait_for_a_silent_server_at_once(env: dict[str, str], work: Path, db: Path) -> None:
    """R-CLI-23c, R-PRV-3, R-INT-4: the stream is interrupted, not awaited: the program is gone
    well within R-INT-4's time, says nothing of waiting after the signal, and kept the prompt."""
    silent = LocalServer(delay=60).start()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "harness9_ref", "run", "explain the repository"], cwd=work,
            env={**env, "OPENAI_BASE_URL": silent.url}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while not silent.headers:
            assert time.monotonic() < deadline, "the request never came"
            time.sleep(0.02)
        time.sleep(5.5)  # the waiting line is out
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10)
        elapsed = time.monotonic() - started
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        silent.close()
    text = err.decode()
    assert EXCEPTION_NAME.search(text) is None, text
    assert process.returncode == 130
    assert elapsed < 2, elapsed  # the run's own end, not R-INT-4's deadline
    assert text.splitlines()[1:] == [WAITING, "harness9-ref: error: cancelled", text.splitlines()[-1]]
    session = session_of(subprocess.CompletedProcess([], 130, out.decode(), text))
    assert stored(db)[session] == ["explain the repository"]
