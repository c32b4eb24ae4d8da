"""The real command in a subprocess (harness9_ref/cli; SPEC R-CLI-1 … R-CLI-9).

Every test runs ``python -m harness9_ref`` with a private HARNESS9_HOME and no API key, and
checks that no traceback ever reaches standard error.
"""

from __future__ import annotations

import importlib
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness9_ref import __version__
from harness9_ref.cli import offline_notice
from harness9_ref.memory.storage import Manager
from harness9_ref.tools import INTERRUPTED_NOTE
from tests.cli.helpers import ROOT, SESSION, cli, session_of


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    (path / "notes.txt").write_text("hello world\nsecond line\n", encoding="utf-8")
    return path


def test_run_without_a_key_uses_the_offline_provider_and_says_so(env: dict[str, str], workdir: Path) -> None:
    result = cli(["run", "hello"], env, workdir)
    assert result.returncode == 0
    assert result.stdout.startswith('Offline reply to "hello".\nThis conversation holds 2 messages')
    assert result.stdout.endswith("Ctrl+C interrupts a turn.\n")
    lines = result.stderr.splitlines()
    assert lines[0] == offline_notice("OPENAI_API_KEY")
    assert len(lines) == 2
    session_of(result)


def test_the_notice_is_printed_when_the_chosen_providers_key_is_missing(env: dict[str, str], workdir: Path) -> None:
    result = cli(["run", "hi"], env, workdir, LLM_MODEL="claude-sonnet-4", OPENAI_API_KEY="sk-unused")
    assert result.returncode == 0 and result.stderr.splitlines()[0] == offline_notice("ANTHROPIC_API_KEY")
    result = cli(["--provider", "anthropic", "run", "hi"], env, workdir, ANTHROPIC_API_KEY="")
    assert result.returncode == 1  # R-CLI-13: a provider asked for by name needs its key
    assert result.stderr == "harness9-ref: error: --provider anthropic needs ANTHROPIC_API_KEY\n"


def test_explicit_offline_prints_no_notice(env: dict[str, str], workdir: Path) -> None:
    result = cli(["--provider", "offline", "run", "hi"], env, workdir)
    assert result.returncode == 0
    assert result.stderr.splitlines()[:-1] == []


def test_run_keeps_its_session_and_resume_continues_it(env: dict[str, str], workdir: Path, tmp_path: Path) -> None:
    first = cli(["run", "first question", "--provider", "offline"], env, workdir)
    sid = session_of(first)
    second = cli(["--provider", "offline", "--resume", sid, "run", "second question"], env, workdir)
    assert session_of(second) == sid
    assert "This conversation holds 4 messages" in second.stdout
    assert "  2. user, 3 tokens: first question" in second.stdout
    third = cli(["--provider", "offline", "--resume", sid, "run", "third"], env, workdir)
    assert "This conversation holds 6 messages" in third.stdout
    with Manager(tmp_path / "home" / "sessions.db") as manager:
        stored = manager.open_session(sid).get_messages(0)
    assert [m.content for m in stored if m.role == "user"] == ["first question", "second question", "third"]
    assert len(stored) == 6


def test_db_option_places_the_database(env: dict[str, str], workdir: Path, tmp_path: Path) -> None:
    db = tmp_path / "elsewhere" / "my.db"
    db.parent.mkdir()  # R-CLI-13: --db creates no folder
    result = cli(["--provider", "offline", "--db", str(db), "run", "hi"], env, workdir)
    assert result.returncode == 0
    assert db.is_file() and not (tmp_path / "home").exists()
    with Manager(db) as manager:
        assert manager.open_session(session_of(result)).get_messages(0)[0].content == "hi"


def test_tool_activity_goes_to_stderr_and_the_text_to_stdout(env: dict[str, str], workdir: Path) -> None:
    result = cli(["--provider", "offline", "run", "read notes.txt"], env, workdir)
    assert result.returncode == 0
    assert result.stdout == (
        "Reading notes.txt.\n"
        "The tool calls of the last step returned:\n"
        '- read_file notes.txt: 2 lines, 24 B; first line: "hello world"\n'
        "That is all the offline provider can say about them; ask for another file or command.\n"
    )
    lines = result.stderr.splitlines()
    assert lines[:2] == ['\u2192 read_file {"path": "notes.txt"}', "\u2190 read_file: hello world (2 lines, 24 B)"]
    session_of(result)


def test_the_tool_line_and_the_reply_agree_on_a_shortened_result(env: dict[str, str], workdir: Path) -> None:
    """R-TUI-24b: a small window shortens the result in the request; the reply says so, with the tool line's size."""
    (workdir / "big.txt").write_text("# big\n" + "a line of the file\n" * 2000, encoding="utf-8")
    result = cli(["--provider", "offline", "--context-window", "2000", "run", "read big.txt"], env, workdir)
    assert result.returncode == 0
    assert "\u2190 read_file: # big (2001 lines, 38 KB)" in result.stderr.splitlines()
    [report] = [line for line in result.stdout.splitlines() if line.startswith("- read_file big.txt: ")]
    assert report.endswith(' KB, shortened from 38 KB to fit the context window; first line: "# big"'), report


def test_workdir_option(env: dict[str, str], workdir: Path, tmp_path: Path) -> None:
    result = cli(["--provider", "offline", "--yes", "--workdir", str(workdir), "run", "run pwd"], env, tmp_path)
    assert result.returncode == 0
    assert f"\u2190 bash: {workdir}" in result.stderr.splitlines()


@pytest.mark.parametrize(
    ("locale", "notices"),
    [
        (
            {"LANG": "zh_CN.UTF-8"},
            [
                "\u26a1 上下文已压缩：总结失败，丢弃了较早的消息 \u2014 1.8K \u2192 1.6K tokens\uff088 \u2192 8 条消息\uff09",
                "\u26a1 上下文已压缩：总结了较早的对话 \u2014 2.3K \u2192 1.6K tokens\uff0810 \u2192 8 条消息\uff09",
            ],
        ),
        (
            {"LANG": "zh_CN.UTF-8", "LC_ALL": "en_US.UTF-8"},  # R-LANG-1: LC_ALL wins over LANG
            [
                "\u26a1 context compacted: the summary failed, earlier messages dropped"
                " \u2014 1.8K \u2192 1.6K tokens (8 \u2192 8 messages)",
                "\u26a1 context compacted: earlier conversation summarized \u2014 2.3K \u2192 1.6K tokens (10 \u2192 8 messages)",
            ],
        ),
    ],
)
def test_compaction_is_reported_on_stderr(
    env: dict[str, str], workdir: Path, locale: dict[str, str], notices: list[str]
) -> None:
    args = ["--provider", "offline", "--context-window", "2000"]
    env = {**env, **locale}
    sid = session_of(cli([*args, "run", "one"], env, workdir))
    seen = []
    for prompt in ("two", "three", "four", "five"):
        result = cli([*args, "--resume", sid, "run", prompt], env, workdir)
        seen += [line for line in result.stderr.splitlines() if line.startswith("\u26a1 ")]
    # Long-session mode (R-LONG-1): each run starts from the calibration stored with the session (R-LONG-16).
    # The first summary would replace the three bytes of "one" by a summary: it does not shrink the
    # context, so it fails and the fallback drops the message (R-FOLD-6); the next one is kept.
    assert seen == notices


def test_version(env: dict[str, str], workdir: Path) -> None:
    result = cli(["--version"], env, workdir)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"harness9-ref {__version__}\n", "")


def test_help(env: dict[str, str], workdir: Path) -> None:
    result = cli(["--help"], env, workdir)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.startswith("usage: harness9-ref [OPTIONS]                  start the terminal UI\n")
    for option in (
        "--model",
        "--provider",
        "--db",
        "--context-window",
        "--resume",
        "--workdir",
        "--max-turns",
        "--version",
        "--continue",
        "--yes",
        "--lang",
        "sessions",
        "show",
        "search",
        "prune",
        "HARNESS9_SESSION_TTL_DAYS",
    ):
        assert option in result.stdout
    assert "not a sandbox" in result.stdout


@pytest.mark.parametrize(
    "args",
    [["--bogus"], ["--context-window", "-5", "run", "x"], ["--provider", "nope"], ["run"], ["frobnicate"]],
)
def test_bad_options_exit_2_with_one_line(env: dict[str, str], workdir: Path, args: list[str]) -> None:
    result = cli(args, env, workdir)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("harness9-ref: error: ")


def test_an_unknown_resume_id_is_a_one_line_error(env: dict[str, str], workdir: Path, tmp_path: Path) -> None:
    unknown = "dddd1111-0000-4000-8000-000000000005"
    result = cli(["--provider", "offline", "--resume", unknown, "run", "x"], env, workdir)
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("harness9-ref: error: no session with id ") and unknown in result.stderr
    result = cli(["--provider", "offline", "--resume", "nope", "run", "x"], env, workdir)
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("harness9-ref: error: ")


def test_a_missing_workdir_is_a_one_line_error(env: dict[str, str], workdir: Path) -> None:
    result = cli(["--provider", "offline", "--workdir", "missing", "run", "x"], env, workdir)
    assert (result.returncode, result.stderr) == (
        1,
        f"harness9-ref: error: --workdir {workdir / 'missing'}: not a directory\n",
    )


def test_a_broken_database_is_a_one_line_error(env: dict[str, str], workdir: Path, tmp_path: Path) -> None:
    db = tmp_path / "broken.db"
    db.write_bytes(b"this is not an sqlite database at all" * 100)
    result = cli(["--provider", "offline", "--db", str(db), "run", "x"], env, workdir)
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("harness9-ref: error: ")
    assert str(db) in result.stderr


def test_a_failed_run_is_a_one_line_error_and_keeps_the_prompt(
    env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = cli(  # without retries (R-ENG-22), so the refused connection is the one line
        ["--max-retries", "0", "run", "hello"],
        env,
        workdir,
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1",
    )
    assert result.returncode == 1
    assert result.stdout == ""
    error, _session = result.stderr.splitlines()
    assert error.startswith("harness9-ref: error: ") and "sk-test" not in error
    sid = session_of(result)
    with Manager(tmp_path / "home" / "sessions.db") as manager:
        assert [m.content for m in manager.open_session(sid).get_messages(0)] == ["hello"]


def test_the_ui_without_a_terminal_is_a_one_line_error(env: dict[str, str], workdir: Path, tmp_path: Path) -> None:
    result = cli(["--provider", "offline"], env, workdir)
    assert result.returncode == 1
    assert (
        result.stderr
        == "harness9-ref: error: the terminal UI needs a terminal; use 'harness9-ref run PROMPT' without one\n"
    )
    assert not (tmp_path / "home").exists()


def test_ctrl_c_in_run_mode_cancels_saves_and_exits_130(env: dict[str, str], workdir: Path, tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "harness9_ref", "--provider", "offline", "--yes", "run", "run sleep 1; echo slept"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=workdir,
    )
    try:
        assert process.stderr is not None
        first = process.stderr.readline()  # the tool call is running when it is printed
        assert first.startswith("\u2192 bash ")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    assert "Traceback" not in err
    assert process.returncode == 130
    lines = err.splitlines()
    assert lines[-2] == "harness9-ref: error: cancelled"
    sid = SESSION.fullmatch(lines[-1])
    assert sid is not None
    assert out == "Running `sleep 1; echo slept`.\n"
    with Manager(tmp_path / "home" / "sessions.db") as manager:
        stored = manager.open_session(sid.group(1)).get_messages(0)
    contents = [m.content for m in stored]
    assert contents[:2] == ["run sleep 1; echo slept", "Running `sleep 1; echo slept`."]
    assert contents[2] == "(no output)" + INTERRUPTED_NOTE  # R-INT-3: the command is interrupted, not awaited


def test_the_console_script_entry_point(env: dict[str, str]) -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    entry = re.search(r'^\[project\.scripts\]\nharness9-ref = "([\w.]+):(\w+)"$', pyproject, re.M)
    assert entry is not None, "pyproject.toml has no [project.scripts] harness9-ref entry"
    module, name = entry.groups()
    main = getattr(importlib.import_module(module), name)
    assert main(["--version"]) == 0


def test_main_returns_the_status_instead_of_raising(capsys: pytest.CaptureFixture[str]) -> None:
    from harness9_ref.cli import main

    assert main(["--bogus"]) == 2
    assert capsys.readouterr().err == "harness9-ref: error: unrecognized arguments: --bogus\n"


def test_python_dash_m_runs_the_same_program(env: dict[str, str], workdir: Path) -> None:
    start = time.monotonic()
    result = cli(["--version"], env, workdir)
    assert result.stdout == f"harness9-ref {__version__}\n"
    assert time.monotonic() - start < 10
