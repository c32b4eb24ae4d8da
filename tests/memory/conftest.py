"""Fixtures shared by the session tests: a Manager on the injected clock (``manager`` on an SQLite file,
``stored`` on either database), and sessions of every backend.

``db_path`` and ``clock`` come from ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness9_ref.memory.storage import Manager, MemorySession, StatefulSession
from tests.fakes import Clock
from tests.memory.helpers import Database


@pytest.fixture
def manager(db_path: Path, clock: Clock) -> Iterator[Manager]:
    with Manager(db_path, clock=clock) as m:
        yield m


def database_of(store: str, request: pytest.FixtureRequest, tmp_path: Path) -> Database:
    """A real SQLite file, or a fresh schema of the tests' PostgreSQL server (``pg_url``, which skips
    saying why when there is none)."""
    if store == "sqlite":
        return Database("sqlite", str(tmp_path / "sessions.db"))
    return Database("postgresql", request.getfixturevalue("pg_url"))


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Database:
    """A database of either store (R-PG-2)."""
    return database_of(request.param, request, tmp_path)


@pytest.fixture
def stored(database: Database, clock: Clock) -> Iterator[Manager]:
    """A Manager on ``database``, on the injected clock: the contract tests of the Manager on both stores."""
    with Manager(database.location, clock=clock) as m:
        yield m


@pytest.fixture(params=["sqlite", "memory", "postgresql"])
def new_session(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], StatefulSession]]:
    """Makes empty sessions of one backend (R-SES-1, R-SES-9, R-PG-2): the database ones share one
    Manager on a ``database_of`` their store."""
    if request.param == "memory":
        yield MemorySession
        return
    with Manager(database_of(request.param, request, tmp_path).location) as manager:
        yield manager.new_session
