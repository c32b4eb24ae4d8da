"""Fixtures shared by the session tests: a Manager on the injected clock, and sessions of either backend.

``db_path`` and ``clock`` come from ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness9_ref.memory.storage import Manager, MemorySession, Session
from tests.fakes import Clock


@pytest.fixture
def manager(db_path: Path, clock: Clock) -> Iterator[Manager]:
    with Manager(db_path, clock=clock) as m:
        yield m


@pytest.fixture(params=["sqlite", "memory", "postgresql"])
def new_session(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Session]]:
    """Makes empty sessions of one backend (R-SES-1, R-SES-9, R-PG-2): the SQLite ones share one
    Manager on a real file, the PostgreSQL ones one on a fresh schema of the tests' server
    (``tests/postgres``' ``pg_url``, which skips saying why when there is none)."""
    if request.param == "memory":
        yield MemorySession
        return
    location = tmp_path / "sessions.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    with Manager(location) as manager:
        yield manager.new_session
