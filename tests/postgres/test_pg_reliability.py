"""PostgreSQL sessions under real concurrency and failure (SPEC R-PG-7, R-PG-8).

Real processes write through ``tests/memory/session_worker.py`` to the private server: several
processes of several threads, a writer killed with SIGKILL mid-batch, and a server restarted
while a writer is writing. Every batch must be whole or absent, in order, nothing lost.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
import time

import pytest

from harness9_ref.memory import Manager, SessionDatabaseError
from tests.memory.session_worker import APPEND_LARGEST, batch_messages, batch_size, split_batches
from tests.memory.test_session_reliability import finish, start_worker, wait_for_line
from tests.postgres.conftest import schema_url
from tests.postgres.server import PgServer, find_bindir

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
    for worker in workers:
        wait_for_line(worker, "ready")
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write(b"go\n")
        worker.stdin.flush()
    for worker in workers:
        out, err = finish(worker)
        assert worker.returncode == 0, err
        assert json.loads(out.splitlines()[-1]) == {"errors": []}
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
        "import sys\nfrom harness9_ref.memory import Manager\nfrom harness9_ref.schema import Message\n"
        "with Manager(sys.argv[1]) as m:\n"
        "    s = m.new_session(); s.add_messages([Message('user', 'from the other host')]); print(s.session_id)\n"
        "    print(sorted(i.id for i in m.list_sessions()))\n"
    )
    with Manager(pg_url) as manager:
        mine = manager.new_session()
        mine.add_messages(batch_messages("h", 0, 2))
        done = subprocess.run([sys.executable, "-c", child, pg_url], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        theirs, seen_there = done.stdout.splitlines()
        assert mine.session_id in seen_there
        assert manager.open_session(theirs).get_messages()[0].content == "from the other host"
        assert {info.id for info in manager.list_sessions()} == {mine.session_id, theirs}


@pytest.fixture
def own_server() -> PgServer:
    bindir = find_bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)")
    server = PgServer(bindir)
    server.start()
    try:
        yield server  # type: ignore[misc]
    finally:
        server.remove()


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
