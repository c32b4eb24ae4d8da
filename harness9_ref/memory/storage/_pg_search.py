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

from ._find import TITLE_PREFIX, title_from_head
from ._index import searchable_text
from ._search import Found, SearchHit, collect_matches, make_snippet, rank_hits
from ._session import INT64_MAX
from ._sql import FIRST_PROMPT, MESSAGE_COUNT

if TYPE_CHECKING:
    import psycopg

    from ._pg_db import PgDatabase

__all__ = ["SCAN_BATCH", "like_pattern", "quick_search", "search"]

SCAN_BATCH: Final = 2000  # messages per fetch of a scan
_ALIASED: Final = ("\x00", "\ufffd")  # characters ``folded`` cannot tell apart (R-PG-5)
# The matching rows of one search, each with its session's updated_at: the sessions are ordered
# from it, so no second round trip asks for them. {where} is one LIKE per term.
_COUNTED: Final = (
    "SELECT m.session_id, s.updated_at, count(*), max(m.id), NULL::bytea FROM messages m"
    " JOIN sessions s ON s.id = m.session_id WHERE {where} GROUP BY m.session_id, s.updated_at"
)
_CANDIDATES: Final = (
    "SELECT m.session_id, s.updated_at, 1, m.id, m.content FROM messages m"
    " JOIN sessions s ON s.id = m.session_id WHERE {where}"
)
_UNFOLDED: Final = _CANDIDATES.format(where="m.folded IS NULL")
# Per session shown (R-SRCH-1, R-SRCH-2, R-FIND-3): its message count, the id and first bytes of
# the message its title comes from, and the content of its newest match, in one statement.
_DETAILS: Final = (
    f"SELECT s.id, {MESSAGE_COUNT}, f.id, substr(f.content, 1, %s), nm.content"
    " FROM unnest(%s::text[], %s::bigint[]) AS b(id, newest) JOIN sessions s ON s.id = b.id"
    f" LEFT JOIN messages f ON f.id = {FIRST_PROMPT} LEFT JOIN messages nm ON nm.id = b.newest"
)


# R-PG-5's common case as one statement, its own snapshot: the best sessions ranked as rank_hits
# ranks them (count, then updated_at, then id, descending), with their details; and whether any
# message lacks `folded`, in which case the answer is not this one's (the one row of `u` is
# there even when nothing matches).
_ONE_STATEMENT: Final = (
    "SELECT u.unfolded, d.* FROM (SELECT EXISTS (SELECT 1 FROM messages WHERE folded IS NULL)) AS u(unfolded)"
    " LEFT JOIN LATERAL ("
    " SELECT b.session_id, b.updated_at, b.n, {count}, f.id, substr(f.content, 1, %s), nm.content FROM ("
    "  SELECT m.session_id, s.updated_at, count(*) AS n, max(m.id) AS newest FROM messages m"
    "  JOIN sessions s ON s.id = m.session_id WHERE {where} GROUP BY m.session_id, s.updated_at"
    "  ORDER BY n DESC, s.updated_at DESC, m.session_id DESC LIMIT %s) AS b"
    " JOIN sessions s ON s.id = b.session_id"
    " LEFT JOIN messages f ON f.id = {first} LEFT JOIN messages nm ON nm.id = b.newest"
    " ORDER BY b.n DESC, b.updated_at DESC, b.session_id DESC"
    ") AS d ON true"
)


def quick_search(db: PgDatabase, terms: Sequence[str], limit: int) -> list[SearchHit] | None:
    """The hits in one round trip when ``folded`` decides them all (R-PG-5): no term with NUL or
    U+FFFD, every message folded; None when the transaction of ``search`` must answer instead."""
    if not all(_is_utf8(term) for term in terms):
        return []
    if any(c in term for term in terms for c in _ALIASED):
        return None
    where = " AND ".join(["m.folded LIKE %s"] * len(terms))
    sql = _ONE_STATEMENT.format(count=MESSAGE_COUNT, where=where, first=FIRST_PROMPT)
    rows = db.query(sql, [TITLE_PREFIX, *(like_pattern(term) for term in terms), min(limit, INT64_MAX)])
    if rows[0][0]:
        return None
    hits = []
    for _, session_id, updated_at, _, count, first, head, newest in rows:
        if session_id is None:
            break  # the one row of no match

        def full(first: int = first) -> object:
            found = db.query("SELECT content FROM messages WHERE id = %s", (first,))
            return searchable_text(bytes(found[0][0])) if found else ""

        title = "" if first is None else title_from_head(bytes(head or b""), full)
        snippet = make_snippet(searchable_text(bytes(newest)), terms[0])
        hits.append(SearchHit(session_id, updated_at, int(count), title, snippet))
    return hits


def like_pattern(term: str) -> str:
    """``%term%`` for ``LIKE`` with ``\\`` as its escape, NUL written as ``folded`` holds it."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return "%" + escaped.replace("\x00", "\ufffd") + "%"


def search(cur: psycopg.Cursor[Any], terms: Sequence[str], limit: int, folding: bool) -> list[SearchHit]:
    """The hits of R-SRCH-1 in the read transaction of ``cur``: decided on ``folded`` when
    ``folding`` (this program's Unicode version is the schema's), else by reading every row."""
    found, updated = _folded(cur, terms) if folding else _scanned(cur, terms)
    if not found or limit == 0:
        return []
    # R-MGR-5's order, updated_at then id, descending (ids are ASCII: code points order them as
    # the "C" collation does); rank_hits's stable sort by count keeps it among equal counts.
    ordered = sorted(updated.items(), key=lambda row: (row[1], row[0]), reverse=True)
    return rank_hits(ordered, found, terms, limit, lambda ids: _details(cur, found, ids))


def _folded(cur: psycopg.Cursor[Any], terms: Sequence[str]) -> tuple[dict[str, Found], dict[str, int]]:
    """The matches per session and the sessions' updated_at, in one statement (R-PG-5).

    A term with a lone surrogate matches nothing (no stored text holds one: R-SRCH-1 reads
    invalid UTF-8 as U+FFFD), and could not be sent as UTF-8 anyway.
    """
    if not all(_is_utf8(term) for term in terms):
        return {}, {}
    where = " AND ".join(["m.folded LIKE %s"] * len(terms))
    patterns = [like_pattern(term) for term in terms]
    aliased = any(c in term for term in terms for c in _ALIASED)
    decided = _CANDIDATES if aliased else _COUNTED
    found: dict[str, Found] = {}
    checked: dict[str, Found] = {}
    updated: dict[str, int] = {}
    candidates = []
    for session_id, updated_at, count, newest, content in cur.execute(
        f"{decided.format(where=where)} UNION ALL {_UNFOLDED}", patterns
    ):
        updated[session_id] = updated_at
        if content is None:
            entry = found[session_id] = Found(newest, "")
            entry.count = count
        else:
            candidates.append((newest, session_id, bytes(content)))
    collect_matches(candidates, terms, checked)
    for session_id, extra in checked.items():
        known = found.setdefault(session_id, extra)
        if known is not extra:
            known.count += extra.count
            if extra.newest > known.newest:
                known.newest, known.text = extra.newest, extra.text
    return found, {session_id: updated[session_id] for session_id in found}


def _scanned(cur: psycopg.Cursor[Any], terms: Sequence[str]) -> tuple[dict[str, Found], dict[str, int]]:
    """Every message read and checked here, in id order (a Manager of another Unicode version)."""
    found: dict[str, Found] = {}
    last = 0
    while True:
        rows = cur.execute(
            "SELECT id, session_id, content FROM messages WHERE id > %s ORDER BY id LIMIT %s", (last, SCAN_BATCH)
        ).fetchall()
        collect_matches(((i, s, bytes(c)) for i, s, c in rows), terms, found)
        if len(rows) < SCAN_BATCH:
            break
        last = rows[-1][0]
    updated = dict(cur.execute("SELECT id, updated_at FROM sessions WHERE id = ANY(%s)", (list(found),)).fetchall())
    return {session_id: entry for session_id, entry in found.items() if session_id in updated}, updated


def _details(cur: psycopg.Cursor[Any], found: dict[str, Found], ids: Iterable[str]) -> dict[str, tuple[int, str]]:
    """``{id: (message_count, title)}`` of the sessions shown, and the text of their newest match."""
    shown = list(ids)
    rows = cur.execute(_DETAILS, (TITLE_PREFIX, shown, [found[i].newest for i in shown])).fetchall()
    details = {}
    for session_id, count, first, head, newest in rows:
        entry = found[session_id]
        if not entry.text and newest is not None:
            entry.text = searchable_text(bytes(newest))

        def full(first: int = first) -> object:
            row = cur.execute("SELECT content FROM messages WHERE id = %s", (first,)).fetchone()
            return searchable_text(bytes(row[0])) if row is not None else ""

        details[session_id] = (int(count), "" if first is None else title_from_head(bytes(head or b""), full))
    return details


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
