"""What SQLite and PostgreSQL do differently under one session and one store (SPEC R-DB, R-PG-2).

A session (``SqlSession``) and a store (``SqlStore``) are written once; each runs its SQL
through a ``Dialect``, which holds only what the two databases do differently: how text is
encoded in and decoded from its columns (R-PG-4 keeps it as UTF-8 BYTEA), the clause that
locks a session's row for a write (R-PG-7; SQLite's ``BEGIN IMMEDIATE`` locks the whole file),
the statements that insert-or-ignore and replace a row (``INSERT OR …`` against ``ON
CONFLICT``), the guards of SQLite's dynamic types (``typeof``), the hooks that keep the search
index after a write (SQLite's full-text index, R-SRCH-3; PostgreSQL derives its columns in the
insert, R-PG-11), and the calls whose algorithms differ (search, prune, finding a session). The
PostgreSQL dialect is imported only for a ``postgresql://`` URL, so SQLite needs nothing beyond
the standard library.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeAlias

from ._find import SessionSummary
from ._prune import PruneResult
from ._search import SearchHit
from ._sql import Statements

__all__ = ["Cursor", "Dialect", "DialectDatabase"]

Cursor: TypeAlias = Any
"""An ``sqlite3.Cursor`` or a ``psycopg.Cursor``: the same calls (execute, executemany, fetchone,
fetchall, rowcount, iteration), but no common type for them."""


class DialectDatabase(Protocol):
    """A database connection as a session and a store use it: transactions yielding a cursor."""

    def read(self) -> AbstractContextManager[Cursor]: ...

    def write(self) -> AbstractContextManager[Cursor]: ...

    def close(self) -> None: ...


class Dialect(Protocol):
    """One database's differences; the statements are built for its placeholder style (``_sql``)."""

    @property
    def db(self) -> DialectDatabase:
        """The connection (SQLite) or the pool (PostgreSQL) the transactions run on."""
        ...

    name: str
    """The path, or the URL without its password: what messages name (R-MGR-9, R-PG-3)."""
    sql: Statements
    lock_row: str
    """Appended to ``sql.session_exists`` before a write changes the session (R-PG-7)."""
    lock_source: str
    """Appended to ``sql.session_exists`` when a fork reads its source (R-MGR-10, R-PG-7)."""
    insert_draft: str
    """A draft's row, unless another writer has inserted it meanwhile (R-FIND-2)."""
    save_checkpoint: str
    """The checkpoint row replacing the session's (R-CKP-2)."""
    save_context_state: str
    """The context state row replacing the session's (R-CKP-9)."""
    drop_uncovered_checkpoint: str
    """After a pop, the checkpoint covering more messages than are left (R-CKP-3)."""
    drop_uncovered_context_state: str
    """After a pop, the context state clearing more messages than are left (R-CKP-11)."""
    fork_checkpoint: str
    """A fork's copy of the checkpoint a pop down to its length would keep (R-MGR-10)."""
    fork_context_state: str
    """A fork's copy of the context state a pop down to its length would keep (R-MGR-10)."""

    @property
    def indexed(self) -> bool:
        """Whether search uses the database's index (R-SRCH-3, R-PG-5)."""
        ...

    def text(self, value: object) -> object:
        """A text column's value as read, decoded to ``str`` where the column holds bytes (R-PG-4)."""
        ...

    def encode(self, text: str) -> object:
        """``text`` as a text column stores it (R-PG-4)."""
        ...

    def message_row(
        self, session_id: str, role: str, content: str, tool_calls: str | None, tool_call_id: str | None, created: int
    ) -> tuple[object, ...]:
        """The parameters of ``sql.insert_message`` (R-DB-4, R-PG-11)."""
        ...

    def after_add(self, cur: Cursor) -> None:
        """Keep the search index after messages were inserted, in the same transaction (R-SRCH-3)."""
        ...

    def forget(self, cur: Cursor, ids_sql: str, params: Sequence[object]) -> None:
        """Drop the index rows of the messages ``ids_sql`` selects, before they are deleted (R-SRCH-3)."""
        ...

    def resolve_session_id(self, text: str) -> str:
        """R-FIND-1's session named by an id or a prefix."""
        ...

    def recent_sessions(self, limit: int, offset: int, workdir: str | None) -> list[SessionSummary]:
        """R-FIND-3's page of sessions with their titles, of one folder unless ``workdir`` is None (R-FIND-5)."""
        ...

    def search(self, terms: list[str], limit: int) -> list[SearchHit]:
        """R-SRCH-1's hits."""
        ...

    def prune(
        self, tool_results_dir: Path | None, now: int, older_than: object, dry_run: bool, remove: Callable[[Path], None]
    ) -> PruneResult:
        """R-PRUNE-1's removal of old sessions."""
        ...
