"""Asking the user before a command runs or a file changes (SPEC R-APPR-1, R-APPR-3, R-APPR-4, R-APPR-7).

The registry asks an ``approve(request)`` callback before every ``bash`` command (the request
is the command line) until it has answered ``"always"`` to one, and before every change of
``edit_file`` and ``write_file`` (the request is a ``FileChange`` carrying the diff) until it
has answered ``"always"`` to one: a user who lets every edit through has not let every command
through, nor the other way round. The callback, not the registry, knows how to ask: the terminal UI shows a
prompt (R-APPR-2), ``run`` mode refuses without ``--yes`` (``require_yes``, R-APPR-3). A refusal
may carry its own observation (``Refusal``) so the model learns *why* nothing ran: "the user
said no" and "nobody was there to ask" call for different next steps. For a command it may also
be ``AllowRule(words)``: yes, and from now on every command those words cover in this directory
(R-APPR-7: the same words, or any further ones after a last ``*``), which the registry keeps in
its ``AllowRules``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from ._rules import AllowRule

__all__ = [
    "APPROVAL_REQUIRED",
    "CHANGE_APPROVAL_REQUIRED",
    "CHANGE_DECLINED",
    "DECLINED",
    "Answer",
    "Approve",
    "FileChange",
    "Refusal",
    "command_lines",
    "require_yes",
    "subject",
    "visible",
]

DECLINED: Final = "error: the user declined to run this command"  # R-APPR-1
APPROVAL_REQUIRED: Final = "error: running commands needs the user's approval; they can allow it with --yes"  # R-APPR-3
CHANGE_DECLINED: Final = "error: the user declined this change; nothing was written"  # R-APPR-4
CHANGE_APPROVAL_REQUIRED: Final = (  # R-APPR-4
    "error: changing files needs the user's approval; they can allow it with --yes"
)


@dataclass(frozen=True)
class FileChange:
    """A change of ``edit_file`` or ``write_file`` waiting for approval (R-APPR-4).

    ``path`` is the path as the call gave it; ``diff`` is R-TOOL-12's unified diff.
    """

    tool: str
    path: str
    diff: str

    @property
    def subject(self) -> str:
        """``<tool> <path>``: what the question and run mode's refusal line name (R-APPR-4)."""
        return f"{self.tool} {self.path}"


@dataclass(frozen=True)
class Refusal:
    """A "no" whose observation is ``observation`` instead of ``DECLINED``."""

    observation: str


Answer = Literal["yes", "no", "always"] | Refusal | AllowRule
"""What an approval callback returns: run it, do not, run this and every later one, a ``Refusal``,
or (for a command) run it and keep a rule (R-APPR-7)."""

Approve = Callable[[str | FileChange], Answer]
"""An approval callback: given the command line or the file change, the answer (R-APPR-1, R-APPR-4)."""


# R-APPR-11: characters that would not show as themselves: controls, format characters (the
# bidirectional ones included), surrogates, line and paragraph separators, and every space but
# U+0020 (a no-break space looks like a word break and is none).
_HIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp", "Zs"})
_NAMED_ESCAPES: Final = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(char: str) -> str:
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` with every character that would not show as itself written as an escape
    (R-APPR-11): ``\\t``, ``\\n``, ``\\r``, else ``\\xhh``, ``\\uhhhh`` or ``\\Uhhhhhhhh``, so an
    approval shows what runs, not what a terminal makes of it."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escape(char) if char != " " and unicodedata.category(char) in _HIDDEN_CATEGORIES else char for char in text)


def command_lines(command: str) -> list[str]:
    """A command as an approval shows it (R-APPR-11): one line per line of the shell's (split at
    each line feed, an empty last one kept: it is what runs), each ``visible``."""
    return [visible(line) for line in command.split("\n")]


def subject(request: str | FileChange) -> str:
    """The one text naming what is asked about: the command line, or ``<tool> <path>``."""
    return request.subject if isinstance(request, FileChange) else request


def require_yes(on_refused: Callable[[str | FileChange], None]) -> Approve:
    """The callback of ``run`` mode without ``--yes``: refuse every command and change (R-APPR-3, R-APPR-4).

    Args:
        on_refused: called with each refused command or change, so the command line can say on
            standard error what did not run (every line of a command, R-APPR-12); should it
            raise, the observation is ``DECLINED`` (``CHANGE_DECLINED``).

    Returns:
        A callback that answers ``Refusal(APPROVAL_REQUIRED)`` (``CHANGE_APPROVAL_REQUIRED`` for
        a change): the run goes on and the model sees that it needs ``--yes``.
    """

    def approve(request: str | FileChange) -> Answer:
        on_refused(request)
        return Refusal(CHANGE_APPROVAL_REQUIRED if isinstance(request, FileChange) else APPROVAL_REQUIRED)

    return approve
