"""The PostgreSQL store: a Manager's calls on one PostgreSQL database (SPEC R-PG-1 … R-PG-9).

The same calls as ``SQLiteStore`` with the same results (R-PG-2). Search reads the folded
column the writers keep (``_pg_search``, R-PG-5), so that its case folding is exactly
``str.lower`` whatever the server's locale. A prune deletes rows only: the server reclaims
their space on its own, so ``bytes_reclaimed`` counts the removed tool-results folders (R-PG-5).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._errors import Said
from ._find import AMBIGUOUS_LISTED, TITLE_PREFIX, SessionSummary, parse_session_ref, resolved_prefix, title_from_head
from ._index import searchable_text
from ._pg_db import PgDatabase, as_bytes, as_text
from ._pg_search import quick_search, search
from ._pg_session import PostgresSession
from ._prune import PruneResult, prune_cutoff, remove_folders
from ._search import SearchHit
from ._session import INT64_MAX, Clock, SessionDatabaseError, SessionInfo, SessionNotFound
from ._sql import POSTGRES as SQL
from ._sql import SESSION_ORDER
from ._store import SessionRecord, fork_length, record_text, refuse_existing

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresStore"]


class PostgresStore:
    """One PostgreSQL database (R-PG); ``db`` is its connection."""

    def __init__(self, url: str) -> None:
        self.db = PgDatabase(url)
        self.name = self.db.name

    @property
    def indexed(self) -> bool:
        """Whether search uses the trigram index, as the schema's Unicode version allows (R-PG-5)."""
        return self.db.indexed and self.db.folding

    def new_session(self, session_id: str, clock: Clock, draft: bool) -> PostgresSession:
        if draft:
            # R-MGR-3 holds for a draft too: an id already taken is refused now, never merged
            # into by the draft's first write (R-FIND-2).
            with self.db.read() as cur:
                if cur.execute(SQL.session_exists, (session_id,)).fetchone() is not None:
                    raise SessionDatabaseError(f"a session with id {session_id} already exists in {self.name}")
            return PostgresSession(self.db, session_id, clock, draft=True)
        now = int(clock())
        with self.db.write() as cur:
            cur.execute(SQL.insert_session, (session_id, now, now))
        return PostgresSession(self.db, session_id, clock)

    def open_session(self, session_id: str, clock: Clock) -> PostgresSession:
        with self.db.read() as cur:
            if cur.execute(SQL.session_exists, (session_id,)).fetchone() is None:
                raise SessionNotFound(f"no session with id {session_id!r} in {self.name}")
        return PostgresSession(self.db, session_id, clock)

    def list_sessions(self) -> list[SessionInfo]:
        with self.db.read() as cur:
            rows = cur.execute(SQL.list_sessions).fetchall()
        return [SessionInfo(*row) for row in rows]

    def delete_rows(self, session_id: str) -> None:
        with self.db.write() as cur:
            cur.execute(SQL.delete_session, (session_id,))

    def resolve_session_id(self, text: str) -> str:
        lowered, whole = parse_session_ref(text)
        with self.db.read() as cur:
            if whole:
                if cur.execute(SQL.session_exists, (lowered,)).fetchone() is None:
                    raise SessionNotFound(Said("err_no_session", id=lowered))  # R-LANG-3
                return lowered
            # LIKE is case-sensitive here, and none of these characters is special to it.
            pattern = lowered + "%"
            row = cur.execute("SELECT COUNT(*) FROM sessions WHERE id LIKE %s", (pattern,)).fetchone()
            ids = [
                r[0]
                for r in cur.execute(
                    f"SELECT s.id FROM sessions s WHERE s.id LIKE %s {SESSION_ORDER} LIMIT %s", (pattern, AMBIGUOUS_LISTED)
                )
            ]
        return resolved_prefix(lowered, row[0] if row else 0, ids)

    def recent_sessions(self, limit: int, offset: int) -> list[SessionSummary]:
        with self.db.read() as cur:
            rows = cur.execute(SQL.recent_sessions, (min(limit, INT64_MAX), min(offset, INT64_MAX))).fetchall()
            return [SessionSummary(i, c, u, n, _title(cur, first)) for i, c, u, n, first in rows]

    def search(self, terms: list[str], limit: int) -> list[SearchHit]:
        if limit == 0:
            return []
        hits = quick_search(self.db, terms, limit) if self.db.folding else None
        if hits is not None:
            return hits
        with self.db.read() as cur:
            return search(cur, terms, limit, self.db.folding)

    def prune(
        self, tool_results_dir: Path | None, now: int, older_than: object, dry_run: bool, remove: Callable[[Path], None]
    ) -> PruneResult:
        cutoff = prune_cutoff(now, older_than)
        if dry_run:
            with self.db.read() as cur:
                row = cur.execute(
                    "SELECT COUNT(*), (SELECT COUNT(*) FROM messages WHERE session_id IN"
                    " (SELECT id FROM sessions WHERE updated_at < %s)) FROM sessions WHERE updated_at < %s",
                    (cutoff, cutoff),
                ).fetchone()
            return PruneResult(row[0], row[1], 0) if row else PruneResult(0, 0, 0)
        with self.db.write() as cur:
            # Locking the rows first keeps writers of these sessions out until they are gone.
            ids = [r[0] for r in cur.execute("SELECT id FROM sessions WHERE updated_at < %s FOR UPDATE", (cutoff,))]
            row = cur.execute("SELECT COUNT(*) FROM messages WHERE session_id = ANY(%s)", (ids,)).fetchone()
            cur.execute("DELETE FROM sessions WHERE id = ANY(%s)", (ids,))
        if not ids:
            return PruneResult(0, 0, 0)
        folders, failure = remove_folders(ids, tool_results_dir, remove)
        if failure is not None:
            raise failure
        return PruneResult(len(ids), row[0] if row else 0, folders)

    def fork_session(self, source_id: str, new_id: str, at: int | None, clock: Clock) -> PostgresSession:
        """As SQLite's, in one transaction (R-MGR-10, R-MGR-11, R-PG-2).

        The source's row is locked FOR SHARE first: its writers (R-PG-7) wait until the copy
        has committed, so the count and the rows copied are of one state of the session.
        """
        now = int(clock())
        with self.db.write() as cur:
            if cur.execute("SELECT 1 FROM sessions WHERE id = %s FOR SHARE", (source_id,)).fetchone() is None:
                raise SessionNotFound(f"no session with id {source_id!r} in {self.name}")
            row = cur.execute(SQL.count_messages, (source_id,)).fetchone()
            kept = fork_length(source_id, row[0] if row else 0, at, lambda i: _result_at(cur, source_id, i))
            if cur.execute(SQL.session_exists, (new_id,)).fetchone() is not None:
                raise SessionDatabaseError(f"a session with id {new_id} already exists in {self.name}")
            cur.execute(SQL.insert_session, (new_id, now, now))
            cur.execute(SQL.fork_messages, (new_id, source_id, kept))
            cur.execute(SQL.fork_todos, (new_id, source_id))
            cur.execute(SQL.fork_checkpoint, (new_id, source_id, kept))
            cur.execute(SQL.fork_context_state, (new_id, source_id, kept))
        return PostgresSession(self.db, new_id, clock)

    def export_sessions(self) -> list[SessionRecord]:
        with self.db.read() as cur:
            sessions = cur.execute(SQL.export_sessions).fetchall()
            return [_read_record(cur, *session) for session in sessions]

    def import_sessions(self, records: list[SessionRecord], overwrite: bool) -> None:
        ids = [record.id for record in records]
        with self.db.write() as cur:
            existing = [r[0] for r in cur.execute("SELECT id FROM sessions WHERE id = ANY(%s) ORDER BY id FOR UPDATE", (ids,))]
            refuse_existing(existing, self.name, overwrite)
            cur.execute("DELETE FROM sessions WHERE id = ANY(%s)", (existing,))
            for record in records:
                _write_record(cur, record, self.db.derived)

    def close(self) -> None:
        self.db.close()


def _result_at(cur: psycopg.Cursor[Any], session_id: str, position: int) -> bool:
    found = cur.execute(SQL.result_at, (session_id, position)).fetchone()
    return bool(found is not None and found[0])


def _title(cur: psycopg.Cursor[Any], message_id: int | None) -> str:
    """R-FIND-3's title of message ``message_id``, from its first TITLE_PREFIX bytes when they settle it."""
    if message_id is None:
        return ""
    found = cur.execute("SELECT substr(content, 1, %s) FROM messages WHERE id = %s", (TITLE_PREFIX, message_id)).fetchone()
    head = bytes(found[0]) if found is not None and found[0] is not None else b""

    def full() -> object:
        row = cur.execute("SELECT content FROM messages WHERE id = %s", (message_id,)).fetchone()
        return searchable_text(bytes(row[0])) if row is not None else ""

    return title_from_head(head, full)


def _read_record(cur: psycopg.Cursor[Any], session_id: str, created_at: int, updated_at: int) -> SessionRecord:
    where = f"session {session_id}"
    messages = tuple(
        (
            role,
            record_text(as_text(content), f"messages row {row_id}"),
            tool_calls,
            None if tool_call_id is None else record_text(as_text(tool_call_id), f"messages row {row_id}"),
            row_created,
        )
        for row_id, role, content, tool_calls, tool_call_id, row_created in cur.execute(
            SQL.export_messages, (session_id,)
        )
    )
    todos = tuple(
        (record_text(as_text(i), f"todos of {where}"), record_text(as_text(c), f"todos of {where}"), status)
        for i, c, status in cur.execute(SQL.todos, (session_id,))
    )
    found = cur.execute(SQL.export_checkpoint, (session_id,)).fetchone()
    checkpoint = None
    if found is not None:
        cp_where = f"the checkpoint of {where}"
        checkpoint = (found[0], record_text(as_text(found[1]), cp_where), record_text(as_text(found[2]), cp_where), found[3])
    found = cur.execute(SQL.export_context_state, (session_id,)).fetchone()
    state = None if found is None else tuple(found)  # BIGINT and TEXT: integers and text already
    return SessionRecord(session_id, created_at, updated_at, messages, todos, checkpoint, state)


def _write_record(
    cur: psycopg.Cursor[Any], record: SessionRecord, derived: Callable[[str], tuple[str, str | None]]
) -> None:
    cur.execute(SQL.insert_session, (record.id, record.created_at, record.updated_at))
    cur.executemany(
        SQL.insert_message,
        [
            (
                record.id,
                role,
                as_bytes(content),
                calls,
                None if call_id is None else as_bytes(call_id),
                created,
                *derived(content),  # R-PG-11
            )
            for role, content, calls, call_id, created in record.messages
        ],
    )
    cur.executemany(
        SQL.insert_todo,
        [(record.id, position, as_bytes(i), as_bytes(c), s) for position, (i, c, s) in enumerate(record.todos)],
    )
    if record.checkpoint is not None:
        covered, anchor, summary, created = record.checkpoint
        cur.execute(
            SQL.insert_checkpoint,
            (record.id, covered, as_bytes(anchor), as_bytes(summary), created),
        )
    if record.context_state is not None:
        cur.execute(SQL.insert_context_state, (record.id, *record.context_state))
