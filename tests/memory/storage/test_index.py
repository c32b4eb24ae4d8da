"""The search index beside the format: optional, never in the way of R-DB-1 and R-DB-2 (SPEC R-SRCH-3).

Tables named ``messages_fts…`` are not part of the format: an upgrade ignores them, a refused
file never gains them, and a file that has them is still a valid file for a program that does
not know them (it can read and write every table of R-DB-1 without touching the index).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from harness9_ref.memory.storage import Manager, UnsupportedSchema, _sqlite_db
from tests.fakes import user
from tests.memory.helpers import raw
from tests.memory.storage.test_search import hits, scan

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "sessions"


def index_tables(path: Path) -> list[str]:
    with raw(path) as conn:
        return [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'messages_fts%' ORDER BY name")]


def test_a_new_file_has_the_index(db_path: Path) -> None:
    with Manager(db_path) as manager:
        assert manager.search_indexed
    assert index_tables(db_path) == [
        "messages_fts",
        "messages_fts_config",
        "messages_fts_content",
        "messages_fts_data",
        "messages_fts_docsize",
        "messages_fts_idx",
        "messages_fts_meta",
    ]


@pytest.mark.parametrize("fixture", ["future-version.db", "foreign-checkpoints.db", "foreign-context-state.db"])
def test_a_refused_file_never_gains_the_index(tmp_path: Path, fixture: str) -> None:
    path = tmp_path / fixture
    shutil.copyfile(FIXTURES / fixture, path)
    before = path.read_bytes()
    with pytest.raises(UnsupportedSchema):
        Manager(path)
    assert path.read_bytes() == before


def test_a_version_1_file_that_has_an_index_is_upgraded(db_path: Path) -> None:
    """A format-1 file written by a program that kept our index: the upgrade checks only R-DB-1's tables."""
    with Manager(db_path) as manager:
        manager.new_session().add_messages([user("kept through the upgrade")])
    with raw(db_path) as conn:
        conn.execute("DROP TABLE checkpoints")
        conn.execute("DROP TABLE context_state")
        conn.execute("PRAGMA user_version = 1")
    with Manager(db_path) as manager, raw(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (5,)
        assert [h.snippet for h in manager.search("upgrade")] == ["kept through the upgrade"]


def test_a_program_that_ignores_the_index_can_use_the_file(db_path: Path) -> None:
    """What the Go original does: plain SQL on R-DB-1's tables, foreign keys on, no index."""
    with Manager(db_path) as manager:
        session = manager.new_session()
        session.add_messages([user("alpha"), user("beta")])
        other = manager.new_session()
        other.add_messages([user("alpha gamma")])
    with raw(db_path) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("DELETE FROM sessions WHERE id = ?", (other.session_id,))
        conn.execute(
            "INSERT INTO messages (session_id, role, content, created_at) VALUES (?, 'user', 'alpha delta', 1)",
            (session.session_id,),
        )
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with Manager(db_path) as manager:
        assert hits(manager, "alpha") == scan(db_path, "alpha")
        assert [h.message_count for h in manager.search("alpha")] == [3]
    with raw(db_path) as conn:  # the next open took the deleted session's rows out of the index
        assert conn.execute("SELECT COUNT(*) FROM messages_fts_docsize").fetchone() == (3,)


def test_an_index_of_ours_without_its_meta_table_is_rebuilt(db_path: Path) -> None:
    with Manager(db_path) as manager:
        manager.new_session().add_messages([user("needle")])
    with raw(db_path) as conn:
        conn.execute("DROP TABLE messages_fts_meta")
        conn.execute("DELETE FROM messages_fts")
    with Manager(db_path) as manager:
        assert manager.search_indexed
        assert [h.snippet for h in manager.search("needle")] == ["needle"]
    with raw(db_path) as conn:
        assert conn.execute("SELECT body FROM messages_fts").fetchall() == [("needle",)]


def test_an_index_that_cannot_be_written_is_left_for_a_later_open(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write of the index refused for want of room (or a lock, or a read-only file) is no error:
    search scans, and the next open builds the index (R-SRCH-3a)."""
    with Manager(db_path) as manager:
        manager.new_session().add_messages([user("needle")])
    with raw(db_path) as conn:
        conn.execute("DROP TABLE messages_fts")
        conn.execute("DROP TABLE messages_fts_meta")

    def full(cur: sqlite3.Cursor) -> None:  # a full disk, which no test can make on demand at this moment
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(_sqlite_db, "install_index", full)
    with Manager(db_path) as manager:
        assert not manager.search_indexed
        assert [h.snippet for h in manager.search("needle")] == ["needle"]
    monkeypatch.undo()
    with Manager(db_path) as manager:
        assert manager.search_indexed
        assert [h.snippet for h in manager.search("needle")] == ["needle"]


def test_a_foreign_index_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "foreign-index.db"
    shutil.copyfile(FIXTURES / "foreign-index.db", path)
    with Manager(path) as manager:
        assert not manager.search_indexed
        manager.new_session().add_messages([user("something")])
        assert [h.snippet for h in manager.search("something")] == ["something"]
    with raw(path) as conn:
        assert conn.execute("SELECT rowid, text FROM messages_fts").fetchall() == [(1, "something else entirely")]
        assert index_tables(path) == [
            "messages_fts",
            "messages_fts_config",
            "messages_fts_content",
            "messages_fts_data",
            "messages_fts_docsize",
            "messages_fts_idx",
        ]


def test_a_damaged_index_never_costs_a_message_and_is_rebuilt(db_path: Path) -> None:
    with Manager(db_path) as manager:
        session = manager.new_session()
        session.add_messages([user(f"needle {i} " + "x" * 50) for i in range(200)])
    with raw(db_path) as conn:  # lose the index's pages
        conn.execute("DELETE FROM messages_fts_data WHERE id > 10")
    with Manager(db_path) as manager:
        assert hits(manager, "needle 7") == scan(db_path, "needle 7")  # the scan answers
        again = manager.open_session(session.session_id)
        again.add_messages([user("needle after the damage")])
        again.pop_message()
        again.add_messages([user("needle kept")])
        assert not manager.search_indexed
        assert hits(manager, "needle") == scan(db_path, "needle")
    with Manager(db_path) as manager, raw(db_path) as conn:
        assert manager.search_indexed
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")  # raises when damaged
        assert conn.execute("SELECT COUNT(*) FROM messages_fts_docsize").fetchone() == (201,)
        assert hits(manager, "needle") == scan(db_path, "needle")
        assert [h.snippet for h in manager.search("kept")] == ["needle kept"]
