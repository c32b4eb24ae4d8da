"""PostgreSQL's own under real concurrency and failure (SPEC R-PG-7, R-PG-8): a server restarted while
a writer is writing, managers in two processes, a writer held at another transaction's row lock, a
connection the server drops between two calls or during one. Every batch must be whole or absent,
in order, nothing lost. What both stores promise (writers killed mid-batch, processes of threads,
a batch refused midway) is tested on both in tests/memory/storage/.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING

import pytest

from harness9_ref.memory.storage import Manager, SessionDatabaseError
from harness9_ref.memory.storage._pg_db import redact_url
from harness9_ref.memory.storage._pg_dialect import PostgresStore
from harness9_ref.schema import Message
from tests.memory.session_worker import (
    APPEND_LARGEST,
    batch_messages,
    batch_size,
    split_batches,
)
from tests.postgres.server import PgServer, schema_url

if TYPE_CHECKING:
    import psycopg
else:  # a machine without the postgres extra skips this module, saying why
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[postgres]')")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses SIGKILL")

KILLS = 12
PROCESSES = 3
THREADS = 3
BATCHES = 40


def test_two_managers_in_two_processes_see_each_others_sessions_at_once(pg_url: str) -> None:
    child = (
        "import sys\nfrom harness9_ref.memory.storage import Manager\nfrom harness9_ref.schema import Message\n"
        "with Manager(sys.argv[1]) as m:\n"
        "    s = m.new_session(); s.add_messages([Message('user', 'from the other host')]); print(s.session_id)\n"
        "    print(sorted(i.id for i in m.list_sessions()))\n"
    )
    with Manager(pg_url) as manager:
        mine = manager.new_session()
        mine.add_messages(batch_messages("h", 0, 2))
        done = subprocess.run([sys.executable, "-c", child, pg_url], check=False, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        theirs, seen_there = done.stdout.splitlines()
        assert mine.session_id in seen_there
        assert manager.open_session(theirs).get_messages()[0].content == "from the other host"
        assert {info.id for info in manager.list_sessions()} == {mine.session_id, theirs}


def contents(manager: Manager, session_id: str) -> list[str]:
    return [m.content for m in manager.open_session(session_id).get_messages()]


def wait_for_lock_wait(admin: psycopg.Connection[object], application: str) -> None:
    """Return once the connection named ``application`` waits for a lock (R-PG-7)."""
    deadline = time.monotonic() + 20
    waiting = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s AND wait_event_type = 'Lock'"
    while admin.execute(waiting, (application,)).fetchone() != (1,):
        assert time.monotonic() < deadline, "the writer never waited for the session's row lock"
        time.sleep(0.01)


def test_a_writer_locks_the_session_before_inserting_so_ids_follow_the_commits(pg_url: str) -> None:
    with Manager(f"{pg_url}&application_name=h9writer") as manager, psycopg.connect(pg_url) as other, \
            psycopg.connect(pg_url, autocommit=True) as admin:
        session_id = manager.new_session().session_id
        # Another writer's transaction: it holds the row, as every write does first.
        other.execute("UPDATE sessions SET updated_at = updated_at + 1 WHERE id = %s", (session_id,))
        session = manager.open_session(session_id)
        writer = threading.Thread(target=session.add_messages, args=([Message("user", "a"), Message("user", "b")],))
        writer.start()
        wait_for_lock_wait(admin, "h9writer")
        other.execute(
            "INSERT INTO messages (session_id, role, content, created_at, body) VALUES (%s, 'user', %s, 0, '')",
            (session_id, b"committed first"),
        )
        other.commit()
        writer.join(timeout=30)
        assert contents(manager, session_id) == ["committed first", "a", "b"]


def test_a_connection_dropped_between_two_calls_is_replaced_and_the_call_goes_on(pg_url: str) -> None:
    """R-PG-8, R-PG-12: the next call finds its connection dropped at BEGIN, before anything of it ran."""
    url = f"{pg_url}&application_name=h9dropped"
    with Manager(url) as manager:
        session = manager.new_session()
        with psycopg.connect(pg_url, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'h9dropped'"
            ).fetchone()
        assert killed == (1,)
        session.add_messages([Message("user", "after")])
        assert contents(manager, session.session_id) == ["after"]


def test_a_connection_dropped_during_a_call_fails_that_call_in_one_line_and_the_next_reconnects(pg_url: str) -> None:
    """R-PG-3, R-PG-8: a transaction that had begun is not tried again; its error names the database."""
    url = f"{pg_url}&application_name=h9inflight"
    with Manager(url) as manager:
        session = manager.new_session()
        store = manager._store
        assert isinstance(store, PostgresStore)
        with pytest.raises(SessionDatabaseError) as caught, store.db.write() as cur:
            with psycopg.connect(pg_url, autocommit=True) as admin:
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'h9inflight'"
                )
            cur.execute("SELECT 1")
        assert "\n" not in str(caught.value) and str(caught.value).startswith(redact_url(url) + ": ")
        session.add_messages([Message("user", "after")])
        assert contents(manager, session.session_id) == ["after"]


def test_a_server_restart_fails_the_call_in_flight_cleanly_and_the_next_call_reconnects(own_server: PgServer) -> None:
    import psycopg

    with psycopg.connect(own_server.url, autocommit=True) as admin:
        admin.execute('CREATE SCHEMA "r"')
    url = schema_url(own_server.url, "r")
    errors: list[str] = []
    committed: list[int] = []
    stop = threading.Event()
    with Manager(url) as manager:
        session = manager.new_session()

        def write() -> None:
            batch = 0
            while not stop.is_set():
                try:
                    session.add_messages(batch_messages("w", batch, batch_size("w", batch, APPEND_LARGEST), 200))
                    committed.append(batch)
                except SessionDatabaseError as exc:
                    errors.append(str(exc))
                    time.sleep(0.05)
                batch += 1

        writer = threading.Thread(target=write)
        writer.start()
        time.sleep(0.3)
        own_server.stop("immediate")  # as a crash: the batch in flight is rolled back by recovery
        time.sleep(0.3)
        own_server.start()
        after = len(committed)
        deadline = time.monotonic() + 20
        while len(committed) < after + 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        stop.set()
        writer.join(timeout=30)
        batches = split_batches(manager.open_session(session.session_id).get_messages())
    assert errors, "the restart should fail at least the call in flight"
    assert all("\n" not in e and "postgresql://postgres@/postgres?host=" in e for e in errors)
    stored = {number for number, _ in batches["w"]}
    assert set(committed) <= stored, "a batch reported as committed was lost"
    assert len(committed) >= after + 3, "the writer went on after the restart"
