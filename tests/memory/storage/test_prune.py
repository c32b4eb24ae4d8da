"""Expiry of old sessions on real files (SPEC R-PRUNE-1).

The conformance cases check which sessions go and the counts; the bytes reclaimed depend on the
SQLite build's page layout, so they are checked here, with the folders, the one transaction
and what another reader holding the file does to it.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from harness9_ref.memory.storage import InvalidArgument, Manager, PruneResult, SessionDatabaseError, SessionNotFound
from harness9_ref.planning import TodoItem
from tests.fakes import user
from tests.memory.helpers import START, Clock, raw

DAY = 86_400


def files_size(path: Path) -> int:
    return sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists())


def big_sessions(manager: Manager, clock: Clock, n: int, size: int) -> list[str]:
    ids = []
    for i in range(n):
        session = manager.new_session()
        session.add_messages([user(f"{i} " + "x" * size) for _ in range(20)])
        ids.append(session.session_id)
    return ids


def test_pruning_large_sessions_reclaims_the_bytes(db_path: Path, clock: Clock) -> None:
    with Manager(db_path, clock=clock) as manager:
        old = big_sessions(manager, clock, 5, 20_000)
        clock.tick(2 * DAY)
        kept = manager.new_session()
        kept.add_messages([user("recent")])
        before = files_size(db_path)
        result = manager.prune(DAY)
        after = files_size(db_path)
        assert (result.sessions, result.messages) == (5, 100)
        assert result.bytes_reclaimed == before - after > 5 * 20 * 20_000  # the content, at least
        assert not Path(f"{db_path}-wal").exists() or os.path.getsize(f"{db_path}-wal") == 0
        assert [info.id for info in manager.list_sessions()] == [kept.session_id]
        with pytest.raises(SessionNotFound):
            manager.open_session(old[0])
    with raw(db_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT COUNT(*) FROM messages_fts_docsize").fetchone() == (1,)


def test_a_dry_run_changes_nothing_and_reports_no_bytes(db_path: Path, clock: Clock) -> None:
    with Manager(db_path, clock=clock) as manager:
        big_sessions(manager, clock, 2, 5_000)
        clock.tick(DAY + 1)
        with raw(db_path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        before = (db_path.read_bytes(), files_size(db_path))
        assert manager.prune(DAY, dry_run=True) == PruneResult(2, 40, 0)
        assert (db_path.read_bytes(), files_size(db_path)) == before
        assert len(manager.list_sessions()) == 2


def test_nothing_to_prune_reclaims_nothing(manager: Manager) -> None:
    manager.new_session().add_messages([user("fresh")])
    assert manager.prune(1) == PruneResult(0, 0, 0)


def test_folders_are_removed_after_the_commit_and_counted(db_path: Path, clock: Clock, tmp_path: Path) -> None:
    results = tmp_path / "tool-results"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.txt").write_text("never removed")
    with Manager(db_path, results, clock=clock) as manager:
        a, b, c = manager.new_session(), manager.new_session(), manager.new_session()
        (results / a.session_id / "deep").mkdir(parents=True)
        (results / a.session_id / "one.txt").write_bytes(b"x" * 1000)
        (results / a.session_id / "deep" / "two.txt").write_bytes(b"y" * 234)
        (results / b.session_id).symlink_to(outside, target_is_directory=True)
        (results / c.session_id).mkdir()
        clock.tick(10)
        c.add_messages([user("kept")])
        (results / c.session_id / "kept.txt").write_text("kept")
        result = manager.prune(5)
    assert (result.sessions, result.messages) == (2, 0)
    assert result.bytes_reclaimed >= 1234  # the files; the link counts nothing
    assert sorted(p.name for p in results.iterdir()) == [c.session_id]
    assert (outside / "target.txt").read_text() == "never removed"


def test_rows_of_other_programs_with_odd_ids_are_pruned_without_touching_paths(
    db_path: Path, clock: Clock, tmp_path: Path
) -> None:
    results = tmp_path / "tool-results"
    (results / "..").mkdir(parents=True, exist_ok=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("stays")
    with Manager(db_path, results, clock=clock):
        pass
    with raw(db_path) as conn:
        odd = [("../victim.txt",), ("",), ("UPPER",)]
        conn.executemany("INSERT INTO sessions (id, created_at, updated_at) VALUES (?, 1, 1)", odd)
    with Manager(db_path, results, clock=clock) as manager:
        assert manager.prune(1).sessions == 3
    assert victim.read_text() == "stays"


def test_all_sessions_go_in_one_transaction(db_path: Path, clock: Clock) -> None:
    with Manager(db_path, clock=clock) as manager:
        ids = [manager.new_session().session_id for _ in range(3)]
        for session_id in ids:
            manager.open_session(session_id).save_todos([TodoItem("1", "t", "pending")])
        clock.tick(100)
        with raw(db_path) as conn:
            conn.execute(
                f"CREATE TRIGGER refuse BEFORE DELETE ON sessions WHEN old.id = '{ids[2]}'"
                " BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )
        with pytest.raises(SessionDatabaseError):
            manager.prune(10)
        assert len(manager.list_sessions()) == 3
    with raw(db_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM todos").fetchone() == (3,)


def test_a_folder_that_cannot_be_removed_is_reported_after_the_rows_are_gone(
    db_path: Path, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = tmp_path / "tool-results"
    with Manager(db_path, results, clock=clock) as manager:
        stuck, fine = manager.new_session(), manager.new_session()
        for session in (stuck, fine):
            (results / session.session_id).mkdir(parents=True)
            (results / session.session_id / "f").write_text("x")
        clock.tick(10)
        real_rmtree = shutil.rmtree

        def rmtree(path: object, *args: object, **kwargs: object) -> None:
            if Path(str(path)).name == stuck.session_id:
                raise PermissionError(13, "Permission denied")
            real_rmtree(path)  # type: ignore[arg-type]

        monkeypatch.setattr(shutil, "rmtree", rmtree)
        with pytest.raises(SessionDatabaseError, match=stuck.session_id):
            manager.prune(5)
        assert manager.list_sessions() == []
        assert sorted(p.name for p in results.iterdir()) == [stuck.session_id]  # the other one went


def test_prune_with_another_reader_open(db_path: Path, clock: Clock) -> None:
    """A reader keeps the WAL from being truncated; the prune still happens and reports no negative size."""
    with Manager(db_path, clock=clock) as manager:
        big_sessions(manager, clock, 2, 5_000)
        clock.tick(100)
        reader = sqlite3.connect(db_path)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT COUNT(*) FROM messages").fetchone()
            result = manager.prune(10)
        finally:
            reader.close()
        assert (result.sessions, result.messages) == (2, 40)
        assert result.bytes_reclaimed >= 0
        assert manager.list_sessions() == []


@pytest.mark.parametrize("older_than", [0, -1, 1.5, "10", True, None])
def test_older_than_must_be_whole_seconds_of_at_least_one(manager: Manager, older_than: object) -> None:
    manager.new_session()
    with pytest.raises(InvalidArgument):
        manager.prune(older_than)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        manager.prune(older_than, dry_run=True)  # type: ignore[arg-type]
    assert len(manager.list_sessions()) == 1


def test_a_huge_age_prunes_nothing(manager: Manager) -> None:
    manager.new_session()
    assert manager.prune(2**80) == PruneResult(0, 0, 0)
    assert manager.prune(START + 1).sessions == 0
    assert manager.prune(START).sessions == 0  # updated_at == START is not < 0
