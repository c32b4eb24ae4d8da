"""What the line modes write reaches the terminal with its control characters made visible,
unless ``--raw`` (SPEC R-SAFE-1, R-SAFE-2).

The real command in a subprocess: ``run`` reads a file holding an erase-screen sequence, an OSC
title sequence, BEL, a C1 CSI and bidirectional overrides (offline provider), runs a command
that prints them, and streams them from a loopback OpenAI-compatible server; ``show``,
``search`` and ``sessions`` list a session whose title and messages hold them. Nothing of it
reaches standard output or standard error raw, and ``--raw`` passes it through.
"""

from __future__ import annotations

import io
import json
import logging
import subprocess
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness9_ref.cli._agent import _warnings_to
from harness9_ref.text import BIDI_CONTROLS
from tests.cli.helpers import cli, one_error, seed, serving, session_of

EVIL = "deploy \x1b[2J\x1b]0;pwned\x07 now\x07 \x9b31m \u202eevil\u202c \u2066iso\u2069\tend"
SAFE = "deploy \ufffd[2J\ufffd]0;pwned\ufffd now\ufffd \ufffd31m \ufffdevil\ufffd \ufffdiso\ufffd"  # then tab, end
ID = "aaaa1111-0000-4000-8000-000000000001"
T0 = 1_767_225_600


def unsafe(text: str) -> list[str]:
    """The characters of ``text`` that R-SAFE-1 would not let through."""
    return [
        ch
        for ch in text
        if (ord(ch) < 0x20 and ch not in "\t\n") or 0x7F <= ord(ch) <= 0x9F or ch in BIDI_CONTROLS
    ]


def clean_output(result: subprocess.CompletedProcess[str]) -> tuple[str, str]:
    """Standard output and standard error, checked to hold nothing R-SAFE-1 would not let through."""
    out, err = result.stdout, result.stderr
    assert unsafe(out) == [], out
    assert unsafe(err) == [], err
    return out, err


@pytest.fixture
def evil_file(work: Path) -> Path:
    path = work / "evil.txt"
    path.write_text(EVIL + "\r\nsecond line\n", encoding="utf-8")
    return path


# run: a file the agent reads


def test_run_shows_a_files_controls_made_visible(env: dict[str, str], work: Path, evil_file: Path) -> None:
    result = cli(["--provider", "offline", "run", "read evil.txt"], env, work)
    assert result.returncode == 0, result.stderr
    out, err = clean_output(result)
    assert SAFE in out  # the offline reply quotes the file's first line
    assert f"← read_file: {SAFE}\tend (2 lines, 71 B)" in err.splitlines()
    session_of(result)


def test_run_raw_passes_a_files_bytes_through(env: dict[str, str], work: Path, evil_file: Path) -> None:
    result = cli(["--provider", "offline", "run", "--raw", "read evil.txt"], env, work)
    assert result.returncode == 0, result.stderr
    assert EVIL.split("\t")[0] in result.stdout
    assert f"← read_file: {EVIL} (2 lines, 71 B)" in result.stderr.splitlines()


def test_run_shows_a_commands_output_made_visible(env: dict[str, str], work: Path) -> None:
    command = r"printf 'a\033[2Jb\007c\r\nd'"
    result = cli(["--provider", "offline", "--yes", "run", f"run {command}"], env, work)
    assert result.returncode == 0, result.stderr
    out, err = clean_output(result)
    assert "← bash: a\ufffd[2Jb\ufffdc (2 lines, 11 B)" in err.splitlines()
    assert 'first line: "a\ufffd[2Jb\ufffdc"' in out
    raw = cli(["--provider", "offline", "--yes", "--raw", "run", f"run {command}"], env, work)
    assert "← bash: a\x1b[2Jb\x07c (2 lines, 11 B)" in raw.stderr.splitlines()
    assert 'first line: "a\x1b[2Jb\x07c"' in raw.stdout


# run: a provider's streamed text and its error message


class _Server(ThreadingHTTPServer):
    def __init__(self, chunks: list[str], status: int = 200) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.chunks = chunks
        self.status = status


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        if not self.path.endswith("/chat/completions"):  # a window probe (R-WIN-2): not served here
            self.send_error(404)
            return
        self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.server.status != 200:
            message = "".join(self.server.chunks)
            body = json.dumps({"error": {"type": "invalid_request_error", "message": message}}).encode()
            self.send_response(self.server.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for n, text in enumerate(self.server.chunks):
            delta = {"role": "assistant", "content": text} if n == 0 else {"content": text}
            chunk = {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        stop = {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        self.wfile.write(f"data: {json.dumps(stop)}\n\ndata: [DONE]\n\n".encode())


def _serving(chunks: list[str], status: int = 200) -> Iterator[_Server]:
    yield from serving(_Server(chunks, status))


@pytest.fixture
def streaming() -> Iterator[_Server]:
    yield from _serving(["Hello \x1b", "[2J world \u202e", "!\x9b", "0m"])  # sequences cut across chunks


@pytest.fixture
def refusing() -> Iterator[_Server]:
    yield from _serving(["bad \x1b]0;pwned\x07 request \u202e"], status=400)


def _openai(server: _Server, env: dict[str, str], work: Path, *options: str) -> tuple[int, str, str]:
    result = cli(
        ["--provider", "openai", "--max-retries", "0", *options, "run", "hi"],
        env,
        work,
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}/v1",
    )
    return result.returncode, result.stdout, result.stderr


def test_run_streams_a_providers_controls_made_visible(streaming: _Server, env: dict[str, str], work: Path) -> None:
    status, out, _ = _openai(streaming, env, work)
    assert status == 0 and out == "Hello \ufffd[2J world \ufffd!\ufffd0m\n"
    status, out, _ = _openai(streaming, env, work, "--raw")
    assert status == 0 and out == "Hello \x1b[2J world \u202e!\x9b0m\n"


@pytest.mark.parametrize("options", [(), ("--raw",)])
def test_an_error_line_is_always_safe(refusing: _Server, env: dict[str, str], work: Path, options: tuple[str, ...]) -> None:
    status, out, err = _openai(refusing, env, work, *options)
    assert status == 1 and out == ""
    assert unsafe(err) == [], err
    assert "bad \ufffd]0;pwned\ufffd request \ufffd" in err.splitlines()[0]


# the session sub-commands: a stored title, snippet and conversation


@pytest.fixture
def stored_evil(db: Path) -> Path:
    seed(db, [(ID, T0, [EVIL])])
    return db


@pytest.mark.parametrize("where", ["before", "after"])
def test_show_cleans_the_conversation_and_raw_prints_it_as_stored(
    env: dict[str, str], work: Path, stored_evil: Path, where: str
) -> None:
    result = cli(["show", ID], env, work)
    out, _ = clean_output(result)
    assert out.splitlines() == [f"> {SAFE}    end", f"re: {SAFE}    end"]  # the pane's tabs: four spaces
    raw = cli(["--raw", "show", ID] if where == "before" else ["show", "--raw", ID], env, work)
    assert raw.returncode == 0 and raw.stdout.splitlines() == [f"> {EVIL}", f"re: {EVIL}"]


def test_sessions_cleans_a_title_and_raw_prints_it(env: dict[str, str], work: Path, stored_evil: Path) -> None:
    result = cli(["sessions", "--any-folder"], env, work)
    out, _ = clean_output(result)
    unknown = "(folder unknown)  (provider unknown)"
    assert out.startswith(f"{ID}  2026-01-01 00:00  2 messages  {unknown}  {SAFE}"), out
    raw = cli(["sessions", "--any-folder", "--raw"], env, work)
    assert raw.stdout.startswith(f"{ID}  2026-01-01 00:00  2 messages  {unknown}  {EVIL}"), raw.stdout


def test_search_cleans_a_snippet_and_raw_prints_it(env: dict[str, str], work: Path, stored_evil: Path) -> None:
    result = cli(["search", "deploy"], env, work)
    out, _ = clean_output(result)
    assert out.startswith(f"{ID}  2026-01-01 00:00  re: {SAFE}"), out
    raw = cli(["--raw", "search", "deploy"], env, work)
    assert raw.stdout.startswith(f"{ID}  2026-01-01 00:00  re: {EVIL}"), raw.stdout


def test_prune_takes_raw(env: dict[str, str], work: Path, stored_evil: Path) -> None:
    result = cli(["prune", "--older-than", "1", "--dry-run", "--raw"], env, work)
    assert result.returncode == 0 and result.stdout == "would prune 1 session, 2 messages\n"


def test_raw_with_the_terminal_ui_is_a_usage_error(env: dict[str, str], work: Path, db: Path) -> None:
    message = one_error(cli(["--raw"], env, work), status=2)
    assert message == (
        "--raw needs a line mode (run, sessions, show, search or prune);"
        " the terminal UI always shows control characters made visible"
    )
    assert not db.exists()


def test_a_warning_line_is_always_safe() -> None:
    stream = io.StringIO()
    with _warnings_to(stream, "en"):
        logging.getLogger("harness9_ref.engine").warning("could not save: %s", "disk \x1b[2J full\u202e")
    assert stream.getvalue() == "harness9-ref: warning: could not save: disk \ufffd[2J full\ufffd\n"


@pytest.mark.parametrize("options", [(), ("--raw",)])
def test_a_program_error_quoting_a_path_is_always_safe(
    env: dict[str, str], work: Path, tmp_path: Path, options: tuple[str, ...]
) -> None:
    folder = tmp_path / "x\x1b[2J\u202ey"
    message = one_error(cli(["sessions", *options, "--db", str(folder / "s.db")], env, work))
    assert message == f"--db {tmp_path}/x\ufffd[2J\ufffdy/s.db: the folder {tmp_path}/x\ufffd[2J\ufffdy does not exist"
