"""The store seam: what a Manager asks of its database, whichever it is (SPEC R-MGR, R-PG-1, R-PG-2).

A Manager holds one store: an SQLite file (``SQLiteStore``, R-DB) or a PostgreSQL database
(``PostgresStore``, R-PG). Both answer the same calls with the same results and errors, and
both hand out sessions that meet the Session protocol, so everything above the Manager (the
engine, the command line, the conformance adapter) is the same for both. ``open_store``
chooses by the location: a ``postgresql://`` URL or a path. The PostgreSQL store is imported
only for such a URL, so the package needs nothing beyond the standard library otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from ._find import SessionSummary
from ._prune import PruneResult
from ._search import SearchHit
from ._session import Clock, Session, SessionDatabaseError, SessionInfo

__all__ = [
    "POSTGRES_SCHEMES",
    "SessionRecord",
    "Store",
    "StoredMessage",
    "open_store",
    "url_scheme",
]

POSTGRES_SCHEMES: Final = ("postgresql", "postgres")  # R-PG-1: the two prefixes libpq reads
_URL_SCHEME: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")

StoredMessage = tuple[str, str, "str | None", "str | None", int]
"""A ``messages`` row as copied (R-PG-9): role, content, tool_calls column text, tool_call_id, created_at."""


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """Everything one session stores, as column values, in order (R-PG-9).

    Messages keep their order, not their ids; todos are ``(id, content, status)`` in position
    order; ``checkpoint`` is ``(covered, anchor, summary, created_at)`` or None.
    """

    id: str
    created_at: int
    updated_at: int
    messages: tuple[StoredMessage, ...]
    todos: tuple[tuple[str, str, str], ...]
    checkpoint: tuple[int, str, str, int] | None


class Store(Protocol):
    """One database behind a Manager (R-PG-2). Arguments arrive checked by the Manager."""

    name: str
    """The path, or the URL without its password: what messages name (R-MGR-9, R-PG-3)."""

    @property
    def indexed(self) -> bool:
        """False when search scans an SQLite file without its index (R-SRCH-3)."""
        ...

    def new_session(self, session_id: str, clock: Clock, draft: bool) -> Session: ...

    def open_session(self, session_id: str, clock: Clock) -> Session: ...

    def list_sessions(self) -> list[SessionInfo]: ...

    def delete_rows(self, session_id: str) -> None: ...

    def resolve_session_id(self, text: str) -> str: ...

    def recent_sessions(self, limit: int, offset: int) -> list[SessionSummary]: ...

    def search(self, terms: list[str], limit: int) -> list[SearchHit]: ...

    def prune(
        self, tool_results_dir: Path | None, now: int, older_than: object, dry_run: bool, remove: Callable[[Path], None]
    ) -> PruneResult: ...

    def export_sessions(self) -> list[SessionRecord]:
        """Every session, read in one snapshot (R-PG-9)."""
        ...

    def import_sessions(self, records: list[SessionRecord], overwrite: bool) -> None:
        """Store ``records`` in one transaction; an existing id is refused unless ``overwrite`` (R-PG-9)."""
        ...

    def close(self) -> None: ...


def url_scheme(location: str) -> str | None:
    """The scheme of a location written as a URL (``scheme://…``), or None for a path."""
    match = _URL_SCHEME.match(location)
    return match.group(1) if match is not None else None


def open_store(location: str | Path) -> Store:
    """The store for a path (SQLite) or a ``postgresql://`` URL (R-PG-1).

    Raises:
        SessionDatabaseError: another URL scheme (never taken for a path), the PostgreSQL extra
            missing, or the database cannot be opened.
        UnsupportedSchema: the database has a format this version does not read.
    """
    scheme = url_scheme(location) if isinstance(location, str) else None
    if scheme is None:
        from ._sqlite_store import SQLiteStore

        return SQLiteStore(Path(location))
    if scheme not in POSTGRES_SCHEMES:
        raise SessionDatabaseError(
            f"{scheme}:// databases are not supported; give the path of an SQLite file or a postgresql:// URL"
        )
    from ._pg_store import PostgresStore

    return PostgresStore(str(location))
