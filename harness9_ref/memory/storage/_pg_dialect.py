"""PostgreSQL's dialect: a Manager's PostgreSQL database (SPEC R-PG-1 … R-PG-11).

Text columns that may hold any string are BYTEA holding UTF-8 (R-PG-4); a write first locks
the session's row (``FOR UPDATE``, R-PG-7), and a fork locks its source's ``FOR SHARE``; rows
are replaced with ``ON CONFLICT``; the columns search reads (``body`` and ``folded``, R-PG-11)
are written with each message, so no hook runs after a write, and BIGINT columns hold nothing
but integers, so no type is guarded. Search reads the folded column (``_pg_search``, R-PG-5),
so that its case folding is exactly ``str.lower`` whatever the server's locale. A prune deletes
rows only: the server reclaims their space on its own, so ``bytes_reclaimed`` counts the
removed tool-results folders (R-PG-5). This module is imported only for a ``postgresql://`` URL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..._harness9_error import Said
from ._dialect import Cursor
from ._find import (
    AMBIGUOUS_LISTED,
    TITLE_PREFIX,
    SessionSummary,
    parse_session_ref,
    recent_query,
    resolved_prefix,
    title_from_head,
)
from ._index import searchable_text
from ._pg_db import PgDatabase, as_bytes, as_text
from ._pg_search import quick_search, search
from ._prune import PruneResult, prune_cutoff, remove_folders
from ._search import SearchHit
from ._session import SessionNotFound
from ._sql import POSTGRES, SESSION_ORDER, STATE_COLUMN_NAMES
from ._sql_session import SqlSession
from ._sql_store import SqlStore

__all__ = ["PostgresDialect", "PostgresSession", "PostgresStore"]


class PostgresSession(SqlSession):
    """A session of a PostgreSQL database (R-PG): SqlSession in PostgreSQL's dialect."""


def _upsert(insert: str, *columns: str) -> str:
    """``insert`` made to replace the session's row instead, as SQLite's INSERT OR REPLACE does."""
    return insert + " ON CONFLICT (session_id) DO UPDATE SET " + ", ".join(f"{c} = EXCLUDED.{c}" for c in columns)


class PostgresDialect:
    """What PostgreSQL does its own way (``_dialect.Dialect``); ``db`` is the pool of connections."""

    sql = POSTGRES
    lock_row = " FOR UPDATE"
    lock_source = " FOR SHARE"
    insert_draft = POSTGRES.insert_session + " ON CONFLICT (id) DO NOTHING"
    save_checkpoint = _upsert(POSTGRES.insert_checkpoint, "covered", "anchor", "summary", "created_at")
    save_context_state = _upsert(POSTGRES.insert_context_state, *STATE_COLUMN_NAMES, "saved_at")
    drop_uncovered_checkpoint = (
        "DELETE FROM checkpoints WHERE session_id = %s AND covered > (SELECT COUNT(*) FROM messages WHERE session_id = %s)"
    )
    drop_uncovered_context_state = (
        "DELETE FROM context_state WHERE session_id = %s"
        " AND cleared_below > (SELECT COUNT(*) FROM messages WHERE session_id = %s)"
    )  # R-CKP-11
    fork_checkpoint = POSTGRES.fork_checkpoint
    fork_context_state = POSTGRES.fork_context_state

    def __init__(self, db: PgDatabase) -> None:
        self.db = db
        self.name = db.name

    @property
    def indexed(self) -> bool:
        """Whether search uses the trigram index, as the schema's Unicode version allows (R-PG-5)."""
        return self.db.indexed and self.db.folding

    def text(self, value: object) -> object:
        return as_text(value)

    def encode(self, text: str) -> object:
        return as_bytes(text)

    def message_row(
        self, session_id: str, role: str, content: str, tool_calls: str | None, tool_call_id: str | None, created: int
    ) -> tuple[object, ...]:
        call_id = None if tool_call_id is None else as_bytes(tool_call_id)
        return (session_id, role, as_bytes(content), tool_calls, call_id, created, *self.db.derived(content))  # R-PG-11

    def after_add(self, cur: Cursor) -> None:
        """Nothing: the derived columns were written with the messages (R-PG-11)."""

    def forget(self, cur: Cursor, ids_sql: str, params: Sequence[object]) -> None:
        """Nothing: the derived columns go with their messages' rows."""

    def resolve_session_id(self, text: str) -> str:
        lowered, whole = parse_session_ref(text)
        with self.db.read() as cur:
            if whole:
                if cur.execute(POSTGRES.session_exists, (lowered,)).fetchone() is None:
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

    def recent_sessions(self, limit: int, offset: int, workdir: str | None) -> list[SessionSummary]:
        with self.db.read() as cur:
            rows = cur.execute(*recent_query(POSTGRES, limit, offset, workdir)).fetchall()
            return [SessionSummary(i, c, u, n, _title(cur, first), w, p) for i, c, u, n, first, w, p in rows]

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
        freed, failure = remove_folders(ids, tool_results_dir, remove)
        if failure is not None:
            raise failure
        return PruneResult(len(ids), row[0] if row else 0, freed)


def _title(cur: Cursor, message_id: int | None) -> str:
    """R-FIND-3's title of message ``message_id``, from its first TITLE_PREFIX bytes when they settle it."""
    if message_id is None:
        return ""
    found = cur.execute("SELECT substr(content, 1, %s) FROM messages WHERE id = %s", (TITLE_PREFIX, message_id)).fetchone()
    head = bytes(found[0]) if found is not None and found[0] is not None else b""

    def full() -> object:
        row = cur.execute("SELECT content FROM messages WHERE id = %s", (message_id,)).fetchone()
        return searchable_text(bytes(row[0])) if row is not None else ""

    return title_from_head(head, full)


class PostgresStore(SqlStore):
    """One PostgreSQL database (R-PG): SqlStore in PostgreSQL's dialect."""

    session_type = PostgresSession

    def __init__(self, url: str) -> None:
        super().__init__(PostgresDialect(PgDatabase(url)))
