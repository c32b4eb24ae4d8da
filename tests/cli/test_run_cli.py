"""``run`` as a daily tool: standard input, clear refusals, approval and signals
(SPEC R-CLI-11, R-CLI-13, R-CLI-14, R-APPR-3, R-INT-2, R-INT-4).

The real command in a subprocess with a private HARNESS9_HOME and no API key. The interrupt
tests start a real process tree (a shell that ignores SIGTERM and its ``sleep``), signal the
program, and look in /proc for the ``sleep`` by its unique argument afterwards.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness9_ref.cli import EXIT_NOT_RUN, NOT_RUN_LINE, main, offline_notice
from harness9_ref.tools import APPROVAL_REQUIRED, INTERRUPTED_NOTE
from tests.cli.helpers import EXCEPTION_NAME, SESSION, cli, environment, one_error, session_of, stored

PROC = Path("/proc")


OFFLINE = ["--provider", "offline"]


def prompts_of(db: Path, session_id: str) -> list[str]:
    return stored(db)[session_id]


# R-CLI-11: the prompt from standard input


def test_run_dash_reads_the_prompt_from_standard_input(env: dict[str, str], work: Path, db: Path) -> None:
    result = cli([*OFFLINE, "run", "-"], env, work, input=b"what does this do?\n")
    assert result.returncode == 0, result.stderr
    assert prompts_of(db, session_of(result))[0] == "what does this do?\n"


def test_piped_input_is_appended_after_a_blank_line(env: dict[str, str], work: Path, db: Path) -> None:
    result = cli([*OFFLINE, "run", "review this"], env, work, input=b"--- a\n+++ b\n")
    assert prompts_of(db, session_of(result))[0] == "review this\n\n--- a\n+++ b\n"


def test_a_regular_file_on_standard_input_is_appended(env: dict[str, str], work: Path, db: Path) -> None:
    log = work / "log.txt"
    log.write_bytes(b"caf\xe9 failed\n")  # not UTF-8: replaced, not an error
    with log.open("rb") as stdin:
        result = cli([*OFFLINE, "run", "why?"], env, work, stdin=stdin)
    assert prompts_of(db, session_of(result))[0] == "why?\n\ncaf\ufffd failed\n"


def test_empty_input_appends_nothing(env: dict[str, str], work: Path, db: Path) -> None:
    result = cli([*OFFLINE, "run", "hi"], env, work, input=b"")
    assert prompts_of(db, session_of(result))[0] == "hi"


def test_a_terminal_on_standard_input_is_not_read(env: dict[str, str], work: Path, db: Path) -> None:
    leader, follower = os.openpty()
    try:
        result = cli([*OFFLINE, "run", "hi"], env, work, stdin=follower)
    finally:
        os.close(follower)
        os.close(leader)
    assert prompts_of(db, session_of(result))[0] == "hi"


@pytest.mark.parametrize(("prompt", "data"), [("-", b""), ("-", b" \n\t\n"), ("  ", None), ("", b"")])
def test_an_empty_prompt_is_a_usage_error(
    env: dict[str, str], work: Path, db: Path, prompt: str, data: bytes | None
) -> None:
    assert one_error(cli([*OFFLINE, "run", prompt], env, work, input=data), status=2) == "PROMPT is empty"
    assert not db.exists()


# R-CLI-13: clear refusals


@pytest.mark.parametrize(("provider", "key"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")])
def test_an_explicit_provider_without_its_key_is_an_error(
    env: dict[str, str], work: Path, db: Path, provider: str, key: str
) -> None:
    result = cli(["--provider", provider, "run", "x"], env, work, OPENAI_API_KEY="", ANTHROPIC_API_KEY="")
    assert one_error(result) == f"--provider {provider} needs {key}"
    assert not db.exists()


def test_the_offline_notice_names_only_the_default_providers_key(env: dict[str, str], work: Path) -> None:
    result = cli(["run", "hi"], env, work)
    assert result.stderr.splitlines()[0] == offline_notice("OPENAI_API_KEY")
    assert offline_notice("OPENAI_API_KEY") == (
        "harness9-ref: no API key set (OPENAI_API_KEY); using the offline provider"
    )
    result = cli(["run", "hi"], env, work, LLM_MODEL="claude-sonnet-4", OPENAI_API_KEY="sk-unused")
    assert result.stderr.splitlines()[0] == "harness9-ref: no API key set (ANTHROPIC_API_KEY); using the offline provider"


@pytest.mark.parametrize("url", ["localhost:8080/v1", "http://", "ftp://example.com/v1", "https:///v1"])
def test_an_invalid_base_url_is_an_error(env: dict[str, str], work: Path, url: str) -> None:
    result = cli(["run", "x"], env, work, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=url)
    assert one_error(result) == f"openai: invalid base URL {url!r}: expected http:// or https:// and a host"
    result = cli(["--model", "claude-x", "run", "x"], env, work, ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=url)
    assert one_error(result).startswith("anthropic: invalid base URL ")


def test_a_leading_tilde_means_the_home_folder(env: dict[str, str], work: Path, tmp_path: Path) -> None:
    home = tmp_path / "user"
    home.mkdir()
    result = cli([*OFFLINE, "run", "hi"], env, work, HOME=str(home), HARNESS9_HOME="~/h9")
    assert list(stored(home / "h9" / "sessions.db")) == [session_of(result)]
    result = cli([*OFFLINE, "--db", "~/my.db", "run", "hi"], env, work, HOME=str(home))
    assert list(stored(home / "my.db")) == [session_of(result)]
    assert not (work / "~").exists()


def test_a_db_in_a_missing_folder_is_an_error_and_creates_nothing(env: dict[str, str], work: Path, tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "x.db"
    message = one_error(cli([*OFFLINE, "--db", str(target), "run", "hi"], env, work))
    assert message == f"--db {target}: the folder {target.parent} does not exist"
    message = one_error(cli(["sessions"], env, work, HARNESS9_DB=str(target)))
    assert message.startswith("HARNESS9_DB ")
    assert not (tmp_path / "no").exists() and not (tmp_path / "home").exists()


@pytest.mark.parametrize("url", ["xyz://me:secret@db.example/h9", "sqlite:///tmp/x.db"])
def test_a_database_url_is_an_error(env: dict[str, str], work: Path, url: str) -> None:
    scheme = url.split(":")[0]
    message = one_error(cli([*OFFLINE, "--db", url, "run", "hi"], env, work))
    assert message == f"--db: {scheme}:// URLs are not supported; give the path of an SQLite file or a postgresql:// URL"
    message = one_error(cli(["sessions"], env, work, HARNESS9_DB=url))
    assert message.startswith("HARNESS9_DB: ") and "secret" not in message
    assert list(work.iterdir()) == []  # no folder named "postgresql:"


def test_the_context_window_has_an_upper_bound(env: dict[str, str], work: Path) -> None:
    message = one_error(cli([*OFFLINE, "--context-window", "100000001", "run", "x"], env, work), status=2)
    assert message == "argument --context-window: expected at most 100000000 tokens, got '100000001'"
    assert cli([*OFFLINE, "--context-window", "100000000", "run", "x"], env, work).returncode == 0


# R-APPR-3, R-CLI-14: commands run only with --yes


def test_without_yes_commands_are_refused_and_the_run_goes_on(env: dict[str, str], work: Path, db: Path) -> None:
    result = cli([*OFFLINE, "run", "run echo hi > made.txt"], env, work)
    assert result.returncode == EXIT_NOT_RUN == 3  # R-CLI-50: a script can tell nothing was skipped only by 0
    lines = result.stderr.splitlines()
    assert lines[0].startswith("\u2192 bash ")
    assert lines[1] == NOT_RUN_LINE.format(command="echo hi > made.txt")
    assert lines[1] == "harness9-ref: not run (needs --yes): echo hi > made.txt"
    assert lines[2].startswith("\u2190 bash: error: running commands needs")
    assert not (work / "made.txt").exists()
    assert prompts_of(db, session_of(result))[2] == APPROVAL_REQUIRED


@pytest.mark.parametrize(("args", "extra"), [(["--yes"], {}), ([], {"HARNESS9_YES": "1"})])
def test_yes_runs_commands(env: dict[str, str], work: Path, args: list[str], extra: dict[str, str]) -> None:
    result = cli([*OFFLINE, *args, "run", "run echo hi > made.txt"], {**env, **extra}, work)
    assert result.returncode == 0 and "not run" not in result.stderr
    assert (work / "made.txt").read_text() == "hi\n"


def test_harness9_yes_other_than_1_asks(env: dict[str, str], work: Path) -> None:
    result = cli([*OFFLINE, "run", "run echo hi"], env, work, HARNESS9_YES="0")
    assert "harness9-ref: not run (needs --yes): echo hi" in result.stderr.splitlines()
    assert result.returncode == EXIT_NOT_RUN


def test_a_refused_change_is_status_3_and_a_failed_run_stays_1(env: dict[str, str], work: Path) -> None:
    """R-CLI-50: a change refused for want of --yes is as a command; a failure of the run wins over it."""
    result = cli([*OFFLINE, "run", "write notes.txt hello"], env, work)
    assert result.returncode == EXIT_NOT_RUN and not (work / "notes.txt").exists()
    failed = cli([*OFFLINE, "--max-turns", "1", "run", "run echo hi"], env, work)
    assert "not run (needs --yes)" in failed.stderr and failed.returncode == 1


@pytest.mark.parametrize(("args", "extra", "status"), [(["--lang", "fr"], {}, 2), ([], {"HARNESS9_LANG": "de"}, 1)])
def test_an_unknown_language_is_an_error(
    env: dict[str, str], work: Path, args: list[str], extra: dict[str, str], status: int
) -> None:
    one_error(cli([*OFFLINE, *args, "run", "x"], {**env, **extra}, work), status=status)


# R-INT-4, R-INT-2: signals end the run and every process of its commands


def processes_with(tag: str) -> list[int]:
    found = []
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if tag.encode() in cmdline and state != "Z":
                found.append(int(entry.name))
    return found


def wait_for(condition: object, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.02)
    raise AssertionError("timed out")


@pytest.mark.skipif(not PROC.is_dir(), reason="needs /proc to find the command's processes")
@pytest.mark.parametrize(
    ("signum", "status", "times"), [(signal.SIGINT, 130, 1), (signal.SIGTERM, 143, 1), (signal.SIGINT, 130, 2)]
)
def test_a_signal_interrupts_a_command_that_ignores_sigterm(
    env: dict[str, str], work: Path, db: Path, signum: int, status: int, times: int
) -> None:
    tag = f"30.{random.randrange(10**8):08d}"  # sleep's argument, unique to this test
    command = f"trap '' TERM; echo $$ > started; sleep {tag}; echo finished"
    process = subprocess.Popen(
        [sys.executable, "-m", "harness9_ref", *OFFLINE, "--yes", "run", f"run {command}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=work,
    )
    try:
        wait_for(lambda: (work / "started").exists() and processes_with(tag), 20)
        start = time.monotonic()
        for _ in range(times):  # a second Ctrl+C must not leave the command behind
            process.send_signal(signum)
            time.sleep(0.05)
        out, err = process.communicate(timeout=10)
        elapsed = time.monotonic() - start
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = err.decode()
    assert EXCEPTION_NAME.search(text) is None, text
    assert process.returncode == status
    assert elapsed < 3, elapsed
    assert processes_with(tag) == []
    assert text.splitlines()[-2] == "harness9-ref: error: cancelled"
    messages = prompts_of(db, session_of(subprocess.CompletedProcess([], status, out.decode(), text)))
    assert messages[0] == f"run {command}"
    assert messages[-1].endswith(INTERRUPTED_NOTE) and "finished" not in messages[-1]


@pytest.mark.skipif(not PROC.is_dir(), reason="needs /proc to find the command's processes")
def test_a_background_job_ends_with_the_program(env: dict[str, str], work: Path) -> None:
    tag = f"30.{random.randrange(10**8):08d}"
    result = cli([*OFFLINE, "--yes", "run", f"run sleep {tag} >/dev/null 2>&1 & echo started"], env, work)
    assert result.returncode == 0, result.stderr
    assert "\u2190 bash: started" in result.stderr.splitlines()
    assert processes_with(tag) == []


def test_lang_en_gives_the_english_compaction_notice(
    tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in environment(tmp_path).items():
        monkeypatch.setenv(name, value)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LLM_MODEL", "HARNESS9_LANG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(work)
    args = ["--provider", "offline", "--context-window", "2000", "--lang", "en"]
    session: list[str] = []
    notices = []
    for prompt in ("one", "two", "three", "four", "five"):  # in process: five runs in well under a second
        assert main([*args, *(["--resume", session[0]] if session else []), "run", prompt]) == 0
        err = capsys.readouterr().err
        found = SESSION.search(err)
        assert found is not None
        session[:] = [found.group(1)]
        notices += [line for line in err.splitlines() if line.startswith("\u26a1 ")]
    assert notices == [  # the first summary would not shrink "one" (R-FOLD-6)
        "\u26a1 context compacted: the summary failed, earlier messages dropped"
        " \u2014 1.8K \u2192 1.6K tokens (8 \u2192 8 messages)",
        "\u26a1 context compacted: earlier conversation summarized \u2014 2.3K \u2192 1.6K tokens (10 \u2192 8 messages)",
    ]
