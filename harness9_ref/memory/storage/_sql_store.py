"""SqlStore: a Manager's calls on one database, SQLite or PostgreSQL (SPEC R-MGR, R-DB, R-FIND, R-SRCH, R-PG-2, R-PG-9).

Written once for both databases; what they do differently is the ``Dialect``'s (``_dialect``).
Every call is one transaction on the dialect's database; the sessions it hands out are of the
dialect's ``session_type`` on the same database (R-MGR-2).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from ._dialect import Cursor, Dialect
from ._find import SessionSummary, stored_text
from ._prune import PruneResult
from ._rows import ColumnDecodeError, decode_file_change_row, decode_tool_calls
from ._search import SearchHit
from ._session import Clock, SessionDatabaseError, SessionInfo, SessionNotFound
from ._sql_session import SqlSession
from ._store import (
    SessionRecord,
    fork_length,
    record_int,
    record_optional_text,
    record_state,
    record_text,
    refuse_existing,
)

__all__ = ["SqlStore"]


class SqlStore:
    """One database (R-DB, R-PG) in its dialect; ``db`` is its connection.

    ``session_type`` is the class of the sessions handed out, so that each backend's have a
    name of their own.
    """

    session_type: ClassVar[type[SqlSession]] = SqlSession

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.db = dialect.db
        self.name = dialect.name
        self._sql = dialect.sql

    @property
    def indexed(self) -> bool:
        return self.dialect.indexed

    def _session(self, session_id: str, clock: Clock, draft: bool = False, origin: tuple[str, str] = ("", "")) -> SqlSession:
        return self.session_type(self.dialect, session_id, clock, draft=draft, origin=origin)

    def new_session(self, session_id: str, clock: Clock, draft: bool, origin: tuple[str, str]) -> SqlSession:
        if draft:
            # R-MGR-3 holds for a draft too: an id already taken is refused now, never merged
            # into by the draft's first write (R-FIND-2).
            with self.db.read() as cur:
                if cur.execute(self._sql.session_exists, (session_id,)).fetchone() is not None:
                    raise SessionDatabaseError(f"a session with id {session_id} already exists in {self.name}")
            return self._session(session_id, clock, draft=True, origin=origin)
        now = int(clock())
        with self.db.write() as cur:
            cur.execute(self._sql.insert_session, (session_id, now, now, *origin))
        return self._session(session_id, clock)

    def open_session(self, session_id: str, clock: Clock) -> SqlSession:
        with self.db.read() as cur:
            if cur.execute(self._sql.session_exists, (session_id,)).fetchone() is None:
                raise SessionNotFound(f"no session with id {session_id!r} in {self.name}")
        return self._session(session_id, clock)

    def list_sessions(self) -> list[SessionInfo]:
        with self.db.read() as cur:
            rows = cur.execute(self._sql.list_sessions).fetchall()
        return [SessionInfo(*row) for row in rows]

    def session_origin(self, session_id: str) -> tuple[str, str]:
        with self.db.read() as cur:
            row = cur.execute(self._sql.session_origin, (session_id,)).fetchone()
        if row is None:
            raise SessionNotFound(f"no session with id {session_id!r} in {self.name}")
        return stored_text(row[0]), stored_text(row[1])

    def delete_rows(self, session_id: str) -> None:
        with self.db.write() as cur:
            self.dialect.forget(cur, self._sql.message_ids, (session_id,))
            cur.execute(self._sql.delete_session, (session_id,))

    def resolve_session_id(self, text: str) -> str:
        return self.dialect.resolve_session_id(text)

    def recent_sessions(self, limit: int, offset: int, workdir: str | None) -> list[SessionSummary]:
        return self.dialect.recent_sessions(limit, offset, workdir)

    def search(self, terms: list[str], limit: int) -> list[SearchHit]:
        return self.dialect.search(terms, limit)

    def prune(
        self, tool_results_dir: Path | None, now: int, older_than: object, dry_run: bool, remove: Callable[[Path], None]
    ) -> PruneResult:
        return self.dialect.prune(tool_results_dir, now, older_than, dry_run, remove)

    def fork_session(self, source_id: str, new_id: str, at: int | None, clock: Clock) -> SqlSession:
        """One write transaction: the source read and the new session written, or nothing (R-MGR-10, R-MGR-11).

        Rows are copied by ``INSERT … SELECT``, so every column value is the source's as stored,
        never decoded and encoded again, and the source is only read. Its row is locked for
        sharing first where rows are locked (R-PG-7): its writers wait until the copy has
        committed, so the count and the rows copied are of one state of the session.
        """
        created = int(clock())
        sql = self._sql
        with self.db.write() as cur:
            if cur.execute(sql.session_exists + self.dialect.lock_source, (source_id,)).fetchone() is None:
                raise SessionNotFound(f"no session with id {source_id!r} in {self.name}")
            count = cur.execute(sql.count_messages, (source_id,)).fetchone()[0]
            kept = fork_length(source_id, count, at, lambda i: bool(cur.execute(sql.result_at, (source_id, i)).fetchone()[0]))
            if cur.execute(sql.session_exists, (new_id,)).fetchone() is not None:
                raise SessionDatabaseError(f"a session with id {new_id} already exists in {self.name}")
            cur.execute(sql.fork_session, (new_id, created, created, source_id))  # R-FIND-7
            cur.execute(sql.fork_messages, (new_id, source_id, kept))
            cur.execute(sql.fork_todos, (new_id, source_id))
            cur.execute(self.dialect.fork_checkpoint, (new_id, source_id, kept))
            cur.execute(self.dialect.fork_context_state, (new_id, source_id, kept))
            self._fork_file_changes(cur, source_id, new_id, kept)
            self.dialect.after_add(cur)
        return self._session(new_id, clock)

    def _fork_file_changes(self, cur: Cursor, source_id: str, new_id: str, kept: int) -> None:
        """Copy the file changes of the calls the fork keeps, in their order, each column as stored
        (R-UNDO-2d): a later rewind of the fork can undo them as the source's could. A message whose
        calls cannot be read keeps no change."""
        sql, text = self._sql, self.dialect.text
        calls: set[str] = set()
        for (tool_calls,) in cur.execute(sql.kept_tool_calls, (source_id, kept)).fetchall():
            try:
                calls.update(call.id for call in decode_tool_calls(text(tool_calls)))  # type: ignore[arg-type]
            except (ColumnDecodeError, TypeError):
                continue
        rows = cur.execute(sql.export_file_changes, (source_id,)).fetchall()
        copied = [(new_id, *row[1:]) for row in rows if text(row[1]) in calls]
        if copied:
            cur.executemany(sql.insert_file_change, copied)

    def export_sessions(self) -> list[SessionRecord]:
        """Every session in one read transaction, ordered by id (R-PG-9)."""
        with self.db.read() as cur:
            sessions = cur.execute(self._sql.export_sessions).fetchall()
            return [self._read_record(cur, *session) for session in sessions]

    def import_sessions(self, records: list[SessionRecord], overwrite: bool) -> None:
        """All of ``records`` in one write transaction, or nothing (R-PG-9).

        The existing rows are locked in the order of ``records`` (an export's: by id), so two
        copies into one database never wait for each other in a circle.
        """
        with self.db.write() as cur:
            exists = self._sql.session_exists + self.dialect.lock_row
            ids = [record.id for record in records]
            refuse_existing([i for i in ids if cur.execute(exists, (i,)).fetchone()], self.name, overwrite)
            for record in records:
                self.dialect.forget(cur, self._sql.message_ids, (record.id,))
                cur.execute(self._sql.delete_session, (record.id,))
                self._write_record(cur, record)
            self.dialect.after_add(cur)

    def close(self) -> None:
        self.db.close()

    def _read_record(
        self, cur: Cursor, session_id: str, created_at: object, updated_at: object, workdir: object, provider: object
    ) -> SessionRecord:
        """One session's rows as copied, each value checked: what SQLite's dynamic types allow is refused (R-PG-9)."""
        where = f"session {session_id}"
        sql, text = self._sql, self.dialect.text
        messages = tuple(
            (
                record_text(role, f"messages row {row_id}"),
                record_text(text(content), f"messages row {row_id}"),
                record_optional_text(tool_calls, f"messages row {row_id}"),
                record_optional_text(text(tool_call_id), f"messages row {row_id}"),
                record_int(row_created, f"messages row {row_id}"),
            )
            for row_id, role, content, tool_calls, tool_call_id, row_created in cur.execute(
                sql.export_messages, (session_id,)
            ).fetchall()
        )
        todos = tuple(
            (
                record_text(text(i), f"todos of {where}"),
                record_text(text(c), f"todos of {where}"),
                record_text(s, f"todos of {where}"),
            )
            for i, c, s in cur.execute(sql.todos, (session_id,)).fetchall()
        )
        found = cur.execute(sql.export_checkpoint, (session_id,)).fetchone()
        checkpoint = None
        if found is not None:
            cp_where = f"the checkpoint of {where}"
            checkpoint = (
                record_int(found[0], cp_where),
                record_text(text(found[1]), cp_where),
                record_text(text(found[2]), cp_where),
                record_int(found[3], cp_where),
            )
        found = cur.execute(sql.export_context_state, (session_id,)).fetchone()
        state = None if found is None else record_state(found, f"the context state of {where}")
        changes = tuple(
            (
                decode_file_change_row(session_id, row_id, text(call_id), text(path), existed, before, after),
                record_int(changed_at, f"file_changes row {row_id}"),
            )
            for row_id, call_id, path, existed, before, after, changed_at in cur.execute(
                sql.export_file_changes, (session_id,)
            ).fetchall()
        )
        return SessionRecord(
            session_id,
            record_int(created_at, where),
            record_int(updated_at, where),
            messages,
            todos,
            checkpoint,
            state,
            record_text(workdir, where),
            record_text(provider, where),
            changes,
        )

    def _write_record(self, cur: Cursor, record: SessionRecord) -> None:
        sql, encode = self._sql, self.dialect.encode
        cur.execute(sql.insert_session, (record.id, record.created_at, record.updated_at, record.workdir, record.provider))
        cur.executemany(sql.insert_message, [self.dialect.message_row(record.id, *message) for message in record.messages])
        cur.executemany(
            sql.insert_todo,
            [(record.id, position, encode(i), encode(c), s) for position, (i, c, s) in enumerate(record.todos)],
        )
        if record.checkpoint is not None:
            covered, anchor, summary, created = record.checkpoint
            cur.execute(sql.insert_checkpoint, (record.id, covered, encode(anchor), encode(summary), created))
        if record.context_state is not None:
            cur.execute(sql.insert_context_state, (record.id, *record.context_state))
        cur.executemany(
            sql.insert_file_change,
            [
                (record.id, encode(c.tool_call_id), encode(c.path), int(c.existed), c.before, c.after, changed_at)
                for c, changed_at in record.file_changes
            ],
        )
