"""One running program per session (R-CLI-27): two real programs on one session, the second
refused in one line while the first runs, and the session free again once the first is killed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness9_ref.text import strings_for
from tests.cli.helpers import cli, one_error, session_of, stored
from tests.cli.test_tui_cli import Terminal, ready
from tests.local_server import LocalServer


@contextmanager
def holding(env: dict[str, str], work: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """A ``run`` of ``args`` against a model server that never answers, waiting for it: the run
    has chosen its session (and taken its lock, R-CLI-27a) by the time its request arrives."""
    silent = LocalServer(delay=60).start()
    process = subprocess.Popen(
        [sys.executable, "-m", "harness9_ref", *args], cwd=work, env={**env, "OPENAI_BASE_URL": silent.url},
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not silent.headers:
            assert process.poll() is None, "the holder ended"
            assert time.monotonic() < deadline, "the request never came"
            time.sleep(0.02)
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        silent.close()


def in_use(session: str, lang: str = "en") -> str:
    return strings_for(lang)["err_session_in_use"].format(session=session)


def test_a_second_program_on_a_running_session_is_refused_and_the_session_frees_when_its_holder_is_killed(
    env: dict[str, str], work: Path, db: Path
) -> None:
    """R-CLI-27a, R-CLI-27b: -c and --resume of the session a running program holds stop in one
    line, store nothing, write nothing on standard output; SIGKILL frees the session at once."""
    session = session_of(cli(["--provider", "offline", "run", "first"], env, work))
    with holding(env, work, "-c", "run", "second") as holder:
        for args in (["-c"], ["--resume", session[:8]], ["--resume", session, "--json"]):
            refused = cli(["--provider", "offline", *args, "run", "third"], env, work)
            assert one_error(refused) == in_use(session)
            assert refused.stdout == ""
        zh = cli(["--provider", "offline", "--lang", "zh", "-c", "run", "third"], env, work)
        assert zh.returncode == 1 and zh.stderr.strip().endswith(in_use(session, "zh")), zh.stderr
        other = cli(["--provider", "offline", "run", "elsewhere"], env, work)  # a new session is free
        assert other.returncode == 0 and session_of(other) != session
        assert "third" not in stored(db)[session]
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
    later = cli(["--provider", "offline", "--resume", session, "run", "third"], env, work)
    assert later.returncode == 0, later.stderr
    assert session_of(later) == session
    prompts = [text for text in stored(db)[session] if text in ("first", "second", "third")]
    assert prompts == ["first", "second", "third"]  # the killed run's prompt, then this one: never interleaved


def test_the_json_run_refused_writes_no_event(env: dict[str, str], work: Path) -> None:
    """R-CLI-27b with R-CLI-16c: the refusal comes before the run, so standard output stays empty."""
    session = session_of(cli(["--provider", "offline", "run", "first"], env, work))
    with holding(env, work, "--resume", session, "run", "second"):
        refused = cli(["--provider", "offline", "--json", "-c", "run", "third"], env, work)
    assert one_error(refused) == in_use(session)
    assert [json.loads(line) for line in refused.stdout.splitlines()] == []


def test_a_lock_file_that_cannot_be_opened_is_one_line(env: dict[str, str], work: Path, db: Path) -> None:
    """R-CLI-27b: the lock file is a folder here, so it cannot be opened: one line, exit 1, nothing stored."""
    (db.parent / "session-locks").mkdir(parents=True)
    refused = cli(["--provider", "offline", "run", "first"], env, work)
    message = one_error(refused)
    assert message.startswith(f"{db.parent / 'session-locks'}: the sessions' lock file cannot be opened: "), message
    assert stored(db) == {}


def test_continue_without_a_session_says_it_starts_a_new_one(env: dict[str, str], work: Path, db: Path) -> None:
    """R-CLI-28, R-CLI-52b: one line on standard error naming the folder and --any-folder, in the
    program's language, then a new session; none once there is one."""
    none_here = {lang: strings_for(lang)["cli_continue_none_here"].format(folder=work.resolve()) for lang in ("en", "zh")}
    first = cli(["--provider", "offline", "-c", "run", "first"], env, work)
    assert first.returncode == 0, first.stderr
    assert first.stderr.splitlines()[0] == none_here["en"]
    session = session_of(first)
    assert stored(db)[session][0] == "first"
    again = cli(["--provider", "offline", "-c", "run", "again"], env, work)
    assert none_here["en"] not in again.stderr
    assert session_of(again) == session
    fresh = cli(["--provider", "offline", "run", "fresh"], {**env, "HARNESS9_HOME": str(work.parent / "h1")}, work)
    assert "harness9-ref: -c" not in fresh.stderr  # no -c, nothing said
    home = {**env, "HARNESS9_HOME": str(work.parent / "h2")}
    elsewhere = cli(["--provider", "offline", "--lang", "zh", "--json", "-c", "run", "x"], home, work)
    assert elsewhere.stderr.splitlines()[0] == none_here["zh"]
    assert json.loads(elsewhere.stdout.splitlines()[0])["type"] == "session"  # standard output keeps to the events


def test_the_terminal_ui_holds_its_session_while_it_is_open(env: dict[str, str], work: Path, db: Path) -> None:
    """R-CLI-27a, R-CLI-28: a UI started with -c and nothing to continue says so in its pane; while
    it stays open, -c from another program is refused; after it ends, -c continues its session."""
    term = Terminal(["--provider", "offline", "--lang", "en", "-c"], env, work)
    try:
        term.wait_for(ready)
        assert strings_for("en")["cli_continue_none_here"].format(folder=work.resolve())[:40] in term.text
        term.type("keep me open\r")
        term.wait_for(lambda text: "Offline reply" in text)
        session = next(iter(stored(db)))
        refused = cli(["--provider", "offline", "-c", "run", "meanwhile"], env, work)
        assert one_error(refused) == in_use(session)
        term.type("/exit\r")
        assert term.finish() == 0
    finally:
        term.close()
    later = cli(["--provider", "offline", "-c", "run", "meanwhile"], env, work)
    assert session_of(later) == session
    assert stored(db)[session][0] == "keep me open" and "meanwhile" in stored(db)[session]
