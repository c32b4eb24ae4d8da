"""Finding, listing, showing, searching and expiring sessions from the command line
(SPEC R-CLI-10, R-CLI-12, R-PRUNE-2, R-FIND-1 … R-FIND-3, R-SRCH-1, R-SRCH-3).

The real command in a subprocess, on a database the test fills through a Manager with chosen
ids and times; TZ=UTC makes the listed times fixed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness9_ref.cli import NO_INDEX_NOTICE, NO_MATCH_LINE, main
from harness9_ref.memory.storage import NOT_OURS, Manager
from tests.cli.helpers import cli, one_error, seed, session_of, stored

A1 = "aaaa1111-0000-4000-8000-000000000001"
A2 = "aaaa2222-0000-4000-8000-000000000002"
B1 = "bbbb1111-0000-4000-8000-000000000003"
EMPTY = "cccc1111-0000-4000-8000-000000000004"
T0 = 1_767_225_600  # 2026-01-01 00:00 UTC
DAY = 86400


@pytest.fixture
def three(db: Path, work: Path) -> Path:
    """Three sessions of ``work`` with messages (B1 the newest) and one without."""
    seed(
        db,
        [
            (A1, T0 + 60, ["fix the parser", "and the lexer", "the parser again"]),
            (A2, T0 + 120, ["Deploy to staging\nwith care"]),
            (B1, T0 + 3600, ["  \n  write the release notes for version 2 of the parser and everything else"]),
            (EMPTY, T0 + 7200, []),
        ],
        work,
    )
    return db


# R-CLI-10: --resume TEXT, --continue, drafts


def test_resume_takes_a_unique_prefix(env: dict[str, str], work: Path, three: Path) -> None:
    result = cli(["--provider", "offline", "--resume", "BBBB", "run", "more"], env, work)
    assert result.returncode == 0, result.stderr
    assert session_of(result) == B1
    assert stored(three)[B1][-2] == "more"


def test_an_ambiguous_prefix_is_one_line_naming_the_candidates(env: dict[str, str], work: Path, three: Path) -> None:
    message = one_error(cli(["--provider", "offline", "--resume", "aaaa", "run", "x"], env, work))
    assert A1 in message and A2 in message and B1 not in message
    assert len(stored(three)[A1]) == 6


@pytest.mark.parametrize("text", ["dddd", "not-an-id", "dddd1111-0000-4000-8000-000000000005"])
def test_an_unknown_or_malformed_resume_is_one_line(env: dict[str, str], work: Path, three: Path, text: str) -> None:
    one_error(cli(["--provider", "offline", "--resume", text, "run", "x"], env, work))
    assert len(stored(three)) == 4


def test_continue_resumes_the_most_recent_session_with_messages(env: dict[str, str], work: Path, three: Path) -> None:
    result = cli(["--provider", "offline", "-c", "run", "again"], env, work)
    assert result.returncode == 0 and session_of(result) == B1  # EMPTY is newer but holds nothing
    result = cli(["--provider", "offline", "run", "again", "--continue"], env, work)
    assert session_of(result) == B1


def test_continue_without_a_session_starts_a_new_one(env: dict[str, str], work: Path, db: Path) -> None:
    result = cli(["--provider", "offline", "--continue", "run", "first"], env, work)
    assert result.returncode == 0
    messages = stored(db)
    assert list(messages) == [session_of(result)] and messages[session_of(result)][0] == "first"


def test_resume_and_continue_together_are_a_usage_error(env: dict[str, str], work: Path, db: Path) -> None:
    message = one_error(cli(["--resume", A1, "-c", "run", "x"], env, work), status=2)
    assert message == "--resume and --continue cannot be used together"
    assert not db.exists()


def test_a_failed_start_stores_nothing(env: dict[str, str], work: Path, three: Path) -> None:
    result = cli(["--provider", "offline"], env, work)  # the UI without a terminal
    assert result.returncode == 1
    result = cli(["--provider", "offline", "--max-turns", "1", "run", "x"], env, work, HARNESS9_LANG="fr")
    assert one_error(result) == "HARNESS9_LANG: expected zh or en, got 'fr'"
    assert sorted(stored(three)) == [A1, A2, B1, EMPTY]


# R-CLI-12: sessions, show, search, prune


def test_sessions_lists_those_with_messages_newest_first(env: dict[str, str], work: Path, three: Path) -> None:
    result = cli(["sessions"], env, work)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines() == [
        f"{B1}  2026-01-01 01:00  2 messages  {work}  offline  write the release notes for version 2 of the parser and eve\u2026",
        f"{A2}  2026-01-01 00:02  2 messages  {work}  offline  Deploy to staging",
        f"{A1}  2026-01-01 00:01  6 messages  {work}  offline  fix the parser",
    ]
    assert cli(["sessions", "--limit", "1"], env, work).stdout.splitlines() == [
        f"{B1}  2026-01-01 01:00  2 messages  {work}  offline  write the release notes for version 2 of the parser and eve\u2026"
    ]
    assert cli(["sessions", "--limit", "0"], env, work).returncode == 2


@pytest.mark.parametrize(("lang", "word"), [("en", "1 message"), ("zh", "1 条消息")])
def test_one_message_is_singular(env: dict[str, str], work: Path, db: Path, lang: str, word: str) -> None:
    """R-CLI-51: a run whose model failed at once stores only its prompt: ``1 message``, not ``1 messages``."""
    failed = cli(["--provider", "openai", "run", "hello"], env, work, OPENAI_API_KEY="k", OPENAI_BASE_URL="http://127.0.0.1:9")
    assert failed.returncode == 1 and stored(db)[session_of(failed)] == ["hello"]
    result = cli(["--lang", lang, "sessions"], env, work)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(_updated(db)))
    assert result.stdout == f"{session_of(failed)}  {when}  {word}  {work}  openai:openai/gpt-4o-mini@127.0.0.1:9  hello\n"


def _updated(db: Path) -> int:
    with Manager(db) as manager:
        return manager.recent_sessions()[0].updated_at


def test_sessions_reads_the_database_of_db(env: dict[str, str], work: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    seed(other, [(A1, T0, ["elsewhere"])])  # a session whose folder is unknown: listed with every folder's
    result = cli(["sessions", "--any-folder", "--db", str(other)], env, work)
    assert result.stdout == f"{A1}  2026-01-01 00:00  2 messages  (folder unknown)  (provider unknown)  elsewhere\n"
    assert cli(["--db", str(other), "sessions", "--any-folder"], env, work).stdout == result.stdout


def test_show_prints_the_conversation_as_the_pane_does(env: dict[str, str], work: Path, three: Path) -> None:
    result = cli(["show", "aaaa1"], env, work)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines() == [
        "> fix the parser",
        "re: fix the parser",
        "> and the lexer",
        "re: and the lexer",
        "> the parser again",
        "re: the parser again",
        f"started in {work} with offline",  # R-CLI-55
    ]
    shown = cli(["show", A2], env, work).stdout
    assert shown == f"> Deploy to staging\nwith care\nre: Deploy to staging\nwith care\nstarted in {work} with offline\n"


def test_show_of_an_ambiguous_or_unknown_session_fails(env: dict[str, str], work: Path, three: Path) -> None:
    message = one_error(cli(["show", "aaaa"], env, work))
    assert A1 in message and A2 in message
    one_error(cli(["show", "eeee"], env, work))
    one_error(cli(["show", "x"], env, work))


def test_search_prints_one_line_per_hit(env: dict[str, str], work: Path, three: Path) -> None:
    result = cli(["search", "THE", "parser"], env, work)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert [line.split("  ")[0] for line in lines] == [A1, B1]  # A1 has four matching messages, B1 two
    assert lines[0] == f"{A1}  2026-01-01 00:01  re: the parser again"  # the newest matching message
    assert re.fullmatch(rf"{B1}  2026-01-01 01:00  \S.*parser.*", lines[1])
    assert cli(["search", "parser", "--limit", "1"], env, work).stdout.splitlines() == [lines[0]]


def test_search_without_a_hit_says_so_and_exits_1(env: dict[str, str], work: Path, three: Path) -> None:
    result = cli(["search", "kubernetes", "pod"], env, work)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == NO_MATCH_LINE.format(query="kubernetes pod") + "\n"
    assert NO_MATCH_LINE == "harness9-ref: no session matches: {query}"
    shown = cli(["--raw", "search", "k8s\x1b[2J"], env, work)  # the program's own line: always safe
    assert shown.stderr == "harness9-ref: no session matches: k8s\ufffd[2J\n"


def test_a_blank_query_is_an_error(env: dict[str, str], work: Path, three: Path) -> None:
    one_error(cli(["search", "  "], env, work))
    assert cli(["search"], env, work).returncode == 2


def test_search_says_once_when_it_scans(
    three: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(Manager, "search_indexed", False, raising=False)
    assert main(["--db", str(three), "search", "parser"]) == 0
    captured = capsys.readouterr()
    assert captured.err == NO_INDEX_NOTICE + "\n"
    assert NO_INDEX_NOTICE == (
        "harness9-ref: no usable full-text index (no FTS5 trigram tokenizer in this SQLite, or a foreign index);"
        " searching by scan"
    )
    assert len(captured.out.splitlines()) == 2


def test_prune_dry_run_then_prune(env: dict[str, str], work: Path, db: Path) -> None:
    now = int(time.time())
    seed(db, [(A1, now - 10 * DAY, ["old", "older"]), (A2, now - 9 * DAY, []), (B1, now - 3600, ["new"])])
    result = cli(["prune", "--older-than", "7", "--dry-run"], env, work)
    assert (result.returncode, result.stdout, result.stderr) == (0, "would prune 2 sessions, 4 messages\n", "")
    assert sorted(stored(db)) == [A1, A2, B1]
    result = cli(["prune", "--older-than", "7"], env, work)
    assert result.returncode == 0
    assert re.fullmatch(r"pruned 2 sessions, 4 messages, \d+(\.\d)?[KM]?B reclaimed\n", result.stdout)
    assert sorted(stored(db)) == [B1]
    assert cli(["prune", "--older-than", "7"], env, work).stdout == "pruned 0 sessions, 0 messages, 0B reclaimed\n"


@pytest.mark.parametrize("args", [["prune"], ["prune", "--older-than", "0"], ["prune", "--older-than", "x"]])
def test_prune_needs_a_positive_number_of_days(env: dict[str, str], work: Path, args: list[str]) -> None:
    one_error(cli(args, env, work), status=2)


# R-PRUNE-2: HARNESS9_SESSION_TTL_DAYS


def test_the_ttl_prunes_before_continue_is_resolved(env: dict[str, str], work: Path, db: Path) -> None:
    now = int(time.time())
    seed(db, [(A1, now - 3 * DAY, ["stale"]), (B1, now - 5 * DAY, ["staler"])])
    result = cli(["--provider", "offline", "-c", "run", "fresh"], env, work, HARNESS9_SESSION_TTL_DAYS="2")
    assert result.returncode == 0
    lines = result.stderr.splitlines()
    assert re.fullmatch(r"pruned 2 sessions, 4 messages, \d+(\.\d)?[KM]?B reclaimed", lines[0]), lines
    sid = session_of(result)
    assert sid not in (A1, B1) and sorted(stored(db)) == [sid]
    again = cli(["--provider", "offline", "-c", "run", "again"], env, work, HARNESS9_SESSION_TTL_DAYS="2")
    assert session_of(again) == sid and len(again.stderr.splitlines()) == 1  # nothing pruned: no line


@pytest.mark.parametrize("value", ["0", "-1", "x", "1.5"])
def test_an_invalid_ttl_is_an_error(env: dict[str, str], work: Path, value: str) -> None:
    message = one_error(cli(["--provider", "offline", "run", "x"], env, work, HARNESS9_SESSION_TTL_DAYS=value))
    assert message == f"HARNESS9_SESSION_TTL_DAYS: expected a positive number of days, got {value!r}"


def test_a_reader_that_stops_early_is_no_error(env: dict[str, str], work: Path, db: Path) -> None:
    seed(db, [(A1, T0, [f"prompt {i} " + "x" * 1000 for i in range(200)])])  # 400 KB: more than a pipe holds
    process = subprocess.Popen(
        [sys.executable, "-m", "harness9_ref", "show", A1],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=work,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(9) == b"> prompt "  # ``harness9-ref show … | head -c 9``
    process.stdout.close()
    assert process.wait(timeout=30) == 0
    assert process.stderr.read() == b""


@pytest.mark.parametrize("args", [["sessions"], ["--provider", "offline", "run", "hi"]])
def test_a_foreign_db_is_one_line_and_left_as_it_was(
    env: dict[str, str], work: Path, tmp_path: Path, args: list[str]
) -> None:
    foreign = tmp_path / "notes.db"
    shutil.copy2(Path(__file__).resolve().parents[2] / "fixtures" / "sessions" / "foreign-tables.db", foreign)
    before, mtime = foreign.read_bytes(), foreign.stat().st_mtime_ns
    result = cli(["--db", str(foreign), *args], env, work)
    assert one_error(result) == f"--db {foreign}: {NOT_OURS}"
    assert (foreign.read_bytes(), foreign.stat().st_mtime_ns) == (before, mtime)
