"""Manager: the one holder of the session database (SPEC R-MGR-1 … R-MGR-9, R-FIND, R-SRCH, R-PRUNE-1, R-PG).

It opens the store its location names (``open_store``) and copies every session of one Manager
into another (``copy_sessions``, R-PG-9).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from ..._harness9_error import os_reason
from ._find import SessionSummary, parse_session_ref
from ._prune import PruneResult
from ._search import SearchHit, search_terms
from ._session import (
    Clock,
    InvalidArgument,
    SessionDatabaseError,
    SessionInfo,
    StatefulSession,
    check_count,
    check_limit,
    check_origin,
    check_session_id,
    new_session_id,
)
from ._store import POSTGRES_SCHEMES, Store, url_scheme

__all__ = [
    "DEFAULT_DB_NAME", "DEFAULT_HOME_DIR", "HOME_ENV", "CopyResult", "Manager", "copy_sessions", "default_db_path",
    "home_folder",
]

HOME_ENV: Final = "HARNESS9_HOME"  # R-MGR-1: moves the default database (the program also reads a leading ~, R-CLI-13)
DEFAULT_DB_NAME: Final = "sessions.db"
DEFAULT_HOME_DIR: Final = ".harness9"  # R-MGR-1: ~/.harness9/sessions.db, the document's path


def home_folder(env: Mapping[str, str], cwd: str) -> Path:
    """R-MGR-1's folder: ``$HARNESS9_HOME`` (a leading ``~`` expanded, R-CLI-13; relative to
    ``cwd``), else ``~/.harness9``. An empty variable counts as unset (R-CLI-3). The program
    keeps the user's AGENTS.md (R-INST-1) and allow file there too."""
    home = env.get(HOME_ENV, "")
    return Path(cwd, os.path.expanduser(home)) if home else Path.home() / DEFAULT_HOME_DIR


def default_db_path() -> Path:
    """``$HARNESS9_HOME/sessions.db`` when the variable is set, else ``~/.harness9/sessions.db``."""
    return home_folder(os.environ, os.getcwd()) / DEFAULT_DB_NAME


@dataclass(frozen=True, slots=True)
class CopyResult:
    """How many sessions and messages a copy wrote (R-PG-9)."""

    sessions: int
    messages: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def open_store(location: str | Path, *, read_only: bool = False) -> Store:
    """The store for a path (SQLite) or a ``postgresql://`` URL (R-PG-1).

    ``read_only`` opens an SQLite file without writing to it (R-DB-12); PostgreSQL keeps its
    own permissions and is opened as usual.

    Raises:
        SessionDatabaseError: another URL scheme (never taken for a path), the PostgreSQL extra
            missing, or the database cannot be opened.
        UnsupportedSchema: the database has a format this version does not read.
    """
    scheme = url_scheme(location) if isinstance(location, str) else None
    if scheme is None:
        from ._sqlite_dialect import SQLiteStore

        return SQLiteStore(Path(location), read_only=read_only)
    if scheme not in POSTGRES_SCHEMES:
        raise SessionDatabaseError(
            f"{scheme}:// databases are not supported; give the path of an SQLite file or a postgresql:// URL"
        )
    from ._pg_dialect import PostgresStore

    return PostgresStore(str(location))


class Manager:
    """Creates, opens, lists and deletes the sessions of one database: an SQLite file or PostgreSQL.

    One connection serves the Manager and every session it returns, under one lock, so the
    engine thread and the UI thread can share it (R-MGR-2). The two backends give the same
    results and errors (R-PG-2).

    Args:
        db_path: the database: a path (SQLite, R-DB), a ``postgresql://`` URL (R-PG-1), or None
            for ``default_db_path()``. Any other ``scheme://`` is refused, never taken as a path.
        tool_results_dir: where offloaded tool results live, one folder per session id;
            ``delete_session`` removes the session's folder (R-MGR-6).
        clock: the time source for created_at / updated_at.
        new_id: makes the id of each new session; it must return a well-formed id.
        read_only: open an SQLite file without writing anything to it or its folder, for a
            Manager that only reads (R-DB-12); every write then raises SessionDatabaseError.

    Raises:
        SessionDatabaseError: the path cannot be created or is not an SQLite database; the
            server cannot be reached; the URL's scheme is not PostgreSQL's; the PostgreSQL
            extra is not installed.
        UnsupportedSchema: the database has a format this version does not read.
    """

    def __init__(
        self,
        db_path: str | os.PathLike[str] | None = None,
        tool_results_dir: str | os.PathLike[str] | None = None,
        *,
        clock: Clock = time.time,
        new_id: Callable[[], str] = new_session_id,
        read_only: bool = False,
    ) -> None:
        location: str | Path = db_path if isinstance(db_path, str) else Path(db_path or default_db_path())
        self.tool_results_dir = Path(tool_results_dir) if tool_results_dir is not None else None
        self._clock = clock
        self._new_id = new_id
        self._store: Store = open_store(location, read_only=read_only)
        self.database = self._store.name
        """The path, or the URL without its password (R-PG-3)."""
        self.db_path: Path | None = getattr(self._store, "path", None)
        """The SQLite file's path; None for PostgreSQL."""
        self._db = getattr(self._store, "db", None)  # the SQLite connection, for tests that look inside

    def __enter__(self) -> Manager:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    @property
    def search_indexed(self) -> bool:
        """False when ``search`` scans: an SQLite file whose full-text index cannot be used
        (R-SRCH-3), or a PostgreSQL database without the trigram index or of another Unicode
        version (R-PG-5).

        The results are the same either way; the command line tells the user when it is False.
        """
        return self._store.indexed

    def new_session(self, draft: bool = False, *, workdir: str = "", provider: str = "") -> StatefulSession:
        """Create an empty session with a fresh id (R-MGR-3), or a draft without a row yet (R-FIND-2).

        A draft's row is inserted by its first add_messages, save_todos or save_checkpoint, so
        a program that starts a session and stores nothing leaves nothing behind. Its row records
        ``workdir``, the folder its tools work in, and ``provider``, the model label it answers
        with, each as given ("" for unknown), so ``recent_sessions`` can keep to one folder (R-FIND-4).

        Raises:
            InvalidArgument: ``workdir`` or ``provider`` is not text of scalar values without U+0000.
            SessionDatabaseError: a session with the new id exists already, draft or not.
        """
        origin = (check_origin("workdir", workdir), check_origin("provider", provider))
        return self._store.new_session(check_session_id(self._new_id()), self._clock, draft, origin)

    def open_session(self, session_id: str) -> StatefulSession:
        """Return the session with exactly this id (R-MGR-4).

        Raises:
            SessionNotFound: there is no such session.
        """
        return self._store.open_session(session_id, self._clock)

    def fork_session(self, session_id: str, at: int | None = None) -> StatefulSession:
        """A new session holding the first ``at`` stored messages of another, all of them for None (R-MGR-10).

        The append-only history makes this a copy of rows: the new session (a fresh id, created
        now) gets those messages in order, the todos, and the checkpoint and context state when
        a pop down to ``at`` messages would keep them; the source is only read. One
        transaction: on any failure nothing is created (R-MGR-11).

        Raises:
            InvalidSessionId: ``session_id`` is not well-formed.
            InvalidArgument: ``at`` is not an integer of 0 or more, or is past the source's end.
            SessionNotFound: there is no session ``session_id``.
            SessionDatabaseError: the new id exists already, or the database cannot be written
                (a read-only Manager, R-DB-12).
        """
        check_session_id(session_id)
        if at is not None:
            check_count("at", at)
        return self._store.fork_session(session_id, check_session_id(self._new_id()), at, self._clock)

    def list_sessions(self) -> list[SessionInfo]:
        """Every session, most recently updated first (R-MGR-5)."""
        return self._store.list_sessions()

    def session_origin(self, session_id: str) -> tuple[str, str]:
        """The workdir and provider the session recorded when it was created, each "" when
        unknown (a session of a file from before format 5, R-FIND-4).

        Raises:
            InvalidSessionId: ``session_id`` is not well-formed.
            SessionNotFound: there is no such session (a draft not saved yet included).
        """
        return self._store.session_origin(check_session_id(session_id))

    def delete_session(self, session_id: str) -> None:
        """Delete a session, its messages, todos and checkpoint, and its tool-results folder (R-MGR-6).

        The rows go in one transaction through ON DELETE CASCADE (R-CKP-3, R-CKP-6).

        Raises:
            InvalidSessionId: ``session_id`` is not well-formed; nothing is touched, so no
                id can name a path outside the tool-results folder.
            SessionDatabaseError: the folder could not be removed (the rows are gone).
        """
        check_session_id(session_id)
        self._store.delete_rows(session_id)
        if self.tool_results_dir is not None:
            _remove(self.tool_results_dir / session_id)

    def resolve_session_id(self, text: str) -> str:
        """The session id that ``text`` names: a full id, or a unique prefix of 4 to 35 characters (R-FIND-1).

        Upper case is read as lower case, so an id copied from anywhere works.

        Raises:
            SessionNotFound: no session has this id, or no id starts with the prefix.
            AmbiguousSessionId: several ids start with it; ``candidates`` lists up to 10.
            InvalidSessionId: ``text`` is neither an id nor such a prefix, checked before
                whether the Manager is open (R-MGR-9).
        """
        parse_session_ref(text)
        return self._store.resolve_session_id(text)

    def recent_sessions(self, limit: int = 10, offset: int = 0, workdir: str | None = None) -> list[SessionSummary]:
        """Sessions that hold a message, most recently updated first, with their titles (R-FIND-3);
        only those whose recorded workdir is exactly ``workdir`` unless it is None (R-FIND-5).

        Raises:
            InvalidArgument: ``limit`` or ``offset`` is negative or not an integer, or ``workdir``
                is empty (no folder: it would name the sessions of unknown folder) or not text of
                scalar values without U+0000.
        """
        check_limit(limit)
        check_count("offset", offset)
        if workdir is not None and (check_origin("workdir", workdir) == ""):
            raise InvalidArgument("workdir must name a folder, got ''")
        return self._store.recent_sessions(limit, offset, workdir)

    def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        """Sessions whose messages contain every word of ``query``, case-insensitively (R-SRCH-1 … R-SRCH-3).

        Raises:
            InvalidArgument: the query is empty or blank, or ``limit`` is negative.
        """
        terms = search_terms(query)
        check_limit(limit)
        return self._store.search(terms, limit)

    def prune(self, older_than: int, *, dry_run: bool = False) -> PruneResult:
        """Delete every session not updated in the last ``older_than`` seconds (R-PRUNE-1).

        All rows go in one transaction, the tool-results folders after it; then an SQLite file
        is compacted and ``bytes_reclaimed`` says by how much (R-PG-5: on PostgreSQL it counts
        the folders only). A dry run only counts.

        Raises:
            InvalidArgument: ``older_than`` is not a whole number of seconds of at least 1.
            SessionDatabaseError: a folder could not be removed (after the rows are gone).
        """
        return self._store.prune(self.tool_results_dir, int(self._clock()), older_than, dry_run, _remove)

    def close(self) -> None:
        """Close the connection; later calls on the Manager or its sessions raise SessionClosed (R-MGR-7)."""
        self._store.close()


def _remove(path: Path) -> None:
    """Remove a file, a folder tree, or a symbolic link itself (never what it points to)."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.is_symlink() or path.exists():
            path.unlink()  # a file, a link, a FIFO, a socket: never what a link points to
    except OSError as exc:
        raise SessionDatabaseError(f"cannot remove {path}: {os_reason(exc)}") from exc


def copy_sessions(source: Manager, destination: Manager, *, overwrite: bool = False) -> CopyResult:
    """Copy every session of ``source`` into ``destination`` in one transaction (R-PG-9).

    Raises:
        SessionDatabaseError: the destination holds a session id of the source and
            ``overwrite`` is False (nothing is copied), or a database failed.
        CorruptRow: a stored value cannot be copied losslessly (nothing is copied).
    """
    records = source._store.export_sessions()
    destination._store.import_sessions(records, overwrite)
    return CopyResult(len(records), sum(len(record.messages) for record in records))
