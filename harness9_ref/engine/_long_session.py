"""Long-session mode: checkpoints, a calibrated trigger, shortening and overflow recovery (SPEC R-LONG, R-CKP-5).

Without the mode the engine follows the design document literally (R-ENG): every turn compacts
the full history, so a long conversation is summarised from scratch again and again. With it:

- a run starts from the session's checkpoint, ``[system, summary] + the uncovered messages``,
  so the summarizer gets its previous summary and only new messages (R-LONG-2);
- the trigger compares the budget with the estimate scaled by what the provider really counted
  last time (R-LONG-3), because bytes / 4 undercounts real tokenizers;
- whatever compaction leaves over budget is shortened in the view (R-TRIM, R-LONG-4);
- a context-length error is answered once by compacting harder (R-LONG-7).

``Context`` is one run's view of the checkpoint; ``LongSession`` holds the engine-wide state
(the calibration) and turns a working history into the view of one turn.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from ..memory import (
    Checkpoint,
    Compactor,
    CorruptRow,
    Session,
    SessionError,
    budget_for_context_window,
    checkpoint_problem,
    estimate_tokens,
    is_summary,
    message_anchor,
    repair_orphaned_tool_pairs,
    shorten_view,
    summary_message,
)
from ..schema import ROLE_SYSTEM, Message, Usage
from ._errors import LOGGER_NAME, engine_error, one_line
from ._events import CompactionData
from ._seams import SummarizingCompactor

__all__ = [
    "COMPACTION_FAILED",
    "CONTEXT_LENGTH_EXCEEDED",
    "NOTHING_TO_COMPACT",
    "RECOVERY_FAILED_MESSAGE",
    "Context",
    "LongSession",
    "Prepared",
    "load_context",
    "prepare_literal",
    "summary_split",
]

CONTEXT_LENGTH_EXCEEDED: Final = "context_length_exceeded"  # R-ERR-3, R-LONG-7
RECOVERY_FAILED_MESSAGE: Final = "the request does not fit the context window even after compacting: {message}"
NOTHING_TO_COMPACT: Final = "nothing_to_compact"  # R-LONG-9
COMPACTION_FAILED: Final = "compaction_failed"  # R-LONG-9
# R-LONG-3: until the provider reports a real count, assume a token per 3 bytes, as real tokenizers
# count code and JSON; the estimate's 4 bytes per token would let a request overflow the window.
PRIOR_USED: Final = 4
PRIOR_SENT: Final = 3
RECOVERY_TAIL: Final = 1  # R-LONG-7: compacting harder keeps one message (and its calls' results)

_log = logging.getLogger(LOGGER_NAME)


@dataclass
class Context:
    """Which part of a run's history the current summary replaces (R-LONG-2, R-LONG-5).

    ``history[:base]`` is the system prompt and, when the run started from a checkpoint, its
    summary message; ``history[base:]`` are stored messages from position ``covered`` on, then
    the run's own. While ``summary`` is set, the working history is
    ``[history[0], summary message] + history[index:]``.
    """

    base: int = 1
    covered: int = 0
    summary: str | None = None
    index: int = 1
    made: list[tuple[int, str]] = field(default_factory=list)  # (index, summary) of each summary of this run

    def working(self, history: Sequence[Message]) -> list[Message]:
        if self.summary is None:
            return list(history)
        return [history[0], summary_message(self.summary), *history[self.index :]]

    def advance(self, split: int, summary: str) -> None:
        """A summary of ``working[1:split]`` was made: it now covers everything before ``working[split]``."""
        self.index = self.index + split - 2 if self.summary is not None else split
        self.summary = summary
        self.made.append((self.index, summary))

    def checkpoint(self, history: Sequence[Message], saved_end: int) -> Checkpoint | None:
        """The newest checkpoint of this run whose covered messages are all in ``history[:saved_end]`` (R-LONG-6)."""
        for index, summary in reversed(self.made):
            if self.base < index <= saved_end:
                covered = self.covered + index - self.base
                return Checkpoint(covered, message_anchor(history[index - 1]), summary)
        return None

    @property
    def kept(self) -> int:
        """How many leading messages of ``working`` a compaction keeps: the system prompt and the summary."""
        return 2 if self.summary is not None else 1


def load_context(session: Session, system: str) -> tuple[list[Message], Context]:
    """``[system, summary] + uncovered`` from a valid checkpoint, else ``[system] + stored`` (R-LONG-2, R-CKP-5).

    An invalid or unreadable checkpoint is logged and ignored; other session errors propagate
    (R-ENG-4).
    """
    head = Message(ROLE_SYSTEM, system)
    try:
        checkpoint = session.get_checkpoint()
    except CorruptRow as exc:
        _log.warning("ignoring the checkpoint of session %s: %s", session.session_id, exc)
        checkpoint = None
    if checkpoint is not None:
        rest = session.get_messages_from(checkpoint.covered - 1) if checkpoint.covered >= 1 else []
        problem = checkpoint_problem(checkpoint, rest)
        if problem is None:
            history = [head, summary_message(checkpoint.summary), *rest[1:]]
            return history, Context(base=2, covered=checkpoint.covered, summary=checkpoint.summary, index=2)
        _log.warning("ignoring the checkpoint of session %s: %s", session.session_id, problem)
    return [head, *session.get_messages(0)], Context()


def summary_split(working: Sequence[Message], tail: int) -> int:
    """``len(working) - tail``, moved back so that the tail does not start with a result (R-LONG-5)."""
    split = max(1, len(working) - tail)
    while split > 1 and working[split].tool_call_id:
        split -= 1
    return split


def has_head(working: Sequence[Message], split: int) -> bool:
    """Whether ``working[1:split]`` holds something new to summarise (R-LONG-5)."""
    return any(not is_summary(msg) for msg in working[1:split])


@dataclass(frozen=True, slots=True)
class Prepared:
    """One turn's view and what the engine announces before sending it (R-ENG-5, R-LONG-4)."""

    view: Sequence[Message]
    total: int  # estimate of the view plus the tool definitions
    shown: int  # the first token update's figure
    compaction: CompactionData | None


def prepare_literal(history: Sequence[Message], compactor: Compactor | None, tool_tokens: int) -> Prepared:
    """The document's turn (R-ENG-5, R-ENG-6): compact the full history, announce by the 5% rule."""
    before = estimate_tokens(history)
    view = history if compactor is None else compactor.compact(history)
    after = before if compactor is None else estimate_tokens(view)
    total = after + tool_tokens
    compaction = None
    if compactor is not None and 20 * (after + 1) <= 19 * before:
        compaction = CompactionData(before + tool_tokens, total, len(history), len(view))
    return Prepared(view, total, total, compaction)


class LongSession:
    """The engine-wide state of long-session mode: its budget and calibration (R-LONG-3, R-LONG-4)."""

    def __init__(self, context_window: int) -> None:
        self.budget = budget_for_context_window(context_window)
        self._used = PRIOR_USED  # U: input_tokens the provider reported for the last call
        self._sent = PRIOR_SENT  # S: what the engine estimated for that call

    def measured(self, tokens: int) -> int:
        """``tokens`` scaled by the last call's real count (R-LONG-3)."""
        return tokens * self._used // self._sent

    def message_budget(self, tool_tokens: int) -> int:
        """M of R-LONG-4 (c): the largest message estimate whose measured total stays within the budget."""
        return max(0, ((self.budget + 1) * self._sent - 1) // self._used - tool_tokens)

    def calibrate(self, usage: Usage | None, total: int) -> None:
        """Remember a call's real count against its estimate (R-LONG-3)."""
        if usage is not None and usage.input_tokens > 0 and total > 0:
            self._used, self._sent = usage.input_tokens, total

    def prepare(self, context: Context, history: Sequence[Message], compactor: Compactor | None, tool_tokens: int) -> Prepared:
        """One turn's view (R-LONG-4): summarise when the measured total is over budget, then shorten."""
        working = context.working(history)
        before = estimate_tokens(working)
        view: Sequence[Message] = working
        if isinstance(compactor, SummarizingCompactor):
            if self.measured(before + tool_tokens) > self.budget if self.budget else compactor.over_budget(working):
                view = self.summarize(context, working, compactor, compactor.tail_messages) or working
        elif compactor is not None:
            view = compactor.compact(working)
        return self._finish(working, view, before, tool_tokens, self.message_budget(tool_tokens), forced=False)

    def recover(self, context: Context, history: Sequence[Message], compactor: Compactor | None, tool_tokens: int) -> Prepared:
        """The harder compaction after a context-length error (R-LONG-7)."""
        working = context.working(history)
        before = estimate_tokens(working)
        split = summary_split(working, RECOVERY_TAIL)
        view = None
        if isinstance(compactor, SummarizingCompactor):
            view = self.summarize(context, working, compactor, RECOVERY_TAIL, fallback=False)
        if view is None:
            kept = context.kept  # R-LONG-7: the system prompt and the summary in effect stay
            view = repair_orphaned_tool_pairs([*working[:kept], *working[max(split, kept) :]])
        return self._finish(working, view, before, tool_tokens, self.message_budget(tool_tokens) // 2, forced=True)

    def compact_now(
        self, session: Session, system: str, compactor: SummarizingCompactor, tool_tokens: int, focus: str
    ) -> CompactionData:
        """Summarise the session now, whatever the budget, and store the checkpoint (R-LONG-9).

        Raises:
            EngineError: ``nothing_to_compact``, ``compaction_failed`` or a session error's code;
                nothing was changed.
        """
        try:
            history, context = load_context(session, system)
            working = context.working(history)
            before = estimate_tokens(working)
            if not has_head(working, summary_split(working, compactor.tail_messages)):
                raise engine_error(NOTHING_TO_COMPACT, "nothing is old enough to summarise yet")
            view = self.summarize(context, working, compactor, compactor.tail_messages, focus, fallback=False)
            if view is None:
                reason = compactor.failures[-1] if compactor.failures else "the summary failed"
                raise engine_error(COMPACTION_FAILED, one_line(reason))
            checkpoint = context.checkpoint(history, len(history))
            if checkpoint is not None:
                session.save_checkpoint(checkpoint)
        except SessionError as exc:
            raise engine_error(exc.code, one_line(str(exc))) from exc
        total = estimate_tokens(view) + tool_tokens
        return CompactionData(self.measured(before + tool_tokens), self.measured(total), len(working), len(view))

    @staticmethod
    def summarize(
        context: Context,
        working: list[Message],
        compactor: SummarizingCompactor,
        tail: int,
        focus: str = "",
        *,
        fallback: bool = True,
    ) -> list[Message] | None:
        """Summarise with the pair-safe split (R-LONG-5) and move the checkpoint on success.

        Returns the view, or None when there is nothing to summarise, or when the summary failed
        and ``fallback`` is False (otherwise the fallback's view).
        """
        split = summary_split(working, tail)
        if not has_head(working, split):
            return None
        result = compactor.summarize(working, split, focus)
        if result.summary is None:
            return result.messages if fallback else None
        context.advance(split, result.summary)
        return result.messages

    def _finish(
        self, working: list[Message], view: Sequence[Message], before: int, tool_tokens: int, limit: int, *, forced: bool
    ) -> Prepared:
        if self.budget:
            view = shorten_view(view, limit)
        after = estimate_tokens(view)
        total = after + tool_tokens
        compaction = None
        if forced or (view != working and 20 * (after + 1) <= 19 * before):
            compaction = CompactionData(
                self.measured(before + tool_tokens), self.measured(total), len(working), len(view)
            )
        return Prepared(view, total, self.measured(total), compaction)
