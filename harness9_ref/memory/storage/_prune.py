"""Expiry of old sessions (SPEC R-PRUNE-1).

Every session not updated within ``older_than`` seconds goes in one transaction, as
``delete_session`` deletes one (R-MGR-6): rows by ON DELETE CASCADE, index rows with them,
and the tool-results folders after the commit. Deleting rows only frees pages inside the file,
so a prune that deleted something then checkpoints the WAL and runs VACUUM, and reports how
much smaller the files became.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ._index import forget_messages
from ._session import INT64_MIN, InvalidArgument, SessionDatabaseError, is_session_id
from ._sqlite_db import Database

__all__ = ["PruneResult"]

_OLD: Final = "SELECT id FROM sessions WHERE updated_at < ?"


@dataclass(frozen=True, slots=True)
class PruneResult:
    """What ``Manager.prune`` deleted, or would delete in a dry run (R-PRUNE-1)."""

    sessions: int
    messages: int
    bytes_reclaimed: int


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _files_size(db_path: Path) -> int:
    """The database file and its ``-wal`` file, the two R-PRUNE-1 measures."""
    return _file_size(db_path) + _file_size(Path(f"{db_path}-wal"))


def _tree_size(path: Path) -> int:
    """Bytes of the regular files under ``path``, following no link (a linked folder counts 0)."""
    if path.is_symlink() or not path.exists():
        return 0
    if not path.is_dir():
        return _file_size(path)
    total = 0
    for folder, _, names in os.walk(path):
        for name in names:
            entry = Path(folder) / name
            if not entry.is_symlink():
                total += _file_size(entry)
    return total


def prune_cutoff(now: int, older_than: object) -> int:
    """The ``updated_at`` below which a session goes: ``now - older_than`` (R-PRUNE-1).

    Raises:
        InvalidArgument: ``older_than`` is not a whole number of seconds of at least 1.
    """
    if not isinstance(older_than, int) or isinstance(older_than, bool) or older_than < 1:
        raise InvalidArgument(f"older_than must be a whole number of seconds, at least 1, got {older_than!r}")
    return max(now - older_than, INT64_MIN)


def remove_folders(
    ids: list[str], tool_results_dir: Path | None, remove: Callable[[Path], None]
) -> tuple[int, SessionDatabaseError | None]:
    """Remove the tool-results folders of the pruned sessions, after their rows are gone (R-PRUNE-1).

    Returns the bytes of the files removed and the first failure, which the caller raises once
    the rest is done, so that one folder that cannot go keeps no other from going.
    """
    freed = 0
    failure: SessionDatabaseError | None = None
    if tool_results_dir is not None:
        for session_id in ids:
            if not is_session_id(session_id):
                continue  # another program's row: its id must never name a path (R-MGR-6)
            folder = tool_results_dir / session_id
            size = _tree_size(folder)
            try:
                remove(folder)
                freed += size
            except SessionDatabaseError as exc:
                failure = failure or exc
    return freed, failure


def prune(
    db: Database,
    tool_results_dir: Path | None,
    now: int,
    older_than: object,
    dry_run: bool,
    remove: Callable[[Path], None],
) -> PruneResult:
    """Delete, or count for a dry run, the sessions with ``updated_at < now - older_than``.

    Raises:
        InvalidArgument: ``older_than`` is not a whole number of seconds of at least 1.
        SessionDatabaseError: a folder could not be removed (after the rows are gone).
    """
    cutoff = prune_cutoff(now, older_than)
    messages_sql = f"SELECT COUNT(*) FROM messages WHERE session_id IN ({_OLD})"
    if dry_run:
        with db.read() as cur:
            (sessions,) = cur.execute(f"SELECT COUNT(*) FROM ({_OLD})", (cutoff,)).fetchone()
            (messages,) = cur.execute(messages_sql, (cutoff,)).fetchone()
        return PruneResult(sessions, messages, 0)
    before = _files_size(db.path)
    with db.write() as cur:
        ids = [row[0] for row in cur.execute(_OLD, (cutoff,))]
        (messages,) = cur.execute(messages_sql, (cutoff,)).fetchone()
        db.upkeep(cur, lambda c: forget_messages(c, f"SELECT id FROM messages WHERE session_id IN ({_OLD})", (cutoff,)))
        cur.execute("DELETE FROM sessions WHERE updated_at < ?", (cutoff,))
    if not ids:
        return PruneResult(0, 0, 0)
    freed, failure = remove_folders(ids, tool_results_dir, remove)
    db.reclaim()
    if failure is not None:
        raise failure
    return PruneResult(len(ids), messages, max(0, before - _files_size(db.path)) + freed)
