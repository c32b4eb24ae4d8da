"""Forking a session on the private PostgreSQL server (SPEC R-MGR-10, R-MGR-11, R-PG-2): the source's
rows stay exactly as they were, and a fork that fails midway creates nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from harness9_ref.memory.storage import InvalidArgument, Manager, SessionDatabaseError
from tests.postgres.test_pg_store import ODD, column, fill

if TYPE_CHECKING:
    import psycopg
else:  # a machine without the postgres extra skips this module, saying why
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[postgres]')")

TABLES = {
    "sessions": "SELECT id, created_at, updated_at FROM sessions WHERE id = %s",
    "messages": "SELECT id, role, content, tool_calls, tool_call_id, created_at FROM messages WHERE session_id = %s ORDER BY id",
    "todos": "SELECT * FROM todos WHERE session_id = %s ORDER BY position",
    "checkpoints": "SELECT * FROM checkpoints WHERE session_id = %s",
    "context_state": "SELECT * FROM context_state WHERE session_id = %s",
}


def rows_of(url: str, session_id: str) -> dict[str, list[tuple[Any, ...]]]:
    with psycopg.connect(url) as conn:
        return {table: conn.execute(sql, (session_id,)).fetchall() for table, sql in TABLES.items()}


def test_a_fork_copies_every_value_and_leaves_the_source_as_it_was(pg_url: str) -> None:
    with Manager(pg_url) as manager:
        source = fill(manager)
        before = rows_of(pg_url, source)
        fork = manager.fork_session(source)
        partial = manager.fork_session(source, 1)
        assert rows_of(pg_url, source) == before
        assert fork.get_messages() == ODD
        assert fork.get_todos() == manager.open_session(source).get_todos()
        assert fork.get_checkpoint() == manager.open_session(source).get_checkpoint()  # covered 2 of 3
        assert fork.get_context_state() == manager.open_session(source).get_context_state()
        assert partial.get_messages() == ODD[:1]
        assert (partial.get_checkpoint(), partial.get_context_state()) == (None, None)
        copied = rows_of(pg_url, fork.session_id)["messages"]
        assert [row[1:] for row in copied] == [row[1:] for row in before["messages"]]  # bytes as stored


def test_a_fork_that_fails_midway_creates_nothing(pg_url: str) -> None:
    with Manager(pg_url) as manager:
        source = fill(manager)
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(
                "CREATE FUNCTION refuse_todos() RETURNS trigger LANGUAGE plpgsql AS"
                " $$ BEGIN RAISE EXCEPTION 'no room for todos'; END $$"
            )
            conn.execute("CREATE TRIGGER refuse_todos BEFORE INSERT ON todos FOR EACH ROW EXECUTE FUNCTION refuse_todos()")
        with pytest.raises(SessionDatabaseError, match="no room for todos"):
            manager.fork_session(source)
        with pytest.raises(InvalidArgument):
            manager.fork_session(source, 4)
        with pytest.raises(InvalidArgument):
            manager.fork_session(source, 2)  # message 2 is a result
        assert [info.id for info in manager.list_sessions()] == [source]
        assert column(pg_url, "SELECT COUNT(*) FROM messages") == [(len(ODD),)]
