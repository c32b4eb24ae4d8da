"""``run --json``: the events of a run as JSON lines (SPEC R-CLI-16, R-CLI-17, R-CLI-18).

The real command in a subprocess: the offline provider calling ``read_file`` and ``bash``, a
loopback OpenAI-compatible server that refuses (400) or rate-limits (429), SIGINT while a
command runs, a file of control characters and line separators read with and without
``--raw``, a database that refuses every save; in process, an engine whose provider raises.
Every line of standard output is read with the package's strict JSON reader.
"""

from __future__ import annotations

import io
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from harness9_ref.cli import NOT_RUN_LINE, run_prompt
from harness9_ref.cli._run_prompt import RunItem
from harness9_ref.engine import AgentEngine, RunFinished
from harness9_ref.memory.storage import MemorySession
from harness9_ref.offline import OfflineProvider
from harness9_ref.schema import strict_json
from harness9_ref.testing import ScriptedProvider
from harness9_ref.tools import APPROVAL_REQUIRED, Registry
from tests.cli.helpers import EXCEPTION_NAME, cli, stored
from tests.cli.test_durable_cli import _refuse_messages
from tests.cli.test_retry_cli import Failing, _serve

OFFLINE = ["--provider", "offline"]
TERMINAL = ("done", "error")


def events(stdout: str) -> list[dict[str, Any]]:
    """Every line of standard output as a JSON object (R-CLI-17): one per LF, nothing else."""
    assert stdout.endswith("\n"), stdout
    lines = stdout.split("\n")[:-1]
    parsed = [strict_json.loads(line, unique_keys=True) for line in lines]
    assert all(isinstance(item, dict) and set(item) == {"type", "data"} for item in parsed), stdout
    return parsed


def checked(stdout: str) -> list[dict[str, Any]]:
    """R-CLI-16's frame: the session line first, exactly one terminal line and it is the last."""
    items = events(stdout)
    assert items[0]["type"] == "session" and set(items[0]["data"]) == {"id"}
    assert [item["type"] in TERMINAL for item in items].count(True) == 1
    assert items[-1]["type"] in TERMINAL
    return items


def of_type(items: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [item["data"] for item in items if item["type"] == kind]


def test_read_gives_every_event_and_ends_with_done(env: dict[str, str], work: Path, db: Path) -> None:
    (work / "notes.txt").write_text("alpha\nbeta\n")
    result = cli([*OFFLINE, "run", "--json", "read notes.txt"], env, work)
    assert result.returncode == 0 and result.stderr == ""
    items = checked(result.stdout)
    session_id = items[0]["data"]["id"]
    assert list(stored(db)) == [session_id]
    [call] = of_type(items, "tool_call")
    assert call["name"] == "read_file" and strict_json.loads(call["arguments"]) == {"path": "notes.txt"}
    [outcome] = of_type(items, "tool_result")
    assert outcome == {"tool_call_id": call["id"], "name": "read_file", "content": "alpha\nbeta\n"}
    assert of_type(items, "token_update")[0]["context_window"] > 0
    text = "".join(data["delta"] for data in of_type(items, "text_delta"))
    done = items[-1]
    assert done["type"] == "done" and done["data"]["turns"] == 2
    assert text.endswith(done["data"]["message"]["content"])
    types = [item["type"] for item in items]
    assert types.index("tool_call") + 1 == types.index("tool_result")


def test_json_before_run_and_yes_run_the_command(env: dict[str, str], work: Path) -> None:
    result = cli([*OFFLINE, "--json", "--yes", "run", "run echo hi"], env, work)
    assert result.returncode == 0 and result.stderr == ""
    items = checked(result.stdout)
    [call] = of_type(items, "tool_call")
    assert call["name"] == "bash" and strict_json.loads(call["arguments"]) == {"command": "echo hi"}
    assert of_type(items, "tool_result") == [{"tool_call_id": call["id"], "name": "bash", "content": "hi\n"}]
    assert items[-1]["type"] == "done"


def test_notes_stay_text_on_standard_error(env: dict[str, str], work: Path) -> None:
    """R-CLI-18a: the offline notice and a refused command; the events say the rest."""
    result = cli(["--lang", "en", "run", "--json", "run echo hi"], env, work)
    assert result.returncode == 3  # R-CLI-50: as without --json
    assert result.stderr.splitlines() == [
        "harness9-ref: no API key set (OPENAI_API_KEY); using the offline provider",
        NOT_RUN_LINE.format(command="echo hi"),
    ]
    items = checked(result.stdout)
    assert of_type(items, "tool_result")[0]["content"] == APPROVAL_REQUIRED


@pytest.fixture
def refusing() -> Iterator[Failing]:
    yield from _serve(400, 1)


@pytest.fixture
def rate_limited() -> Iterator[Failing]:
    yield from _serve(429, 1)


def _against(server: Failing, env: dict[str, str], work: Path) -> subprocess.CompletedProcess[str]:
    return cli(
        ["--lang", "en", "run", "--json", "hi"], env, work,
        OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}/v1",
    )


def test_a_refusing_provider_ends_with_its_error_line(refusing: Failing, env: dict[str, str], work: Path) -> None:
    result = _against(refusing, env, work)
    assert result.returncode == 1 and result.stderr == ""
    items = checked(result.stdout)
    error = items[-1]
    assert error["type"] == "error" and error["data"]["code"] == "invalid_request"
    assert error["data"]["message"].startswith("openai: HTTP 400")
    assert of_type(items, "retry") == []


def test_a_retry_is_an_event_line(rate_limited: Failing, env: dict[str, str], work: Path) -> None:
    result = _against(rate_limited, env, work)
    assert result.returncode == 0 and result.stderr == ""
    items = checked(result.stdout)
    [retry] = of_type(items, "retry")
    assert retry == {
        "attempt": 2, "max_attempts": 3, "delay_seconds": 1.0, "code": "rate_limit",
        "message": "openai: HTTP 429 requests: slow down",
    }
    assert items[-1]["type"] == "done" and items[-1]["data"]["message"]["content"] == "Hello."


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_ends_with_the_cancelled_error(env: dict[str, str], work: Path, signum: int, status: int) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "harness9_ref", *OFFLINE, "--yes", "run", "--json", "run sleep 30"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=work, text=True,
    )
    try:
        assert process.stdout is not None
        seen = []
        for line in process.stdout:  # each line is flushed as its event arrives (R-CLI-16)
            seen.append(line)
            if '"type":"tool_call"' in line:
                break
        process.send_signal(signum)
        rest, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == status
    assert err == "" and EXCEPTION_NAME.search(rest) is None
    items = checked("".join(seen) + rest)
    assert items[-1] == {"type": "error", "data": {"code": "cancelled", "message": "cancelled"}}


HOSTILE = "title \x1b]0;owned\x07 \x9b2J \u202eevil\u202c \u2028next \u2029para \x85nel \x7f del\r\n"


@pytest.mark.parametrize("raw", [[], ["--raw"]])
def test_texts_are_exact_and_the_lines_safe(env: dict[str, str], work: Path, raw: list[str]) -> None:
    (work / "hostile.txt").write_text(HOSTILE, newline="")
    result = cli([*OFFLINE, *raw, "run", "--json", "read hostile.txt"], env, work)
    assert result.returncode == 0
    for char in "\x1b\x07\x9b\u202e\u202c\u2028\u2029\x85\x7f\r":
        assert char not in result.stdout, repr(char)
    assert result.stdout.count("\n") == len(result.stdout.splitlines())  # no reader cuts a line
    items = checked(result.stdout)
    assert of_type(items, "tool_result")[0]["content"] == HOSTILE


def test_raw_changes_nothing_in_the_lines(env: dict[str, str], work: Path) -> None:
    (work / "hostile.txt").write_text(HOSTILE, newline="")
    plain, raw = (
        cli([*OFFLINE, *extra, "run", "--json", "read hostile.txt"], env, work).stdout.splitlines()[1:]
        for extra in ([], ["--raw"])
    )
    assert plain == raw


def test_a_turn_not_saved_is_its_event_and_exit_1(env: dict[str, str], work: Path, db: Path) -> None:
    cli([*OFFLINE, "run", "first"], env, work)
    _refuse_messages(db)
    result = cli([*OFFLINE, "run", "--json", "second"], env, work)
    assert result.returncode == 1
    warnings = result.stderr.splitlines()  # R-CLI-18: the engine's warnings stay text lines
    assert warnings and all(line.startswith("harness9-ref: warning: could not save ") for line in warnings)
    items = checked(result.stdout)
    [lost] = of_type(items, "save_failed")
    assert lost == {"saved": 0, "unsaved": 2, "message": f"{db}: database or disk is full"}
    assert [item["type"] for item in items[-3:]] == ["save_failed", "token_update", "done"]  # R-TUI-37


@pytest.mark.parametrize("args", [["--json", "sessions"], ["--json"], ["--json", "show", "abcd"]])
def test_json_needs_run(env: dict[str, str], work: Path, args: list[str]) -> None:
    result = cli(args, env, work)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == "harness9-ref: error: --json needs run: only a run has events to write as JSON lines\n"


def test_a_failure_before_the_run_writes_nothing_on_standard_output(env: dict[str, str], work: Path) -> None:
    result = cli([*OFFLINE, "--resume", "abcdef", "run", "--json", "x"], env, work)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("harness9-ref: error: ") and len(result.stderr.splitlines()) == 1


def test_an_internal_error_names_no_exception_type(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    engine = AgentEngine(ScriptedProvider([ZeroDivisionError("division by zero")]), Registry(tmp_path))
    assert run_prompt(engine, "sid-9", "hello", out, err, as_json=True) == 1
    assert err.getvalue() == ""
    items = checked(out.getvalue())
    assert items[0] == {"type": "session", "data": {"id": "sid-9"}}
    assert items[-1] == {"type": "error", "data": {"code": "internal_error", "message": "division by zero"}}


CANCELLED_LINE = {"type": "error", "data": {"code": "cancelled", "message": "cancelled"}}


class Stalling(ThreadingHTTPServer):
    """Reads a request and answers nothing until released: a model that never replies."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Stall)
        self.asked = threading.Event()
        self.release = threading.Event()


class _Stall(BaseHTTPRequestHandler):
    server: Stalling

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        if not self.path.endswith("/chat/completions"):  # a window probe (R-WIN-2): not served here
            self.send_error(404)
            return
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.server.asked.set()
        self.server.release.wait(30)


@pytest.fixture
def stalling() -> Iterator[Stalling]:
    server = Stalling()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()


def test_a_run_that_does_not_end_in_time_gets_the_cancelled_line(
    stalling: Stalling, env: dict[str, str], work: Path
) -> None:
    """R-CLI-16c: the run sends no terminal event within R-INT-4's time; the program writes one."""
    process = subprocess.Popen(
        [sys.executable, "-m", "harness9_ref", "--max-retries", "0", "run", "--json", "hi"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work, text=True,
        env={**env, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": f"http://127.0.0.1:{stalling.server_address[1]}/v1"},
    )
    try:
        assert stalling.asked.wait(20)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130 and err == ""
    assert checked(out)[-1] == CANCELLED_LINE


class InterruptedAfterTheRun(queue.Queue[RunItem]):
    """The run's queue, with Ctrl+C arriving (as Python raises it in the main thread) once the
    run has ended with ``done``, before its events are printed."""

    def __init__(self) -> None:
        super().__init__()
        self.interrupted = False

    def get(self, block: bool = True, timeout: float | None = None) -> RunItem:
        while not self.interrupted:
            with self.mutex:
                finished = any(isinstance(item, RunFinished) for item in self.queue)
            if finished:
                self.interrupted = True
                raise KeyboardInterrupt
            time.sleep(0.01)
        return super().get(block, timeout)


def test_a_signal_after_done_puts_the_cancelled_line_in_its_place(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    engine = AgentEngine(OfflineProvider(), Registry(tmp_path), session=MemorySession())
    status = run_prompt(engine, "sid-7", "hello", out, err, items=InterruptedAfterTheRun(), as_json=True)
    assert status == 130 and err.getvalue() == ""
    items = checked(out.getvalue())
    assert items[-1] == CANCELLED_LINE and of_type(items, "done") == []
    assert of_type(items, "text_delta")
