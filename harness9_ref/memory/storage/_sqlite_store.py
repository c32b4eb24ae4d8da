"""The SQLite store: a Manager's calls on one SQLite file (SPEC R-MGR, R-DB, R-FIND, R-SRCH, R-PRUNE-1, R-PG-9).

Every call is one transaction on the file's one connection (``Database``); the sessions it
hands out are ``SQLiteSession``s on the same connection (R-MGR-2).
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from pathlib import Path

from ._find import SessionSummary, recent_sessions, resolve_session_id
from ._index import forget_messages, index_tail, mark_damaged
from ._prune import PruneResult, prune
from ._search import SearchHit, search
from ._session import Clock, SessionDatabaseError, SessionInfo, SessionNotFound
from ._sql import SQLITE as SQL
from ._sqlite_db import Database
from ._sqlite_session import SQLiteSession
from ._store import (
    SessionRecord,
    fork_length,
    record_int,
    record_optional_text,
    record_state,
    record_text,
    refuse_existing,
)

__all__ = ["SQLiteStore"]

_FORGET_SESSION = "SELECT id FROM messages WHERE session_id = ?"
# R-MGR-10: a checkpoint or context state whose number is not an integer (another program's) is
# not copied, as a pop removes it (R-CKP-3, R-CKP-11), whatever SQLite's comparison of a real
# or a text with an integer would say.
_FORK_CHECKPOINT = SQL.fork_checkpoint + " AND typeof(covered) = 'integer'"
_FORK_CONTEXT_STATE = SQL.fork_context_state + " AND typeof(cleared_below) = 'integer'"


class SQLiteStore:
    """One SQLite file (R-DB); ``db`` is its connection."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.name = str(path)
        self.db = Database(path, read_only=read_only)

    @property
    def indexed(self) -> bool:
        return self.db.indexed

    def new_session(self, session_id: str, clock: Clock, draft: bool) -> SQLiteSession:
        if draft:
            # R-MGR-3 holds for a draft too: an id already taken is refused now, never merged
            # into by the draft's first write (R-FIND-2).
            with self.db.read() as cur:
                if cur.execute(SQL.session_exists, (session_id,)).fetchone() is not None:
                    raise SessionDatabaseError(f"a session with id {session_id} already exists in {self.path}")
            return SQLiteSession(self.db, session_id, clock, draft=True)
        now = int(clock())
        with self.db.write() as cur:
            cur.execute(SQL.insert_session, (session_id, now, now))
        return SQLiteSession(self.db, session_id, clock)

    def open_session(self, session_id: str, clock: Clock) -> SQLiteSession:
        with self.db.read() as cur:
            if cur.execute(SQL.session_exists, (session_id,)).fetchone() is None:
                raise SessionNotFound(f"no session with id {session_id!r} in {self.path}")
        return SQLiteSession(self.db, session_id, clock)

    def list_sessions(self) -> list[SessionInfo]:
        with self.db.read() as cur:
            rows = cur.execute(SQL.list_sessions).fetchall()
        return [SessionInfo(*row) for row in rows]

    def delete_rows(self, session_id: str) -> None:
        with self.db.write() as cur:
            self.db.upkeep(cur, lambda c: forget_messages(c, _FORGET_SESSION, (session_id,)))
            cur.execute(SQL.delete_session, (session_id,))

    def resolve_session_id(self, text: str) -> str:
        with self.db.read() as cur:
            return resolve_session_id(cur, text)

    def recent_sessions(self, limit: int, offset: int) -> list[SessionSummary]:
        with self.db.read() as cur:
            return recent_sessions(cur, limit, offset)

    def search(self, terms: list[str], limit: int) -> list[SearchHit]:
        with self.db.read() as cur:
            hits, index_failed = search(cur, terms, limit, self.db.indexed)
        if index_failed:  # scan from now on; the next open rebuilds the index
            self.db.indexed = False
            try:
                with self.db.write() as cur:
                    mark_damaged(cur)
            except SessionDatabaseError:
                pass  # busy: the answer stands, and the next failure marks it again
        return hits

    def prune(
        self, tool_results_dir: Path | None, now: int, older_than: object, dry_run: bool, remove: Callable[[Path], None]
    ) -> PruneResult:
        return prune(self.db, tool_results_dir, now, older_than, dry_run, remove)

    def fork_session(self, source_id: str, new_id: str, at: int | None, clock: Clock) -> SQLiteSession:
        """One write transaction: the source read and the new session written, or nothing (R-MGR-10, R-MGR-11).

        Rows are copied by ``INSERT … SELECT``, so every column value is the source's as stored,
        never decoded and encoded again, and the source is only read.
        """
        created = int(clock())
        with self.db.write() as cur:
            if cur.execute(SQL.session_exists, (source_id,)).fetchone() is None:
                raise SessionNotFound(f"no session with id {source_id!r} in {self.path}")
            count = cur.execute(SQL.count_messages, (source_id,)).fetchone()[0]
            kept = fork_length(source_id, count, at, lambda i: bool(cur.execute(SQL.result_at, (source_id, i)).fetchone()[0]))
            if cur.execute(SQL.session_exists, (new_id,)).fetchone() is not None:
                raise SessionDatabaseError(f"a session with id {new_id} already exists in {self.path}")
            cur.execute(SQL.insert_session, (new_id, created, created))
            cur.execute(SQL.fork_messages, (new_id, source_id, kept))
            cur.execute(SQL.fork_todos, (new_id, source_id))
            cur.execute(_FORK_CHECKPOINT, (new_id, source_id, kept))
            cur.execute(_FORK_CONTEXT_STATE, (new_id, source_id, kept))
            self.db.upkeep(cur, index_tail)
        return SQLiteSession(self.db, new_id, clock)

    def export_sessions(self) -> list[SessionRecord]:
        """Every session in one read transaction, ordered by id (R-PG-9)."""
        records = []
        with self.db.read() as cur:
            for session_id, created_at, updated_at in cur.execute(SQL.export_sessions).fetchall():
                records.append(_read_record(cur, session_id, created_at, updated_at))
        return records

    def import_sessions(self, records: list[SessionRecord], overwrite: bool) -> None:
        """All of ``records`` in one write transaction, or nothing (R-PG-9)."""
        with self.db.write() as cur:
            ids = [record.id for record in records]
            refuse_existing(
                [i for i in ids if cur.execute(SQL.session_exists, (i,)).fetchone()],
                self.name,
                overwrite,
            )
            for record in records:
                self.db.upkeep(cur, functools.partial(forget_messages, ids_sql=_FORGET_SESSION, params=(record.id,)))
                cur.execute(SQL.delete_session, (record.id,))
                _write_record(cur, record)
            self.db.upkeep(cur, index_tail)

    def close(self) -> None:
        self.db.close()


def _read_record(cur: sqlite3.Cursor, session_id: str, created_at: object, updated_at: object) -> SessionRecord:
    where = f"session {session_id}"
    messages = tuple(
        (
            record_text(role, f"messages row {row_id}"),
            record_text(content, f"messages row {row_id}"),
            record_optional_text(tool_calls, f"messages row {row_id}"),
            record_optional_text(tool_call_id, f"messages row {row_id}"),
            record_int(row_created, f"messages row {row_id}"),
        )
        for row_id, role, content, tool_calls, tool_call_id, row_created in cur.execute(
            SQL.export_messages, (session_id,)
        ).fetchall()
    )
    todos = tuple(
        (record_text(i, f"todos of {where}"), record_text(c, f"todos of {where}"), record_text(s, f"todos of {where}"))
        for i, c, s in cur.execute(SQL.todos, (session_id,)).fetchall()
    )
    found = cur.execute(SQL.export_checkpoint, (session_id,)).fetchone()
    checkpoint = None
    if found is not None:
        cp_where = f"the checkpoint of {where}"
        checkpoint = (
            record_int(found[0], cp_where),
            record_text(found[1], cp_where),
            record_text(found[2], cp_where),
            record_int(found[3], cp_where),
        )
    found = cur.execute(SQL.export_context_state, (session_id,)).fetchone()
    state = None if found is None else record_state(found, f"the context state of {where}")
    return SessionRecord(
        session_id, record_int(created_at, where), record_int(updated_at, where), messages, todos, checkpoint, state
    )


def _write_record(cur: sqlite3.Cursor, record: SessionRecord) -> None:
    cur.execute(SQL.insert_session, (record.id, record.created_at, record.updated_at))
    cur.executemany(SQL.insert_message, [(record.id, *message) for message in record.messages])
    cur.executemany(SQL.insert_todo, [(record.id, position, *todo) for position, todo in enumerate(record.todos)])
    if record.checkpoint is not None:
        cur.execute(SQL.insert_checkpoint, (record.id, *record.checkpoint))
    if record.context_state is not None:
        cur.execute(SQL.insert_context_state, (record.id, *record.context_state))
