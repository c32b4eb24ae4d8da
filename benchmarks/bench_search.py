"""Time Manager.search with the full-text index against the plain scan, on one file (SPEC R-SRCH-3).

Run from the repository root (the standard library is all it needs):

    python benchmarks/bench_search.py [--messages 1000000] [--repeat 3] [--keep DIR]

The file is built in a temporary folder with plain SQL, as a program that does not know the
index writes it (SESSIONS sessions, contents of random words with a Zipf-like frequency, some
code and some text in other scripts). The first Manager to open it indexes every message, and
that time is printed. Each query is then answered by that Manager (the index narrows, every
candidate is checked) and by a Manager that cannot use the index (SQLite without FTS5 as far
as it knows, so it scans), in turn; both answers must be equal. Each time is the fastest of
--repeat runs.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness9_ref.memory import _db
from harness9_ref.memory.storage import Manager, SearchHit

DEFAULT_MESSAGES = 1_000_000
SESSIONS = 10_000
VOCABULARY = 30_000
SEED = 9
# What people look for: a rare word, a common one, two words, part of an identifier, a phrase
# with a short word (the short term cannot use the index, the long one narrows), a word in
# another script, a term no message holds, and a two-letter term alone (a scan either way).
QUERIES = (
    "{rare}",
    "{common}",
    "{common} {mid}",
    "Error: connection",
    "parse_config",
    "is {mid}",
    "数据库",
    "zzqqxxyy",
    "{short}",
)


def words(rng: random.Random) -> list[str]:
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    made: dict[str, None] = {}
    while len(made) < VOCABULARY:
        made["".join(rng.choice(letters[: rng.randint(8, 26)]) for _ in range(rng.randint(2, 11)))] = None
    return list(made)


def contents(rng: random.Random, vocabulary: list[str], n: int) -> list[str]:
    weights = [1 / (rank + 10) for rank in range(len(vocabulary))]
    pool = rng.choices(vocabulary, weights, k=200_000)
    extras = [
        "Error: connection refused (os error 111)",
        "def parse_config(path):\n    return toml.load(path)",
        "请检查数据库连接",
        "```\n$ ls -la\ntotal 8\n```",
    ]
    out = []
    for i in range(n):
        start = rng.randrange(len(pool) - 60)
        text = " ".join(pool[start : start + rng.randint(3, 50)])
        if i % 97 == 0:
            text += "\n" + rng.choice(extras)
        out.append(text[:1].upper() + text[1:])
    return out


def build(path: Path, n: int) -> tuple[float, list[str]]:
    """The file, written by plain SQL in R-DB-1's schema; returns the seconds taken and the vocabulary."""
    rng = random.Random(SEED)
    vocabulary = words(rng)
    started = time.perf_counter()
    with Manager(path) as manager:  # the schema; the index starts empty
        manager.close()
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(SESSIONS)]
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO sessions VALUES (?, ?, ?)", [(s, 1_700_000_000, 1_700_000_000 + i) for i, s in enumerate(ids)])
    chunk = 100_000
    for first in range(0, n, chunk):
        texts = contents(rng, vocabulary, min(chunk, n - first))
        conn.executemany(
            "INSERT INTO messages (session_id, role, content, created_at) VALUES (?, ?, ?, 1700000000)",
            [(ids[(first + k) % SESSIONS], "user" if k % 2 == 0 else "assistant", t) for k, t in enumerate(texts)],
        )
    conn.execute("COMMIT")
    conn.close()
    return time.perf_counter() - started, vocabulary


def fastest(call: Callable[[], list[SearchHit]], repeat: int) -> tuple[float, list[SearchHit]]:
    best, result = float("inf"), []
    for _ in range(repeat):
        started = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - started)
    return best, result


def size(path: Path) -> int:
    return sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=DEFAULT_MESSAGES)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build the file in this folder and leave it there")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="harness9-search-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sessions.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    print(f"SQLite {sqlite3.sqlite_version}, {args.messages:,} messages in {SESSIONS:,} sessions")
    built, vocabulary = build(path, args.messages)
    print(f"built by plain SQL in {built:.1f} s: {size(path) / 2**20:,.0f} MiB")
    started = time.perf_counter()
    indexed = Manager(path)
    took = time.perf_counter() - started
    print(f"first open indexes every message: {took:.1f} s, {size(path) / 2**20:,.0f} MiB with the index")
    started = time.perf_counter()
    Manager(path).close()
    print(f"a later open (index up to date, counts compared): {(time.perf_counter() - started) * 1000:.0f} ms")
    real = _db.index_available
    _db.index_available = lambda: False  # this Manager sees an SQLite without FTS5
    try:
        plain = Manager(path)
    finally:
        _db.index_available = real
    assert indexed.search_indexed and not plain.search_indexed
    fill = {"rare": vocabulary[3000], "common": vocabulary[0], "mid": vocabulary[40], "short": "qz"}
    print(f"\n{'query':<24} {'hits':>5} {'indexed':>10} {'scan':>10} {'scan/indexed':>13}")
    ratios = []
    for template in QUERIES:
        query = template.format(**fill)
        t_index, with_index = fastest(functools.partial(indexed.search, query), args.repeat)
        t_scan, by_scan = fastest(functools.partial(plain.search, query), args.repeat)
        assert with_index == by_scan, query
        ratio = t_scan / t_index
        ratios.append(ratio)
        print(f"{query!r:<24} {len(with_index):>5} {t_index * 1000:>8.1f} ms {t_scan * 1000:>8.0f} ms {ratio:>12.1f}x")
    indexed.close()
    plain.close()
    geo = 1.0
    for ratio in ratios:
        geo *= ratio
    print(f"\ngeometric mean of scan/indexed: {geo ** (1 / len(ratios)):.1f}x (the same answers every time)")
    if args.keep is None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        folder.rmdir()


if __name__ == "__main__":
    main()
