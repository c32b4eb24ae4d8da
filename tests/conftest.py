"""Fixtures shared by every test directory, and the start of the runs that go on in the background.

The seeded-bug catalogue, the reference adapter's run of every case and the judging of the
pending requirements' seeded bugs (``tests/background.py``) start when collection ends if any
selected test asks for their results, so that they run beside the other tests instead of after
them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import background
from tests.fakes import Clock


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where a test's session database goes; nothing is created there yet."""
    return tmp_path / "sessions.db"


@pytest.fixture
def clock() -> Clock:
    """A clock reading ``tests.fakes.START`` until the test moves it."""
    return Clock()


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    wanted = {name for item in session.items for name in getattr(item, "fixturenames", ())}
    for name in background.RUNS:
        if name in wanted:
            background.start(session.config, name)


def pytest_sessionfinish(session: pytest.Session) -> None:
    background.stop(session.config)
