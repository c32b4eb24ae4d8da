"""PostgreSQL sessions under real concurrency and failure (SPEC R-PG-7, R-PG-8).

Real processes write through ``tests/memory/session_worker.py`` to the private server: several
processes of several threads, a writer killed with SIGKILL mid-batch, and a server restarted
while a writer is writing. Every batch must be whole or absent, in order, nothing lost. The
same rules are also checked deterministically: a writer held at another transaction's row lock,
a batch the server refuses midway, a connection the server drops between two calls.
"""

from __future__ import annotations

import random
import signal
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
from tests.memory.storage.test_session_reliability import finish, run_together, start_worker, wait_for_line
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


def test_processes_of_threads_lose_nothing_and_never_interleave_batches(pg_url: str) -> None:
    with Manager(pg_url) as manager:
        shared = manager.new_session().session_id
        own = {f"p{p}.{t}": manager.new_session().session_id for p in range(PROCESSES) for t in range(THREADS)}
    workers = [
        start_worker(
            "concurrent", pg_url, "--writer", f"p{p}", "--shared", shared, "--batches", str(BATCHES),
            "--own", *(own[f"p{p}.{t}"] for t in range(THREADS)), *(["--manager-per-thread"] if p % 2 else []),
        )
        for p in range(PROCESSES)
    ]
    run_together(workers)
    expected = {w: [(b, batch_size(w, b)) for b in range(BATCHES)] for w in own}
    with Manager(pg_url) as manager:
        assert split_batches(manager.open_session(shared).get_messages()) == expected
        for writer, session_id in own.items():
            assert split_batches(manager.open_session(session_id).get_messages()) == {writer: expected[writer]}
        counts = {info.id: info.message_count for info in manager.list_sessions()}
    assert counts[shared] == sum(size for batches in expected.values() for _, size in batches)


def test_a_writer_killed_mid_batch_leaves_whole_batches_and_loses_no_commit(pg_url: str) -> None:
    with Manager(pg_url) as manager:
        session_id = manager.new_session().session_id
    rng = random.Random(11)
    reported: set[int] = set()
    for kill in range(KILLS):
        proc = start_worker("append", pg_url, session_id, "--seed", str(kill))
        wait_for_line(proc, "ready")
        time.sleep(rng.uniform(0.02, 0.3))
        proc.send_signal(signal.SIGKILL)
        out, err = finish(proc)
        assert proc.returncode == -signal.SIGKILL, f"the worker ended by itself ({proc.returncode}): {err}"
        reported.update(int(line) for line in out.split("\n")[:-1])
    with Manager(pg_url) as manager:
        batches = split_batches(manager.open_session(session_id).get_messages())
    numbers = [number for number, _ in batches.get("w", [])]
    assert numbers == list(range(len(numbers)))
    assert all(size == batch_size("w", number, APPEND_LARGEST) for number, size in batches["w"])
    assert reported <= set(numbers), f"committed and reported, then lost: {sorted(reported - set(numbers))}"
    assert len(reported) >= KILLS


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


def test_a_batch_the_server_refuses_midway_is_absent_and_the_session_untouched(pg_url: str) -> None:
    with Manager(pg_url, clock=lambda: 1_700_000_000) as manager:
        session_id = manager.new_session().session_id
        manager.open_session(session_id).add_messages([Message("user", "kept")])
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            " IF NEW.content = 'boom'::bytea THEN RAISE EXCEPTION 'disk full'; END IF; RETURN NEW; END $$"
        )
        admin.execute("CREATE TRIGGER refuse BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION refuse()")
    with Manager(pg_url, clock=lambda: 1_700_000_100) as manager:
        batch = [Message("user", "a"), Message("user", "boom"), Message("user", "c")]
        with pytest.raises(SessionDatabaseError, match="disk full"):
            manager.open_session(session_id).add_messages(batch)
        assert contents(manager, session_id) == ["kept"]
        assert manager.list_sessions()[0].updated_at == 1_700_000_000


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
