"""Undo of file changes from the command line, as a person meets it (SPEC R-UNDO-1 … R-UNDO-4, R-CLI-60):
the offline provider's ``write`` and ``edit`` prompts change real files in a working folder through
``run --yes``, then ``fork --at`` names them, and ``fork --at --restore-files`` shows their diffs
and puts them back, on a real SQLite file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from harness9_ref.text import STRINGS
from tests.cli.helpers import cli, session_of

EN = STRINGS["en"]


def said(env: dict[str, str], work: Path, prompt: str, *more: str) -> str:
    """Run one prompt in the work folder, approving its change, and return the session's id."""
    result = cli(["run", "--yes", *more, prompt], env, work)
    assert result.returncode == 0, result.stderr
    return session_of(result)


@pytest.fixture
def edited(env: dict[str, str], work: Path) -> str:
    """One session of three prompts: a.txt written, then edited; then notes/b.txt written."""
    session = said(env, work, "write a.txt hello")
    said(env, work, "edit a.txt hello => bye", "--resume", session)
    said(env, work, "write notes/b.txt new", "--resume", session)
    assert (work / "a.txt").read_text() == "bye" and (work / "notes" / "b.txt").read_text() == "new"
    return session


def recorded(db: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        query = "SELECT tool_call_id LIKE 'call_%', path, existed, before, after FROM file_changes ORDER BY id"
        return conn.execute(query).fetchall()
    finally:
        conn.close()


def test_each_change_is_recorded_with_what_the_file_held(edited: str, db: Path) -> None:
    """R-UNDO-1a, R-UNDO-2a: recorded as it was made, before and after as bytes."""
    assert recorded(db) == [
        (1, "a.txt", 0, None, b"hello"),
        (1, "a.txt", 1, b"hello", b"bye"),
        (1, "notes/b.txt", 0, None, b"new"),
    ]


def test_the_path_is_recorded_relative_to_the_working_directory(env: dict[str, str], work: Path, db: Path) -> None:
    """R-UNDO-1a: resolved, as the diff names it, whatever the call wrote."""
    said(env, work, "write ./d.txt x")
    assert recorded(db) == [(1, "d.txt", 0, None, b"x")]


def test_a_declined_change_is_not_recorded(env: dict[str, str], work: Path, db: Path) -> None:
    """R-UNDO-2a: without --yes nothing is written, so nothing is recorded."""
    result = cli(["run", "write a.txt hello"], env, work)
    assert result.returncode == 3, result.stderr  # R-CLI-50: a change not made
    assert not (work / "a.txt").exists()
    assert recorded(db) == []


def test_fork_at_names_the_changed_files_and_changes_none(env: dict[str, str], work: Path, edited: str) -> None:
    """R-CLI-60a: the id on standard output, one line naming the files on standard error, exit 0."""
    result = cli(["fork", edited, "--at", "1", "--lang", "en"], env, work)
    assert result.returncode == 0, result.stderr
    assert result.stderr == EN["undo_hint"].format(n=2, paths="a.txt, notes/b.txt") + "\n"
    assert (work / "a.txt").read_text() == "bye" and (work / "notes" / "b.txt").exists()


def test_fork_without_at_or_before_no_change_says_nothing(env: dict[str, str], work: Path, edited: str) -> None:
    """R-UNDO-3b: a fork that drops no change is R-FORK-1 unchanged."""
    for args in ([], ["--at", "12"]):
        result = cli(["fork", edited, *args, "--restore-files"], env, work)
        assert (result.returncode, result.stderr) == (0, ""), result.stderr


def test_restore_files_shows_the_diffs_and_puts_the_files_back(env: dict[str, str], work: Path, edited: str) -> None:
    """R-CLI-60b, R-UNDO-4: a.txt back to before its first dropped change, notes/b.txt removed
    (its folder stays), each diff from what the file holds now."""
    result = cli(["fork", edited, "--at", "5", "--restore-files", "--lang", "en"], env, work)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1
    assert result.stderr.splitlines() == [
        EN["undo_header"].format(n=2),
        "--- a/a.txt",
        "+++ b/a.txt",
        "@@ -1 +1 @@",
        "-bye",
        "\\ No newline at end of file",
        "+hello",
        "\\ No newline at end of file",
        "--- a/notes/b.txt",
        "+++ /dev/null",
        "@@ -1 +0,0 @@",
        "-new",
        "\\ No newline at end of file",
        EN["undo_restored"].format(path="a.txt"),
        EN["undo_removed"].format(path="notes/b.txt"),
    ]
    assert (work / "a.txt").read_text() == "hello"
    assert not (work / "notes" / "b.txt").exists() and (work / "notes").is_dir()


def test_a_file_changed_since_is_left_as_it_is_and_said(env: dict[str, str], work: Path, edited: str) -> None:
    """R-UNDO-4a: never overwritten; the other file is still restored; exit 1."""
    (work / "a.txt").write_text("mine")
    result = cli(["fork", edited, "--at", "1", "--restore-files", "--lang", "en"], env, work)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert EN["undo_changed"].format(path="a.txt") in lines
    assert lines[-1] == EN["undo_removed"].format(path="notes/b.txt")
    assert (work / "a.txt").read_text() == "mine"


def test_the_files_are_those_of_workdir(env: dict[str, str], work: Path, tmp_path: Path, edited: str) -> None:
    """R-CLI-60a: --workdir names the folder; elsewhere the files are not the ones recorded: one
    that holds other bytes there is said to have changed since, and a.txt, absent there as it
    was before the first prompt, needs nothing (R-UNDO-4a)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    away = cli(["fork", edited, "--at", "1", "--restore-files", "--lang", "en"], env, elsewhere)
    assert (away.returncode, away.stderr) == (0, "")
    (elsewhere / "a.txt").write_text("not the recorded one")
    away = cli(["fork", edited, "--at", "1", "--restore-files", "--lang", "en"], env, elsewhere)
    assert away.returncode == 1 and EN["undo_changed"].format(path="a.txt") in away.stderr.splitlines()
    assert (elsewhere / "a.txt").read_text() == "not the recorded one"
    there = cli(["fork", edited, "--at", "1", "--restore-files", "--workdir", str(work)], env, elsewhere)
    assert there.returncode == 0, there.stderr
    assert not (work / "a.txt").exists()  # it did not exist before the first prompt


def test_a_restore_never_writes_outside_the_working_directory(
    env: dict[str, str], work: Path, tmp_path: Path, edited: str
) -> None:
    """R-UNDO-4a, R-TOOL-3: a folder made a link to elsewhere is refused, nothing written there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "b.txt").write_text("new")
    (work / "notes" / "b.txt").unlink()
    (work / "notes").rmdir()
    (work / "notes").symlink_to(outside)
    result = cli(["fork", edited, "--at", "5", "--restore-files", "--lang", "en"], env, work)
    assert result.returncode == 1
    assert any(line.startswith(EN["undo_failed"].format(path="notes/b.txt", reason="")) for line in result.stderr.splitlines())
    assert (outside / "b.txt").read_text() == "new"
