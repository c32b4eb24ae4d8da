"""Manager: the one holder of the session database (SPEC R-MGR-1 … R-MGR-9; seed 4.3, 5, D6)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from types import TracebackType
from typing import Callable, Final

from ._db import Database
from ._session import (
    Clock,
    SessionDatabaseError,
    SessionInfo,
    SessionNotFound,
    check_session_id,
    new_session_id,
)
from ._sqlite_session import SQLiteSession

__all__ = ["DEFAULT_DB_NAME", "HOME_ENV", "Manager", "default_db_path"]

HOME_ENV: Final = "HARNESS9_HOME"  # R-MGR-1: moves the default database
DEFAULT_DB_NAME: Final = "sessions.db"
DEFAULT_HOME_DIR: Final = ".harness9"  # R-MGR-1: ~/.harness9/sessions.db, the document's path


def default_db_path() -> Path:
    """``$HARNESS9_HOME/sessions.db`` when the variable is set, else ``~/.harness9/sessions.db``."""
    home = os.environ.get(HOME_ENV)
    return Path(home) / DEFAULT_DB_NAME if home else Path.home() / DEFAULT_HOME_DIR / DEFAULT_DB_NAME


class Manager:
    """Creates, opens, lists and deletes sessions of one SQLite file.

    One connection serves the Manager and every session it returns, under one lock, so the
    engine thread and the UI thread can share it (R-MGR-2).

    Args:
        db_path: the database file; None means ``default_db_path()``.
        tool_results_dir: where offloaded tool results live, one folder per session id;
            ``delete_session`` removes the session's folder (seed 4.3 WithToolResultsDir).
        clock: the time source for created_at / updated_at.
        new_id: makes the id of each new session; it must return a well-formed id.

    Raises:
        SessionDatabaseError: the path cannot be created or is not an SQLite database.
        UnsupportedSchema: the file has a format this version does not read.
    """

    def __init__(
        self,
        db_path: str | os.PathLike[str] | None = None,
        tool_results_dir: str | os.PathLike[str] | None = None,
        *,
        clock: Clock = time.time,
        new_id: Callable[[], str] = new_session_id,
    ) -> None:
        self.db_path = Path(db_path) if db_path is not None else default_db_path()
        self.tool_results_dir = Path(tool_results_dir) if tool_results_dir is not None else None
        self._clock = clock
        self._new_id = new_id
        self._db = Database(self.db_path)

    def __enter__(self) -> Manager:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def new_session(self) -> SQLiteSession:
        """Create an empty session with a fresh id (R-MGR-3)."""
        session_id = check_session_id(self._new_id())
        now = int(self._clock())
        with self._db.write() as cur:
            cur.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES (?, ?, ?)", (session_id, now, now))
        return SQLiteSession(self._db, session_id, self._clock)

    def open_session(self, session_id: str) -> SQLiteSession:
        """Return the session with exactly this id (R-MGR-4).

        Raises:
            SessionNotFound: there is no such session.
        """
        with self._db.read() as cur:
            if cur.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
                raise SessionNotFound(f"no session with id {session_id!r} in {self.db_path}")
        return SQLiteSession(self._db, session_id, self._clock)

    def list_sessions(self) -> list[SessionInfo]:
        """Every session, most recently updated first (R-MGR-5)."""
        with self._db.read() as cur:
            rows = cur.execute(
                "SELECT s.id, s.created_at, s.updated_at,"
                " (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)"
                " FROM sessions s ORDER BY s.updated_at DESC, s.created_at DESC, s.id DESC"
            ).fetchall()
        return [SessionInfo(*row) for row in rows]

    def delete_session(self, session_id: str) -> None:
        """Delete a session, its messages, todos and checkpoint, and its tool-results folder (R-MGR-6).

        The rows go in one transaction through ON DELETE CASCADE (R-CKP-3, R-CKP-6).

        Raises:
            InvalidSessionId: ``session_id`` is not well-formed; nothing is touched, so no
                id can name a path outside the tool-results folder.
            SessionDatabaseError: the folder could not be removed (the rows are gone).
        """
        check_session_id(session_id)
        with self._db.write() as cur:
            cur.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        if self.tool_results_dir is not None:
            _remove(self.tool_results_dir / session_id)

    def close(self) -> None:
        """Close the connection; later calls on the Manager or its sessions raise SessionClosed (R-MGR-7)."""
        self._db.close()


def _remove(path: Path) -> None:
    """Remove a file, a folder tree, or a symbolic link itself (never what it points to)."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.is_symlink() or path.exists():
            path.unlink()  # a file, a link, a FIFO, a socket: never what a link points to
    except OSError as exc:
        raise SessionDatabaseError(f"cannot remove {path}: {exc.strerror or exc}") from exc
