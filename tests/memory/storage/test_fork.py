"""Forking a session on a real SQLite file (SPEC R-MGR-10, R-MGR-11): the source stays byte for
byte as it was, and a fork that fails creates nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from harness9_ref.memory.storage import (
    Checkpoint,
    ContextState,
    InvalidArgument,
    InvalidSessionId,
    Manager,
    SessionClosed,
    SessionDatabaseError,
    SessionNotFound,
    message_anchor,
)
from harness9_ref.planning import TodoItem
from harness9_ref.schema import Message, ToolCall
from tests.fakes import Clock

HISTORY = [
    Message("user", "read it \x00 中文 🧑‍💻"),
    Message("assistant", "", (ToolCall("c1", "read_file", ' {"path": "a"} '),)),
    Message("user", "text", (), "c1"),
    Message("assistant", "done"),
]
TABLES = ("sessions", "messages", "todos", "checkpoints", "context_state")
STATE = ContextState(100, 80, 4, 2, 10, 8192, "error", "qwen2.5 𝄞")  # every member away from its default


def rows_of(path: Path, session_id: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of ``session_id`` in every table, each value with its storage class."""
    conn = sqlite3.connect(path)
    try:
        found = {}
        for table in TABLES:
            key = "id" if table == "sessions" else "session_id"
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            picked = ", ".join(f"typeof({c}), hex({c})" for c in columns)
            found[table] = conn.execute(f"SELECT {picked} FROM {table} WHERE {key} = ? ORDER BY rowid", (session_id,)).fetchall()
        return found
    finally:
        conn.close()


def ids(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("SELECT id FROM sessions ORDER BY id")]
    finally:
        conn.close()


@pytest.fixture
def source(manager: Manager, clock: Clock) -> str:
    session = manager.new_session()
    session.add_messages(HISTORY)
    session.save_todos([TodoItem("1", "plan", "in_progress")])
    session.save_checkpoint(Checkpoint(1, message_anchor(HISTORY[0]), "summary"))
    session.save_context_state(STATE)
    clock.tick(60)
    return session.session_id


def test_the_source_is_byte_for_byte_as_it_was(manager: Manager, db_path: Path, source: str) -> None:
    before = rows_of(db_path, source)
    forks = [manager.fork_session(source, at) for at in (None, 0, 1, 4)]
    assert rows_of(db_path, source) == before
    assert [len(fork.get_messages()) for fork in forks] == [4, 0, 1, 4]
    assert forks[0].get_messages() == HISTORY  # NUL, astral characters and raw arguments as stored


def test_a_fork_is_created_now_and_its_messages_keep_their_own_times(
    manager: Manager, db_path: Path, source: str, clock: Clock
) -> None:
    fork = manager.fork_session(source)
    info = {i.id: i for i in manager.list_sessions()}
    assert (info[fork.session_id].created_at, info[fork.session_id].updated_at) == (int(clock()), int(clock()))
    assert manager.list_sessions()[0].id == fork.session_id  # the newest first (R-MGR-5)
    copied, original = rows_of(db_path, fork.session_id)["messages"], rows_of(db_path, source)["messages"]
    assert [row[4:] for row in copied] == [row[4:] for row in original]  # every column but the id and session


def test_a_fork_copies_the_whole_context_state_row_as_stored(manager: Manager, db_path: Path, source: str) -> None:
    """R-MGR-10, R-CKP-12: every column of the row, the breaker and the learned window included."""
    fork = manager.fork_session(source)
    assert fork.get_context_state() == STATE
    copied, original = rows_of(db_path, fork.session_id)["context_state"], rows_of(db_path, source)["context_state"]
    assert [row[2:] for row in copied] == [row[2:] for row in original]  # every column but the session


def test_a_fork_that_fails_midway_creates_nothing(manager: Manager, db_path: Path, source: str) -> None:
    # The messages are copied before the todos; a todo insert that aborts must take them along.
    conn = sqlite3.connect(db_path)
    conn.execute(
        f"CREATE TRIGGER refuse_todos BEFORE INSERT ON todos WHEN NEW.session_id != '{source}'"
        " BEGIN SELECT RAISE(ABORT, 'no room for todos'); END"
    )
    conn.commit()
    conn.close()
    with pytest.raises(SessionDatabaseError, match="no room for todos"):
        manager.fork_session(source)
    assert ids(db_path) == [source]
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT COUNT(*) FROM messages WHERE session_id != ?", (source,)).fetchone() == (0,)
    conn.close()


@pytest.mark.parametrize(
    ("at", "error"),
    [(5, InvalidArgument), (2, InvalidArgument), (-1, InvalidArgument), (True, InvalidArgument), (1.0, InvalidArgument)],
)
def test_bad_positions_create_nothing(manager: Manager, db_path: Path, source: str, at: Any, error: type) -> None:
    with pytest.raises(error):
        manager.fork_session(source, at)
    assert ids(db_path) == [source]


def test_unknown_and_malformed_ids_create_nothing(manager: Manager, db_path: Path, source: str) -> None:
    draft = manager.new_session(draft=True)
    with pytest.raises(SessionNotFound):
        manager.fork_session(draft.session_id)
    with pytest.raises(SessionNotFound):
        manager.fork_session("aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa")
    with pytest.raises(InvalidSessionId):
        manager.fork_session(source.upper())
    assert ids(db_path) == [source]


def test_arguments_are_checked_before_the_manager_is_open(db_path: Path, source: str, manager: Manager) -> None:
    manager.close()
    with pytest.raises(InvalidSessionId):
        manager.fork_session("nope")
    with pytest.raises(InvalidArgument):
        manager.fork_session(source, -1)
    with pytest.raises(SessionClosed):
        manager.fork_session(source)


def test_a_read_only_manager_cannot_fork(db_path: Path, source: str, manager: Manager) -> None:
    manager.close()
    before = db_path.read_bytes()
    with Manager(db_path, read_only=True) as reader, pytest.raises(SessionDatabaseError):
        reader.fork_session(source)
    assert db_path.read_bytes() == before
    assert ids(db_path) == [source]


def test_a_fork_is_found_by_search_through_the_index(manager: Manager, source: str) -> None:
    fork = manager.fork_session(source, 1)
    assert manager.search_indexed
    assert {hit.id for hit in manager.search("中文")} == {source, fork.session_id}
