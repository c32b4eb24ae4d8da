"""``harness9-ref fork SESSION [--at N]`` as a process on a real SQLite file (SPEC R-FORK-1, R-FORK-2).

It prints the new session's id and nothing else; every refusal is one line, exit 1 (or 2 for a
bad option), and leaves the database exactly as it was: no new session, no new file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

import pytest

from harness9_ref.memory.storage import is_session_id
from tests.cli.helpers import cli, seed, session_of, stored
from tests.cli.test_durable_cli import _read_only

SOURCE: Final = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
OTHER: Final = "aaaabbbb-aaaa-4aaa-8aaa-aaaaaaaaaaaa"


@pytest.fixture
def seeded(db: Path) -> Path:
    seed(db, [(SOURCE, 1_700_000_000, ["first", "second"]), (OTHER, 1_700_000_100, ["other"])])
    return db


def rows(db: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT s.id, s.created_at, s.updated_at, m.id, m.role, m.content, m.created_at"
            " FROM sessions s LEFT JOIN messages m ON m.session_id = s.id ORDER BY s.id, m.id"
        ).fetchall()
    finally:
        conn.close()


def test_fork_prints_the_new_id_and_copies_the_messages(env: dict[str, str], work: Path, seeded: Path) -> None:
    before = rows(seeded)
    result = cli(["fork", SOURCE[:8], "--db", str(seeded)], env, work)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    new_id = result.stdout.removesuffix("\n")
    assert result.stdout == new_id + "\n" and is_session_id(new_id)
    sessions = stored(seeded)
    assert sessions[new_id] == sessions[SOURCE] == ["first", "re: first", "second", "re: second"]
    assert [row for row in rows(seeded) if row[0] != new_id] == before  # the source and the rest untouched


def test_fork_at_keeps_the_first_messages(env: dict[str, str], work: Path, seeded: Path) -> None:
    for at, kept in ((1, ["first"]), (2, ["first", "re: first"])):
        result = cli(["fork", SOURCE, "--at", str(at)], env, work)
        assert result.returncode == 0, result.stderr
        assert stored(seeded)[result.stdout.strip()] == kept


@pytest.mark.parametrize(
    ("args", "status", "line"),
    [
        (["fork", "bbbb"], 1, "harness9-ref: error: no session id starts with 'bbbb'"),
        (
            ["fork", "aaaa"],
            1,
            f"harness9-ref: error: 'aaaa' matches 2 sessions: {OTHER}, {SOURCE}",
        ),
        (
            ["fork", SOURCE, "--at", "5"],
            1,
            f"harness9-ref: error: session {SOURCE}: a fork keeps at most its message count, 4, not 5",
        ),
        (["fork", SOURCE, "--at", "-1"], 2, "harness9-ref: error: argument --at: expected a positive integer, got '-1'"),
        (["fork", SOURCE, "--at", "x"], 2, "harness9-ref: error: argument --at: expected a positive integer, got 'x'"),
        # R-FORK-2b: a fork of no message would be a session no listing shows
        (["fork", SOURCE, "--at", "0"], 2, "harness9-ref: error: argument --at: expected a positive integer, got '0'"),
    ],
)
def test_a_refused_fork_is_one_line_and_creates_nothing(
    env: dict[str, str], work: Path, seeded: Path, args: list[str], status: int, line: str
) -> None:
    before = rows(seeded)
    result = cli(args, env, work)
    assert (result.returncode, result.stdout, result.stderr) == (status, "", line + "\n")
    assert rows(seeded) == before


def test_fork_without_a_database_creates_none(env: dict[str, str], work: Path, db: Path) -> None:
    result = cli(["fork", SOURCE], env, work)
    assert (result.returncode, result.stderr) == (1, f"harness9-ref: error: no session with id {SOURCE}\n")
    assert not db.parent.exists()


@pytest.mark.parametrize("target", ["file", "folder"])
def test_fork_on_a_read_only_database_is_one_line(env: dict[str, str], work: Path, seeded: Path, target: str) -> None:
    before = {path.name: path.read_bytes() for path in seeded.parent.iterdir()}
    result = _read_only(seeded if target == "file" else seeded.parent, ["fork", SOURCE], env, work)
    assert (result.returncode, result.stdout) == (1, "")
    prefix = "harness9-ref: error: fork writes a new session, and the database cannot be written: "
    assert result.stderr.startswith(prefix) and result.stderr.count("\n") == 1, result.stderr
    assert {path.name: path.read_bytes() for path in seeded.parent.iterdir()} == before


@pytest.mark.parametrize(
    ("lang", "line"),
    [
        (
            "en",
            "message 3 of session {id} is a tool result; a fork of its first 2 messages would end between a call and its result",
        ),
        ("zh", "会话 {id} 的第 3 条消息是工具结果；只保留前 2 条的分叉会停在调用和它的结果之间"),
    ],
)
def test_a_fork_before_a_result_names_the_message_as_sessions_counts_it(
    env: dict[str, str], work: Path, db: Path, lang: str, line: str
) -> None:
    """R-MGR-11b: the prompt, the reply with its call, then the result: the third of the session's 4 messages."""
    made = cli(["--provider", "offline", "--yes", "run", "run echo hi"], env, work)
    session_id = session_of(made)
    listed = cli(["sessions"], env, work).stdout
    assert listed.startswith(f"{session_id}  ") and "  4 messages  " in listed
    before = rows(db)
    result = cli(["--lang", lang, "fork", session_id, "--at", "2"], env, work)
    prefix = "harness9-ref: error: " if lang == "en" else "harness9-ref: 错误："
    assert (result.returncode, result.stdout, result.stderr) == (1, "", prefix + line.format(id=session_id) + "\n")
    assert rows(db) == before
