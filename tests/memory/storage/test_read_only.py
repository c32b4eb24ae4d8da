"""A Manager opened read-only writes nothing to the file or its folder (SPEC R-DB-12)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from harness9_ref.memory.storage import ForeignDatabase, Manager, SessionDatabaseError, UnsupportedSchema
from tests.fakes import assistant, user

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "sessions"


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def _written(path: Path) -> str:
    with Manager(path) as manager:
        session = manager.new_session()
        session.add_messages([user("find the needle"), assistant("found it")])
        return session.session_id


def test_a_missing_file_reads_as_empty_and_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "sessions.db"
    with Manager(path, read_only=True) as manager:
        assert manager.recent_sessions() == []
        assert manager.search("needle") == []
    assert not path.parent.exists()


def test_a_closed_file_is_read_without_a_file_beside_it(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    sid = _written(path)
    before = _files(tmp_path)
    with Manager(path, read_only=True) as manager:
        assert [s.id for s in manager.recent_sessions()] == [sid]
        assert [hit.id for hit in manager.search("needle")] == [sid]
        assert manager.search_indexed
        assert [m.content for m in manager.open_session(sid).get_messages()] == ["find the needle", "found it"]
    assert _files(tmp_path) == before


def test_every_write_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    sid = _written(path)
    before = _files(tmp_path)
    with Manager(path, read_only=True) as manager:
        session = manager.open_session(sid)
        for write in (lambda: session.add_messages([user("more")]), session.clear, manager.new_session,
                      lambda: manager.delete_session(sid), lambda: session.save_todos([])):
            with pytest.raises(SessionDatabaseError) as caught:
                write()
            assert caught.value.code == "database_error"
        with pytest.raises(SessionDatabaseError):
            manager.new_session(draft=True).add_messages([user("x")])
    assert _files(tmp_path) == before


def test_a_file_being_written_is_read_through_its_wal(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with Manager(path) as writer:
        session = writer.new_session()
        session.add_messages([user("first")])
        assert (tmp_path / "sessions.db-wal").exists()
        with Manager(path, read_only=True) as reader:
            assert [m.content for m in reader.open_session(session.session_id).get_messages()] == ["first"]
        session.add_messages([user("second")])  # the reader held no lock that stops a writer
        with Manager(path, read_only=True) as reader:
            assert len(reader.open_session(session.session_id).get_messages()) == 2


def test_an_older_format_is_read_from_a_copy_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint-v2.db"
    shutil.copy2(FIXTURES / "checkpoint-v2.db", path)
    before = _files(tmp_path)
    with Manager(path, read_only=True) as manager:
        assert len(manager.recent_sessions()) == 2
        session = manager.open_session(manager.resolve_session_id("aaaaaaaa"))
        assert len(session.get_messages()) == 5
        assert session.get_checkpoint() is not None
        assert session.get_context_state() is None  # the table the copy gained is empty
        with pytest.raises(SessionDatabaseError):
            session.add_messages([user("x")])
    assert _files(tmp_path) == before
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 2


@pytest.mark.parametrize(("name", "error"), [("foreign-tables.db", ForeignDatabase), ("clashing-sessions.db", UnsupportedSchema)])
def test_refusals_are_those_of_a_writing_open(tmp_path: Path, name: str, error: type[UnsupportedSchema]) -> None:
    path = tmp_path / name
    shutil.copy2(FIXTURES / name, path)
    before = _files(tmp_path)
    with pytest.raises(error):
        Manager(path, read_only=True)
    assert _files(tmp_path) == before


def test_an_index_that_is_not_complete_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    sid = _written(path)
    with sqlite3.connect(path) as conn:  # as if another program had added a message without indexing it
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(
            "INSERT INTO messages (session_id, role, content, created_at) VALUES (?, 'user', 'a late haystack', 0)", (sid,)
        )
    with Manager(path, read_only=True) as manager:
        assert not manager.search_indexed
        assert [hit.id for hit in manager.search("haystack")] == [sid]


@pytest.mark.parametrize(
    ("name", "query"),
    [
        ("slipped-message.db", "slipped"),  # a message under the watermark that the index lacks
        ("old-format-index.db", "needle"),  # an index of another format, its needle's row altered
    ],
)
def test_an_index_that_is_not_current_or_lacks_a_message_is_not_used(tmp_path: Path, name: str, query: str) -> None:
    """Only a current index that holds every message answers a read-only search; else it scans (R-DB-12c)."""
    path = tmp_path / "sessions.db"
    shutil.copyfile(FIXTURES / name, path)
    with Manager(path, read_only=True) as manager:
        assert not manager.search_indexed
        assert [hit.id for hit in manager.search(query)] == ["aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"]


def test_without_fts_a_read_only_open_scans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An SQLite without FTS5 cannot read the index the file holds: search scans (R-DB-12, R-SRCH-3a)."""
    path = tmp_path / "sessions.db"
    sid = _written(path)
    monkeypatch.setattr("harness9_ref.memory.storage._sqlite_db.index_available", lambda: False)
    with Manager(path, read_only=True) as manager:
        assert not manager.search_indexed
        assert [hit.id for hit in manager.search("needle")] == [sid]


def test_an_index_that_cannot_be_read_is_not_used(tmp_path: Path) -> None:
    """An index of ours that lost a table cannot tell whether it holds every message: search scans (R-DB-12)."""
    path = tmp_path / "sessions.db"
    sid = _written(path)
    with sqlite3.connect(path) as conn:  # as if another program had damaged the index
        conn.execute("DROP TABLE messages_fts_docsize")
    with Manager(path, read_only=True) as manager:
        assert not manager.search_indexed
        assert [hit.id for hit in manager.search("needle")] == [sid]


def test_a_file_the_system_will_not_open_is_a_database_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """R-DB-12: a file this user may not read is refused with a SessionDatabaseError naming the
    system's words. Faked: a superuser reads every file, so no permission makes the fault on demand."""
    path = tmp_path / "sessions.db"
    _written(path)
    real = sqlite3.connect

    def refuse(database: str, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        if kwargs.get("uri"):
            raise sqlite3.OperationalError("unable to open database file")
        conn: sqlite3.Connection = real(database, *args, **kwargs)
        return conn

    monkeypatch.setattr(sqlite3, "connect", refuse)
    with pytest.raises(SessionDatabaseError, match="unable to open database file"):
        Manager(path, read_only=True)
