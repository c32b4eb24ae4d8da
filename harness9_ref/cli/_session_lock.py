"""One agent per session: the lock a running agent holds on its current session (SPEC R-CLI-27).

Why a lock: two agents on one session would add their turns to the same history in whatever
order their saves commit, so each model would read the other's prompts as its own (R-SES-8a
keeps each batch whole, not a turn's batches together). The second agent is refused instead.

Why a POSIX record lock (``fcntl.lockf``) on one byte of one file next to the database: the
kernel drops it when the process ends however it ends, SIGKILL included, so no crash leaves a
session locked and no stale holder needs to be guessed at; one byte per session (at an offset
made from the id) keeps the folder to one file however many sessions there are; and a record
lock is not inherited by the commands the agent's tools start, so a command left running after
the agent is gone holds nothing. A record lock belongs to the process, not to the descriptor:
the one ``SessionLock`` of a program keeps the file open for as long as it runs.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Final

from ..memory.storage import SessionError
from ..text import TableSaid

__all__ = ["SESSION_LOCK_FILE", "SessionInUse", "SessionLock"]

SESSION_LOCK_FILE: Final = "session-locks"  # R-CLI-27a: in the database's folder (<home> for PostgreSQL)
_OFFSET_BYTES: Final = 7  # an offset below 2^56: inside every off_t, and no two ids of a database meet


class SessionInUse(SessionError):
    """Another running agent holds the session (R-CLI-27b): one line, exit status 1 (R-CLI-6)."""

    code: ClassVar[str] = "session_in_use"


class SessionLock:
    """The lock of the one session a program works on, moved when the program changes session.

    Args:
        path: the lock file, created (mode 0600) when missing.

    Raises:
        OSError: the file cannot be opened or created.
    """

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        self._held: int | None = None

    def hold(self, session_id: str) -> None:
        """Lock ``session_id`` and then let go of the session held before, if another.

        Raises:
            SessionInUse: another process holds it; the lock held before is kept.
        """
        offset = _offset(session_id)
        if offset == self._held:
            return
        try:
            fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EAGAIN):
                raise
            raise SessionInUse(TableSaid("err_session_in_use", session=session_id)) from None
        if self._held is not None:
            fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, self._held)
        self._held = offset

    def close(self) -> None:
        """Let go of the session (closing the file drops the process's record locks on it)."""
        os.close(self._fd)
        self._held = None

    def __enter__(self) -> SessionLock:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _offset(session_id: str) -> int:
    """The byte locked for ``session_id``: the first bytes of its SHA-256, so any stored id fits."""
    return int.from_bytes(hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).digest()[:_OFFSET_BYTES], "big")
