"""Signals as a cancel (SPEC R-INT-4, R-INT-2).

In ``run`` mode SIGINT and SIGTERM (and SIGHUP, the terminal going away) become a
``Signalled`` exception in the main thread, which ``run_prompt`` turns into a cancel: the
running command is interrupted, the run saves what R-ENG-12 allows, the registry is closed and
the program exits with 128 + the signal's number (130, 143, 129). A Python program killed by the
default SIGTERM action would skip its ``finally`` blocks and leave the command's process group
running; a handler that raises lets every exit path close the registry.

In the terminal UI, where Ctrl+C is a key (R-TUI-9), SIGTERM and SIGHUP end the program the same
way: curses restores the terminal on the way out and the registry is closed (R-INT-2).

During the clean-up after the run the handler only records the signal (``quiet``), so a second
Ctrl+C cannot interrupt the SIGTERM-grace-SIGKILL of ``Registry.close()`` half-way.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Final

__all__ = ["EXIT_SIGNAL_BASE", "RUN_SIGNALS", "TUI_SIGNALS", "SignalState", "Signalled", "exit_status", "on_signals"]

EXIT_SIGNAL_BASE: Final = 128  # R-INT-4: the shell's status of a program ended by a signal
RUN_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
TUI_SIGNALS: Final = (signal.SIGTERM, signal.SIGHUP)  # Ctrl+C is a key of the UI (R-TUI-9)

_Handler = Callable[[int, FrameType | None], object] | int | None


class Signalled(BaseException):
    """A signal that asks the program to stop, raised in the main thread (R-INT-4).

    Not a KeyboardInterrupt: the terminal UI takes a KeyboardInterrupt for Ctrl+C, which only
    cancels a turn, while SIGTERM must end the program; and not an Exception, so no ``except
    Exception`` on the way out swallows it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def exit_status(exc: BaseException) -> int:
    """128 + the signal's number: 130 for Ctrl+C (a plain KeyboardInterrupt too), 143 for SIGTERM."""
    return EXIT_SIGNAL_BASE + (exc.signum if isinstance(exc, Signalled) else int(signal.SIGINT))


class SignalState:
    """The first signal received, and whether the handler raises (it does until ``quiet``)."""

    def __init__(self) -> None:
        self.first: int | None = None
        self.raising = True

    def handler(self, signum: int, frame: FrameType | None) -> None:
        if self.first is None:
            self.first = signum
        if self.raising:
            raise Signalled(signum)

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """Record signals without raising while the block runs (clean-up that must finish)."""
        raising, self.raising = self.raising, False
        try:
            yield
        finally:
            self.raising = raising


@contextmanager
def on_signals(signums: Sequence[int]) -> Iterator[SignalState]:
    """Install the raising handler for ``signums`` while the block runs, then restore the old ones.

    Outside the main thread (``main()`` called from a test's thread) nothing is installed:
    Python delivers signals to the main thread only.
    """
    state = SignalState()
    previous: dict[int, _Handler] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in signums:
            previous[signum] = signal.signal(signum, state.handler)
    try:
        yield state
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
