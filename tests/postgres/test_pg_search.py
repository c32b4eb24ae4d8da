"""Search on PostgreSQL gives the scan's answer, with the trigram index and without; the schema's
readable columns; the pool of connections (SPEC R-PG-4, R-PG-5, R-PG-8, R-PG-11, R-PG-12).

Every comparison is with an SQLite Manager holding the same sessions (same ids, same clock):
its search is R-SRCH-1's exact rule, so an equal answer is the scan's answer.
"""

from __future__ import annotations

import functools
import itertools
import random
import secrets
import subprocess
import sys
import threading
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

import pytest

from harness9_ref.memory.storage import Manager
from harness9_ref.memory.storage._pg_db import POOL_SIZE, PgDatabase
from harness9_ref.memory.storage._pg_dialect import PostgresStore
from harness9_ref.memory.storage._pg_search import SCAN_BATCH
from harness9_ref.schema import Message
from harness9_ref.text import STRINGS
from tests.memory.helpers import ODD, fill
from tests.postgres.server import PgServer, schema_url
from tests.postgres.test_pg_store import as_version_3, column

if TYPE_CHECKING:
    import psycopg
else:
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[postgres]')")

ROOT: Final = Path(__file__).resolve().parents[2]
# Pieces of the random texts: mixed case, Chinese, emoji, NUL and U+FFFD (which `folded` cannot
# tell apart), LIKE's own characters, and characters whose lower case changes length or depends
# on the context (İ, final sigma).
PIECES: Final = (
    "Apple", "apple", "APPLE", "ab", "Ab", "a", "中文", "中", "文件", "🧑‍💻", "💻", "\x00", "\ufffd", "%", "_",
    "\\", "50%_off", "İstanbul", "i̇", "ΣΟΦΙΑ", "σοφια", "Straße", "STRASSE", " ", " ", "\n", "x",
)


def _texts(rng: random.Random, count: int) -> list[str]:
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 8))) for _ in range(count)]


def _queries(rng: random.Random, texts: list[str], count: int) -> list[str]:
    """Pieces of the stored texts (one or two characters too: shorter than a trigram), re-cased, and some words."""
    queries = []
    for _ in range(count):
        text = rng.choice(texts)
        start = rng.randrange(len(text))
        piece = text[start : start + rng.randint(1, 6)]
        piece = rng.choice((piece, piece.upper(), piece.lower(), piece.swapcase()))
        if not piece.split():
            piece = rng.choice(PIECES[:4])
        queries.append(piece if rng.random() < 0.7 else f"{piece} {rng.choice(PIECES[:10])}")
    return queries


def _same_sessions(pg_url: str, sqlite: Path, texts: list[str]) -> tuple[Manager, Manager]:
    """The same sessions in both databases: ids in order, one clock, the texts spread over eight sessions."""
    managers = []
    for location in (pg_url, str(sqlite)):
        ids = (f"{n:08x}-0000-4000-8000-000000000000" for n in itertools.count(1))
        manager = Manager(location, clock=lambda: 1_700_000_000, new_id=functools.partial(next, ids))
        sessions = [manager.new_session() for _ in range(8)]
        for n, text in enumerate(texts):
            sessions[n % 8].add_messages([Message("user" if n % 3 else "assistant", text)])
        managers.append(manager)
    return managers[0], managers[1]


def _answers(manager: Manager, queries: list[str]) -> list[list[dict[str, Any]]]:
    return [[hit.to_dict() for hit in manager.search(query, limit=5)] for query in queries]


def test_search_equals_the_scan_with_the_index_without_it_and_for_another_unicode(pg_url: str, tmp_path: Path) -> None:
    rng = random.Random(20261203)
    texts = _texts(rng, 300)
    queries = _queries(rng, texts, 150)
    pg, lite = _same_sessions(pg_url, tmp_path / "s.db", texts)
    with pg, lite:
        assert pg.search_indexed
        expected = _answers(lite, queries)
        assert sum(1 for hits in expected if hits) > 50, "the queries should mostly find something"
        assert _answers(pg, queries) == expected
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("DROP INDEX idx_messages_folded")
        assert _answers(pg, queries) == expected  # the server scans `folded` itself
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("UPDATE harness9_schema SET unicode = 'another'")
    with Manager(pg_url) as other, Manager(tmp_path / "s.db") as lite:
        assert not other.search_indexed  # R-PG-5: its fold may not be the one `folded` holds
        assert _answers(other, queries) == expected
        session = other.open_session(other.recent_sessions(limit=1)[0].id)
        session.add_messages([Message("user", "Written ELSEWHERE")])
        lite.open_session(session.session_id).add_messages([Message("user", "Written ELSEWHERE")])
        assert column(pg_url, "SELECT body, folded FROM messages ORDER BY id DESC LIMIT 1") == [("Written ELSEWHERE", None)]
        later = [*queries, "elsewhere", "WRITTEN apple"]
        expected = _answers(lite, later)
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("UPDATE harness9_schema SET unicode = %s", (unicodedata.unidata_version,))
    with Manager(pg_url) as pg, Manager(tmp_path / "s.db") as lite:
        assert pg.search_indexed  # the index is made again at open (R-PG-4)
        assert _answers(pg, later) == expected  # the unfolded row is checked on its content


def test_another_unicode_reads_every_batch(pg_url: str) -> None:
    with Manager(pg_url) as manager:
        session = manager.new_session()
        session.add_messages([*(Message("user", f"filler {n}") for n in range(2 * SCAN_BATCH)), Message("user", "the needle")])
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("UPDATE harness9_schema SET unicode = 'another'")
    with Manager(pg_url) as manager:
        assert [hit.id for hit in manager.search("NEEDLE")] == [session.session_id]


def test_every_message_has_a_readable_body_and_its_fold(pg_url: str) -> None:
    """R-PG-11: `psql` shows the text; NUL and invalid UTF-8 as U+FFFD; `content` stays exact."""
    with Manager(pg_url) as manager:
        session_id = fill(manager)
        assert manager.open_session(session_id).get_messages() == ODD
    rows = column(pg_url, "SELECT body, folded, content FROM messages ORDER BY id")
    assert [(body, folded) for body, folded, _ in rows] == [
        ("中文 🧑‍💻 \ufffd nul\r\n", "中文 🧑‍💻 \ufffd nul\r\n"),
        ("", ""),
        ("text", "text"),
        ("", ""),
        ("done", "done"),
    ]
    assert bytes(rows[0][2]) == ODD[0].content.encode()


def test_a_version_3_schema_is_upgraded_with_the_body_of_every_message(pg_url: str, tmp_path: Path) -> None:
    texts = ["Hello WORLD", "中文\x00NUL", "İ"]
    with Manager(pg_url) as manager:
        session = manager.new_session()
        session.add_messages([Message("user", text) for text in texts])
    as_version_3(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as admin:  # invalid UTF-8, as another program may write it
        admin.execute("INSERT INTO messages (session_id, role, content, created_at) VALUES (%s, 'user', %s, 0)",
                      (session.session_id, b"bad \xff byte"))
    with Manager(pg_url) as manager:
        assert manager.search_indexed
        assert [hit.id for hit in manager.search("\ufffd byte")] == [session.session_id]
        assert [hit.snippet for hit in manager.search("world")] == ["Hello WORLD"]
    assert column(pg_url, "SELECT version, unicode FROM harness9_schema") == [(6, unicodedata.unidata_version)]
    assert column(pg_url, "SELECT body, folded FROM messages ORDER BY id") == [
        ("Hello WORLD", "hello world"), ("中文\ufffdNUL", "中文\ufffdnul"), ("İ", "i̇"), ("bad \ufffd byte", "bad \ufffd byte")
    ]


@pytest.fixture
def plain_url(pg_server_url: str) -> Iterator[str]:
    """A schema of a role that may not install extensions, in a database without pg_trgm."""
    name = f"h9plain_{secrets.token_hex(4)}"
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{name}" LOGIN')
        admin.execute(f'CREATE DATABASE "{name}"')
    base = pg_server_url.replace("postgresql://postgres@/postgres?", f"postgresql://{name}@/{name}?")
    admin_url = pg_server_url.replace("/postgres?", f"/{name}?", 1)
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA s AUTHORIZATION "{name}"')
    try:
        yield f"{base}&options={quote('-csearch_path=s')}"
    finally:
        with psycopg.connect(pg_server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
            admin.execute(f'DROP ROLE "{name}"')


def test_without_the_right_to_install_pg_trgm_search_scans_says_so_and_the_index_comes_later(
    plain_url: str, pg_server_url: str, tmp_path: Path
) -> None:
    assert plain_url.startswith("postgresql://h9plain_")
    rng = random.Random(7)
    texts = _texts(rng, 120)
    queries = _queries(rng, texts, 60)
    pg, lite = _same_sessions(plain_url, tmp_path / "s.db", texts)
    with pg, lite:
        assert not pg.search_indexed
        assert _answers(pg, queries) == _answers(lite, queries)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8", "HARNESS9_DB": plain_url}
    found = subprocess.run([sys.executable, "-m", "harness9_ref", "search", "apple"], check=False,
                           capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert found.stderr.splitlines()[0] == STRINGS["en"]["cli_no_index_pg"]
    database = plain_url.split("/")[3].partition("?")[0]
    with psycopg.connect(pg_server_url.replace("/postgres?", f"/{database}?", 1), autocommit=True) as admin:
        admin.execute("CREATE EXTENSION pg_trgm")  # an administrator installs it later
    with Manager(plain_url) as manager:
        assert manager.search_indexed
    found = subprocess.run([sys.executable, "-m", "harness9_ref", "search", "apple"], check=False,
                           capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert STRINGS["en"]["cli_no_index_pg"] not in found.stderr


def _holding(store: PostgresStore) -> tuple[threading.Thread, threading.Event]:
    """A thread holding a write transaction open until the returned event is set."""
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.db.write() as cur:
            cur.execute("SELECT 1")
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(30)
    return holder, release


def test_the_threads_of_one_manager_use_the_database_at_once(pg_url: str) -> None:
    """R-PG-12: a read goes on while another thread's write transaction is open."""
    with Manager(pg_url) as manager:
        store = manager._store
        assert isinstance(store, PostgresStore)
        holder, release = _holding(store)
        done = threading.Event()
        def read() -> None:
            manager.list_sessions()
            done.set()

        reader = threading.Thread(target=read)
        reader.start()
        try:
            assert done.wait(20), "the read waited for the other thread's connection"
        finally:
            release.set()
            holder.join(30)
            reader.join(30)


def test_a_pool_of_one_makes_the_second_call_wait_for_the_first(pg_url: str) -> None:
    db = PgDatabase(pg_url, pool_size=1)
    try:
        holding, release, done = threading.Event(), threading.Event(), threading.Event()

        def hold() -> None:
            with db.write():
                holding.set()
                release.wait(30)

        def read() -> None:
            with db.read() as cur:
                cur.execute("SELECT 1")
            done.set()

        holder, reader = threading.Thread(target=hold), threading.Thread(target=read)
        holder.start()
        assert holding.wait(30)
        reader.start()
        assert not done.wait(0.3), "the one connection is in use"
        release.set()
        assert done.wait(30)
        holder.join(30)
        reader.join(30)
    finally:
        db.close()


def test_concurrent_writers_share_at_most_the_pool_and_lose_nothing(pg_url: str) -> None:
    url = f"{pg_url}&application_name=h9pool"
    with Manager(url) as manager, psycopg.connect(pg_url, autocommit=True) as admin:
        sessions = [manager.new_session() for _ in range(3)]
        seen: list[int] = []

        def write(worker: int) -> None:
            for batch in range(15):
                session = sessions[(worker + batch) % 3]
                session.add_messages([Message("user", f"{worker}:{batch}:{i}") for i in range(5)])

        threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        while any(thread.is_alive() for thread in threads):
            (count,) = admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'h9pool'"
            ).fetchone() or (0,)
            seen.append(count)
        for thread in threads:
            thread.join()
        assert max(seen) <= POOL_SIZE
        stored = [m.content for s in sessions for m in manager.open_session(s.session_id).get_messages()]
    assert sorted(stored) == sorted(f"{w}:{b}:{i}" for w in range(8) for b in range(15) for i in range(5))
    for session_messages in (stored[n * 200 : (n + 1) * 200] for n in range(3)):
        batches = [session_messages[k : k + 5] for k in range(0, len(session_messages), 5)]
        assert all(len({m.rsplit(":", 1)[0] for m in batch}) == 1 for batch in batches)  # never interleaved


def test_a_server_restart_between_two_searches_fails_neither(own_server: PgServer) -> None:
    with psycopg.connect(own_server.url, autocommit=True) as admin:
        admin.execute('CREATE SCHEMA "r"')
    with Manager(schema_url(own_server.url, "r")) as manager:
        session = manager.new_session()
        session.add_messages([Message("user", "before the restart")])
        store = manager._store
        assert isinstance(store, PostgresStore)
        holder, release = _holding(store)  # two connections in the pool, both dropped by the restart
        assert [hit.id for hit in manager.search("restart")] == [session.session_id]
        release.set()
        holder.join(30)
        own_server.stop("fast")
        own_server.start()
        assert [hit.id for hit in manager.search("restart")] == [session.session_id]
