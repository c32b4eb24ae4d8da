"""Finding sessions: ids from prefixes, the recent list and titles (SPEC R-FIND-1, R-FIND-3).

These read the Manager's connection inside its read transactions; the Manager wraps them.
"""

from __future__ import annotations

import codecs
import os
import re
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any, Final

from ..._harness9_error import Said
from ._index import searchable_text
from ._session import INT64_MAX, AmbiguousSessionId, InvalidSessionId, SessionNotFound, is_session_id
from ._sql import SESSION_ORDER, Statements
from ._sql import SQLITE as SQL

__all__ = ["TITLE_LIMIT", "SessionSummary", "make_title", "session_folder"]

TITLE_LIMIT: Final = 60  # R-FIND-3: characters of a title, the ellipsis included
AMBIGUOUS_LISTED: Final = 10  # R-FIND-1: candidates named in the error
_PREFIX: Final = re.compile(r"[0-9a-f-]{4,35}")
_LINE_BREAK: Final = re.compile(r"[\r\n]")
# The title comes from the first bytes of a message in all but odd cases (a first line that
# is blank for thousands of characters); reading only this many keeps a listing cheap when a
# session starts with a large paste, and the full content is read when they do not settle it.
TITLE_PREFIX: Final = 8192


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One row of ``Manager.recent_sessions()`` (R-FIND-3); times are Unix seconds."""

    id: str
    created_at: int
    updated_at: int
    message_count: int
    title: str
    workdir: str = ""  # R-FIND-4: the folder the session was created in, "" when unknown
    provider: str = ""  # R-FIND-4: the model label it was created with, "" when unknown

    def to_dict(self) -> dict[str, Any]:
        """Flat fields in declaration order; ``workdir`` and ``provider`` only when known (R-FIND-5b),
        as R-CKP-9e leaves default members out, so a port without them passes the older cases."""
        return {name: value for name, value in asdict(self).items() if value != "" or name == "title"}


def recent_query(statements: Statements, limit: int, offset: int, workdir: str | None) -> tuple[str, tuple[object, ...]]:
    """R-FIND-3a's statement and parameters, only the sessions of ``workdir`` unless it is None (R-FIND-5a)."""
    page = (min(limit, INT64_MAX), min(offset, INT64_MAX))
    if workdir is None:
        return statements.recent_sessions, page
    return statements.recent_sessions_in, (workdir, *page)


def stored_text(value: object) -> str:
    """A ``workdir`` or ``provider`` as read: text as it is, anything else another program wrote as unknown (R-FIND-4)."""
    return value if isinstance(value, str) else ""


def session_folder(workdir: str) -> str:
    """The folder a session records and ``-c`` looks for (R-FIND-4): the working directory made
    absolute with its symbolic links resolved, a name that is not UTF-8 read with U+FFFD, so that
    one folder is one text however it was reached."""
    return os.fsencode(os.path.realpath(workdir)).decode("utf-8", "replace")


def make_title(content: str) -> str:
    """The first non-blank line, stripped, cut to TITLE_LIMIT characters with ``…`` (R-FIND-3).

    Lines end at ``\\r`` or ``\\n``; blank and stripping use ``str.isspace``, R-SUM-12's set.
    """
    for line in _LINE_BREAK.split(content):
        stripped = line.strip()
        if stripped:
            return stripped if len(stripped) <= TITLE_LIMIT else stripped[: TITLE_LIMIT - 1] + "…"
    return ""


def _title_from_prefix(head: str) -> str | None:
    """The title when ``head``, the start of a longer content, settles it, else None.

    It does when the first non-blank line ends within it, or when that line is already longer
    than TITLE_LIMIT there (it is cut at the same place whatever follows).
    """
    lines = _LINE_BREAK.split(head)
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped:
            ended = number < len(lines) - 1
            return make_title(line) if ended or len(stripped) > TITLE_LIMIT else None
    return None


def title_from_head(head: bytes, full_content: Callable[[], object]) -> str:
    """The title of a message whose content starts with the bytes ``head`` (at most TITLE_PREFIX).

    ``full_content`` reads the whole content, only when the head does not settle the title. A
    character cut at the end of the head is held back by the incremental decoder.
    """
    if len(head) < TITLE_PREFIX:
        return make_title(head.decode("utf-8", "replace"))
    title = _title_from_prefix(codecs.getincrementaldecoder("utf-8")("replace").decode(head, final=False))
    if title is not None:
        return title
    return make_title(searchable_text(full_content()))


def title_of(cur: sqlite3.Cursor, message_id: int | None) -> str:
    """The title made from message ``message_id`` (the empty string for None).

    The first TITLE_PREFIX bytes are read as a blob: SQLite's text functions stop at a NUL
    character, and a content may hold one.
    """
    if message_id is None:
        return ""
    found = cur.execute(
        "SELECT substr(CAST(content AS BLOB), 1, ?) FROM messages WHERE id = ?", (TITLE_PREFIX, message_id)
    ).fetchone()
    head = found[0] if found is not None and isinstance(found[0], bytes) else b""
    return title_from_head(
        head, lambda: (cur.execute("SELECT content FROM messages WHERE id = ?", (message_id,)).fetchone() or ("",))[0]
    )


def parse_session_ref(text: object) -> tuple[str, bool]:
    """``text`` lower-cased, and whether it is a whole id rather than a prefix (R-FIND-1).

    Raises:
        InvalidSessionId: ``text`` is neither an id nor a prefix of 4 to 35 characters.
    """
    if not isinstance(text, str):
        raise InvalidSessionId(Said("err_not_ref", text=repr(text)))  # R-LANG-3
    lowered = text.lower()
    if is_session_id(lowered):
        return lowered, True
    if _PREFIX.fullmatch(lowered) is None:
        raise InvalidSessionId(Said("err_not_prefix", text=repr(text)))
    return lowered, False


def resolved_prefix(prefix: str, count: int, ids: list[str]) -> str:
    """The one id starting with ``prefix``, given how many do and the first AMBIGUOUS_LISTED of them.

    Raises:
        SessionNotFound: none does.
        AmbiguousSessionId: several do.
    """
    if not ids:
        raise SessionNotFound(Said("err_no_prefix", prefix=repr(prefix)))
    if count > 1:
        more = ", …" if count > len(ids) else ""
        raise AmbiguousSessionId(Said("err_ambiguous", prefix=repr(prefix), count=count, ids=", ".join(ids) + more), tuple(ids))
    return str(ids[0])


def resolve_session_id(cur: sqlite3.Cursor, text: object) -> str:
    """The id ``text`` names: a full id or a unique prefix of 4 to 35 characters (R-FIND-1).

    Raises:
        SessionNotFound: no session has this id or prefix.
        AmbiguousSessionId: several do; it lists up to AMBIGUOUS_LISTED, most recent first.
        InvalidSessionId: ``text`` is neither.
    """
    lowered, whole = parse_session_ref(text)
    if whole:
        if cur.execute(SQL.session_exists, (lowered,)).fetchone() is None:
            raise SessionNotFound(Said("err_no_session", id=lowered))
        return lowered
    # GLOB is case-sensitive (a stored id must start with the lower-cased text) and none of
    # these characters is special to it.
    (count,) = cur.execute("SELECT COUNT(*) FROM sessions WHERE id GLOB ?", (lowered + "*",)).fetchone()
    ids = [
        row[0]
        for row in cur.execute(
            f"SELECT s.id FROM sessions s WHERE s.id GLOB ? {SESSION_ORDER} LIMIT ?", (lowered + "*", AMBIGUOUS_LISTED)
        )
    ]
    return resolved_prefix(lowered, count, ids)


def recent_sessions(cur: sqlite3.Cursor, limit: int, offset: int, workdir: str | None) -> list[SessionSummary]:
    """Sessions holding a message, of ``workdir`` unless None, most recently updated first, with titles (R-FIND-3, R-FIND-5)."""
    rows = cur.execute(*recent_query(SQL, limit, offset, workdir)).fetchall()
    return [
        SessionSummary(sid, created, updated, count, title_of(cur, first), stored_text(folder), stored_text(label))
        for sid, created, updated, count, first, folder, label in rows
    ]


def session_details(cur: sqlite3.Cursor, ids: Iterable[str]) -> dict[str, tuple[int, str]]:
    """``{id: (message_count, title)}`` for the given sessions (search hits, R-SRCH-1)."""
    details = {}
    for session_id in ids:
        (count, first) = cur.execute(SQL.session_details, (session_id,)).fetchone()
        details[session_id] = (count, title_of(cur, first))
    return details
