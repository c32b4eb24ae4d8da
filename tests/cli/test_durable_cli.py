"""Nothing of a turn is lost, and the exit status tells the truth (SPEC R-ENG-23 … R-ENG-25, R-CLI-7, R-CLI-25, R-DB-12).

The real command runs against a real loopback server and a real SQLite file. ``kill -9`` in each
phase of a turn (waiting for the model, while its answer streams, while a tool runs) leaves the
prompt stored. A database that fails as the run goes on makes ``run`` fail with one line saying
what was lost; one that cannot be written at all is refused before the model is asked, by
``run`` and ``prune`` alike, in one line naming it (R-CLI-25); the read-only commands work on a
read-only file system and create nothing there.
Read-only files and file systems are real: a read-only bind mount in a private mount namespace
(``unshare``), since a root process ignores file modes.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Final

import pytest

from harness9_ref.engine import PARTIAL_MARKER
from harness9_ref.memory.storage import Manager
from tests.cli.helpers import EXCEPTION_NAME, cli, serving, session_of

PROMPT: Final = "explain the build"
TEXT: Final = {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Half an"}}]}
WAIT_SECONDS: Final = 30.0


class Model(ThreadingHTTPServer):
    """A chat-completions endpoint that answers each request as ``mode`` says.

    ``stall``: reads the request and never answers; ``stream-stall``: streams one text chunk,
    then never goes on; ``stream-cut``: streams one text chunk, then closes the connection.
    ``asked`` is set once a request arrived; ``release`` ends every stall.
    """

    def __init__(self, mode: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode = mode
        self.asked = threading.Event()
        self.release = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: Model

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        if not self.path.endswith("/chat/completions"):  # a window probe (R-WIN-2): not served here
            self.send_error(404)
            return
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.server.asked.set()
        if self.server.mode == "stall":
            self.server.release.wait(WAIT_SECONDS)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        self.wfile.write(f"data: {json.dumps(TEXT)}\n\n".encode())
        self.wfile.flush()
        if self.server.mode == "stream-stall":
            self.server.release.wait(WAIT_SECONDS)
        self.close_connection = True


@pytest.fixture
def model(request: pytest.FixtureRequest) -> Iterator[Model]:
    server = Model(request.param)
    try:
        yield from serving(server)
    finally:
        server.release.set()


def _start(args: list[str], env: dict[str, str], work: Path, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness9_ref", *args], cwd=work, env={**env, **extra},
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _stored(db: Path) -> list[list[tuple[str, str]]]:
    """Every session's messages as (role, content), oldest session first."""
    with Manager(db) as manager:
        sessions = sorted(manager.list_sessions(), key=lambda info: info.created_at)
        return [[(m.role, m.content) for m in manager.open_session(s.id).get_messages()] for s in sessions]


def _kill_when(proc: subprocess.Popen[str], ready: threading.Event) -> None:
    assert ready.wait(WAIT_SECONDS), "the command never reached the phase"
    proc.send_signal(signal.SIGKILL)
    proc.wait(WAIT_SECONDS)


@pytest.mark.parametrize("model", ["stall"], indirect=True)
def test_kill_while_waiting_for_the_model_keeps_the_prompt(model: Model, env: dict[str, str], work: Path, db: Path) -> None:
    proc = _start(["run", PROMPT], env, work, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=model.url)
    _kill_when(proc, model.asked)
    assert _stored(db) == [[("user", PROMPT)]]


@pytest.mark.parametrize("model", ["stream-stall"], indirect=True)
def test_kill_while_the_answer_streams_keeps_the_prompt(model: Model, env: dict[str, str], work: Path, db: Path) -> None:
    proc = _start(["run", PROMPT], env, work, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=model.url)
    assert proc.stdout is not None
    streamed = threading.Event()

    def watch() -> None:  # the text reached the user: the reply is in flight
        assert proc.stdout is not None
        if proc.stdout.read(len("Half an")) == "Half an":
            streamed.set()

    threading.Thread(target=watch, daemon=True).start()
    _kill_when(proc, streamed)
    assert _stored(db) == [[("user", PROMPT)]]


def _sleepers(token: str) -> list[int]:
    """The processes whose command line holds ``token``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_kill_while_a_tool_runs_keeps_the_prompt(env: dict[str, str], work: Path, db: Path) -> None:
    # Unique to this run, so the test finds (and ends) only its own command: a fixed argument is
    # also the command of any other run of this test on the machine, whose sleep would read as
    # this run's (killing the program before the prompt is stored) and be killed by this one.
    token = f"sleep 27.{random.randrange(10**8):08d}"
    proc = _start(["--yes", "run", f"run {token}"], env, work)
    running = threading.Event()

    def watch() -> None:
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline and not running.is_set():
            if any(pid != proc.pid for pid in _sleepers(token)):
                running.set()
            time.sleep(0.05)

    threading.Thread(target=watch, daemon=True).start()
    try:
        _kill_when(proc, running)
        assert _stored(db) == [[("user", f"run {token}")]]
    finally:
        for pid in _sleepers(token):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.mark.parametrize("model", ["stream-cut"], indirect=True)
def test_a_stream_cut_after_text_keeps_it_with_the_marker(model: Model, env: dict[str, str], work: Path, db: Path) -> None:
    result = cli(["run", PROMPT], env, work, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=model.url)
    assert result.returncode == 1 and result.stdout == "Half an\n"
    error = [line for line in result.stderr.splitlines() if line.startswith("harness9-ref: error: ")]
    assert len(error) == 1
    session_of(result)
    [messages] = _stored(db)
    message = error[0].removeprefix("harness9-ref: error: ")
    assert messages == [("user", PROMPT), ("assistant", "Half an" + PARTIAL_MARKER + message + "]")]


def _refuse_messages(db: Path) -> None:
    """Make every later save fail inside SQLite itself, as a full disk would, while the file still opens."""
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
    conn.close()


def test_run_whose_saves_fail_exits_1_and_names_no_session(env: dict[str, str], work: Path, db: Path) -> None:
    cli(["run", "first"], env, work)
    _refuse_messages(db)
    result = cli(["run", "second"], env, work)
    assert result.returncode == 1
    last = result.stderr.splitlines()[-1]
    assert last == "harness9-ref: error: 2 of 2 messages of this turn were not saved: " + (
        f"{db}: database or disk is full; no session was created"
    )
    assert "session: " not in result.stderr
    assert len(_stored(db)) == 1


def test_resuming_a_session_whose_saves_fail_names_it(env: dict[str, str], work: Path, db: Path) -> None:
    sid = session_of(cli(["run", "first"], env, work))
    _refuse_messages(db)
    result = cli(["--continue", "run", "second"], env, work)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[-2] == f"harness9-ref: error: 2 of 2 messages of this turn were not saved: {db}: database or disk is full"
    assert lines[-1] == f"session: {sid}"


def _unshare() -> list[str]:
    """The command that gives a child a private mount namespace, or skips when none can be made."""
    base = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("needs unshare and mount (util-linux) for a read-only bind mount")
    if subprocess.run([*base, "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot make a private mount namespace here (unshare -m refused)")
    return base


def _read_only(
    target: Path, args: list[str], env: dict[str, str], work: Path, **extra: str
) -> subprocess.CompletedProcess[str]:
    """Run the command with ``target`` (a file or a folder) bind-mounted read-only over itself."""
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    command = [*_unshare(), "sh", "-c", script, str(target), sys.executable, "-m", "harness9_ref", *args]
    result = subprocess.run(command, cwd=work, env={**env, **extra}, capture_output=True, text=True, timeout=60, check=False)
    if "mount:" in result.stderr:
        pytest.skip(f"the read-only bind mount failed: {result.stderr.strip()}")
    assert EXCEPTION_NAME.search(result.stderr) is None, result.stderr
    return result


def _listing(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_run_on_a_read_only_database_is_refused_before_the_model_is_asked(env: dict[str, str], work: Path, db: Path) -> None:
    cli(["run", "first"], env, work)
    before = _listing(db.parent)
    for args in (["run", "second"], ["--continue", "run", "second"]):  # R-CLI-25: no session named either
        args = ["--provider", "offline", *args]
        result = _read_only(db, args, env, work)
        assert result.returncode == 1 and result.stdout == ""
        assert result.stderr == f"harness9-ref: error: {db}: the database cannot be written: Read-only file system\n"
    assert _listing(db.parent) == before


@pytest.mark.parametrize(
    "args",
    [
        ["--provider", "offline", "run", "second"],
        ["--provider", "offline", "--continue", "run", "second"],
        ["prune", "--older-than", "1"],
        ["prune", "--older-than", "1", "--dry-run"],
    ],
    ids=["run", "continue", "prune", "dry-run"],
)
def test_writing_commands_on_a_read_only_file_system_name_the_database(
    env: dict[str, str], work: Path, db: Path, args: list[str]
) -> None:
    cli(["run", "first"], env, work)
    before = _listing(db.parent)
    result = _read_only(db.parent, ["--db", str(db), *args], env, work)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == f"harness9-ref: error: --db {db}: the database cannot be written: Read-only file system\n"
    assert _listing(db.parent) == before


def test_copy_into_a_read_only_file_system_names_the_destination(
    env: dict[str, str], work: Path, db: Path, tmp_path: Path
) -> None:
    cli(["run", "first"], env, work)
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    target = shelf / "copy.db"
    result = _read_only(shelf, ["copy", str(db), str(target)], env, work)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == f"harness9-ref: error: copy DST {target}: the database cannot be written: Read-only file system\n"
    assert os.listdir(shelf) == []


def test_the_read_only_refusal_is_in_the_language_of_the_program(env: dict[str, str], work: Path, db: Path) -> None:
    cli(["run", "first"], env, work)
    result = _read_only(db.parent, ["prune", "--older-than", "1"], env, work, HARNESS9_LANG="zh")
    assert result.returncode == 1
    assert result.stderr == f"harness9-ref: 错误：{db}：数据库无法写入：Read-only file system\n"


def test_read_only_commands_work_on_a_read_only_file_system(env: dict[str, str], work: Path, db: Path) -> None:
    sid = session_of(cli(["run", "find the needle"], env, work))
    before = _listing(db.parent)
    listed = _read_only(db.parent, ["sessions"], env, work)
    assert listed.returncode == 0 and listed.stdout.startswith(sid), listed.stderr
    found = _read_only(db.parent, ["search", "needle"], env, work)
    assert found.returncode == 0 and found.stdout.startswith(sid), found.stderr
    shown = _read_only(db.parent, ["show", sid[:8]], env, work)
    assert shown.returncode == 0 and "find the needle" in shown.stdout, shown.stderr
    assert _listing(db.parent) == before


def test_read_only_commands_leave_a_writable_folder_as_it_was(env: dict[str, str], work: Path, db: Path) -> None:
    sid = session_of(cli(["run", "find the needle"], env, work))
    before = _listing(db.parent)
    for args in (["sessions"], ["search", "needle"], ["show", sid]):
        assert cli(args, env, work).returncode == 0
        assert _listing(db.parent) == before  # no -wal or -shm file is left beside it


def test_sessions_without_a_database_creates_nothing(env: dict[str, str], work: Path, db: Path) -> None:
    result = cli(["sessions"], env, work)
    assert result.returncode == 0 and result.stdout == ""
    assert not db.parent.exists()
