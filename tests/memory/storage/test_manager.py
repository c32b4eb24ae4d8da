"""Manager and the database file (harness9_ref/memory/storage/_manager.py, _sqlite_db.py; SPEC R-MGR, R-DB-1 … R-DB-3, R-DB-9).

The expected schema is the ``sql`` block of SPEC.md itself, executed in memory and compared
column by column with what the Manager creates, so the two cannot drift apart.
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from harness9_ref.memory.storage import (
    HOME_ENV,
    Checkpoint,
    InvalidSessionId,
    Manager,
    SessionClosed,
    SessionDatabaseError,
    SessionInfo,
    SessionNotFound,
    StatefulSession,
    UnsupportedSchema,
    default_db_path,
)
from harness9_ref.planning import TodoItem
from harness9_ref.schema import Message
from tests.fakes import assistant, call, user
from tests.memory.helpers import Clock, raw

SPEC = Path(__file__).resolve().parents[3] / "SPEC.md"


def sid(n: int) -> str:
    """The well-formed session id whose last digits are ``n``."""
    return f"00000000-0000-4000-8000-{n:012x}"


def spec_schema_sql() -> str:
    """Every ``sql`` block of SPEC.md: R-DB-1's tables, R-CKP-6's, R-CKP-12's and R-UNDO-2c's."""
    blocks = re.findall(r"```sql\n(.*?)```", SPEC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 4, "SPEC.md should hold the R-DB-1, R-CKP-6, R-CKP-12 and R-UNDO-2c sql blocks"
    return "\n".join(blocks)


def schema_of(conn: sqlite3.Connection) -> dict[str, object]:
    """Everything R-DB-1 makes part of the format: columns, types, constraints, keys and indexes.

    Tables named ``messages_fts…`` are a search index, not part of the format (R-SRCH-3).
    """
    described: dict[str, object] = {}
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'messages\\_fts%' ESCAPE '\\'"
            " ORDER BY name"
        )
    ]
    for table in tables:
        indexes = {}
        for _, name, unique, origin, partial in conn.execute(f'PRAGMA index_list("{table}")'):
            columns = [r[2] for r in conn.execute(f'PRAGMA index_info("{name}")')]
            indexes[name if origin == "c" else origin] = (unique, partial, columns)
        described[table] = {
            "columns": conn.execute(f'PRAGMA table_info("{table}")').fetchall(),
            "foreign_keys": [r[2:] for r in conn.execute(f'PRAGMA foreign_key_list("{table}")')],
            "indexes": indexes,
            "autoincrement": "AUTOINCREMENT"
            in conn.execute("SELECT upper(sql) FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0],
        }
    return described


# --- Where the file is (R-MGR-1, R-DB-9) ---


def test_harness9_home_moves_the_default_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "h9"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_db_path() == tmp_path / "h9" / "sessions.db"
    with Manager() as manager:
        assert manager.db_path == tmp_path / "h9" / "sessions.db"
    assert (tmp_path / "h9" / "sessions.db").is_file()
    assert not (tmp_path / "home").exists()


def test_a_leading_tilde_in_harness9_home_is_the_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """R-MGR-1: the library reads the variable as the program does (R-CLI-13)."""
    monkeypatch.setenv(HOME_ENV, "~/h9")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_db_path() == tmp_path / "home" / "h9" / "sessions.db"


@pytest.mark.parametrize("home_env", [None, ""], ids=["unset", "empty"])
def test_without_harness9_home_the_database_is_under_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home_env: str | None
) -> None:
    if home_env is None:
        monkeypatch.delenv(HOME_ENV, raising=False)
    else:
        monkeypatch.setenv(HOME_ENV, home_env)
    monkeypatch.setenv("HOME", str(tmp_path))
    with Manager() as manager:
        assert manager.db_path == tmp_path / ".harness9" / "sessions.db"
    assert stat.S_IMODE((tmp_path / ".harness9").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / ".harness9" / "sessions.db").stat().st_mode) == 0o600


def test_missing_directories_and_file_are_created_private(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "sessions.db"
    old_umask = os.umask(0)
    try:
        with Manager(path) as manager:
            manager.new_session().add_messages([user("x")])
            wal = Path(f"{path}-wal")
            assert stat.S_IMODE(wal.stat().st_mode) == 0o600
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_only_the_database_directory_is_private_and_those_above_follow_the_umask(tmp_path: Path, umask: int) -> None:
    path = tmp_path / "a" / "b" / "sessions.db"
    old_umask = os.umask(umask)
    try:
        Manager(path).close()
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o777 & ~umask
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_the_modes_of_an_existing_directory_and_file_are_left_alone(tmp_path: Path) -> None:
    directory = tmp_path / "shared"
    directory.mkdir()
    directory.chmod(0o755)
    Manager(directory / "new.db").close()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o755
    assert stat.S_IMODE((directory / "new.db").stat().st_mode) == 0o600
    existing = directory / "existing.db"
    existing.touch()
    existing.chmod(0o644)
    Manager(existing).close()
    assert stat.S_IMODE(existing.stat().st_mode) == 0o644


def test_a_file_that_is_not_sqlite_raises_database_error_naming_it_and_stays_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    content = b"These are my notes, not a database.\n" * 200
    path.write_bytes(content)
    with pytest.raises(SessionDatabaseError) as excinfo:
        Manager(path)
    assert excinfo.value.code == "database_error"
    assert str(path) in str(excinfo.value)
    assert path.read_bytes() == content


def test_a_damaged_schema_that_is_not_utf8_raises_database_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "damaged.db"
    with raw(path) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute("UPDATE sqlite_master SET name = CAST(X'C9' AS TEXT), sql = 'CREATE TABLE' WHERE name = 't'")
    with pytest.raises(SessionDatabaseError, match=re.escape(str(path))):
        Manager(path)


@pytest.mark.parametrize("below", ["sessions.db", "sub/sessions.db"])
def test_a_path_below_a_regular_file_raises_database_error_naming_it(tmp_path: Path, below: str) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(SessionDatabaseError, match=re.escape(str(blocker))):
        Manager(blocker / below)
    assert blocker.read_text() == "x"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write to any directory")
def test_a_directory_that_cannot_be_written_raises_database_error_naming_it(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        with pytest.raises(SessionDatabaseError, match=re.escape(str(locked / "sessions.db"))):
            Manager(locked / "sessions.db")
    finally:
        locked.chmod(0o700)


# --- The connection and the schema (R-DB-1 … R-DB-3) ---


def test_the_connection_uses_wal_foreign_keys_and_a_five_second_busy_timeout(manager: Manager, db_path: Path) -> None:
    assert manager._db is not None
    conn = manager._db._conn
    assert conn is not None
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
    assert conn.execute("PRAGMA busy_timeout").fetchone() == (5000,)
    assert conn.execute("PRAGMA synchronous").fetchone()[0] in (1, 2)  # NORMAL or FULL
    with raw(db_path) as other:
        assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert other.execute("PRAGMA user_version").fetchone() == (5,)


def test_a_new_file_has_exactly_the_schema_of_the_spec(manager: Manager, db_path: Path) -> None:
    expected = sqlite3.connect(":memory:")
    expected.executescript(spec_schema_sql())
    with raw(db_path) as conn:
        assert schema_of(conn) == schema_of(expected)
    expected.close()


GO_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,
    content TEXT NOT NULL, tool_calls TEXT, tool_call_id TEXT, created_at INTEGER NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE
);
CREATE INDEX idx_messages_session ON messages(session_id, id);
"""


def write_document_schema_file(path: Path, journal_mode: str = "wal") -> None:
    """A file as the Go original leaves it: the document's schema, no todos table, user_version 0."""
    with raw(path) as conn:
        conn.execute(f"PRAGMA journal_mode = {journal_mode}")
        conn.executescript(GO_SCHEMA)
        conn.execute(f"INSERT INTO sessions VALUES ('{sid(1)}', 100, 200)")
        conn.execute(
            "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, created_at) VALUES"
            f" ('{sid(1)}', 'user', 'hi', NULL, NULL, 150),"
            f""" ('{sid(1)}', 'assistant', '', '[{{"id":"c","name":"n","arguments":{{"a": 1}}}}]', NULL, 150),"""
            f" ('{sid(1)}', 'user', 'out', NULL, 'c', 150)"
        )


def test_a_file_with_the_documents_schema_is_upgraded_and_keeps_its_sessions(db_path: Path) -> None:
    write_document_schema_file(db_path)
    with Manager(db_path) as manager:
        assert manager.list_sessions() == [SessionInfo(sid(1), 100, 200, 3)]
        session = manager.open_session(sid(1))
        assert session.get_messages() == [
            user("hi"),
            assistant("", call("c", "n", '{"a": 1}')),
            Message("user", "out", tool_call_id="c"),
        ]
        session.save_todos([TodoItem("1", "x", "pending")])
        assert session.get_todos() == [TodoItem("1", "x", "pending")]
    expected = sqlite3.connect(":memory:")
    expected.executescript(spec_schema_sql())
    with raw(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (5,)
        assert schema_of(conn) == schema_of(expected)
    expected.close()


def test_a_file_with_only_the_sessions_table_gets_everything_else(db_path: Path) -> None:
    with raw(db_path) as conn:
        conn.execute(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)"
        )
    with Manager(db_path) as manager:
        manager.new_session().add_messages([user("x")])
    with raw(db_path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"sessions", "messages", "todos", "checkpoints", "context_state"} <= tables


def write_unsupported(path: Path, kind: str, journal_mode: str) -> None:
    write_document_schema_file(path, journal_mode)
    with raw(path) as conn:
        if kind == "version 6":
            conn.execute("PRAGMA user_version = 6")
        elif kind == "foreign todos table":
            conn.execute("CREATE TABLE todos (session_id TEXT, position INTEGER, text TEXT, done INTEGER)")
        else:
            conn.execute("CREATE TABLE checkpoints (session_id TEXT PRIMARY KEY, summary TEXT)")
            conn.execute("PRAGMA user_version = 1")


def unsupported_cases() -> list[object]:
    cases: list[object] = []
    for kind in ("version 6", "foreign todos table", "foreign checkpoints table in a version-1 file"):
        cases.append(pytest.param(kind, "wal", id=f"{kind}, WAL file"))
        cases.append(
            pytest.param(
                kind,
                "delete",
                id=f"{kind}, rollback-journal file"
            )
        )
    return cases


@pytest.mark.parametrize(("kind", "journal_mode"), unsupported_cases())
def test_an_unsupported_file_raises_unsupported_schema_and_is_left_byte_identical(
    db_path: Path, kind: str, journal_mode: str
) -> None:
    write_unsupported(db_path, kind, journal_mode)
    before = db_path.read_bytes()
    with pytest.raises(UnsupportedSchema) as excinfo:
        Manager(db_path)
    assert excinfo.value.code == "unsupported_schema"
    assert str(db_path) in str(excinfo.value)
    assert db_path.read_bytes() == before


# --- Sessions of a Manager (R-MGR-3 … R-MGR-5) ---


def test_new_open_list_and_delete(manager: Manager) -> None:
    first = manager.new_session()
    second = manager.new_session()
    first.add_messages([user("a"), user("b")])
    assert manager.open_session(first.session_id).get_messages() == [user("a"), user("b")]
    assert {info.id: info.message_count for info in manager.list_sessions()} == {
        first.session_id: 2,
        second.session_id: 0,
    }
    manager.delete_session(first.session_id)
    assert [info.id for info in manager.list_sessions()] == [second.session_id]
    with pytest.raises(SessionNotFound):
        manager.open_session(first.session_id)


def test_list_orders_by_updated_then_created_then_id_descending(db_path: Path, clock: Clock) -> None:
    ids = iter([sid(0xA), sid(0xB), sid(0xC), sid(0xD), sid(0xE)])
    with Manager(db_path, clock=clock, new_id=lambda: next(ids)) as manager:
        clock.now = 100
        a, b = manager.new_session(), manager.new_session()
        clock.now = 50
        c = manager.new_session()
        clock.now = 150
        d = manager.new_session()
        clock.now = 90
        e = manager.new_session()
        clock.now = 100
        e.add_messages([user("1"), user("2")])
        clock.now = 200
        c.save_todos([])
        assert manager.list_sessions() == [
            SessionInfo(c.session_id, 50, 200, 0),
            SessionInfo(d.session_id, 150, 150, 0),
            SessionInfo(b.session_id, 100, 100, 0),
            SessionInfo(a.session_id, 100, 100, 0),
            SessionInfo(e.session_id, 90, 100, 2),
        ]


def test_open_of_an_unknown_or_mis_cased_id_raises_session_not_found(manager: Manager) -> None:
    session = manager.new_session()
    for unknown in (str(uuid.uuid4()), session.session_id.upper(), "", "not an id"):
        with pytest.raises(SessionNotFound) as excinfo:
            manager.open_session(unknown)
        assert excinfo.value.code == "session_not_found"
        assert repr(unknown) in str(excinfo.value) or unknown in str(excinfo.value)


def test_two_handles_of_one_session_see_each_others_changes(manager: Manager) -> None:
    first = manager.new_session()
    second = manager.open_session(first.session_id)
    first.add_messages([user("from first")])
    second.save_todos([TodoItem("1", "from second", "pending")])
    assert second.get_messages() == [user("from first")]
    assert first.get_todos() == [TodoItem("1", "from second", "pending")]


def test_two_managers_on_one_file_see_each_others_commits(db_path: Path) -> None:
    with Manager(db_path) as one, Manager(db_path) as two:
        session = one.new_session()
        same = two.open_session(session.session_id)
        session.add_messages([user("one")])
        same.add_messages([user("two")])
        assert session.get_messages() == same.get_messages() == [user("one"), user("two")]
        assert one.list_sessions() == two.list_sessions()
        assert same.pop_message() == user("two")
        assert session.get_messages() == [user("one")]


# --- Deleting (R-MGR-6) ---


def count_rows(path: Path, session_id: str) -> tuple[int, int, int]:
    """The session's rows in sessions, messages and todos."""
    with raw(path) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM sessions WHERE id = ?1),"
            " (SELECT count(*) FROM messages WHERE session_id = ?1),"
            " (SELECT count(*) FROM todos WHERE session_id = ?1)",
            (session_id,),
        ).fetchone()
    return int(row[0]), int(row[1]), int(row[2])


def test_delete_removes_the_messages_and_todos_and_the_tool_results_folder(tmp_path: Path, db_path: Path) -> None:
    results = tmp_path / "tool-results"
    with Manager(db_path, results) as manager:
        doomed, kept = manager.new_session(), manager.new_session()
        for session in (doomed, kept):
            session.add_messages([user("a"), assistant("", call("c"))])
            session.save_todos([TodoItem("1", "x", "pending"), TodoItem("2", "y", "completed")])
            (results / session.session_id / "nested" / "deeper").mkdir(parents=True)
            (results / session.session_id / "nested" / "deeper" / "out.txt").write_text("output")
            (results / session.session_id / "top.txt").write_text("output")
        manager.delete_session(doomed.session_id)
        assert count_rows(db_path, doomed.session_id) == (0, 0, 0)
        assert count_rows(db_path, kept.session_id) == (1, 2, 2)
        assert not (results / doomed.session_id).exists()
        assert (results / kept.session_id / "nested" / "deeper" / "out.txt").read_text() == "output"
        assert kept.get_messages() == [user("a"), assistant("", call("c"))]


def test_delete_of_an_unknown_well_formed_id_still_removes_its_folder(tmp_path: Path, db_path: Path) -> None:
    results = tmp_path / "tool-results"
    unknown = str(uuid.uuid4())
    (results / unknown).mkdir(parents=True)
    (results / unknown / "out.txt").write_text("x")
    with Manager(db_path, results) as manager:
        kept = manager.new_session()
        manager.delete_session(unknown)
        manager.delete_session(str(uuid.uuid4()))
        assert [info.id for info in manager.list_sessions()] == [kept.session_id]
    assert not (results / unknown).exists()
    assert results.is_dir()


def test_delete_without_a_tool_results_folder_configured_touches_no_files(tmp_path: Path, db_path: Path) -> None:
    with Manager(db_path) as manager:
        session = manager.new_session()
        (tmp_path / session.session_id).mkdir()
        manager.delete_session(session.session_id)
    assert (tmp_path / session.session_id).is_dir()


@pytest.mark.parametrize("target_kind", ["directory", "file"])
def test_delete_removes_a_symbolic_link_but_never_its_target(tmp_path: Path, db_path: Path, target_kind: str) -> None:
    results = tmp_path / "tool-results"
    results.mkdir()
    target = tmp_path / "precious"
    if target_kind == "directory":
        target.mkdir()
        (target / "keep.txt").write_text("keep")
    else:
        target.write_text("keep")
    with Manager(db_path, results) as manager:
        session = manager.new_session()
        (results / session.session_id).symlink_to(target, target_is_directory=target_kind == "directory")
        manager.delete_session(session.session_id)
    assert not os.path.lexists(results / session.session_id)
    assert (target / "keep.txt" if target_kind == "directory" else target).read_text() == "keep"


def test_delete_removes_a_fifo_in_place_of_the_folder(tmp_path: Path, db_path: Path) -> None:
    results = tmp_path / "tool-results"
    results.mkdir()
    with Manager(db_path, results) as manager:
        session = manager.new_session()
        os.mkfifo(results / session.session_id)
        manager.delete_session(session.session_id)
    assert not os.path.lexists(results / session.session_id)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may remove from any directory")
def test_a_folder_that_cannot_be_removed_raises_database_error_after_the_rows_are_gone(
    tmp_path: Path, db_path: Path
) -> None:
    results = tmp_path / "tool-results"
    with Manager(db_path, results) as manager:
        session = manager.new_session()
        folder = results / session.session_id
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "out.txt").write_text("x")
        (folder / "sub").chmod(0o500)
        try:
            with pytest.raises(SessionDatabaseError, match=re.escape(str(folder))):
                manager.delete_session(session.session_id)
        finally:
            (folder / "sub").chmod(0o700)
        assert manager.list_sessions() == []


MALFORMED_IDS: list[tuple[str, Callable[[str], str]]] = [
    ("empty", lambda real: ""),
    ("parent directory", lambda real: "../x"),
    ("dot dot inside", lambda real: f"{real}/.."),
    ("upper-case", lambda real: real.upper()),
    ("uuid version 1", lambda real: str(uuid.uuid1())),
    ("a slash", lambda real: "a/b"),
    ("an absolute path", lambda real: "/tmp"),
    ("surrounding white space", lambda real: f" {real}\n"),
    ("no hyphens", lambda real: real.replace("-", "")),
]


@pytest.mark.parametrize("make_id", [m for _, m in MALFORMED_IDS], ids=[name for name, _ in MALFORMED_IDS])
def test_a_malformed_id_raises_invalid_session_id_and_touches_nothing(
    tmp_path: Path, db_path: Path, make_id: Callable[[str], str]
) -> None:
    results = tmp_path / "tool-results"
    with Manager(db_path, results) as manager:
        session = manager.new_session()
        session.add_messages([user("x")])
        bad = make_id(session.session_id)
        for folder in {results / bad, results / session.session_id, tmp_path / "x", results / "a" / "b"}:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "keep.txt").write_text("keep")
        before = sorted(str(p) for p in tmp_path.rglob("*") if p.name == "keep.txt")
        listed = manager.list_sessions()
        with pytest.raises(ValueError) as excinfo:
            manager.delete_session(bad)
        assert getattr(excinfo.value, "code", None) == "invalid_session_id"
        assert sorted(str(p) for p in tmp_path.rglob("*") if p.name == "keep.txt") == before
        assert manager.list_sessions() == listed
        assert session.get_messages() == [user("x")]


# --- Closing and vanished sessions (R-MGR-7, R-MGR-8) ---

SESSION_OPERATIONS: list[tuple[str, Callable[[StatefulSession], object]]] = [
    ("get_messages", lambda s: s.get_messages()),
    ("get_messages with a limit", lambda s: s.get_messages(5)),
    ("add_messages", lambda s: s.add_messages([user("x")])),
    ("pop_message", lambda s: s.pop_message()),
    ("clear", lambda s: s.clear()),
    ("get_todos", lambda s: s.get_todos()),
    ("save_todos", lambda s: s.save_todos([TodoItem("1", "x", "pending")])),
    ("save_todos of nothing", lambda s: s.save_todos([])),
    ("add_messages of nothing", lambda s: s.add_messages([])),
    ("get_messages_from", lambda s: s.get_messages_from(0)),
    ("get_checkpoint", lambda s: s.get_checkpoint()),
    ("save_checkpoint", lambda s: s.save_checkpoint(Checkpoint(1, "a", "s"))),
]


SESSION_OPERATION_CASES = [pytest.param(op, id=name) for name, op in SESSION_OPERATIONS]


def test_close_is_idempotent_and_the_with_block_closes(db_path: Path) -> None:
    with Manager(db_path) as manager:
        session = manager.new_session()
    with pytest.raises(SessionClosed):
        manager.list_sessions()
    manager.close()
    manager.close()
    with pytest.raises(SessionClosed) as excinfo:
        session.get_messages()
    assert excinfo.value.code == "session_closed"


MANAGER_OPERATIONS: list[tuple[str, Callable[[Manager, str], object]]] = [
    ("new_session", lambda m, i: m.new_session()),
    ("open_session", lambda m, i: m.open_session(i)),
    ("list_sessions", lambda m, i: m.list_sessions()),
    ("delete_session", lambda m, i: m.delete_session(i)),
]


@pytest.mark.parametrize("operation", [op for _, op in MANAGER_OPERATIONS], ids=[n for n, _ in MANAGER_OPERATIONS])
def test_every_manager_operation_after_close_raises_session_closed(
    db_path: Path, operation: Callable[[Manager, str], object]
) -> None:
    manager = Manager(db_path)
    session_id = manager.new_session().session_id
    manager.close()
    with pytest.raises(SessionClosed):
        operation(manager, session_id)
    with Manager(db_path) as reopened:
        assert [info.id for info in reopened.list_sessions()] == [session_id]



@pytest.mark.parametrize("text", ["", "NOT-AN-ID", "../elsewhere"])
def test_a_closed_manager_checks_the_ids_form_first(db_path: Path, text: str) -> None:
    """R-MGR-9: arguments before the closed Manager, so delete_session of a malformed id on a
    closed Manager is invalid_session_id; the protocol cannot ask (its steps reopen a closed Manager)."""
    manager = Manager(db_path)
    manager.close()
    with pytest.raises(InvalidSessionId):
        manager.delete_session(text)
    with pytest.raises(InvalidSessionId):
        manager.resolve_session_id(text + "!")

@pytest.mark.parametrize("operation", SESSION_OPERATION_CASES)
def test_every_session_operation_after_close_raises_session_closed(
    db_path: Path, operation: Callable[[StatefulSession], object]
) -> None:
    manager = Manager(db_path)
    session = manager.new_session()
    session.add_messages([user("kept")])
    manager.close()
    with pytest.raises(SessionClosed):
        operation(session)
    with Manager(db_path) as reopened:
        assert reopened.open_session(session.session_id).get_messages() == [user("kept")]


@pytest.mark.parametrize("operation", SESSION_OPERATION_CASES)
def test_every_operation_of_a_session_deleted_by_another_manager_raises_session_not_found(
    db_path: Path, operation: Callable[[StatefulSession], object]
) -> None:
    with Manager(db_path) as mine, Manager(db_path) as theirs:
        session = mine.new_session()
        session.add_messages([user("x")])
        session.save_todos([TodoItem("1", "x", "pending")])
        theirs.delete_session(session.session_id)
        with pytest.raises(SessionNotFound) as excinfo:
            operation(session)
        assert session.session_id in str(excinfo.value)
        assert mine.list_sessions() == []
        assert count_rows(db_path, session.session_id) == (0, 0, 0)
