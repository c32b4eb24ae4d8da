"""SQLiteSession: a Session stored in the Manager's SQLite file (SPEC R-SES-1 … R-SES-8, R-DB-4 … R-DB-8, R-CKP-2 … R-CKP-13).

Every method is one transaction on the Manager's shared connection. Each first touches the
session's own row, so that a session deleted by anyone raises SessionNotFound (R-MGR-8)
instead of quietly reading or writing nothing. A draft (R-FIND-2) has no row until its first
write, which inserts it in that write's own transaction: until then it reads as empty, and
once its row has existed it behaves as any session, SessionNotFound after a delete included.
Messages enter and leave the full-text index (R-SRCH-3) in the transaction that adds or
removes them. The checkpoint and the context state follow the messages in the same
transaction as the change that invalidates them (R-CKP-3, R-CKP-11), so no process ever sees
either outlive the messages it describes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import astuple

from ...planning import TodoItem
from ...schema import Message
from ._checkpoint import Checkpoint
from ._context_state import ContextState
from ._index import forget_messages, index_tail
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
from ._sql import SQLITE as SQL
from ._sqlite_db import Database

__all__ = ["SQLiteSession"]

# R-CKP-3: after a pop, a checkpoint covering more messages than are left goes, and so does a
# row whose covered is not an integer (another program's; it can never be valid, R-CKP-5), so
# that no rule here depends on how SQLite compares text or reals with integers. The count is
# a walk of idx_messages_session.
_DROP_UNCOVERED_CHECKPOINT = (
    "DELETE FROM checkpoints WHERE session_id = ? AND (typeof(covered) != 'integer'"
    " OR covered > (SELECT COUNT(*) FROM messages WHERE session_id = ?))"
)
# R-CKP-11: the same rule for the context state, by its cleared_below.
_DROP_UNCOVERED_CONTEXT_STATE = (
    "DELETE FROM context_state WHERE session_id = ? AND (typeof(cleared_below) != 'integer'"
    " OR cleared_below > (SELECT COUNT(*) FROM messages WHERE session_id = ?))"
)
_SAVE_CHECKPOINT = (
    "INSERT OR REPLACE INTO checkpoints (session_id, covered, anchor, summary, created_at) VALUES (?, ?, ?, ?, ?)"
)
_SAVE_CONTEXT_STATE = "INSERT OR REPLACE" + SQL.insert_context_state.removeprefix("INSERT")


class SQLiteSession:
    """One session of a Manager's database; made by ``Manager.new_session`` / ``open_session``."""

    def __init__(self, db: Database, session_id: str, clock: Clock, *, draft: bool = False) -> None:
        self._db = db
        self._id = session_id
        self._clock = clock
        # False while this handle is a draft whose row has never been seen; set once a write
        # of ours commits it or a read finds it (R-FIND-2).
        self._created = not draft

    @property
    def session_id(self) -> str:
        return self._id

    def _now(self) -> int:
        return int(self._clock())

    def _exists(self, cur: sqlite3.Cursor) -> bool:
        """True when the row exists; False for a draft not saved yet, which reads as empty (R-FIND-2).

        Raises:
            SessionNotFound: the row existed once and is gone (R-MGR-8).
        """
        if cur.execute(SQL.session_exists, (self._id,)).fetchone() is None:
            if not self._created:
                return False
            raise SessionNotFound(f"session {self._id} does not exist (was it deleted?)")
        self._created = True
        return True

    def _create_draft_row(self, cur: sqlite3.Cursor) -> None:
        """A draft's first write inserts its row, created_at = updated_at = now (R-FIND-2)."""
        if not self._created:
            now = self._now()
            cur.execute(
                "INSERT OR IGNORE INTO sessions (id, created_at, updated_at) VALUES (?, ?, ?)", (self._id, now, now)
            )

    def _committed(self) -> None:
        """Called after a write that may have inserted a draft's row has committed."""
        self._created = True

    def _touch(self, cur: sqlite3.Cursor) -> None:
        """Set updated_at, first inserting a draft's row; the session must still exist."""
        self._create_draft_row(cur)
        cur.execute(SQL.touch_session, (self._now(), self._id))
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
                rows = cur.execute(SQL.newest_messages, (self._id, min(limit, INT64_MAX))).fetchall()
                rows.reverse()
            else:
                rows = cur.execute(SQL.all_messages, (self._id,)).fetchall()
        return [decode_message_row(*row) for row in rows]

    def get_messages_from(self, start: int) -> list[Message]:
        """The messages from position ``start`` on, in order (R-CKP-4, R-CKP-7).

        Positions count by ``messages.id``, the order of R-SES-3, so a checkpoint's ``covered``
        means the same in every implementation.

        Raises:
            InvalidArgument: ``start`` is negative.
            CorruptRow: a returned row cannot be decoded (rows before ``start`` are not read).
        """
        check_start(start)
        with self._db.read() as cur:
            self._exists(cur)
            rows = cur.execute(SQL.messages_from, (self._id, self._id, min(start, INT64_MAX))).fetchall()
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
            cur.executemany(SQL.insert_message, rows)
            self._db.upkeep(cur, index_tail)  # ours, and whatever others appended before them
        self._committed()

    def pop_message(self) -> Message | None:
        """Remove and return the newest message in one BEGIN IMMEDIATE transaction (R-SES-5).

        Raises:
            CorruptRow: the newest row cannot be decoded; it is rolled back and stays.
        """
        with self._db.write() as cur:
            self._exists(cur)
            row = cur.execute(SQL.newest_message, (self._id,)).fetchone()
            if row is None:
                return None
            message = decode_message_row(*row)
            cur.execute(SQL.delete_message, (row[0],))
            cur.execute(_DROP_UNCOVERED_CHECKPOINT, (self._id, self._id))
            cur.execute(_DROP_UNCOVERED_CONTEXT_STATE, (self._id, self._id))
            self._db.upkeep(cur, lambda c: forget_messages(c, "?", (row[0],)))
            self._touch(cur)
        return message

    def clear(self) -> None:
        """Remove every message, the checkpoint and the context state; the session and its todos stay.

        R-SES-6, R-CKP-3, R-CKP-11.
        """
        with self._db.write() as cur:
            if not self._exists(cur):
                return  # a draft not saved yet: nothing to clear, and no row to create
            self._touch(cur)
            self._db.upkeep(cur, lambda c: forget_messages(c, "SELECT id FROM messages WHERE session_id = ?", (self._id,)))
            cur.execute(SQL.delete_messages, (self._id,))
            cur.execute(SQL.delete_checkpoint, (self._id,))
            cur.execute(SQL.delete_context_state, (self._id,))

    def get_todos(self) -> list[TodoItem]:
        """The saved todo list in order (R-SES-7, R-DB-7)."""
        with self._db.read() as cur:
            self._exists(cur)
            rows = cur.execute(SQL.todos, (self._id,)).fetchall()
        return decode_todo_rows(self._id, rows)

    def save_todos(self, items: Sequence[TodoItem]) -> None:
        """Replace the todo list in one transaction (R-SES-7, R-DB-7)."""
        rows = [(self._id, i, t.id, t.content, t.status) for i, t in enumerate(items)]
        with self._db.write() as cur:
            self._touch(cur)
            cur.execute(SQL.delete_todos, (self._id,))
            cur.executemany(SQL.insert_todo, rows)
        self._committed()

    def get_checkpoint(self) -> Checkpoint | None:
        """The session's checkpoint, or None when it has none (R-CKP-2, R-CKP-6).

        Raises:
            CorruptRow: the row cannot be read as a checkpoint (R-CKP-8); it names the session.
        """
        with self._db.read() as cur:
            self._exists(cur)
            stored = cur.execute(SQL.checkpoint, (self._id,)).fetchone()
        if stored is None:
            return None
        return decode_checkpoint_row(self._id, *stored)

    def save_checkpoint(self, cp: Checkpoint) -> None:
        """Replace the session's checkpoint in one transaction (R-CKP-2, R-CKP-6).

        Only the types are checked; the stored ``created_at`` is the time of the save. It does
        not set the session's updated_at: a checkpoint is a cache of a summary, not a change to
        the conversation, so saving one must not reorder ``list_sessions`` (R-MGR-5).

        Raises:
            SchemaError: a member of the wrong type; nothing is saved.
            SessionNotFound: the session was deleted.
        """
        checked = check_checkpoint(cp)
        self._replace_row(_SAVE_CHECKPOINT, (checked.covered, checked.anchor, checked.summary))

    def _replace_row(self, sql: str, values: tuple[object, ...]) -> None:
        """Replace the session's one row of a cache table in one transaction, leaving updated_at alone.

        The row is ``(session_id, *values, now)``; the clock is read inside the transaction, so
        the times of saves and clears follow the order of their commits.
        """
        with self._db.write() as cur:
            self._create_draft_row(cur)
            self._exists(cur)
            cur.execute(sql, (self._id, *values, self._now()))
        self._committed()

    def get_context_state(self) -> ContextState | None:
        """The session's context state, or None when it has none (R-CKP-9, R-CKP-12).

        Raises:
            CorruptRow: the row cannot be read as a context state (R-CKP-13); it names the session.
        """
        with self._db.read() as cur:
            self._exists(cur)
            stored = cur.execute(SQL.context_state, (self._id,)).fetchone()
        return None if stored is None else decode_context_state_row(self._id, *stored)

    def save_context_state(self, state: ContextState) -> None:
        """Replace the session's context state in one transaction, leaving updated_at alone (R-CKP-9, R-CKP-12).

        As a checkpoint, it is a cache of what the engine measured, not a change to the
        conversation, so it must not reorder ``list_sessions``; ``saved_at`` is the save's time.

        Raises:
            SchemaError: a member that fails R-CKP-10 or is too large; nothing is saved.
            SessionNotFound: the session was deleted.
        """
        checked = check_context_state(state)
        self._replace_row(_SAVE_CONTEXT_STATE, astuple(checked))
