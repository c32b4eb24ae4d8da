"""Time PostgreSQL sessions against bare psycopg and against SQLite sessions (SPEC R-PG).

Run from the repository root with the postgres extra installed, by hand (not in the tests):

    python benchmarks/bench_postgres.py [--url URL] [--rows 1000000]

URL is a server the benchmark may create a schema on (default $HARNESS9_TEST_POSTGRES_URL);
without one it starts a private server from Debian's binaries, as the tests do. It fills one
session of --rows messages, plus SESSIONS - 1 small ones, in a fresh schema and in an SQLite
file, then measures in the same run:

(a) add_messages of BATCH messages, against a bare psycopg executemany of the same rows in one
    transaction: the difference is what the session adds (encoding, the row lock and
    updated_at, the Manager's lock);
(b) get_messages(limit=LIMIT) of the big session, against the bare SELECT … ORDER BY id DESC
    LIMIT of the same rows;
(c) list_sessions(), against the bare SELECT with its per-session count;
(d) search (R-PG-5) of a rare term and of a common one: with the trigram index, without it
    (the server scans ``folded``), and by the scan search was before the index (every content
    read into Python in batches and matched there, as a Manager of another Unicode version
    still does), against SQLite's search with its FTS5 index.

The rows are filled without the trigram index, which is then built once, as an upgrade of a
big database builds it; the tables are vacuumed after, so that autovacuum does not change them
between two measurements. Lines (a) to (c) print the times and the ratios to the bare psycopg
baseline, whose rows carry the same derived columns into the same indexed table (target: 2x at
most); lines (d) print the indexed search against SQLite's (target: 3x at most) and the scan
against the indexed search (target: 50x at least). The schema is dropped at the end.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_memory import format_seconds, seconds_per_call

from harness9_ref.memory.storage import Manager
from harness9_ref.memory.storage._pg_db import TRGM_INDEX
from harness9_ref.memory.storage._pg_dialect import PostgresStore
from harness9_ref.memory.storage._pg_search import search as pg_search
from harness9_ref.memory.storage._rows import encode_tool_calls
from harness9_ref.schema import Message
from tests.fakes import realistic_history

DEFAULT_ROWS = 1_000_000
SESSIONS = 100  # the big one and SESSIONS - 1 of OTHER_ROWS messages
OTHER_ROWS = 100
LIMIT = 50
BATCH = 100
TARGET = 2.0  # R-PG: within 2x of bare psycopg
SEARCH_TARGET = 3.0  # R-PG-5: the indexed search within 3x of SQLite's
SCAN_TARGET = 50.0  # R-PG-5: the indexed search at least 50x faster than the scan
NEEDLE = "zanzibar-quokka"  # R-PG-5: the rare term, in one message of one small session
COMMON = "the"  # and a term of most messages
COLUMNS = "(session_id, role, content, tool_calls, tool_call_id, created_at)"
PG_COLUMNS = "(session_id, role, content, tool_calls, tool_call_id, created_at, body, folded)"
PG_INSERT = f"INSERT INTO messages {PG_COLUMNS} VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
LIST = (
    "SELECT s.id, s.created_at, s.updated_at, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)"
    " FROM sessions s ORDER BY s.updated_at DESC, s.created_at DESC, s.id DESC"
)


def pool() -> list[Message]:
    return [m for m in realistic_history(400) if m.role != "system"]


def rows_for(session_id: str, messages: list[Message], count: int, now: int) -> Iterator[tuple[Any, ...]]:
    for i in range(count):
        m = messages[i % len(messages)]
        yield (session_id, m.role, m.content.encode(), encode_tool_calls(m.tool_calls),
               m.tool_call_id.encode() if m.tool_call_id else None, now)


def pg_rows_for(session_id: str, messages: list[Message], count: int, now: int) -> Iterator[tuple[Any, ...]]:
    """The rows with R-PG-11's body and folded, as the session writes them (no NUL in these texts)."""
    for row, i in zip(rows_for(session_id, messages, count, now), range(count)):
        content = messages[i % len(messages)].content
        yield (*row, content, content.lower())


@contextmanager
def server(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    from tests.postgres.server import PgServer, find_bindir

    bindir = find_bindir()
    if bindir is None:
        sys.exit("no --url and no PostgreSQL binaries under /usr/lib/postgresql (apt-get install postgresql)")
    started = PgServer(bindir)
    started.start()
    try:
        yield started.url
    finally:
        started.remove()


def fill(manager: Manager, copy_rows: Callable[[str, int], None], rows: int) -> str:
    """Create the sessions through the Manager and fill them in bulk; returns the big one's id."""
    big = manager.new_session().session_id
    copy_rows(big, rows)
    for _ in range(SESSIONS - 1):
        copy_rows(manager.new_session().session_id, OTHER_ROWS)
    return big


def same_hits(pg: Manager, lite: Manager, term: str) -> bool:
    def found(manager: Manager) -> list[tuple[int, str, str]]:
        return sorted((h.message_count, h.title, h.snippet) for h in manager.search(term, limit=SESSIONS + 1))

    return found(pg) == found(lite)


def search_line(name: str, indexed: float, unindexed: float, scan: float, sqlite: float) -> None:
    flags = []
    if indexed / sqlite > SEARCH_TARGET:
        flags.append(f"over the {SEARCH_TARGET:g}x target")
    if scan / indexed < SCAN_TARGET:
        flags.append(f"under the {SCAN_TARGET:g}x target")
    note = f"  ({'; '.join(flags)})" if flags else ""
    print(f"{name:<34} {format_seconds(indexed):>10} {format_seconds(unindexed):>10} {format_seconds(scan):>10}"
          f" {format_seconds(sqlite):>10} {indexed / sqlite:>9.2f}x {scan / indexed:>9.0f}x{note}")


def line(name: str, ours_pg: float, bare: float, ours_sqlite: float) -> None:
    ratio = ours_pg / bare
    flag = "" if ratio <= TARGET else f"  (over the {TARGET:g}x target)"
    print(f"{name:<34} {format_seconds(ours_pg):>10} {format_seconds(bare):>10} {format_seconds(ours_sqlite):>10}"
          f" {ratio:>9.2f}x {ours_sqlite / bare:>9.2f}x{flag}")


def run(url: str, rows: int) -> None:
    import psycopg

    messages = pool()
    batch = [messages[i % len(messages)] for i in range(BATCH)]
    schema = f"bench_{secrets.token_hex(4)}"
    with psycopg.connect(url, autocommit=True) as bare:
        bare.execute(f'CREATE SCHEMA "{schema}"')
        bare.execute(f'SET search_path TO "{schema}"')
        try:
            with Manager(f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}") as pg, \
                    tempfile.TemporaryDirectory() as folder, Manager(Path(folder, "s.db")) as lite:
                started = time.monotonic()

                def pg_copy(session_id: str, count: int) -> None:
                    with bare.cursor() as cur, cur.copy(f"COPY messages {PG_COLUMNS} FROM STDIN") as copy:
                        for row in pg_rows_for(session_id, messages, count, 1_700_000_000):
                            copy.write_row(row)

                def lite_copy(session_id: str, count: int) -> None:
                    with sqlite3.connect(Path(folder, "s.db")) as conn:
                        conn.executemany(f"INSERT INTO messages {COLUMNS} VALUES (?, ?, ?, ?, ?, ?)",
                                         ((s, r, c.decode(), t, i.decode() if i else None, n)
                                          for s, r, c, t, i, n in rows_for(session_id, messages, count, 1_700_000_000)))

                store = pg._store
                assert isinstance(store, PostgresStore) and store.indexed, "the trigram index is needed"
                (trgm_schema,) = bare.execute(
                    "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
                    " WHERE e.extname = 'pg_trgm'").fetchone() or ("public",)
                bare.execute("DROP INDEX idx_messages_folded")
                big_pg, big_lite = fill(pg, pg_copy, rows), fill(lite, lite_copy, rows)
                for manager in (pg, lite):
                    manager.new_session().add_messages([Message("user", f"where is the {NEEDLE}?")])
                print(f"filled {SESSIONS} sessions, the largest of {rows:,} messages, in {time.monotonic() - started:.0f} s")
                started = time.monotonic()
                bare.execute(TRGM_INDEX.format(schema=f'"{trgm_schema}"'))
                print(f"built the trigram index in {time.monotonic() - started:.0f} s")
                lite.close()
                lite = Manager(Path(folder, "s.db"))  # indexes what the bulk fill left out (R-SRCH-3)
                # Vacuumed now, not by autovacuum in the middle of one side's measurement: the
                # visibility map it sets makes the index-only counts of list_sessions faster.
                bare.execute("VACUUM ANALYZE")
                for term in (NEEDLE, COMMON):  # before (a) adds to one side only
                    # The ids and times differ between the two databases; what was found may not.
                    assert same_hits(pg, lite, term), f"PostgreSQL and SQLite disagree on {term!r}"
                pg_big, lite_big = pg.open_session(big_pg), lite.open_session(big_lite)
                pg_add, lite_add = pg.new_session(), lite.new_session()
                bare_id = pg.new_session().session_id
                bare_rows = list(pg_rows_for(bare_id, batch, BATCH, 1_700_000_000))

                def bare_add() -> None:
                    with bare.transaction(), bare.cursor() as cur:
                        cur.executemany(PG_INSERT, bare_rows)

                def bare_last() -> object:
                    return bare.execute(
                        "SELECT id, role, content, tool_calls, tool_call_id FROM messages WHERE session_id = %s"
                        " ORDER BY id DESC LIMIT %s", (big_pg, LIMIT)).fetchall()

                print(f"{'':<34} {'postgres':>10} {'psycopg':>10} {'sqlite':>10} {'pg/bare':>10} {'sqlite/bare':>10}")
                line(f"add_messages of {BATCH}", seconds_per_call(lambda: pg_add.add_messages(batch)),
                     seconds_per_call(bare_add), seconds_per_call(lambda: lite_add.add_messages(batch)))
                line(f"get_messages(limit={LIMIT}) of {rows:,}", seconds_per_call(lambda: pg_big.get_messages(LIMIT)),
                     seconds_per_call(bare_last), seconds_per_call(lambda: lite_big.get_messages(LIMIT)))
                line(f"list_sessions of {SESSIONS + 4}", seconds_per_call(pg.list_sessions),
                     seconds_per_call(lambda: bare.execute(LIST).fetchall()), seconds_per_call(lite.list_sessions))
                print(f"\n{'':<34} {'indexed':>10} {'no index':>10} {'scan':>10} {'sqlite':>10} {'pg/sqlite':>10}"
                      f" {'scan/pg':>10}")
                for term in (NEEDLE, COMMON):
                    indexed = seconds_per_call(lambda term=term: pg.search(term))
                    bare.execute("DROP INDEX idx_messages_folded")
                    unindexed = seconds_per_call(lambda term=term: pg.search(term))
                    bare.execute(TRGM_INDEX.format(schema=f'"{trgm_schema}"'))

                    def scan(term: str = term) -> object:  # as a Manager of another Unicode version searches
                        with store.db.read() as cur:
                            return pg_search(cur, [term], 20, folding=False)

                    search_line(f"search {term!r} in {rows + SESSIONS * OTHER_ROWS:,}", indexed, unindexed,
                                seconds_per_call(scan), seconds_per_call(lambda term=term: lite.search(term)))
                lite.close()
        finally:
            bare.execute(f'DROP SCHEMA "{schema}" CASCADE')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("HARNESS9_TEST_POSTGRES_URL"), help="a PostgreSQL server")
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, help="messages in the big session")
    args = parser.parse_args()
    with server(args.url) as url:
        run(url, args.rows)


if __name__ == "__main__":
    main()
