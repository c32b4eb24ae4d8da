"""The file changes a session keeps for undo (SPEC R-UNDO-1 … R-UNDO-3), on MemorySession, a real
SQLite file and the tests' PostgreSQL server alike: recorded, read back byte for byte, selected
for a rewind point, copied by a fork, removed with the session, and gained by an older file."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from harness9_ref.memory.storage import (
    UNDO_MAX_BYTES,
    CorruptRow,
    FileChangeLog,
    FileChangeRecord,
    InvalidArgument,
    Manager,
    StatefulSession,
    UnsupportedSchema,
    copy_sessions,
)
from harness9_ref.schema import Message, SchemaError, ToolCall
from tests.fakes import Clock
from tests.memory.helpers import Database, raw

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "sessions"


def call(call_id: str, tool: str = "edit_file") -> list[Message]:
    """A step of one call and its result."""
    return [Message("assistant", "", tool_calls=(ToolCall(call_id, tool, "{}"),)), Message("user", "ok", tool_call_id=call_id)]


def conversation(session: StatefulSession) -> None:
    """Two prompts; the first's turn writes a.txt (c1) and edits it (c2), the second's edits it (c3)
    and writes b/c.txt (c4), each change recorded before its step is saved, as the engine does."""
    assert isinstance(session, FileChangeLog)
    session.add_messages([Message("user", "first")])
    session.add_file_change(FileChangeRecord.of("c1", "a.txt", None, b"one\n"))
    session.add_messages(call("c1", "write_file"))
    session.add_file_change(FileChangeRecord.of("c2", "a.txt", b"one\n", b"two\n"))
    session.add_messages(call("c2"))
    session.add_messages([Message("assistant", "done"), Message("user", "second")])
    session.add_file_change(FileChangeRecord.of("c3", "a.txt", b"two\n", b"three\xff\n"))
    session.add_file_change(FileChangeRecord.of("c4", "b/c.txt", None, b"\x00new"))
    calls = (ToolCall("c3", "edit_file", "{}"), ToolCall("c4", "write_file", "{}"))
    session.add_messages([Message("assistant", "", tool_calls=calls)])
    session.add_messages([Message("user", "ok", tool_call_id="c3"), Message("user", "ok", tool_call_id="c4")])


SECOND_PROMPT = 6  # the position of "second"


def ids(changes: list[FileChangeRecord]) -> list[str]:
    return [change.tool_call_id for change in changes]


def test_changes_read_back_byte_for_byte_oldest_first(new_session: Callable[[], StatefulSession]) -> None:
    """R-UNDO-1a, R-UNDO-2a, R-UNDO-2b: invalid UTF-8 and NUL bytes come back as written."""
    session = new_session()
    conversation(session)
    assert isinstance(session, FileChangeLog)
    changes = session.file_changes()
    assert ids(changes) == ["c1", "c2", "c3", "c4"]
    assert changes[0] == FileChangeRecord("c1", "a.txt", False, None, b"one\n")
    assert changes[2] == FileChangeRecord("c3", "a.txt", True, b"two\n", b"three\xff\n")
    assert changes[3].after == b"\x00new"


def test_a_rewind_selects_the_changes_of_the_calls_it_drops_newest_first(new_session: Callable[[], StatefulSession]) -> None:
    """R-UNDO-3a: the second prompt's calls for a rewind to it, every call for a rewind to the first."""
    session = new_session()
    conversation(session)
    assert isinstance(session, FileChangeLog)
    assert ids(session.file_changes_from(SECOND_PROMPT)) == ["c4", "c3"]
    assert ids(session.file_changes_from(0)) == ["c4", "c3", "c2", "c1"]
    assert session.file_changes_from(len(session.get_messages())) == []
    assert session.file_changes_from(2**63) == []
    with pytest.raises(InvalidArgument):
        session.file_changes_from(-1)


def test_a_call_id_also_made_before_the_point_is_left_alone(new_session: Callable[[], StatefulSession]) -> None:
    """R-UNDO-3a: an id the kept conversation still makes is never undone."""
    session = new_session()
    assert isinstance(session, FileChangeLog)
    session.add_messages([Message("user", "first"), *call("same"), Message("user", "second"), *call("same"), *call("other")])
    session.add_file_change(FileChangeRecord.of("same", "a.txt", b"a", b"b"))
    session.add_file_change(FileChangeRecord.of("other", "b.txt", b"a", b"b"))
    assert ids(session.file_changes_from(3)) == ["other"]


def test_a_change_of_a_call_never_saved_is_never_offered(new_session: Callable[[], StatefulSession]) -> None:
    """R-UNDO-2b: the record stays, but no stored message makes its call."""
    session = new_session()
    assert isinstance(session, FileChangeLog)
    session.add_messages([Message("user", "first")])
    session.add_file_change(FileChangeRecord.of("lost", "a.txt", None, b"x"))
    assert ids(session.file_changes()) == ["lost"]
    assert session.file_changes_from(0) == []


def test_a_side_over_the_bound_is_recorded_not_kept() -> None:
    """R-UNDO-1b: both contents dropped, whether the file existed kept."""
    big = b"x" * (UNDO_MAX_BYTES + 1)
    assert FileChangeRecord.of("c", "a", None, big) == FileChangeRecord("c", "a", False, None, None)
    assert FileChangeRecord.of("c", "a", big, b"y") == FileChangeRecord("c", "a", True, None, None)
    edge = b"x" * UNDO_MAX_BYTES
    assert FileChangeRecord.of("c", "a", edge, edge).kept


@pytest.mark.parametrize(
    "bad",
    [
        FileChangeRecord("", "a", False, None, b""),
        FileChangeRecord("c", "", False, None, b""),
        FileChangeRecord("c", "a", True, None, b"x"),  # kept, existed, no before
        FileChangeRecord("c", "a", False, b"x", b"y"),  # kept, did not exist, a before
        FileChangeRecord("c", "a", True, b"x", None),  # not kept, a before
        FileChangeRecord("c", "a", 1, None, b"x"),  # type: ignore[arg-type]
        FileChangeRecord("c", "a", False, None, "text"),  # type: ignore[arg-type]
    ],
)
def test_a_change_of_the_wrong_shape_is_refused_and_nothing_saved(
    new_session: Callable[[], StatefulSession], bad: FileChangeRecord
) -> None:
    """R-UNDO-2a: a schema error, nothing saved."""
    session = new_session()
    assert isinstance(session, FileChangeLog)
    session.add_messages([Message("user", "hi")])
    with pytest.raises(SchemaError):
        session.add_file_change(bad)
    assert session.file_changes() == []


def test_clear_removes_them_and_a_pop_leaves_them(new_session: Callable[[], StatefulSession]) -> None:
    """R-UNDO-2b."""
    session = new_session()
    conversation(session)
    assert isinstance(session, FileChangeLog)
    session.pop_message()
    assert len(session.file_changes()) == 4
    session.clear()
    assert session.file_changes() == []


def test_a_draft_is_stored_by_its_first_change(stored: Manager) -> None:
    """R-UNDO-2a, R-FIND-2b: the file has changed, so the record is kept even before any message."""
    draft = stored.new_session(draft=True)
    assert isinstance(draft, FileChangeLog)
    draft.add_file_change(FileChangeRecord.of("c1", "a.txt", None, b"x"))
    assert stored.open_session(draft.session_id).file_changes() == draft.file_changes()  # type: ignore[attr-defined]


def test_recording_leaves_updated_at_alone(stored: Manager, clock: Clock) -> None:
    """R-UNDO-2a: a record is not a change to the conversation."""
    session = stored.new_session()
    session.add_messages([Message("user", "hi")])
    before = stored.list_sessions()[0].updated_at
    clock.tick(100)
    assert isinstance(session, FileChangeLog)
    session.add_file_change(FileChangeRecord.of("c1", "a.txt", None, b"x"))
    assert stored.list_sessions()[0].updated_at == before


def test_a_fork_copies_the_changes_of_the_calls_it_keeps(stored: Manager, database: Database) -> None:
    """R-UNDO-2d: every column as stored, in their order; the source's stay."""
    session = stored.new_session()
    conversation(session)
    fork = stored.fork_session(session.session_id, SECOND_PROMPT)
    assert isinstance(fork, FileChangeLog)
    assert ids(fork.file_changes()) == ["c1", "c2"]
    assert ids(fork.file_changes_from(0)) == ["c2", "c1"]
    assert ids(stored.fork_session(session.session_id, 0).file_changes()) == []  # type: ignore[attr-defined]
    assert ids(stored.open_session(session.session_id).file_changes()) == ["c1", "c2", "c3", "c4"]  # type: ignore[attr-defined]
    columns = "tool_call_id, path, existed, before, after, created_at"
    copied = database.query(f"SELECT {columns} FROM file_changes WHERE session_id = ? ORDER BY id", (fork.session_id,))
    source = database.query(f"SELECT {columns} FROM file_changes WHERE session_id = ? ORDER BY id", (session.session_id,))
    assert copied == source[:2]


def test_deleting_or_pruning_a_session_removes_its_changes(stored: Manager, database: Database, clock: Clock) -> None:
    """R-UNDO-2b: ON DELETE CASCADE, in the delete's and the prune's own transaction."""
    first, second = stored.new_session(), stored.new_session()
    conversation(first)
    clock.tick(10_000)
    conversation(second)
    stored.delete_session(first.session_id)
    assert database.query("SELECT DISTINCT session_id FROM file_changes") == [(second.session_id,)]
    clock.tick(10_000)
    stored.prune(5_000)
    assert database.query("SELECT COUNT(*) FROM file_changes") == [(0,)]


def test_a_row_another_program_wrote_wrongly_is_corrupt_row(tmp_path: Path) -> None:
    """R-UNDO-2b: named, never skipped."""
    path = tmp_path / "sessions.db"
    with Manager(path) as manager:
        session = manager.new_session()
        conversation(session)
    with raw(path) as conn:
        conn.execute("UPDATE file_changes SET after = 'text' WHERE tool_call_id = 'c2'")
    with Manager(path) as manager, pytest.raises(CorruptRow, match="file_changes row 2"):
        manager.open_session(session.session_id).file_changes()  # type: ignore[attr-defined]


def table_rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    with raw(path) as conn:
        conn.text_factory = bytes  # rows as stored, the invalid UTF-8 another program wrote included
        found = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'")
        tables = [r[0].decode() for r in found]
        return {table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr) for table in tables}


def test_a_format_4_file_gains_the_table_keeping_every_row(tmp_path: Path) -> None:
    """R-UNDO-2c, R-DB-2b: a real version-4 file (twelve sessions and their context states) is
    upgraded in place in one step; every row stays as stored, even those R-CKP-13 cannot read."""
    path = tmp_path / "v4.db"
    shutil.copyfile(FIXTURES / "corrupt-window-state.db", path)
    with raw(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (4,)
    before = table_rows(path)
    assert "file_changes" not in before
    with Manager(path) as manager:
        session = manager.open_session("66666666-6666-4666-8666-666666666666")
        assert isinstance(session, FileChangeLog)
        assert session.file_changes() == []
    after = table_rows(path)
    assert after.pop("file_changes") == []
    assert {row[3:] for row in after["sessions"]} == {(b"", b"")}  # R-DB-13: folder and provider unknown
    after["sessions"] = [row[:3] for row in after["sessions"]]
    assert after == before
    with raw(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (5,)
        found = conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'file_changes'")
        indexes = [r[0] for r in found]
    assert "idx_file_changes_session" in indexes


def test_a_file_being_upgraded_with_a_file_changes_table_of_its_own_is_refused(tmp_path: Path) -> None:
    """R-UNDO-2c, R-DB-2d, R-DB-2f."""
    path = tmp_path / "v4.db"
    shutil.copyfile(FIXTURES / "malformed-id.db", path)
    with raw(path) as conn:
        conn.execute("CREATE TABLE file_changes (id INTEGER PRIMARY KEY, note TEXT)")
    before = path.read_bytes()
    with pytest.raises(UnsupportedSchema, match="file_changes"):
        Manager(path)
    assert path.read_bytes() == before


def test_a_read_only_manager_reads_a_format_4_file_without_changing_it(tmp_path: Path) -> None:
    """R-UNDO-2c, R-DB-12b: upgraded in memory only."""
    path = tmp_path / "v4.db"
    shutil.copyfile(FIXTURES / "malformed-id.db", path)
    before = path.read_bytes()
    with Manager(path, read_only=True) as manager:
        session = manager.open_session("aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa")
        assert session.file_changes() == []  # type: ignore[attr-defined]
    assert path.read_bytes() == before
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone() == (4,)


def test_a_copy_carries_the_changes_both_ways(database: Database, tmp_path: Path, clock: Clock) -> None:
    """R-UNDO-2d, R-PG-9: every change, in its order, its time and bytes kept, into either store and back."""
    with Manager(tmp_path / "a.db", clock=clock) as first:
        session = first.new_session()
        conversation(session)
        assert isinstance(session, FileChangeLog)
        original = session.file_changes()
        with Manager(database.location) as middle, Manager(tmp_path / "b.db") as last:
            copy_sessions(first, middle)
            copy_sessions(middle, last)
            for manager in (middle, last):
                copied = manager.open_session(session.session_id)
                assert copied.file_changes() == original  # type: ignore[attr-defined]
                assert ids(copied.file_changes_from(SECOND_PROMPT)) == ["c4", "c3"]  # type: ignore[attr-defined]
    times = database.query("SELECT created_at FROM file_changes ORDER BY id")
    assert times == [(int(clock()),)] * 4
