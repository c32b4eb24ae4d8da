"""Helpers of the session tests: the injected clock (from tests/fakes.py) and a plain connection as another program's."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness9_ref.schema import Message
from tests.fakes import START, Clock, user

__all__ = ["START", "Clock", "numbered", "raw"]


@contextmanager
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    """A plain connection to the file, in autocommit mode, as another program would open it."""
    conn = sqlite3.connect(path, timeout=5, isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def numbered(n: int, start: int = 0) -> list[Message]:
    return [user(f"m{i}") for i in range(start, start + n)]
