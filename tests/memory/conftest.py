"""Fixtures shared by the session tests: a Manager on the injected clock, and sessions of either backend.

``db_path`` and ``clock`` come from ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness9_ref.memory import Manager, MemorySession, Session
from tests.fakes import Clock


@pytest.fixture
def manager(db_path: Path, clock: Clock) -> Iterator[Manager]:
    with Manager(db_path, clock=clock) as m:
        yield m


@pytest.fixture(params=["sqlite", "memory"])
def new_session(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Session]]:
    """Makes empty sessions of one backend; the SQLite ones share one Manager on a real file."""
    if request.param == "memory":
        yield MemorySession
    else:
        with Manager(tmp_path / "sessions.db") as manager:
            yield manager.new_session
