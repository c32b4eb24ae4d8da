"""SQLiteSession: a Session stored in the Manager's SQLite file (SPEC R-SES-1 … R-SES-8, R-DB-4 … R-DB-8; seed 5.1).

Every method is one transaction on the Manager's shared connection. Each first touches the
session's own row, so that a session deleted by anyone raises SessionNotFound (R-MGR-8)
instead of quietly reading or writing nothing.
"""

from __future__ import annotations

import sqlite3
from typing import Sequence

from ..planning import TodoItem
from ..schema import Message
from ._db import Database, decode_message_row
from ._session import Clock, CorruptRow, SessionNotFound, check_limit
from ._tool_calls_column import encode_tool_calls

__all__ = ["SQLiteSession"]

_SQLITE_MAX_INT = 2**63 - 1  # a larger limit means "all" and must not overflow the binding
_SELECT_MESSAGES = "SELECT id, role, content, tool_calls, tool_call_id FROM messages WHERE session_id = ?"


class SQLiteSession:
    """One session of a Manager's database; made by ``Manager.new_session`` / ``open_session``."""

    def __init__(self, db: Database, session_id: str, clock: Clock) -> None:
        self._db = db
        self._id = session_id
        self._clock = clock

    @property
    def session_id(self) -> str:
        return self._id

    def _now(self) -> int:
        return int(self._clock())

    def _exists(self, cur: sqlite3.Cursor) -> None:
        if cur.execute("SELECT 1 FROM sessions WHERE id = ?", (self._id,)).fetchone() is None:
            raise SessionNotFound(f"session {self._id} does not exist (was it deleted?)")

    def _touch(self, cur: sqlite3.Cursor) -> None:
        """Set updated_at; the session must still exist."""
        cur.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (self._now(), self._id))
        if cur.rowcount == 0:
            raise SessionNotFound(f"session {self._id} does not exist (was it deleted?)")

    def get_messages(self, limit: int = 0) -> list[Message]:
        """All messages, or the newest ``limit`` in ascending order (R-SES-3, R-DB-11).

        Raises:
            InvalidArgument: ``limit`` is negative.
            CorruptRow: a row cannot be decoded; no partial list is returned.
        """
        check_limit(limit)
        with self._db.read() as cur:
            self._exists(cur)
            if limit:
                rows = cur.execute(
                    _SELECT_MESSAGES + " ORDER BY id DESC LIMIT ?", (self._id, min(limit, _SQLITE_MAX_INT))
                ).fetchall()
                rows.reverse()
            else:
                rows = cur.execute(_SELECT_MESSAGES + " ORDER BY id ASC", (self._id,)).fetchall()
        return [decode_message_row(*row) for row in rows]

    def add_messages(self, msgs: Sequence[Message]) -> None:
        """Append ``msgs`` and set updated_at in one transaction (R-SES-4, R-DB-8)."""
        if not msgs:
            with self._db.read() as cur:
                self._exists(cur)  # nothing to add, but a closed or deleted session still fails
            return
        now = self._now()
        rows = [
            (self._id, m.role, m.content, encode_tool_calls(m.tool_calls), m.tool_call_id or None, now) for m in msgs
        ]
        with self._db.write() as cur:
            self._touch(cur)
            cur.executemany(
                "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )

    def pop_message(self) -> Message | None:
        """Remove and return the newest message in one BEGIN IMMEDIATE transaction (R-SES-5).

        Raises:
            CorruptRow: the newest row cannot be decoded; it is rolled back and stays.
        """
        with self._db.write() as cur:
            self._exists(cur)
            row = cur.execute(_SELECT_MESSAGES + " ORDER BY id DESC LIMIT 1", (self._id,)).fetchone()
            if row is None:
                return None
            message = decode_message_row(*row)
            cur.execute("DELETE FROM messages WHERE id = ?", (row[0],))
            self._touch(cur)
        return message

    def clear(self) -> None:
        """Remove every message; the session and its todos stay (R-SES-6)."""
        with self._db.write() as cur:
            self._touch(cur)
            cur.execute("DELETE FROM messages WHERE session_id = ?", (self._id,))

    def get_todos(self) -> list[TodoItem]:
        """The saved todo list in order (R-SES-7, R-DB-7)."""
        with self._db.read() as cur:
            self._exists(cur)
            rows = cur.execute(
                "SELECT position, id, content, status FROM todos WHERE session_id = ? ORDER BY position", (self._id,)
            ).fetchall()
        try:
            return [TodoItem(item_id, content, status) for _, item_id, content, status in rows]
        except (ValueError, TypeError) as exc:
            raise CorruptRow(f"todos of session {self._id} cannot be decoded: {exc}") from None

    def save_todos(self, items: Sequence[TodoItem]) -> None:
        """Replace the todo list in one transaction (R-SES-7, R-DB-7)."""
        rows = [(self._id, i, t.id, t.content, t.status) for i, t in enumerate(items)]
        with self._db.write() as cur:
            self._touch(cur)
            cur.execute("DELETE FROM todos WHERE session_id = ?", (self._id,))
            cur.executemany("INSERT INTO todos (session_id, position, id, content, status) VALUES (?, ?, ?, ?, ?)", rows)
