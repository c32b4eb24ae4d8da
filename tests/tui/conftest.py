"""Fixtures shared by the terminal UI tests: a Manager on a real file, and the real program under tmux."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from harness9_ref.memory.storage import Manager

if TYPE_CHECKING:
    from .test_screen_tmux import Screen


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[Manager]:
    with Manager(tmp_path / "home" / "sessions.db") as m:
        yield m


@pytest.fixture
def screen(tmp_path: Path) -> Iterator[Screen]:
    """The real program in a tmux terminal, closed after the test (the tmux tests)."""
    from .test_screen_tmux import Screen

    s = Screen(tmp_path)
    try:
        yield s
    finally:
        s.close()
