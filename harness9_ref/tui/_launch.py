"""Starting the terminal UI without importing curses before it is needed (SPEC R-TUI-13).

Only the screen module imports curses, so the rest works on a Python without it.

``run_tui`` imports the screen module, the only one that imports curses, on first use. When
curses is missing it raises ``TuiUnavailable`` with a one-line message, so the rest of the
package, ``harness9-ref run`` included, works without curses.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from ..text import TableSaid
from ._screen_error import ScreenError, TuiUnavailable

if TYPE_CHECKING:
    from ._app import App

__all__ = ["prepare_tui", "run_tui"]

_CURSES_MODULES: Final = ("curses", "_curses")


def prepare_tui() -> Callable[[App], None]:
    """Check that the UI can start and return the function that runs it.

    Call it before creating anything, so a missing curses or terminal fails early.

    Raises:
        TuiUnavailable: curses cannot be imported; the message says what works instead.
        ScreenError: standard input or output is not a terminal.
    """
    try:
        screen = importlib.import_module("harness9_ref.tui._screen")
    except ImportError as exc:
        if exc.name in _CURSES_MODULES:
            raise TuiUnavailable(TableSaid("cli_no_curses")) from None  # R-TUI-13, R-LANG-3
        raise
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise ScreenError(TableSaid("cli_no_terminal"))
    run: Callable[[App], None] = screen.run_screen
    return run


def run_tui(app: App) -> None:
    """Show the UI for ``app`` until the user leaves it (``prepare_tui()(app)``).

    Raises:
        TuiUnavailable: curses cannot be imported.
        ScreenError: standard input or output is not a terminal, or curses refused it.
    """
    prepare_tui()(app)
