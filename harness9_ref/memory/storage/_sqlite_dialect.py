"""SQLite's dialect: a Manager's SQLite file (SPEC R-DB, R-FIND, R-SRCH, R-PRUNE-1).

Text is stored as it is; a write transaction (``BEGIN IMMEDIATE``) holds the whole file, so no
row is locked; SQLite's ``INSERT OR IGNORE`` / ``OR REPLACE`` insert and replace rows; the
full-text index is kept in the transaction of every change of messages, in a savepoint that
can fail alone (``Database.upkeep``, R-SRCH-3); and ``typeof`` guards what a column of another
program's may hold, since SQLite's columns take any type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ._dialect import Cursor
from ._find import SessionSummary, recent_sessions, resolve_session_id
from ._index import forget_messages, index_tail, mark_damaged
from ._prune import PruneResult, prune
from ._search import SearchHit, search
from ._session import SessionDatabaseError
from ._sql import SQLITE
from ._sql_session import SqlSession
from ._sql_store import SqlStore
from ._sqlite_db import Database

__all__ = ["SQLiteSession"]


class SQLiteSession(SqlSession):
    """A session of an SQLite file (R-DB): SqlSession in SQLite's dialect."""


def _replacing(insert: str) -> str:
    """``insert`` made to replace the session's row: SQLite's INSERT OR REPLACE."""
    return "INSERT OR REPLACE" + insert.removeprefix("INSERT")


class SQLiteDialect:
    """What SQLite does its own way (``_dialect.Dialect``); ``db`` is the file's one connection."""

    sql = SQLITE
    lock_row = ""
    lock_source = ""
    insert_draft = "INSERT OR IGNORE" + SQLITE.insert_session.removeprefix("INSERT")
    save_checkpoint = _replacing(SQLITE.insert_checkpoint)
    save_context_state = _replacing(SQLITE.insert_context_state)
    # R-CKP-3: after a pop, a checkpoint covering more messages than are left goes, and so does a
    # row whose covered is not an integer (another program's; it can never be valid, R-CKP-5), so
    # that no rule here depends on how SQLite compares text or reals with integers. The count is
    # a walk of idx_messages_session.
    drop_uncovered_checkpoint = (
        "DELETE FROM checkpoints WHERE session_id = ? AND (typeof(covered) != 'integer'"
        " OR covered > (SELECT COUNT(*) FROM messages WHERE session_id = ?))"
    )
    # R-CKP-11: the same rule for the context state, by its cleared_below.
    drop_uncovered_context_state = (
        "DELETE FROM context_state WHERE session_id = ? AND (typeof(cleared_below) != 'integer'"
        " OR cleared_below > (SELECT COUNT(*) FROM messages WHERE session_id = ?))"
    )
    # R-MGR-10: a checkpoint or context state whose number is not an integer (another program's) is
    # not copied, as a pop removes it (R-CKP-3, R-CKP-11), whatever SQLite's comparison of a real
    # or a text with an integer would say.
    fork_checkpoint = SQLITE.fork_checkpoint + " AND typeof(covered) = 'integer'"
    fork_context_state = SQLITE.fork_context_state + " AND typeof(cleared_below) = 'integer'"

    def __init__(self, db: Database) -> None:
        self.db = db
        self.name = str(db.path)

    @property
    def indexed(self) -> bool:
        return self.db.indexed

    def text(self, value: object) -> object:
        return value

    def encode(self, text: str) -> object:
        return text

    def message_row(
        self, session_id: str, role: str, content: str, tool_calls: str | None, tool_call_id: str | None, created: int
    ) -> tuple[object, ...]:
        return (session_id, role, content, tool_calls, tool_call_id, created)

    def after_add(self, cur: Cursor) -> None:
        self.db.upkeep(cur, index_tail)

    def forget(self, cur: Cursor, ids_sql: str, params: Sequence[object]) -> None:
        self.db.upkeep(cur, lambda c: forget_messages(c, ids_sql, params))

    def resolve_session_id(self, text: str) -> str:
        with self.db.read() as cur:
            return resolve_session_id(cur, text)

    def recent_sessions(self, limit: int, offset: int, workdir: str | None) -> list[SessionSummary]:
        with self.db.read() as cur:
            return recent_sessions(cur, limit, offset, workdir)

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


class SQLiteStore(SqlStore):
    """One SQLite file (R-DB): SqlStore in SQLite's dialect."""

    session_type = SQLiteSession

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        super().__init__(SQLiteDialect(Database(path, read_only=read_only)))
        self.path = path
