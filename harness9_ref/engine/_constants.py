"""The engine's constants and message rules (SPEC R-ENG-1, R-ENG-3, R-ENG-14, R-ENG-15, R-ENG-17, R-EVT-8).

One-line messages (R-EVT-8): a message is made one line by splitting it at the line boundaries
of Python's ``str.splitlines`` and joining the lines with one space.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

__all__ = [  # gets re-exported
    "CANCELLED",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_SYSTEM_PROMPT",
    "INTERNAL_ERROR",
    "LOGGER_NAME",
    "MAX_TURNS",
    "MAX_TURNS_MESSAGE",
    "PROVIDER_ERROR",
    "PromptBuilder",
    "one_line",
]

LOGGER_NAME: Final = "harness9_ref.engine"  # R-ENG-13: where a failed save is logged

DEFAULT_SYSTEM_PROMPT: Final = (
    "You are harness9, a coding agent working in the user's project directory. "
    "Use the read_file tool to read files and the bash tool to run shell commands; both work in "
    "the working directory. Look at the code before you change it, keep changes small, and check "
    "your work by running it. When the task is done, reply with a short summary of what you did."
)
"""The system prompt of a run whose engine has no prompt builder (R-ENG-3). Never stored."""

DEFAULT_MAX_TURNS: Final = 50  # R-ENG-1: provider calls allowed in one run
CANCELLED: Final = "cancelled"  # R-ENG-15: both the code and the message of a cancelled run
MAX_TURNS: Final = "max_turns"  # R-ENG-14: the code of a run that reached its turn limit
MAX_TURNS_MESSAGE: Final = "turn limit reached ({max_turns} turns)"  # R-ENG-14
INTERNAL_ERROR: Final = "internal_error"  # R-ENG-17: any unexpected exception inside the loop
# R-ENG-17 reads the code of an error chunk before its first ": "; a chunk without one (which
# R-PRV-19 does not allow) gets the code of the root provider error (R-ERR-1).
PROVIDER_ERROR: Final = "provider_error"
CODE_SEPARATOR: Final = ": "  # R-PRV-19: an error chunk's text is "<code>: <message>"

PromptBuilder = Callable[[], str]
"""Returns the system prompt; called once at the start of every run (R-ENG-3)."""


def one_line(text: str) -> str:
    """``text`` as one line: its lines (``str.splitlines``) joined with one space (R-EVT-8)."""
    return " ".join(text.splitlines())


def error_text(exc: BaseException) -> str:
    """The one-line message of ``exc``, or its type name when it has none (R-EVT-8)."""
    return one_line(str(exc)) or type(exc).__name__


def internal_message(exc: BaseException) -> str:
    """The message of an internal error: ``<type>: <message>``, or the type alone (R-ENG-17)."""
    text = one_line(str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
