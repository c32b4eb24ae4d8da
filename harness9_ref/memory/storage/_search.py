"""Search of message contents across sessions (SPEC R-SRCH-1, R-SRCH-2, R-SRCH-3).

The rule is a scan: a message matches when its lower-cased content contains every lower-cased
term. The full-text index only picks the candidates (``_index``); every candidate is checked
by the same rule, and the messages above the index's watermark are scanned, so a search with
the index returns exactly what the scan returns.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final

from ..._harness9_error import Said
from ._find import session_details
from ._index import candidate_query, searchable_text, watermark
from ._session import InvalidArgument

__all__ = ["SearchHit", "make_snippet", "matches"]

SNIPPET_BEFORE: Final = 30  # R-SRCH-2: characters kept before the first term
SNIPPET_AFTER: Final = 50  # R-SRCH-2: characters kept after it


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One session of ``Manager.search()`` (R-SRCH-1); ``snippet`` is from its newest match (R-SRCH-2)."""

    id: str
    updated_at: int
    message_count: int
    title: str
    snippet: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # flat fields, in declaration order


def search_terms(query: object) -> list[str]:
    """The query's terms, lower-cased (R-SRCH-1): split at ``str.isspace`` characters (R-SUM-12).

    Raises:
        InvalidArgument: the query is not text, or has no term (empty or blank).
    """
    if not isinstance(query, str):
        raise InvalidArgument(f"a search query must be text, got {type(query).__name__}")
    terms = [term.lower() for term in query.split()]
    if not terms:
        raise InvalidArgument(Said("err_query_empty"))  # R-LANG-3
    return terms


def matches(lowered: str, terms: Sequence[str]) -> bool:
    """R-SRCH-1: the lower-cased content contains every term."""
    return all(term in lowered for term in terms)


def make_snippet(content: str, term: str) -> str:
    """R-SRCH-2: the content around the first occurrence of ``term`` in the lower-cased content.

    The position is found in the lower-cased text and used in the content as it is, as the
    rule says (the two differ in length only for the few characters whose lower case does).
    """
    found = content.lower().find(term)
    start = max(0, found - SNIPPET_BEFORE)
    end = found + len(term) + SNIPPET_AFTER
    piece = content[start:end].replace("\r", " ").replace("\n", " ")
    return ("…" if start > 0 else "") + piece + ("…" if end < len(content) else "")


class Found:
    """Per session: how many messages match, and the newest of them."""

    __slots__ = ("count", "newest", "text")

    def __init__(self, message_id: int, text: str) -> None:
        self.count = 1
        self.newest = message_id
        self.text = text


def collect_matches(rows: Iterable[tuple[int, str, object]], terms: Sequence[str], found: dict[str, Found]) -> None:
    """Add the rows ``(id, session_id, content)`` that match ``terms`` to ``found`` (R-SRCH-1, R-SRCH-2)."""
    for message_id, session_id, content in rows:
        text = searchable_text(content)
        if not matches(text.lower(), terms):
            continue
        entry = found.get(session_id)
        if entry is None:
            found[session_id] = Found(message_id, text)
        else:
            entry.count += 1
            if message_id > entry.newest:
                entry.newest, entry.text = message_id, text


def search(cur: sqlite3.Cursor, terms: Sequence[str], limit: int, indexed: bool) -> tuple[list[SearchHit], bool]:
    """The sessions holding a matching message, best first (R-SRCH-1), in one read transaction.

    The flag says the index failed (a damaged table) and the scan answered instead.
    """
    found: dict[str, Found] = {}
    failed = False
    query = candidate_query(terms) if indexed else None
    if query is not None:
        try:
            mark = watermark(cur)
            # Joining with messages drops index rows of messages others deleted; the rowid bound
            # keeps a message from being counted by both queries.
            collect_matches(
                cur.execute(
                    "SELECT m.id, m.session_id, m.content FROM messages_fts f JOIN messages m ON m.id = f.rowid"
                    " WHERE messages_fts MATCH ? AND f.rowid <= ?",
                    (query, mark),
                ),
                terms,
                found,
            )
            collect_matches(cur.execute("SELECT id, session_id, content FROM messages WHERE id > ?", (mark,)), terms, found)
        except sqlite3.Error:  # a damaged index: the scan gives the same answer
            found.clear()
            query = None
            failed = True
    if query is None:
        collect_matches(cur.execute("SELECT id, session_id, content FROM messages"), terms, found)
    if not found or limit == 0:
        return [], failed
    # SQLite orders the sessions (updated_at, then id, descending, as R-MGR-5 compares them);
    # the stable sort by count keeps that order among equal counts. A message whose session
    # row is missing (a foreign file without foreign keys) belongs to no session.
    ordered = cur.execute(
        "SELECT s.id, s.updated_at FROM sessions s WHERE s.id IN (SELECT value FROM json_each(?))"
        " ORDER BY s.updated_at DESC, s.id DESC",
        (json.dumps(list(found)),),
    ).fetchall()
    return rank_hits(ordered, found, terms, limit, lambda ids: session_details(cur, ids)), failed


def rank_hits(
    ordered: list[tuple[str, int]],
    found: dict[str, Found],
    terms: Sequence[str],
    limit: int,
    details_of: Callable[[Iterable[str]], dict[str, tuple[int, str]]],
) -> list[SearchHit]:
    """The best ``limit`` hits (R-SRCH-1, R-SRCH-2).

    ``ordered`` holds the matching sessions' ``(id, updated_at)`` ordered by updated_at, then id,
    descending, as R-MGR-5 compares them; the stable sort by count keeps that order among equal
    counts. ``details_of`` gives ``{id: (message_count, title)}`` for the sessions kept.
    """
    ordered.sort(key=lambda row: found[row[0]].count, reverse=True)
    best = ordered[:limit]
    details = details_of(session_id for session_id, _ in best)
    return [
        SearchHit(
            session_id,
            updated_at,
            details[session_id][0],
            details[session_id][1],
            make_snippet(found[session_id].text, terms[0]),
        )
        for session_id, updated_at in best
    ]
