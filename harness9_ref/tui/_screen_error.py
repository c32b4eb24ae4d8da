"""Why the terminal UI cannot start (SPEC R-TUI-13): raised by the launcher and by the screen alike.

A module of its own, so the screen (the only importer of curses) and the launcher (which loads
the screen on first use) both raise them without importing each other.
"""

from __future__ import annotations

from typing import ClassVar

from .._harness9_error import Harness9Error

__all__ = ["ScreenError", "TuiUnavailable"]


class ScreenError(Harness9Error, RuntimeError):
    """The terminal UI cannot start: no terminal, or one curses cannot drive."""

    code: ClassVar[str] = "screen_error"


class TuiUnavailable(ScreenError):
    """This Python has no curses module (R-TUI-13)."""

    code: ClassVar[str] = "tui_unavailable"
