"""Asking the user before a command runs or a file changes (SPEC R-APPR-1, R-APPR-3, R-APPR-4, R-APPR-7).

The registry asks an ``approve(request)`` callback before every ``bash`` command (the request
is the command line) until it has answered ``"always"`` to one, and before every change of
``edit_file`` and ``write_file`` (the request is a ``FileChange`` carrying the diff) until it
has answered ``"always"`` to one: a user who lets every edit through has not let every command
through, nor the other way round. The callback, not the registry, knows how to ask: the terminal UI shows a
prompt (R-APPR-2), ``run`` mode refuses without ``--yes`` (``require_yes``, R-APPR-3). A refusal
may carry its own observation (``Refusal``) so the model learns *why* nothing ran: "the user
said no" and "nobody was there to ask" call for different next steps. For a command it may also
be ``AllowRule(words)``: yes, and from now on every command starting with those words in this
directory (R-APPR-7), which the registry keeps in its ``AllowRules``.
"""

from __future__ import annotations

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
    "require_yes",
    "subject",
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


def subject(request: str | FileChange) -> str:
    """The one text naming what is asked about: the command line, or ``<tool> <path>``."""
    return request.subject if isinstance(request, FileChange) else request


def require_yes(on_refused: Callable[[str], None]) -> Approve:
    """The callback of ``run`` mode without ``--yes``: refuse every command and change (R-APPR-3, R-APPR-4).

    Args:
        on_refused: called with each refused command, or a change's ``subject``, so the command
            line can say on standard error what did not run; should it raise, the observation
            is ``DECLINED`` (``CHANGE_DECLINED``).

    Returns:
        A callback that answers ``Refusal(APPROVAL_REQUIRED)`` (``CHANGE_APPROVAL_REQUIRED`` for
        a change): the run goes on and the model sees that it needs ``--yes``.
    """

    def approve(request: str | FileChange) -> Answer:
        on_refused(subject(request))
        return Refusal(CHANGE_APPROVAL_REQUIRED if isinstance(request, FileChange) else APPROVAL_REQUIRED)

    return approve
