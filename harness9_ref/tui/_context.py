"""The ctx figure before the first token update (SPEC R-TUI-15).

Without it the status bar would show nothing about the context until the first reply, which is
exactly when a resumed long session most needs the number. The figure is the one the engine's
first token update of an empty prompt would show, from what the session stores: the system
prompt, the stored messages (from the checkpoint on, in long-session mode, as R-LONG-2 loads
them) and the tool definitions, scaled by R-LONG-3's prior in long-session mode.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..engine import LOGGER_NAME
from ..memory import (
    Checkpoint,
    CorruptRow,
    Session,
    checkpoint_problem,
    estimate_tokens,
    estimate_tool_tokens,
    summary_message,
)
from ..schema import ROLE_SYSTEM, Message, ToolDefinition

__all__ = ["LONG_SESSION_PRIOR", "context_estimate", "loaded_history", "session_context"]  # gets re-exported

LONG_SESSION_PRIOR = (4, 3)  # R-LONG-3: PRIOR_USED, PRIOR_SENT, a token per 3 bytes until the provider counts

_log = logging.getLogger(LOGGER_NAME)


def loaded_history(system: str, stored: Sequence[Message], checkpoint: Checkpoint | None) -> list[Message]:
    """``[system, summary] + stored[covered:]`` for a valid checkpoint, else ``[system] + stored`` (R-LONG-2, R-CKP-5)."""
    head = Message(ROLE_SYSTEM, system)
    if checkpoint is not None and isinstance(checkpoint.covered, int) and checkpoint.covered >= 1:
        rest = list(stored[checkpoint.covered - 1 :])
        if checkpoint_problem(checkpoint, rest) is None:
            return [head, summary_message(checkpoint.summary), *rest[1:]]
    return [head, *stored]


def context_estimate(
    system: str,
    stored: Sequence[Message],
    tools: Sequence[ToolDefinition],
    long_session: bool,
    checkpoint: Checkpoint | None = None,
) -> int:
    """R-TUI-15's ``used``: ``estimate_tokens(history) + estimate_tool_tokens(tools)``, times 4 // 3
    in long-session mode; the history is ``[system] + stored``, or what R-LONG-2 loads from a
    valid ``checkpoint`` (considered only in long-session mode)."""
    history = loaded_history(system, stored, checkpoint if long_session else None)
    total = estimate_tokens(history) + estimate_tool_tokens(list(tools))
    if long_session:
        used, sent = LONG_SESSION_PRIOR
        return total * used // sent
    return total


def session_context(session: Session, system: str, tools: Sequence[ToolDefinition], long_session: bool) -> int:
    """``context_estimate`` of what ``session`` stores; an unreadable checkpoint counts as none (R-CKP-8)."""
    checkpoint: Checkpoint | None = None
    if long_session:
        try:
            checkpoint = session.get_checkpoint()
        except CorruptRow as exc:
            _log.debug("ignoring the checkpoint of session %s: %s", session.session_id, exc)
    return context_estimate(system, session.get_messages(0), tools, long_session, checkpoint)
