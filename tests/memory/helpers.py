"""Helpers of the session tests: the injected clock and a plain connection as another program's."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Iterator

from harness9_ref.schema import Message
from tests.fakes import user

__all__ = ["START", "Clock", "numbered", "raw"]

START: Final = 1_700_000_000  # the injected clock's first reading


class Clock:
    """A settable clock for the Manager: ``clock.now`` is what it reads."""

    def __init__(self) -> None:
        self.now = float(START)

    def __call__(self) -> float:
        return self.now

    def tick(self, seconds: int = 10) -> int:
        self.now += seconds
        return int(self.now)


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
