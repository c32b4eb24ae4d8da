"""The ctx figure before the first token update (SPEC R-TUI-15).

Without it the status bar would show nothing about the context until the first reply, which is
exactly when a resumed session most needs the number. In long-session mode the figure is the
engine's own (``context_report().total``, R-LONG-17), the one its token updates, the compaction
notice and ``/context`` show; without the mode it is the estimate the engine's first token
update of an empty prompt would show: the system prompt, the stored messages and the tool
definitions.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..memory import Session, estimate_tokens, estimate_tool_tokens
from ..schema import ROLE_SYSTEM, Message, ToolDefinition

__all__ = ["context_estimate", "session_context"]  # gets re-exported


def context_estimate(system: str, stored: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
    """R-TUI-15's ``used`` without long-session mode:
    ``estimate_tokens([system] + stored) + estimate_tool_tokens(tools)``."""
    return estimate_tokens([Message(ROLE_SYSTEM, system), *stored]) + estimate_tool_tokens(list(tools))


def session_context(session: Session, system: str, tools: Sequence[ToolDefinition]) -> int:
    """``context_estimate`` of what ``session`` stores."""
    return context_estimate(system, session.get_messages(0), tools)
