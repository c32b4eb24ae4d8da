"""The ctx figure before the first token update, and what /context shows (SPEC R-TUI-15,
R-TUI-20, R-INST-5).

Without the figure the status bar would show nothing about the context until the first reply,
which is exactly when a resumed session most needs the number. In long-session mode the figure
is the engine's own (``context_report().total``, R-LONG-17), the one its token updates, the
compaction notice and ``/context`` show; without the mode it is the estimate the engine's first
token update of an empty prompt would show: the system prompt, the stored messages and the tool
definitions.

``/context`` lists, under the system prompt's line, the AGENTS.md files that prompt holds: the
report is made first, which builds the prompt (R-INST-4), so the files listed are those of the
prompt the report counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..memory.context import estimate_tokens, estimate_tool_tokens
from ..memory.storage import Session
from ..schema import ROLE_SYSTEM, Message, ToolDefinition
from ..text import context_lines

if TYPE_CHECKING:
    from ..engine import AgentEngine, ProjectInstructions

__all__ = ["context_estimate", "context_view", "session_context"]


def context_estimate(system: str, stored: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
    """R-TUI-15's ``used`` without long-session mode:
    ``estimate_tokens([system] + stored) + estimate_tool_tokens(tools)``."""
    return estimate_tokens([Message(ROLE_SYSTEM, system), *stored]) + estimate_tool_tokens(list(tools))


def session_context(session: Session, system: str, tools: Sequence[ToolDefinition]) -> int:
    """``context_estimate`` of what ``session`` stores."""
    return context_estimate(system, session.get_messages(0), tools)


def context_view(engine: AgentEngine, instructions: ProjectInstructions | None, lang: str) -> list[str]:
    """The lines of /context (R-TUI-20), with the AGENTS.md files of ``instructions`` when the
    engine's prompt comes from it (R-INST-5).

    Raises:
        EngineError: as ``context_report()`` does (a run in progress, a session error).
    """
    report = engine.context_report()
    built = instructions.last if instructions is not None else None
    return context_lines(report, lang, None if built is None else built.files)
