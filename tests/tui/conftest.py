"""Fixtures shared by the terminal UI tests: a Manager on a real file and the real clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness9_ref.memory import Manager


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[Manager]:
    with Manager(tmp_path / "home" / "sessions.db") as m:
        yield m
