"""SqlSession: a StatefulSession in a Manager's database, SQLite or PostgreSQL (SPEC R-SES-1 … R-SES-8, R-DB-4 … R-DB-8).

Also R-CKP-2 … R-CKP-13, R-PG-2, R-PG-4 and R-PG-7.

Written once for both databases; what they do differently is the ``Dialect``'s. Every method
is one transaction. Each first touches the session's own row, so that a session deleted by
anyone raises SessionNotFound (R-MGR-8) instead of quietly reading or writing nothing; a write
that changes the session locks the row first (PostgreSQL's ``FOR UPDATE`` or the UPDATE of
updated_at; SQLite's write transaction holds the whole file), so writers of one session take
turns whatever process they are in and a batch's ids are contiguous (R-SES-8, R-PG-7). A draft
(R-FIND-2) has no row until its first write, which inserts it in that write's own transaction:
until then it reads as empty, and once its row has existed it behaves as any session,
SessionNotFound after a delete included. Messages enter and leave the search index (R-SRCH-3)
in the transaction that adds or removes them. The checkpoint and the context state follow the
messages in the same transaction as the change that invalidates them (R-CKP-3, R-CKP-11), so no
process ever sees either outlive the messages it describes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple
from typing import Any

from ...planning import TodoItem
from ...schema import Message
from ._checkpoint import Checkpoint
from ._context_state import ContextState
from ._dialect import Cursor, Dialect
from ._file_changes import FileChangeRecord, check_file_change, undo_selection
from ._rows import (
    decode_checkpoint_row,
    decode_context_state_row,
    decode_file_change_row,
    decode_message_row,
    decode_todo_rows,
    encode_tool_calls,
)
from ._session import (
    INT64_MAX,
    Clock,
    SessionNotFound,
    check_checkpoint,
    check_context_state,
    check_limit,
    check_start,
)

__all__ = ["SqlSession"]


class SqlSession:
    """One session of a Manager's database; made by ``Manager.new_session`` / ``open_session``."""

    def __init__(
        self, dialect: Dialect, session_id: str, clock: Clock, *, draft: bool = False, origin: tuple[str, str] = ("", "")
    ) -> None:
        self._dialect = dialect
        self._origin = origin  # R-FIND-4: the workdir and provider a draft's row records
        self._db = dialect.db
        self._sql = dialect.sql
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

    def _exists(self, cur: Cursor, lock: bool = False) -> bool:
        """True when the row exists (locked for the write when ``lock``); False for a draft not saved yet (R-FIND-2).

        Such a draft reads as empty.

        Raises:
            SessionNotFound: the row existed once and is gone (R-MGR-8).
        """
        sql = self._sql.session_exists + (self._dialect.lock_row if lock else "")
        if cur.execute(sql, (self._id,)).fetchone() is None:
            if not self._created:
                return False
            raise SessionNotFound(f"session {self._id} does not exist (was it deleted?)")
        self._created = True
        return True

    def _create_draft_row(self, cur: Cursor) -> None:
        """A draft's first write inserts its row, created_at = updated_at = now (R-FIND-2)."""
        if not self._created:
            now = self._now()
            cur.execute(self._dialect.insert_draft, (self._id, now, now, *self._origin))

    def _committed(self) -> None:
        """Called after a write that may have inserted a draft's row has committed."""
        self._created = True

    def _touch(self, cur: Cursor) -> None:
        """Set updated_at (which locks the row), first inserting a draft's row; the session must still exist."""
        self._create_draft_row(cur)
        cur.execute(self._sql.touch_session, (self._now(), self._id))
        if cur.rowcount == 0:
            raise SessionNotFound(f"session {self._id} does not exist (was it deleted?)")

    def _message(self, row: Sequence[Any]) -> Message:
        """A ``messages`` row ``(id, role, content, tool_calls, tool_call_id)`` as a Message (R-DB-5, R-PG-4)."""
        row_id, role, content, tool_calls, tool_call_id = row
        text = self._dialect.text
        return decode_message_row(row_id, role, text(content), tool_calls, text(tool_call_id))

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
                rows = cur.execute(self._sql.newest_messages, (self._id, min(limit, INT64_MAX))).fetchall()
                rows.reverse()
            else:
                rows = cur.execute(self._sql.all_messages, (self._id,)).fetchall()
        return [self._message(row) for row in rows]

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
            rows = cur.execute(self._sql.messages_from, (self._id, self._id, min(start, INT64_MAX))).fetchall()
        return [self._message(row) for row in rows]

    def add_messages(self, msgs: Sequence[Message]) -> None:
        """Append ``msgs`` and set updated_at in one transaction (R-SES-4, R-DB-8, R-PG-7)."""
        if not msgs:
            with self._db.read() as cur:
                self._exists(cur)  # nothing to add, but a closed or deleted session still fails
            return
        now = self._now()
        row = self._dialect.message_row
        rows = [row(self._id, m.role, m.content, encode_tool_calls(m.tool_calls), m.tool_call_id or None, now) for m in msgs]
        with self._db.write() as cur:
            self._touch(cur)
            cur.executemany(self._sql.insert_message, rows)
            self._dialect.after_add(cur)  # ours, and whatever others appended before them
        self._committed()

    def pop_message(self) -> Message | None:
        """Remove and return the newest message in one write transaction (R-SES-5).

        Raises:
            CorruptRow: the newest row cannot be decoded; it is rolled back and stays.
        """
        with self._db.write() as cur:
            self._exists(cur, lock=True)
            row = cur.execute(self._sql.newest_message, (self._id,)).fetchone()
            if row is None:
                return None
            message = self._message(row)
            cur.execute(self._sql.delete_message, (row[0],))
            cur.execute(self._dialect.drop_uncovered_checkpoint, (self._id, self._id))
            cur.execute(self._dialect.drop_uncovered_context_state, (self._id, self._id))
            self._dialect.forget(cur, self._sql.placeholder, (row[0],))
            self._touch(cur)
        return message

    def clear(self) -> None:
        """Remove every message, the checkpoint and the context state; the session and its todos stay.

        R-SES-6, R-CKP-3, R-CKP-11; the file changes go too (R-UNDO-2b).
        """
        with self._db.write() as cur:
            if not self._exists(cur, lock=True):
                return  # a draft not saved yet: nothing to clear, and no row to create
            self._touch(cur)
            self._dialect.forget(cur, self._sql.message_ids, (self._id,))
            cur.execute(self._sql.delete_messages, (self._id,))
            cur.execute(self._sql.delete_checkpoint, (self._id,))
            cur.execute(self._sql.delete_context_state, (self._id,))
            cur.execute(self._sql.delete_file_changes, (self._id,))  # R-UNDO-2b: no call is left to undo

    def get_todos(self) -> list[TodoItem]:
        """The saved todo list in order (R-SES-7, R-DB-7)."""
        with self._db.read() as cur:
            self._exists(cur)
            rows = cur.execute(self._sql.todos, (self._id,)).fetchall()
        text = self._dialect.text
        return decode_todo_rows(self._id, ((text(i), text(c), s) for i, c, s in rows))

    def save_todos(self, items: Sequence[TodoItem]) -> None:
        """Replace the todo list in one transaction (R-SES-7, R-DB-7)."""
        encode = self._dialect.encode
        rows = [(self._id, i, encode(t.id), encode(t.content), t.status) for i, t in enumerate(items)]
        with self._db.write() as cur:
            self._touch(cur)
            cur.execute(self._sql.delete_todos, (self._id,))
            cur.executemany(self._sql.insert_todo, rows)
        self._committed()

    def get_checkpoint(self) -> Checkpoint | None:
        """The session's checkpoint, or None when it has none (R-CKP-2, R-CKP-6).

        Raises:
            CorruptRow: the row cannot be read as a checkpoint (R-CKP-8); it names the session.
        """
        with self._db.read() as cur:
            self._exists(cur)
            stored = cur.execute(self._sql.checkpoint, (self._id,)).fetchone()
        if stored is None:
            return None
        text = self._dialect.text
        return decode_checkpoint_row(self._id, stored[0], text(stored[1]), text(stored[2]))

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
        encode = self._dialect.encode
        self._replace_row(
            self._dialect.save_checkpoint, (checked.covered, encode(checked.anchor), encode(checked.summary))
        )

    def _replace_row(self, sql: str, values: tuple[object, ...]) -> None:
        """Replace the session's one row of a cache table in one transaction, leaving updated_at alone.

        The row is ``(session_id, *values, now)``; the clock is read inside the transaction, so
        the times of saves and clears follow the order of their commits.
        """
        with self._db.write() as cur:
            self._create_draft_row(cur)
            self._exists(cur, lock=True)
            cur.execute(sql, (self._id, *values, self._now()))
        self._committed()

    def get_context_state(self) -> ContextState | None:
        """The session's context state, or None when it has none (R-CKP-9, R-CKP-12).

        Raises:
            CorruptRow: the row cannot be read as a context state (R-CKP-13); it names the session.
        """
        with self._db.read() as cur:
            self._exists(cur)
            stored = cur.execute(self._sql.context_state, (self._id,)).fetchone()
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
        self._replace_row(self._dialect.save_context_state, astuple(checked))

    def add_file_change(self, change: FileChangeRecord) -> None:
        """Record one change of a file by a tool call, leaving updated_at alone (R-UNDO-2a).

        A draft's row is inserted with it (R-FIND-2b): the file has changed, so its record must
        be kept even when the messages of the call are never saved.

        Raises:
            SchemaError: a member of the wrong type; nothing is saved.
            SessionNotFound: the session was deleted.
        """
        checked = check_file_change(change)
        encode = self._dialect.encode
        row = (encode(checked.tool_call_id), encode(checked.path), int(checked.existed), checked.before, checked.after)
        with self._db.write() as cur:
            self._create_draft_row(cur)
            self._exists(cur, lock=True)
            cur.execute(self._sql.insert_file_change, (self._id, *row, self._now()))
        self._committed()

    def _file_changes(self, cur: Cursor) -> list[FileChangeRecord]:
        text = self._dialect.text
        return [
            decode_file_change_row(self._id, row_id, text(call_id), text(path), existed, before, after)
            for row_id, call_id, path, existed, before, after in cur.execute(self._sql.file_changes, (self._id,))
        ]

    def file_changes(self) -> list[FileChangeRecord]:
        """Every recorded change, oldest first (R-UNDO-2b).

        Raises:
            CorruptRow: a row cannot be read as a change; it names the row.
        """
        with self._db.read() as cur:
            self._exists(cur)
            return self._file_changes(cur)

    def file_changes_from(self, at: int) -> list[FileChangeRecord]:
        """The changes a rewind to ``at`` undoes, newest first, read with the messages in one transaction (R-UNDO-3a).

        Raises:
            InvalidArgument: ``at`` is negative.
            CorruptRow: a message or a change cannot be read.
        """
        check_start(at)
        with self._db.read() as cur:
            self._exists(cur)
            messages = [self._message(row) for row in cur.execute(self._sql.all_messages, (self._id,)).fetchall()]
            records = self._file_changes(cur)
        return undo_selection(messages, at, records)
