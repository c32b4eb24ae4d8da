"""How each turn's view is made: the engine's context part, and the design document's own (SPEC R-ENG-5,
R-ENG-6, R-ENG-8, R-LONG-1).

An engine is given one context part; it loads a run's history, prepares each turn's view, may
answer a failed provider call with a view to call again on, learns from each call's count, and
says what it leaves with the session. ``LiteralContext`` is the design document's run loop: the
full stored history every run, the compactor applied to the full history every turn, nothing
learned or kept. ``LongSession`` (``_long_session.py``) is long-session mode (R-LONG).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol

from .._harness9_error import Harness9Error
from ..memory.context import Compactor, estimate_tokens
from ..memory.storage import ContextState, Session
from ..schema import ROLE_SYSTEM, Message, Usage
from ._events import CompactionData, ContextReport, WindowData
from ._long_session import NOTHING_TO_COMPACT, Context, LongSession, Prepared, Preparing, Turn, check_window
from ._run_errors import engine_error
from ._seams import SummarizingCompactor

__all__ = ["ContextStrategy", "LiteralContext"]

NO_SUMMARY_HERE: Final = "there is no session summary to make here"  # R-LONG-9: compact_now's nothing_to_compact


class ContextStrategy(Protocol):
    """What an engine asks of its context part (R-ENG-5 steps 2 … 8, R-LONG-2 … R-LONG-17).

    ``window`` is the context window in force, for token updates (R-ENG-7); the part may learn a
    smaller one from the server (R-WIN-5).
    """

    window: int

    def load(self, session: Session, system: str, compactor: Compactor | None) -> tuple[list[Message], Context]:
        """``[system] + stored`` as the run starts from it, and the checkpoint in effect (R-ENG-3, R-LONG-2)."""
        ...

    def prepare(self, context: Context, history: Sequence[Message], compactor: Compactor | None, turn: Turn) -> Preparing:
        """One turn's view of ``history`` (R-ENG-5, R-LONG-4)."""
        ...

    def recovery(
        self, error: Harness9Error, context: Context, history: Sequence[Message], compactor: Compactor | None, turn: Turn
    ) -> tuple[WindowData | None, Preparing] | None:
        """None, or a window learned and a view to call again on after a call failed before any text (R-LONG-7)."""
        ...

    def calibrate(
        self, usage: Usage | None, view: Sequence[Message], total: int, tool_tokens: int, compactor: Compactor | None
    ) -> WindowData | None:
        """Learn from a call's count (R-LONG-3); a smaller window learned so (R-WIN-8), or None."""
        ...

    def state(self, context: Context) -> ContextState | None:
        """The context state a run leaves with its session (R-LONG-16), or None."""
        ...

    def report(self, context: Context, history: Sequence[Message], turn: Turn) -> ContextReport:
        """What the next request would hold, by part (R-LONG-17)."""
        ...

    def compact_now(
        self, session: Session, system: str, compactor: SummarizingCompactor, turn: Turn, focus: str
    ) -> tuple[CompactionData, Context]:
        """Summarise the session now and store the checkpoint (R-LONG-9)."""
        ...


def prepare_literal(history: Sequence[Message], compactor: Compactor | None, tool_tokens: int) -> Preparing:
    """The document's turn (R-ENG-5, R-ENG-6): compact the full history, announce by the 5% rule."""
    before = estimate_tokens(history)
    if isinstance(compactor, SummarizingCompactor) and compactor.over_budget(history):
        yield  # R-SUM-2: this compaction asks the summarizer
    view = history if compactor is None else compactor.compact(history)
    after = before if compactor is None else estimate_tokens(view)
    total = after + tool_tokens
    compaction = None
    if compactor is not None and 20 * (after + 1) <= 19 * before:
        compaction = CompactionData(before + tool_tokens, total, len(history), len(view))
    return Prepared(view, total, total, compaction)


class LiteralContext:
    """The design document's context (R-ENG-5, R-ENG-6): the engine's default part.

    Args:
        context_window: the model's context window in tokens, 0 when unknown; only reported in
            token updates (R-ENG-7).

    Raises:
        ValueError: ``context_window`` is negative.
    """

    def __init__(self, context_window: int = 0) -> None:
        check_window(context_window)
        self.window = context_window

    def load(self, session: Session, system: str, compactor: Compactor | None) -> tuple[list[Message], Context]:
        return [Message(ROLE_SYSTEM, system), *session.get_messages(0)], Context()

    def prepare(self, context: Context, history: Sequence[Message], compactor: Compactor | None, turn: Turn) -> Preparing:
        return prepare_literal(history, compactor, turn.tool_tokens)

    def recovery(
        self, error: Harness9Error, context: Context, history: Sequence[Message], compactor: Compactor | None, turn: Turn
    ) -> tuple[WindowData | None, Preparing] | None:
        return None  # R-ENG-17: every failed call ends the run

    def calibrate(
        self, usage: Usage | None, view: Sequence[Message], total: int, tool_tokens: int, compactor: Compactor | None
    ) -> WindowData | None:
        return None

    def state(self, context: Context) -> ContextState | None:
        return None

    def report(self, context: Context, history: Sequence[Message], turn: Turn) -> ContextReport:
        """The parts of the full stored history, by plain estimates: the document's engine sends it all."""
        plain = LongSession(self.window, None)
        plain.restore(1, 1)
        return plain.report(context, history, turn)

    def compact_now(
        self, session: Session, system: str, compactor: SummarizingCompactor, turn: Turn, focus: str
    ) -> tuple[CompactionData, Context]:
        raise engine_error(NOTHING_TO_COMPACT, NO_SUMMARY_HERE)
