"""Asking the user before a command runs (SPEC R-APPR-1, R-APPR-3).

The registry asks an ``approve(command)`` callback before every ``bash`` command until it has
answered ``"always"``. The callback, not the registry, knows how to ask: the terminal UI shows a
prompt (R-APPR-2), ``run`` mode refuses without ``--yes`` (``require_yes``, R-APPR-3). A refusal
may carry its own observation (``Refusal``) so the model learns *why* nothing ran: "the user
said no" and "nobody was there to ask" call for different next steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["APPROVAL_REQUIRED", "DECLINED", "Answer", "Approve", "Refusal", "require_yes"]

DECLINED: Final = "error: the user declined to run this command"  # R-APPR-1
APPROVAL_REQUIRED: Final = "error: running commands needs the user's approval; they can allow it with --yes"  # R-APPR-3


@dataclass(frozen=True)
class Refusal:
    """A "no" whose observation is ``observation`` instead of ``DECLINED``."""

    observation: str


Answer = Literal["yes", "no", "always"] | Refusal
"""What an approval callback returns: run it, do not, run this and every later one, or a ``Refusal``."""

Approve = Callable[[str], Answer]
"""An approval callback: given the command line, the answer (R-APPR-1)."""


def require_yes(on_refused: Callable[[str], None]) -> Approve:
    """The callback of ``run`` mode without ``--yes``: refuse every command (R-APPR-3).

    Args:
        on_refused: called with each refused command, so the command line can say on standard
            error what did not run; should it raise, the observation is ``DECLINED``.

    Returns:
        A callback that answers ``Refusal(APPROVAL_REQUIRED)``: the run goes on and the model
        sees that commands need ``--yes``.
    """

    def approve(command: str) -> Answer:
        on_refused(command)
        return Refusal(APPROVAL_REQUIRED)

    return approve
