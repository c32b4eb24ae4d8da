"""Fixtures shared by every test directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.fakes import Clock


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where a test's session database goes; nothing is created there yet."""
    return tmp_path / "sessions.db"


@pytest.fixture
def clock() -> Clock:
    """A clock reading ``tests.fakes.START`` until the test moves it."""
    return Clock()


# Property tests have no deadline: on a loaded machine (parallel workers keep both cores busy) an
# example can take longer than hypothesis's 200 ms once and not the next time, which it reports as flaky.
settings.register_profile("loaded-machine", deadline=None)
settings.load_profile("loaded-machine")


def pytest_configure(config: pytest.Config) -> None:
    """Forget the terminal size pytest-xdist gives its workers (``COLUMNS=80``, ``LINES=24``):
    a program a test starts in a terminal of its own (tmux) would take it for that terminal's."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        for name in ("COLUMNS", "LINES"):
            os.environ.pop(name, None)
