"""Search on PostgreSQL, decided by the folded column and found by its trigram index (SPEC R-PG-5, R-PG-11).

Every message carries ``folded``: its text as R-SRCH-1 reads it, lower-cased by ``str.lower``,
NUL replaced by U+FFFD (PostgreSQL text cannot hold NUL). For a term holding neither NUL nor
U+FFFD, ``folded LIKE '%term%'`` is exactly R-SRCH-1's rule, since the replaced characters are
ones such a term cannot contain; so the server counts the matching messages per session and
nothing but the newest match of each shown session crosses the network. A term with NUL or
U+FFFD makes those rows mere candidates, checked on their ``content`` here. Rows without
``folded`` (written by a host whose Unicode version is not the schema's, R-PG-11) are always
checked here, and a Manager of another Unicode version checks every row itself, in batches, as
the scan did before the index existed.

The trigram index (``TRGM_INDEX``) only changes how the server finds the rows of ``LIKE``: with
or without it the results are the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

from ._index import searchable_text
from ._search import Found, collect_matches

if TYPE_CHECKING:
    import psycopg

__all__ = ["SCAN_BATCH", "folded_matches", "like_pattern", "newest_texts", "scanned_matches"]

SCAN_BATCH: Final = 2000  # messages per fetch of a scan
_ALIASED: Final = ("\x00", "\ufffd")  # characters ``folded`` cannot tell apart (R-PG-5)


def like_pattern(term: str) -> str:
    """``%term%`` for ``LIKE`` with ``\\`` as its escape, NUL written as ``folded`` holds it."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return "%" + escaped.replace("\x00", "\ufffd") + "%"


def folded_matches(cur: psycopg.Cursor[Any], terms: Sequence[str]) -> dict[str, Found]:
    """The matching messages per session, for a Manager of the schema's Unicode version (R-PG-5).

    ``Found.text`` is left empty: ``newest_texts`` reads it for the sessions shown. A term with
    a lone surrogate matches nothing (no stored text holds one, R-SRCH-1 reading invalid UTF-8
    as U+FFFD) and could not be sent as UTF-8 anyway.
    """
    if not all(_is_utf8(term) for term in terms):
        return {}
    where = " AND ".join(["folded LIKE %s"] * len(terms))
    patterns = [like_pattern(term) for term in terms]
    found: dict[str, Found] = {}
    if any(c in term for term in terms for c in _ALIASED):
        rows = cur.execute(f"SELECT id, session_id, content FROM messages WHERE {where}", patterns)
        collect_matches(((i, s, bytes(c)) for i, s, c in rows), terms, found)
    else:
        for session_id, count, newest in cur.execute(
            f"SELECT session_id, count(*), max(id) FROM messages WHERE {where} GROUP BY session_id", patterns
        ):
            entry = found[session_id] = Found(newest, "")
            entry.count = count
    unfolded: dict[str, Found] = {}
    rows = cur.execute("SELECT id, session_id, content FROM messages WHERE folded IS NULL")
    collect_matches(((i, s, bytes(c)) for i, s, c in rows), terms, unfolded)
    for session_id, extra in unfolded.items():
        known = found.setdefault(session_id, extra)
        if known is not extra:
            known.count += extra.count
            if extra.newest > known.newest:
                known.newest, known.text = extra.newest, extra.text
    return found


def scanned_matches(cur: psycopg.Cursor[Any], terms: Sequence[str]) -> dict[str, Found]:
    """Every message read and checked here, in id order (a Manager of another Unicode version)."""
    found: dict[str, Found] = {}
    last = 0
    while True:
        rows = cur.execute(
            "SELECT id, session_id, content FROM messages WHERE id > %s ORDER BY id LIMIT %s", (last, SCAN_BATCH)
        ).fetchall()
        collect_matches(((i, s, bytes(c)) for i, s, c in rows), terms, found)
        if len(rows) < SCAN_BATCH:
            return found
        last = rows[-1][0]


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def newest_texts(cur: psycopg.Cursor[Any], found: dict[str, Found], ids: Iterable[str]) -> None:
    """Fill in the text of the newest match of the sessions ``ids`` where it is not read yet (R-SRCH-2)."""
    wanted = {found[i].newest: found[i] for i in ids if not found[i].text}
    if wanted:
        for message_id, content in cur.execute("SELECT id, content FROM messages WHERE id = ANY(%s)", (list(wanted),)):
            wanted[message_id].text = searchable_text(bytes(content))
