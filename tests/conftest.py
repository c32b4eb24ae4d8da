"""Fixtures shared by every test directory, and the start of the seeded-bug catalogue.

The catalogue (``tests/seeded_bugs.py``) starts when collection ends if any selected test asks
for its verdicts, so that it runs beside the other tests instead of after them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import seeded_bugs
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
    if any("catalogue" in getattr(item, "fixturenames", ()) for item in session.items):
        seeded_bugs.start(session.config)


def pytest_sessionfinish(session: pytest.Session) -> None:
    seeded_bugs.stop(session.config)
