"""Forking a session (SPEC R-MGR-10, R-MGR-11, R-PG-2), on a real SQLite file and on the tests' PostgreSQL
server alike: the source's rows stay exactly as they were, and a fork that fails creates nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness9_ref.memory.storage import (
    InvalidArgument,
    InvalidSessionId,
    Manager,
    SessionClosed,
    SessionDatabaseError,
    SessionNotFound,
)
from tests.fakes import Clock
from tests.memory.helpers import ODD, ODD_STATE, Database, fill

TABLES = ("sessions", "messages", "todos", "checkpoints", "context_state")


def rows_of(database: Database, session_id: str) -> dict[str, list[dict[str, object]]]:
    return {table: database.rows(table, session_id) for table in TABLES}


def without(rows: list[dict[str, object]], *columns: str) -> list[dict[str, object]]:
    return [{c: v for c, v in row.items() if c not in columns} for row in rows]


def ids(database: Database) -> list[str]:
    return [row[0] for row in database.query("SELECT id FROM sessions ORDER BY id")]


@pytest.fixture
def source(stored: Manager, clock: Clock) -> str:
    session_id = fill(stored)
    clock.tick(60)
    return session_id


def test_the_source_is_as_it_was_and_a_fork_keeps_what_a_pop_down_to_it_would(
    stored: Manager, database: Database, source: str
) -> None:
    """R-MGR-10, R-CKP-3, R-CKP-11: the checkpoint (covered 1) and the state (cleared_below 5) go with the messages."""
    before = rows_of(database, source)
    forks = [stored.fork_session(source, at) for at in (None, 0, 1, 5)]
    assert rows_of(database, source) == before
    assert [len(fork.get_messages()) for fork in forks] == [5, 0, 1, 5]
    assert forks[0].get_messages() == ODD
    original = stored.open_session(source)
    for fork in forks:
        assert fork.get_todos() == original.get_todos()
    assert [fork.get_checkpoint() for fork in forks] == [original.get_checkpoint(), None, *[original.get_checkpoint()] * 2]
    assert [fork.get_context_state() for fork in forks] == [ODD_STATE, None, None, ODD_STATE]


def test_a_fork_is_created_now_and_its_rows_are_copied_as_stored(
    stored: Manager, database: Database, source: str, clock: Clock
) -> None:
    """R-MGR-10, R-CKP-12: every column of every row but the ids, the messages' times and the whole context state included."""
    fork = stored.fork_session(source)
    info = {i.id: i for i in stored.list_sessions()}
    assert (info[fork.session_id].created_at, info[fork.session_id].updated_at) == (int(clock()), int(clock()))
    assert stored.list_sessions()[0].id == fork.session_id  # the newest first (R-MGR-5)
    copied, original = rows_of(database, fork.session_id), rows_of(database, source)
    for table in TABLES[1:]:
        assert without(copied[table], "id", "session_id") == without(original[table], "id", "session_id"), table
    assert fork.get_context_state() == ODD_STATE


def test_a_fork_that_fails_midway_creates_nothing(stored: Manager, database: Database, source: str) -> None:
    # The messages are copied before the todos; a todo insert that aborts must take them along.
    database.refuse_inserts("todos", "no room for todos")
    with pytest.raises(SessionDatabaseError, match="no room for todos"):
        stored.fork_session(source)
    assert ids(database) == [source]
    assert database.query("SELECT COUNT(*) FROM messages WHERE session_id != ?", (source,)) == [(0,)]


@pytest.mark.parametrize(
    ("at", "error"),
    [(6, InvalidArgument), (2, InvalidArgument), (3, InvalidArgument), (-1, InvalidArgument), (True, InvalidArgument),
     (1.0, InvalidArgument)],
)
def test_bad_positions_create_nothing(stored: Manager, database: Database, source: str, at: Any, error: type) -> None:
    """Past the end, or a fork that would end with a call whose results it cuts off (2 and 3 are results)."""
    with pytest.raises(error):
        stored.fork_session(source, at)
    assert ids(database) == [source]


def test_unknown_and_malformed_ids_create_nothing(stored: Manager, database: Database, source: str) -> None:
    draft = stored.new_session(draft=True)
    with pytest.raises(SessionNotFound):
        stored.fork_session(draft.session_id)
    with pytest.raises(SessionNotFound):
        stored.fork_session("aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa")
    with pytest.raises(InvalidSessionId):
        stored.fork_session(source.upper())
    assert ids(database) == [source]


def test_arguments_are_checked_before_the_manager_is_open(source: str, stored: Manager) -> None:
    stored.close()
    with pytest.raises(InvalidSessionId):
        stored.fork_session("nope")
    with pytest.raises(InvalidArgument):
        stored.fork_session(source, -1)
    with pytest.raises(SessionClosed):
        stored.fork_session(source)


def test_a_fork_is_found_by_search_through_the_index(stored: Manager, source: str) -> None:
    fork = stored.fork_session(source, 1)
    assert stored.search_indexed
    assert {hit.id for hit in stored.search("中文")} == {source, fork.session_id}


def test_a_read_only_manager_cannot_fork(db_path: Path, manager: Manager) -> None:
    """R-DB-12: SQLite's read-only Manager."""
    source = fill(manager)
    manager.close()
    before = db_path.read_bytes()
    with Manager(db_path, read_only=True) as reader, pytest.raises(SessionDatabaseError):
        reader.fork_session(source)
    assert db_path.read_bytes() == before
