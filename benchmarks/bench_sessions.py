"""Time SQLiteSession reads and writes against the size of the session and against bare SQLite.

Run from the repository root (the standard library is all it needs):

    python benchmarks/bench_sessions.py [--rows 1000000] [--cache-dir DIR] [--rebuild]

(a) get_messages(limit=50) on a session of --rows messages, in a database of SESSIONS sessions,
    and on a session of SMALL_ROWS messages in the same file. R-DB-11 asks for a cost that
    depends on the limit only, so the ratio should be close to 1. The database is built with
    bulk inserts through sqlite3 directly, in the column format of SPEC R-DB-5 and R-DB-6, and
    cached in the cache folder; the first run says how long building took.
(b) add_messages of BATCH messages against a bare executemany of the same rows in one
    transaction, each on a fresh file made by Manager, in the same run. The difference is what
    the session adds: encoding the rows, setting updated_at, and the Manager's lock.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_memory import format_seconds, seconds_per_call

from harness9_ref.memory.storage import Manager
from harness9_ref.memory.storage._rows import encode_tool_calls
from harness9_ref.schema import Message
from tests.fakes import realistic_history

DEFAULT_ROWS = 1_000_000  # messages in the big session
SMALL_ROWS = 1_000  # messages in the small session
OTHER_ROWS = 100  # messages in each of the other sessions
SESSIONS = 100  # sessions in the database, the big and the small one included
LIMIT = 50  # get_messages(limit=LIMIT)
BATCH = 100  # messages per add_messages call
POOL = 5_000  # distinct messages cycled through to fill the database
ROUNDS = 3  # the measured pair alternates this many times; each keeps its fastest
FORMAT_TAG = "v1"  # part of the cached file's name; change it when the build changes
INSERT = (
    "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, created_at) VALUES (?, ?, ?, ?, ?, ?)"
)

Row = tuple[str, str, str, str | None, str | None, int]


def session_ids() -> list[str]:
    """SESSIONS well-formed ids from a fixed seed, so a cached file's ids are known: [0] big, [1] small."""
    rng = random.Random(0)
    return [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(SESSIONS)]


def columns(msg: Message) -> tuple[str, str, str | None, str | None]:
    """role, content, tool_calls, tool_call_id as R-DB-5 and R-DB-6 store them."""
    return msg.role, msg.content, encode_tool_calls(msg.tool_calls), msg.tool_call_id or None


def build_rows(ids: Sequence[str], rows: int, seed: int = 1) -> Iterator[Row]:
    """Every session's messages, interleaved in a random order as sessions written over time are.

    Each session ends on the same messages of the pool, so the timed reads decode the same rows.
    """
    pool = [columns(m) for m in realistic_history(POOL, seed)[1:]]
    counts = [rows, SMALL_ROWS, *[OTHER_ROWS] * (len(ids) - 2)]
    owners = [owner for owner, count in enumerate(counts) for _ in range(count)]
    random.Random(seed).shuffle(owners)
    written = [0] * len(ids)
    for n, owner in enumerate(owners):
        role, content, tool_calls, tool_call_id = pool[(written[owner] - counts[owner]) % len(pool)]
        written[owner] += 1
        yield ids[owner], role, content, tool_calls, tool_call_id, 1_700_000_000 + n // 1000


def build(path: Path, rows: int) -> float:
    """Create the database at ``path``; returns the seconds it took."""
    started = time.perf_counter()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    ids = session_ids()
    Manager(path).close()  # the schema, user_version and file mode, exactly as the package makes them
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = DELETE")  # no WAL copy of a file this size while building
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO sessions (id, created_at, updated_at) VALUES (?, ?, ?)",
            [(i, 1_700_000_000, 1_700_000_000) for i in ids],
        )
        conn.executemany(INSERT, build_rows(ids, rows))
        conn.execute("COMMIT")
        conn.execute("PRAGMA journal_mode = WAL")
    finally:
        conn.close()
    return time.perf_counter() - started


def cached_database(cache_dir: Path, rows: int, rebuild: bool) -> tuple[Path, float, bool]:
    """The database file, the seconds its build took, and whether it was built in this run."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / f"sessions-{rows}-{SMALL_ROWS}-{SESSIONS}-{FORMAT_TAG}.db"
    marker = path.with_suffix(".built")  # written last, holding the build time: a killed build is redone
    if rebuild or not marker.exists() or not path.exists():
        marker.unlink(missing_ok=True)
        seconds = build(path, rows)
        marker.write_text(f"{seconds:.1f}\n")
        return path, seconds, True
    return path, float(marker.read_text()), False


def fastest_of_pair(first: Callable[[], object], second: Callable[[], object]) -> tuple[float, float]:
    """Per-call times of two operations measured in turn, so that a change in load hits both."""
    times = [float("inf"), float("inf")]
    for _ in range(ROUNDS):
        for i, fn in enumerate((first, second)):
            times[i] = min(times[i], seconds_per_call(fn))
    return times[0], times[1]


def bench_reads(path: Path, rows: int) -> None:
    ids = session_ids()
    with Manager(path) as manager:
        big, small = manager.open_session(ids[0]), manager.open_session(ids[1])
        counts = {info.id: info.message_count for info in manager.list_sessions()}
        assert (counts[ids[0]], counts[ids[1]], len(counts)) == (rows, SMALL_ROWS, SESSIONS), counts
        assert len(big.get_messages(LIMIT)) == len(small.get_messages(LIMIT)) == LIMIT
        t_big, t_small = fastest_of_pair(lambda: big.get_messages(LIMIT), lambda: small.get_messages(LIMIT))
    print(f"(a) get_messages(limit={LIMIT}) in a database of {SESSIONS} sessions, {sum(counts.values()):,} messages")
    print(f"    session of {rows:>9,} messages: {format_seconds(t_big):>10}")
    print(f"    session of {SMALL_ROWS:>9,} messages: {format_seconds(t_small):>10}")
    print(f"    ratio big / small: {t_big / t_small:.2f}x")


def bench_writes(folder: Path) -> None:
    batch = realistic_history(BATCH + 1, seed=2)[1:]
    Manager(folder / "bare.db").close()
    conn = sqlite3.connect(folder / "bare.db", isolation_level=None)
    try:
        for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON", "busy_timeout = 5000"):
            conn.execute(f"PRAGMA {pragma}")
        session_id = str(uuid.uuid4())
        conn.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES (?, 0, 0)", (session_id,))
        rows = [(session_id, *columns(m), 0) for m in batch]

        def bare() -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(INSERT, rows)
            conn.execute("COMMIT")

        with Manager(folder / "add.db") as manager:
            session = manager.new_session()
            t_add, t_bare = fastest_of_pair(lambda: session.add_messages(batch), bare)
    finally:
        conn.close()
    print(f"(b) {BATCH} messages in one transaction, on a fresh file made by Manager")
    print(f"    SQLiteSession.add_messages: {format_seconds(t_add):>10}")
    print(f"    bare executemany:           {format_seconds(t_bare):>10}")
    print(f"    ratio add_messages / executemany: {t_add / t_bare:.2f}x")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, help="messages in the big session")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "harness9-ref-bench",
        help="where the built database is kept between runs",
    )
    parser.add_argument("--rebuild", action="store_true", help="build the database again even if it is cached")
    args = parser.parse_args(argv)
    print(
        f"Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}; per call, the fastest of"
        f" {ROUNDS} x 3 loops of >= 0.2 s, the two operations of each pair measured in turn."
    )
    path, seconds, built_now = cached_database(args.cache_dir, args.rows, args.rebuild)
    size = path.stat().st_size / 2**20
    state = "built in this run in" if built_now else "cached; building it took"
    print(f"database {path} ({size:,.0f} MiB), {state} {seconds:.1f} s")
    bench_reads(path, args.rows)
    with tempfile.TemporaryDirectory() as folder:
        bench_writes(Path(folder))


if __name__ == "__main__":
    main()
