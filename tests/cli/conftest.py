"""Fixtures of the command-line tests: a private environment, the database path and a working folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.helpers import environment


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment of every ``cli`` run: a private HARNESS9_HOME, no keys, UTC (tests/cli/helpers.py)."""
    return environment(tmp_path)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "home" / "sessions.db"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path
