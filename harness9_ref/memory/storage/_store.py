"""The store seam: what a Manager asks of its database, whichever it is (SPEC R-MGR, R-PG-1, R-PG-2).

A Manager holds one store: an SQLite file (``SQLiteStore``, R-DB) or a PostgreSQL database
(``PostgresStore``, R-PG). Both answer the same calls with the same results and errors, and
both hand out sessions that meet the Session protocol and keep long-session state too
(``StatefulSession``), so everything above the Manager (the engine, the command line, the
conformance adapter) is the same for both. The Manager chooses
the store by the location, a ``postgresql://`` URL or a path, and imports the PostgreSQL store
only for such a URL, so the package needs nothing beyond the standard library otherwise.

A ``SessionRecord`` is what a copy moves (R-PG-9): everything a session stores, as column
values. A copy reads the source in one snapshot and writes the destination in one transaction,
so it is whole or absent: a session id the destination already holds refuses the whole copy
unless ``overwrite`` is given, and then that session is replaced, not merged. What is copied is
what a session stores (its row's times, its messages in order with their column values, the
``tool_calls`` text included, its todos, its checkpoint and its context state), so the copy reads back exactly as
the original, in either direction. Message ids are the destination's own; a checkpoint counts
messages by order (R-CKP-7), so it stays valid. A value that cannot be stored losslessly
elsewhere (text that is not UTF-8, a number that is not an integer) is CorruptRow, naming it,
and nothing is copied: the ``record_*`` functions check each value read, the same for both
stores.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from ..._harness9_error import Said
from ._context_state import FIELD_KINDS
from ._file_changes import FileChangeRecord
from ._find import SessionSummary
from ._prune import PruneResult
from ._search import SearchHit
from ._session import Clock, CorruptRow, InvalidArgument, SessionDatabaseError, SessionInfo, StatefulSession

__all__ = ["POSTGRES_SCHEMES", "url_scheme"]

POSTGRES_SCHEMES: Final = ("postgresql", "postgres")  # R-PG-1: the two prefixes libpq reads
_URL_SCHEME: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_LISTED: Final = 3  # ids named in a refusal to copy

StoredMessage = tuple[str, str, "str | None", "str | None", int]
"""A ``messages`` row as copied (R-PG-9): role, content, tool_calls column text, tool_call_id, created_at."""
StoredState = tuple[object, ...]
"""A ``context_state`` row as copied (R-PG-9): its members' column values, then saved_at; each checked by ``record_state``."""


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """Everything one session stores, as column values, in order (R-PG-9).

    Messages keep their order, not their ids; todos are ``(id, content, status)`` in position
    order; ``checkpoint`` is ``(covered, anchor, summary, created_at)`` or None; ``context_state``
    is the values of its columns STATE_COLUMN_NAMES followed by ``saved_at``, or None (R-CKP-12);
    ``workdir`` and ``provider`` as stored (R-FIND-4); ``file_changes`` the session's records of
    changed files with their times (R-UNDO-2d).
    """

    id: str
    created_at: int
    updated_at: int
    messages: tuple[StoredMessage, ...]
    todos: tuple[tuple[str, str, str], ...]
    checkpoint: tuple[int, str, str, int] | None
    context_state: StoredState | None
    workdir: str  # R-FIND-4, copied as stored
    provider: str
    # R-UNDO-2d: each change with its created_at, in record order
    file_changes: tuple[tuple[FileChangeRecord, int], ...] = ()


class Store(Protocol):
    """One database behind a Manager (R-PG-2). Arguments arrive checked by the Manager."""

    name: str
    """The path, or the URL without its password: what messages name (R-MGR-9, R-PG-3)."""

    @property
    def indexed(self) -> bool:
        """False when search scans an SQLite file without its index (R-SRCH-3)."""
        ...

    def new_session(self, session_id: str, clock: Clock, draft: bool, origin: tuple[str, str]) -> StatefulSession:
        """A session whose row records ``origin``, its workdir and provider (R-FIND-4)."""
        ...

    def open_session(self, session_id: str, clock: Clock) -> StatefulSession: ...

    def list_sessions(self) -> list[SessionInfo]: ...

    def session_origin(self, session_id: str) -> tuple[str, str]:
        """The workdir and provider session ``session_id`` recorded, "" when unknown (R-FIND-4)."""
        ...

    def delete_rows(self, session_id: str) -> None: ...

    def resolve_session_id(self, text: str) -> str: ...

    def recent_sessions(self, limit: int, offset: int, workdir: str | None) -> list[SessionSummary]: ...

    def search(self, terms: list[str], limit: int) -> list[SearchHit]: ...

    def prune(
        self, tool_results_dir: Path | None, now: int, older_than: object, dry_run: bool, remove: Callable[[Path], None]
    ) -> PruneResult: ...

    def fork_session(self, source_id: str, new_id: str, at: int | None, clock: Clock) -> StatefulSession:
        """Session ``new_id`` from the first ``at`` messages of ``source_id`` (all for None), one transaction (R-MGR-10)."""
        ...

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


def record_text(value: object, where: str) -> str:
    """A text column's value to copy; CorruptRow when it is not text or not valid UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            raise CorruptRow(f"{where} cannot be copied: it holds text that is not UTF-8") from None
    raise CorruptRow(f"{where} cannot be copied: a value is not text")


def record_optional_text(value: object, where: str) -> str | None:
    """As ``record_text``, NULL allowed."""
    return None if value is None else record_text(value, where)


def record_int(value: object, where: str) -> int:
    """An integer column's value to copy; CorruptRow when it is not an integer."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise CorruptRow(f"{where} cannot be copied: a value is not an integer")


def record_state(row: Sequence[object], where: str) -> StoredState:
    """A ``context_state`` row (STATE_COLUMN_NAMES, then saved_at) to copy, each value as its
    column holds it: CorruptRow when one is not (R-PG-9, R-CKP-12). Values are not checked
    against R-CKP-10 (a ``window_source`` outside its set is copied as it is), as a copy never
    decodes a row."""
    *members, saved_at = row
    checked = [
        record_int(value, where) if kind is int else record_text(value, where)
        for value, kind in zip(members, FIELD_KINDS, strict=True)
    ]
    return (*checked, record_int(saved_at, where))


def fork_length(source_id: str, count: int, at: int | None, result_at: Callable[[int], bool]) -> int:
    """How many messages a fork of a session holding ``count`` keeps: ``at``, or all of them for None (R-MGR-11).

    A fork ends where a checkpoint may end (R-CKP-5): never just before a result, which would
    leave a call of the fork without its answer. ``result_at(i)`` says whether message ``i`` is one.

    Raises:
        InvalidArgument: ``at`` is past the session's end, or message ``at`` is a result; the
            caller's transaction then writes nothing.
    """
    if at is None:
        return count
    if at > count:
        raise InvalidArgument(Said("err_fork_beyond", id=source_id, count=count, at=at))  # R-LANG-3
    if at < count and result_at(at):
        raise InvalidArgument(Said("err_fork_result", id=source_id, at=at, k=at + 1))  # counted from 1, as a person counts
    return at


def refuse_existing(existing: list[str], name: str, overwrite: bool) -> None:
    """Raise before anything is written when the destination holds one of the ids (R-PG-9)."""
    if existing and not overwrite:
        shown = ", ".join(existing[:_LISTED]) + (", …" if len(existing) > _LISTED else "")
        raise SessionDatabaseError(Said("err_copy_taken", name=name, n=len(existing), ids=shown))  # R-LANG-3
