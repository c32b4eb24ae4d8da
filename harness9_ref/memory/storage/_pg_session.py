"""PostgresSession: a Session stored in a PostgreSQL database (SPEC R-SES, R-CKP-2 … R-CKP-13, R-FIND-2, R-PG-4, R-PG-7).

The semantics are SQLiteSession's (R-PG-2); only the SQL differs. Every write first locks the
session's row (``FOR UPDATE``, or the UPDATE of updated_at), so writers of one session take
turns whatever process they are in, a batch's ids are contiguous among the session's messages,
and a session deleted meanwhile is seen as gone (R-MGR-8, R-PG-7). Text columns that may hold
any string are BYTEA holding UTF-8 (R-PG-4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple
from typing import TYPE_CHECKING, Any, Final

from ...planning import TodoItem
from ...schema import Message
from ._checkpoint import Checkpoint
from ._context_state import ContextState
from ._pg_db import PgDatabase, as_bytes, as_text
from ._rows import decode_checkpoint_row, decode_context_state_row, decode_message_row, decode_todo_rows, encode_tool_calls
from ._session import (
    INT64_MAX,
    Clock,
    SessionNotFound,
    check_checkpoint,
    check_context_state,
    check_limit,
    check_start,
)
from ._sql import POSTGRES as SQL
from ._sql import STATE_COLUMN_NAMES

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresSession", "decode_pg_message"]

_DROP_UNCOVERED_CHECKPOINT: Final = (
    "DELETE FROM checkpoints WHERE session_id = %s AND covered > (SELECT COUNT(*) FROM messages WHERE session_id = %s)"
)


def _upsert(insert: str, *columns: str) -> str:
    """``insert`` made to replace the session's row instead, as SQLite's INSERT OR REPLACE does."""
    return insert + " ON CONFLICT (session_id) DO UPDATE SET " + ", ".join(f"{c} = EXCLUDED.{c}" for c in columns)


_SAVE_CHECKPOINT: Final = _upsert(SQL.insert_checkpoint, "covered", "anchor", "summary", "created_at")
_SAVE_CONTEXT_STATE: Final = _upsert(SQL.insert_context_state, *STATE_COLUMN_NAMES, "saved_at")
_DROP_UNCOVERED_CONTEXT_STATE: Final = (
    "DELETE FROM context_state WHERE session_id = %s"
    " AND cleared_below > (SELECT COUNT(*) FROM messages WHERE session_id = %s)"
)  # R-CKP-11; BIGINT columns hold nothing but integers


def decode_pg_message(row: Sequence[Any]) -> Message:
    """A ``messages`` row ``(id, role, content, tool_calls, tool_call_id)`` as a Message (R-DB-5, R-PG-4)."""
    row_id, role, content, tool_calls, tool_call_id = row
    return decode_message_row(row_id, role, as_text(content), tool_calls, as_text(tool_call_id))


class PostgresSession:
    """One session of a Manager's PostgreSQL database; made by ``Manager.new_session`` / ``open_session``."""

    def __init__(self, db: PgDatabase, session_id: str, clock: Clock, *, draft: bool = False) -> None:
        self._db = db
        self._id = session_id
        self._clock = clock
        self._created = not draft  # as in SQLiteSession (R-FIND-2)

    @property
    def session_id(self) -> str:
        return self._id

    def _now(self) -> int:
        return int(self._clock())

    def _exists(self, cur: psycopg.Cursor[Any], lock: bool = False) -> bool:
        """True when the row exists (locked for the write when ``lock``); False for an unsaved draft.

        Raises:
            SessionNotFound: the row existed once and is gone (R-MGR-8).
        """
        sql = SQL.session_exists + (" FOR UPDATE" if lock else "")
        if cur.execute(sql, (self._id,)).fetchone() is None:
            if not self._created:
                return False
            raise SessionNotFound(f"session {self._id} does not exist (was it deleted?)")
        self._created = True
        return True

    def _create_draft_row(self, cur: psycopg.Cursor[Any]) -> None:
        if not self._created:
            now = self._now()
            cur.execute(SQL.insert_session + " ON CONFLICT (id) DO NOTHING", (self._id, now, now))

    def _touch(self, cur: psycopg.Cursor[Any]) -> None:
        """Set updated_at (which locks the row), first inserting a draft's row; the session must exist."""
        self._create_draft_row(cur)
        cur.execute(SQL.touch_session, (self._now(), self._id))
        if cur.rowcount == 0:
            raise SessionNotFound(f"session {self._id} does not exist (was it deleted?)")

    def get_messages(self, limit: int = 0) -> list[Message]:
        check_limit(limit)
        with self._db.read() as cur:
            self._exists(cur)
            if limit:
                found = cur.execute(SQL.newest_messages, (self._id, min(limit, INT64_MAX))).fetchall()
                found.reverse()
            else:
                found = cur.execute(SQL.all_messages, (self._id,)).fetchall()
        return [decode_pg_message(row) for row in found]

    def get_messages_from(self, start: int) -> list[Message]:
        check_start(start)
        with self._db.read() as cur:
            self._exists(cur)
            rows = cur.execute(SQL.messages_from, (self._id, self._id, min(start, INT64_MAX))).fetchall()
        return [decode_pg_message(row) for row in rows]

    def add_messages(self, msgs: Sequence[Message]) -> None:
        if not msgs:
            with self._db.read() as cur:
                self._exists(cur)
            return
        now = self._now()
        rows = [
            (
                self._id,
                m.role,
                as_bytes(m.content),
                encode_tool_calls(m.tool_calls),
                as_bytes(m.tool_call_id) if m.tool_call_id else None,
                now,
                *self._db.derived(m.content),  # R-PG-11
            )
            for m in msgs
        ]
        with self._db.write() as cur:
            self._touch(cur)
            cur.executemany(SQL.insert_message, rows)
        self._created = True

    def pop_message(self) -> Message | None:
        with self._db.write() as cur:
            self._exists(cur, lock=True)
            row = cur.execute(SQL.newest_message, (self._id,)).fetchone()
            if row is None:
                return None
            message = decode_pg_message(row)
            cur.execute(SQL.delete_message, (row[0],))
            cur.execute(_DROP_UNCOVERED_CHECKPOINT, (self._id, self._id))
            cur.execute(_DROP_UNCOVERED_CONTEXT_STATE, (self._id, self._id))
            self._touch(cur)
        return message

    def clear(self) -> None:
        with self._db.write() as cur:
            if not self._exists(cur, lock=True):
                return
            self._touch(cur)
            cur.execute(SQL.delete_messages, (self._id,))
            cur.execute(SQL.delete_checkpoint, (self._id,))
            cur.execute(SQL.delete_context_state, (self._id,))

    def get_todos(self) -> list[TodoItem]:
        with self._db.read() as cur:
            self._exists(cur)
            rows = cur.execute(SQL.todos, (self._id,)).fetchall()
        return decode_todo_rows(self._id, ((as_text(i), as_text(c), s) for i, c, s in rows))

    def save_todos(self, items: Sequence[TodoItem]) -> None:
        rows = [(self._id, i, as_bytes(t.id), as_bytes(t.content), t.status) for i, t in enumerate(items)]
        with self._db.write() as cur:
            self._touch(cur)
            cur.execute(SQL.delete_todos, (self._id,))
            cur.executemany(SQL.insert_todo, rows)
        self._created = True

    def get_checkpoint(self) -> Checkpoint | None:
        with self._db.read() as cur:
            self._exists(cur)
            stored = cur.execute(SQL.checkpoint, (self._id,)).fetchone()
        if stored is None:
            return None
        return decode_checkpoint_row(self._id, stored[0], as_text(stored[1]), as_text(stored[2]))

    def _replace_row(self, upsert: str, values: tuple[object, ...]) -> None:
        """Replace the session's one row ``(session_id, *values, now)`` of a cache table, leaving updated_at alone.

        R-CKP-2, R-CKP-9; the clock is read inside the transaction, as in SQLiteSession.
        """
        with self._db.write() as cur:
            self._create_draft_row(cur)
            self._exists(cur, lock=True)
            cur.execute(upsert, (self._id, *values, self._now()))
        self._created = True

    def save_checkpoint(self, cp: Checkpoint) -> None:
        """Replace the checkpoint, leaving updated_at alone (R-CKP-2)."""
        checked = check_checkpoint(cp)
        self._replace_row(_SAVE_CHECKPOINT, (checked.covered, as_bytes(checked.anchor), as_bytes(checked.summary)))

    def get_context_state(self) -> ContextState | None:
        with self._db.read() as cur:
            self._exists(cur)
            stored = cur.execute(SQL.context_state, (self._id,)).fetchone()
        return None if stored is None else decode_context_state_row(self._id, *stored)

    def save_context_state(self, state: ContextState) -> None:
        """Replace the context state, leaving updated_at alone (R-CKP-9)."""
        checked = check_context_state(state)
        self._replace_row(_SAVE_CONTEXT_STATE, astuple(checked))
