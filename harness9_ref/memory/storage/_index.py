"""The full-text index of message contents, an optional cache for search (SPEC R-SRCH-3).

The index is an FTS5 table, ``messages_fts``, with the trigram tokenizer, one row per message
(rowid = ``messages.id``) holding the text R-SRCH-1 matches: the content as ``searchable_text``
reads it, lower-cased by ``str.lower``. Storing Python's lower-casing, with a case-sensitive
tokenizer, means the index folds case exactly as the rule does; SQLite's own folding differs
for some characters, and a difference would be a missed match. ``detail=none`` keeps only which
rows hold each trigram (about a third of the size of full position lists): a query is an AND of
trigrams of the terms, so it returns a superset of the matching messages, and every candidate
is checked by the exact rule. The index can therefore only narrow, never decide (R-SRCH-3).

Other programs (the Go original, older versions, any SQLite client) change ``messages`` without
knowing the index. What keeps the index honest:

- ``messages_fts_meta`` holds a *watermark*: every message with an id at or below it has been
  indexed, unless it was deleted since. Messages above it (appended by others: ids only grow,
  R-DB-1's AUTOINCREMENT) are scanned by every search and indexed by the next write or open.
- A deleted message's row can stay behind (others delete without knowing the index); search
  joins candidates with ``messages``, so such a row matches nothing, and opening the file
  removes it when the row counts disagree.
- The meta table also records the index format and the Unicode version of ``str.lower``: when
  either changes the index is rebuilt, since lower-casing may differ.

This relies on what every implementation of R-SES does: a stored message is never changed in
place, and new messages get larger ids. Tables named ``messages_fts…`` that are not ours (another
definition) are left alone, and search then scans.
"""

from __future__ import annotations

import functools
import sqlite3
import unicodedata
from collections.abc import Sequence
from typing import Final

__all__ = [
    "INDEX_FORMAT",
    "TAIL_BATCH",
    "candidate_query",
    "forget_messages",
    "index_available",
    "index_state",
    "index_tail",
    "install_index",
    "mark_damaged",
    "reconcile_index",
    "searchable_text",
    "watermark",
]

INDEX_TABLE: Final = "messages_fts"
_CREATE_INDEX: Final = (
    "CREATE VIRTUAL TABLE messages_fts USING fts5(body, tokenize = 'trigram case_sensitive 1', detail = none)"
)
_CREATE_META: Final = "CREATE TABLE messages_fts_meta (key TEXT PRIMARY KEY, value NOT NULL) WITHOUT ROWID"
# Changing how text is indexed, or Python's Unicode tables changing str.lower, makes an old
# index wrong; a different format string makes the next open rebuild it.
INDEX_FORMAT: Final = f"harness9-ref 1; unicode {unicodedata.unidata_version}"
# Messages indexed per transaction: bounds how long a write holds the lock, so other writers
# never wait past the busy timeout (R-SES-8) while a large file is indexed on first open.
TAIL_BATCH: Final = 2000
_TERM_TRIGRAMS: Final = 8  # trigrams per term in a query; any subset still gives a superset


def searchable_text(content: object) -> str:
    """A content as search reads it: the text, with invalid UTF-8 replaced by U+FFFD.

    The connection decodes text with ``surrogateescape`` (so that decoding rows can report
    CorruptRow); search must not fail on such a row, so its bytes are decoded as Python's
    ``errors="replace"`` does. A blob is read the same way.
    """
    if isinstance(content, str):
        if content.isascii():
            return content
        try:
            content.encode("utf-8")
            return content
        except UnicodeEncodeError:
            return content.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if isinstance(content, bytes):
        return content.decode("utf-8", "replace")
    return ""


def _indexed_text(content: object) -> str:
    # The trigram tokenizer stops at a NUL character, which would hide what follows it. Any
    # character in its place keeps the index a superset, since no query trigram holds NUL.
    return searchable_text(content).lower().replace("\x00", "\ufffd")


@functools.cache
def index_available() -> bool:
    """Whether this SQLite has FTS5 with the trigram tokenizer (SQLite 3.34 or newer)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(_CREATE_INDEX)
        return True
    except sqlite3.Error:
        return False
    finally:
        conn.close()


@functools.cache
def _stored_definition() -> str | None:
    """The ``sqlite_master.sql`` text SQLite keeps for our table: how ours is recognised."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(_CREATE_INDEX)
        row = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (INDEX_TABLE,)).fetchone()
        return str(row[0])
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def _meta(cur: sqlite3.Cursor, key: str) -> object:
    row = cur.execute("SELECT value FROM messages_fts_meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else row[0]


def index_state(cur: sqlite3.Cursor) -> str:
    """``"current"``, ``"stale"`` (ours, but missing parts or another format), ``"absent"`` or ``"foreign"``."""
    rows = dict(cur.execute("SELECT name, sql FROM sqlite_master WHERE name IN ('messages_fts', 'messages_fts_meta')"))
    if "messages_fts" not in rows:
        return "absent"
    if rows["messages_fts"] != _stored_definition():
        return "foreign"
    if "messages_fts_meta" not in rows:
        return "stale"
    try:
        current = _meta(cur, "format") == INDEX_FORMAT and isinstance(_meta(cur, "watermark"), int)
    except sqlite3.Error:
        return "stale"
    return "current" if current else "stale"


def install_index(cur: sqlite3.Cursor) -> None:
    """Create the index empty, replacing an old one of ours; the next ``index_tail`` fills it."""
    cur.execute("DROP TABLE IF EXISTS messages_fts")
    cur.execute("DROP TABLE IF EXISTS messages_fts_meta")
    cur.execute(_CREATE_INDEX)
    cur.execute(_CREATE_META)
    cur.executemany(
        "INSERT INTO messages_fts_meta (key, value) VALUES (?, ?)", (("format", INDEX_FORMAT), ("watermark", 0))
    )


def mark_damaged(cur: sqlite3.Cursor) -> None:
    """Record that the index failed, so that the next open rebuilds it instead of trusting it."""
    try:
        cur.execute("UPDATE messages_fts_meta SET value = 'damaged' WHERE key = 'format'")
    except sqlite3.Error:
        pass  # the meta table is gone too: the next open sees a stale index anyway


def watermark(cur: sqlite3.Cursor) -> int:
    """Every message with an id up to this one is in the index, unless deleted since."""
    value = _meta(cur, "watermark")
    return value if isinstance(value, int) else 0


def index_tail(cur: sqlite3.Cursor, limit: int = TAIL_BATCH) -> bool:
    """Index up to ``limit`` messages above the watermark, in id order; True when none is left."""
    rows = cur.execute(
        "SELECT id, content FROM messages WHERE id > ? ORDER BY id LIMIT ?", (watermark(cur), limit)
    ).fetchall()
    if rows:
        cur.executemany(
            "INSERT OR REPLACE INTO messages_fts (rowid, body) VALUES (?, ?)",
            [(row_id, _indexed_text(content)) for row_id, content in rows],
        )
        cur.execute("UPDATE messages_fts_meta SET value = ? WHERE key = 'watermark'", (rows[-1][0],))
    return len(rows) < limit


def reconcile_index(cur: sqlite3.Cursor) -> None:
    """After the tail is indexed, drop rows of messages others deleted and add ones they slipped in.

    Once the tail is indexed, every message is in the index, so equal counts mean nothing is
    left over; only when they differ are the id sets compared.
    """
    mark = watermark(cur)
    # COUNT(*) of the whole table walks idx_messages_session, far smaller than the table; the
    # few rows above the watermark (appended since the tail was indexed) come off by a range.
    (messages,) = cur.execute(
        "SELECT (SELECT COUNT(*) FROM messages) - (SELECT COUNT(*) FROM messages WHERE id > ?)", (mark,)
    ).fetchone()
    (indexed,) = cur.execute("SELECT COUNT(*) FROM messages_fts_docsize").fetchone()
    if messages == indexed:
        return
    cur.execute(
        "DELETE FROM messages_fts WHERE rowid IN"
        " (SELECT id FROM messages_fts_docsize EXCEPT SELECT id FROM messages)"
    )
    missing = cur.execute(
        "SELECT id, content FROM messages WHERE id <= ? AND id NOT IN (SELECT id FROM messages_fts_docsize)", (mark,)
    ).fetchall()
    cur.executemany(
        "INSERT INTO messages_fts (rowid, body) VALUES (?, ?)", [(i, _indexed_text(c)) for i, c in missing]
    )


def forget_messages(cur: sqlite3.Cursor, ids_sql: str, params: Sequence[object]) -> None:
    """Remove the index rows of the messages ``ids_sql`` selects, before they are deleted."""
    cur.execute(f"DELETE FROM messages_fts WHERE rowid IN ({ids_sql})", tuple(params))


def _trigrams(term: str) -> list[str]:
    """Up to _TERM_TRIGRAMS trigrams of ``term``, spread over it; none for a term under 3 characters.

    A trigram holding NUL or a lone surrogate cannot be in the index (or even be passed to
    SQLite), so it is left out; fewer trigrams only widen the candidates.
    """
    grams = [g for g in dict.fromkeys(term[i : i + 3] for i in range(len(term) - 2)) if _bindable(g)]
    if len(grams) <= _TERM_TRIGRAMS:
        return grams
    step = (len(grams) - 1) / (_TERM_TRIGRAMS - 1)
    return [grams[round(k * step)] for k in range(_TERM_TRIGRAMS)]


def _bindable(gram: str) -> bool:
    return "\x00" not in gram and not any("\ud800" <= ch <= "\udfff" for ch in gram)


def candidate_query(terms: Sequence[str]) -> str | None:
    """The FTS5 query whose rows include every message holding all ``terms``, or None.

    None means no term has a usable trigram (each is shorter than 3 characters), so the
    index cannot narrow anything and the search scans.
    """
    grams = [g for term in terms for g in _trigrams(term)]
    if not grams:
        return None
    return " AND ".join('"' + g.replace('"', '""') + '"' for g in dict.fromkeys(grams))
