"""The long-session context part: checkpoints, a calibrated trigger, tiers of compaction, overflow recovery
(SPEC R-LONG, R-CKP-5).

The design document's engine (``LiteralContext``, ``_context.py``) compacts the full history
every turn, so a long conversation is summarised from scratch again and again. An engine given a
``LongSession`` as its context part instead works so:

- a run starts from the session's checkpoint, ``[system, summary] + the uncovered messages``,
  so the summarizer gets its previous summary and only new messages (R-LONG-2);
- the trigger compares a figure as exact as the provider allows with the budget: the provider's
  own count when it offers one, else the last real count plus an estimate of what was added
  since, else the estimate scaled by the last real count (R-LONG-3, R-LONG-10);
- over the trigger, stale tool results are cleared first (tier 0, no model call), and only when
  that is not enough is the head summarised (tier 1), or the fallback used (tier 2); a
  summarizer that keeps failing is paused for a while (R-LONG-11 … R-LONG-15);
- whatever is left over budget is shortened in the view (R-TRIM, R-LONG-4);
- a context-length error is answered once by compacting harder (R-LONG-7).

``Context`` is one run's view of the checkpoint and the clearing watermark; ``LongSession``
holds the engine-wide state (the calibration, its anchor, the breaker) and turns a working
history into the view of one turn. ``Turn``, ``Prepared`` and ``Preparing`` are what every
context part is given and returns.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final, TypeVar

from .._harness9_error import Harness9Error, Said
from ..memory.context import (
    CHARS_PER_TOKEN,
    DEFAULT_MIN_TAIL_MESSAGES,
    SUMMARY_SHARE,
    Compactor,
    SummarizationCompactor,
    carried_requests,
    clear_below,
    estimate_tokens,
    is_summary,
    next_watermark,
    recent_requests,
    repair_orphaned_tool_pairs,
    requests_budget,
    shorten_text,
    shorten_view,
    summarizer_part,
    summary_body,
    summary_message,
)
from ..memory.storage import (
    Checkpoint,
    ContextState,
    CorruptRow,
    LongSessionState,
    Session,
    SessionError,
    StatefulSession,
    checkpoint_problem,
    message_anchor,
)
from ..planning import plan_block
from ..provider import TokenCounter, overflow_window, plausible_window
from ..schema import ROLE_SYSTEM, ROLE_USER, Message, ToolDefinition, Usage
from ._events import CompactionData, ContextPart, ContextReport, WindowData
from ._run_errors import LOGGER_NAME, EngineError, engine_error, one_line
from ._seams import SummarizingCompactor

__all__ = ["DEFAULT_COMPACT_AT", "LongSession"]

CONTEXT_LENGTH_EXCEEDED: Final = "context_length_exceeded"  # R-ERR-3, R-LONG-7
RECOVERY_FAILED_MESSAGE: Final = "the request does not fit the context window even after compacting: {message}"
NOTHING_TO_COMPACT: Final = "nothing_to_compact"  # R-LONG-9
COMPACTION_FAILED: Final = "compaction_failed"  # R-LONG-9
# R-LONG-3: until the provider reports a real count, assume a token per 3 bytes, as real tokenizers
# count code and JSON; the estimate's 4 bytes per token would let a request overflow the window.
PRIOR_USED: Final = 4
PRIOR_SENT: Final = 3
RECOVERY_TAIL: Final = 1  # R-LONG-7: compacting harder keeps one message (and its calls' results)
DEFAULT_COMPACT_AT: Final = Fraction(4, 5)  # R-LONG-10: R-CMP-4's 80%
CLEAR_AT_LEAST: Final = Fraction(1, 20)  # R-LONG-12: clearing must free a twentieth of the trigger
# R-LONG-12: clearing is enough when it leaves the request at 3/5 of the trigger or less. Clearing
# that leaves it just under the trigger would be undone by the next result, moving the prefix
# (and breaking the provider's cache) every turn while only postponing the summary.
CLEAR_TARGET: Final = Fraction(3, 5)
SUMMARY_FAILURE_LIMIT: Final = 3  # R-LONG-15: failed summaries in a row that pause the summarizer
SUMMARY_PAUSE_TURNS: Final = 10  # R-LONG-15: turns the summarizer is then not asked

# The tiers a compaction event names (R-LONG-4c, step f; R-LONG-11 … R-LONG-15).
TIER_CLEARED: Final = "cleared"
TIER_SUMMARY: Final = "summary"
TIER_FALLBACK: Final = "fallback"
TIER_PAUSED: Final = "paused"
TIER_SHORTENED: Final = "shortened"
TIER_RECOVERY: Final = "recovery"

# How the engine learned a smaller window (R-WIN-5, R-EVT-12).
WINDOW_FROM_ERROR: Final = "error"
WINDOW_FROM_TRUNCATION: Final = "truncation"
REPLY_SHARE: Final = 10  # R-FIT-1: a request leaves at least a tenth of the window for the reply
TIER_DEGRADED: Final = "degraded"  # R-FIT-1: the view was cut further to fit under the trigger
CONTEXT_TOO_SMALL: Final = "context_too_small"  # R-FIT-2
CONTEXT_TOO_SMALL_MESSAGE: Final = (
    "the request does not fit the context window: it needs {needed} tokens and the window of {window} "
    "tokens allows {budget}; the system prompt takes {system}, the tool definitions {tools} and the newest "
    "prompt {prompt}"
)

# Where a figure comes from (R-LONG-10).
SOURCE_EXACT: Final = "exact"
SOURCE_ANCHORED: Final = "anchored"
SOURCE_ESTIMATE: Final = "estimate"

_log = logging.getLogger(LOGGER_NAME)


@dataclass
class Context:
    """Which part of a run's history the current summary replaces, and what is cleared (R-LONG-2, R-LONG-5, R-LONG-11).

    ``history[:base]`` is the system prompt and, when the run started from a checkpoint, its
    summary message; ``history[base:]`` are stored messages from position ``covered`` on, then
    the run's own. While ``summary`` (a summary message's body, R-LONG-13) is set, the working
    history is ``[history[0], summary message] + history[index:]``. Every clearable result at
    a stored position below ``watermark`` is shown cleared.
    """

    base: int = 1
    covered: int = 0
    summary: str | None = None
    index: int = 1
    watermark: int = 0
    stored_state: ContextState | None = None  # the context state the run read (R-LONG-16)
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

    @property
    def first_position(self) -> int:
        """The stored position of ``working[kept]``, the first message after the kept prefix (R-CKP-4)."""
        return self.covered + (self.index if self.summary is not None else 1) - self.base

    def shown(self, working: Sequence[Message]) -> tuple[list[Message], int]:
        """``working`` with what the watermark clears replaced by placeholders, and how many (R-LONG-11)."""
        return clear_below(working, self.kept, self.first_position, self.watermark)


def stateful(session: Session) -> StatefulSession:
    """``session`` as long-session mode asks for it: one that keeps its plan, checkpoint and context state too.

    Raises:
        TypeError: a session that keeps only messages (R-SES-1), which cannot carry a run's
            checkpoint and context state to the next (R-LONG-2, R-LONG-16).
    """
    if not isinstance(session, LongSessionState):
        raise TypeError(f"long-session mode needs a session that keeps its state; a {type(session).__name__} keeps only messages")
    return session


def load_context(session: StatefulSession, system: str) -> tuple[list[Message], Context]:
    """``[system, summary] + uncovered`` from a valid checkpoint, else ``[system] + stored`` (R-LONG-2, R-CKP-5).

    An invalid or unreadable checkpoint is logged and ignored; other session errors propagate
    (R-ENG-4). The session's context state is read too (R-LONG-16): its watermark applies when
    it is within the stored messages.
    """
    head = Message(ROLE_SYSTEM, system)
    try:
        checkpoint = session.get_checkpoint()
    except CorruptRow as exc:
        _log.warning("ignoring the checkpoint of session %s: %s", session.session_id, exc)
        checkpoint = None
    history: list[Message] | None = None
    if checkpoint is not None:
        rest = session.get_messages_from(checkpoint.covered - 1) if checkpoint.covered >= 1 else []
        problem = checkpoint_problem(checkpoint, rest)
        if problem is None:
            history = [head, summary_message(checkpoint.summary), *rest[1:]]
            context = Context(base=2, covered=checkpoint.covered, summary=checkpoint.summary, index=2)
        else:
            _log.warning("ignoring the checkpoint of session %s: %s", session.session_id, problem)
    if history is None:
        history, context = [head, *session.get_messages(0)], Context()
    try:
        context.stored_state = session.get_context_state()
    except CorruptRow as exc:
        _log.warning("ignoring the context state of session %s: %s", session.session_id, exc)
    stored = context.covered + len(history) - context.base
    if context.stored_state is not None and context.stored_state.cleared_below <= stored:
        context.watermark = context.stored_state.cleared_below
    return history, context


def _newest_prompt(view: Sequence[Message], start: int) -> int | None:
    """The index of the newest user message at or after ``start`` that is neither a result nor a summary (R-FIT-1)."""
    for index in range(len(view) - 1, start - 1, -1):
        msg = view[index]
        if msg.role == ROLE_USER and not msg.tool_call_id and not is_summary(msg):
            return index
    return None


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


# Preparing a turn's view: a generator that yields (None) just before the summarizer is asked,
# and returns the view. Whoever drives it may make the rest of the work, the summary first, on
# another thread, so that the summarizer's retries are reported while they happen (R-ENG-27);
# a turn that makes no summary never yields.
Preparing = Generator[None, None, Prepared]
Summarizing = Generator[None, None, list[Message] | None]
_T = TypeVar("_T")


def drive(work: Generator[None, None, _T]) -> _T:
    """Run ``work`` to its end on this thread (``compact_now``, whose retries emit nothing: R-ENG-27)."""
    while True:
        try:
            next(work)
        except StopIteration as end:
            value: _T = end.value
            return value


def check_window(window: int) -> None:
    """Refuse a window that is neither 0 (unknown) nor positive, as every context part does."""
    if window < 0:
        raise ValueError(f"context_window must be 0 (unknown) or positive, got {window}")


def trigger_for(window: int, compact_at: Fraction | None, reserve: int) -> int:
    """B of R-LONG-10: ``floor(window * compact_at)``, at most ``window - reserve``; 0 when off or unknown."""
    if window <= 0 or compact_at is None:
        return 0
    budget = window * compact_at.numerator // compact_at.denominator
    return min(budget, max(1, window - reserve)) if reserve > 0 else budget


@dataclass(frozen=True, slots=True)
class Turn:
    """What one turn's preparation is given beside the history (R-ENG-5 step 1, R-LONG-4)."""

    tools: Sequence[ToolDefinition]
    tool_tokens: int
    session: Session | None = None  # whose plan a summary carries (R-LONG-14)
    recall: bool = False  # the engine offers its recall tool, and the summary says so (R-LONG-13)


@dataclass
class _Step:
    """What a compaction of one turn did, for its event (R-LONG-4c, step f)."""

    view: list[Message]
    tier: str | None = None
    cleared: int = 0


class LongSession:
    """The long-session context part (R-LONG): the engine-wide state of the mode (R-LONG-3, R-LONG-10, R-LONG-15).

    It holds the trigger, the calibration and its anchor, and the summarizer's breaker. Runs
    start from the session's checkpoint (R-LONG-2), each turn's view is cleared, summarised and
    fitted (R-LONG-4), a context-length error is recovered from once (R-LONG-7).

    Args:
        context_window: the model's window in tokens, 0 when unknown; the server may reveal a
            smaller one (R-WIN-5, R-WIN-8).
        compact_at: the share of the window at which compaction starts (R-LONG-10); None turns
            compaction before a call off (overflow recovery stays).
        reserve: the ``max_tokens`` the provider asks for; the trigger leaves room for it (R-LONG-10).
        counter: a provider that counts a request exactly (``count_tokens``), asked before each
            call instead of estimating (R-LONG-10).
        window_source: where ``context_window`` comes from (``option``, ``registry``,
            ``default``, ``server``, R-WIN-7), for ``context_report``.
        model: the model name as configured; a window learned for it is kept with the session
            and taken up again by a later run with the same model (R-LONG-16).
        carry: a new summary message quotes the user's recent requests and ends with the
            session's plan (R-LONG-13, R-LONG-14).

    Raises:
        ValueError: ``context_window`` or ``reserve`` is negative, or ``compact_at`` is outside (0, 1].
    """

    def __init__(
        self,
        context_window: int,
        compact_at: Fraction | None = DEFAULT_COMPACT_AT,
        reserve: int = 0,
        counter: TokenCounter | None = None,
        window_source: str = "",
        model: str = "",
        *,
        carry: bool = False,
    ) -> None:
        check_window(context_window)
        if reserve < 0:
            raise ValueError(f"reserve must be 0 or positive, got {reserve}")
        if compact_at is not None and not 0 < compact_at <= 1:
            raise ValueError(f"compact_at must be in (0, 1] or None, got {compact_at}")
        self._carry = carry
        self._compact_at = compact_at
        self._model = model  # whose window a session's state may keep (R-WIN-5)
        self._window_source = window_source
        self._reserve = reserve
        self.window = self.budget = self._recovery_budget = 0
        self._set_window(context_window)
        self.learned: tuple[int, str] | None = None  # a window learned from the server, and how (R-WIN-5)
        self.off = compact_at is None
        self._counter = counter
        self._used = PRIOR_USED  # U: input_tokens the provider reported for the last call
        self._sent = PRIOR_SENT  # S: what the engine estimated for that call
        self._anchor: tuple[tuple[Message, ...], int] | None = None  # the view and tool tokens U counted
        self._failures = 0  # summaries failed in a row (R-LONG-15)
        self._paused = 0  # turns the summarizer is still not asked; the first of them says so

    @property
    def window_source(self) -> str:
        """Where the window in force comes from (R-WIN-7): as the engine was told, or how it was learned."""
        return self.learned[1] if self.learned is not None else self._window_source

    def _set_window(self, window: int) -> None:
        self.window = window
        self.budget = trigger_for(window, self._compact_at, self._reserve)  # 0: no trigger
        # R-LONG-7 shortens within the default budget when the trigger is off.
        self._recovery_budget = self.budget or trigger_for(window, DEFAULT_COMPACT_AT, self._reserve)

    def learn(self, window: int | None, source: str, compactor: Compactor | None) -> WindowData | None:
        """Take a smaller window the server revealed (R-WIN-5): the trigger and the compactor follow.

        Returns the event data to announce it, or None when ``window`` is None or not smaller.
        """
        if window is None or 0 < self.window <= window:
            return None
        previous = self.window
        self._set_window(window)
        self.learned = (window, source)
        if isinstance(compactor, SummarizationCompactor):
            compactor.fit_window(window)
        return WindowData(window, previous, source)

    def restore(self, used: int, sent: int) -> None:
        """Take a stored calibration (R-LONG-16) when both numbers are usable.

        Its anchor was not stored, so a calibration other than the engine's own drops the anchor.
        """
        if used > 0 and sent > 0 and (used, sent) != (self._used, self._sent):
            self._used, self._sent = used, sent
            self._anchor = None

    def load(self, session: Session, system: str, compactor: Compactor | None = None) -> tuple[list[Message], Context]:
        """``load_context``, taking what the session's context state keeps (R-LONG-2, R-LONG-16).

        The calibration, the summarizer's breaker (R-LONG-15: a session without a readable
        state starts with none) and a window learned from the server for this model, when it
        is smaller than the window in force (R-WIN-5).
        """
        history, context = load_context(stateful(session), system)
        state = context.stored_state
        self._failures, self._paused = (state.summary_failures, state.summary_paused) if state is not None else (0, 0)
        if state is not None:
            self.restore(state.input_tokens, state.estimate)
            if state.window > 0 and state.window_model == self._model:
                self.learn(state.window, state.window_source, compactor)
        return history, context

    def state(self, context: Context) -> ContextState | None:
        """What R-LONG-16 stores with the session: the calibration, the run's watermark, the
        breaker and a window learned from the server.

        None when there is nothing to store: no state was read and nothing was learned (the
        prior calibration, nothing cleared, no failed summary, no window learned).
        """
        window, source = self.learned if self.learned is not None else (0, "")
        state = ContextState(
            self._used,
            self._sent,
            context.watermark,
            summary_failures=self._failures,
            summary_paused=self._paused,
            window=window,
            window_source=source,
            window_model=self._model if window else "",
        )
        if context.stored_state is None and state == ContextState(PRIOR_USED, PRIOR_SENT, 0):
            return None
        return state

    def measured(self, tokens: int) -> int:
        """``tokens`` scaled by the last call's real count (R-LONG-3)."""
        return tokens * self._used // self._sent

    def message_budget(self, tool_tokens: int, budget: int | None = None) -> int:
        """M of R-LONG-4b step (c): the largest message estimate whose measured total stays within the budget."""
        budget = self.budget if budget is None else budget
        return max(0, ((budget + 1) * self._sent - 1) // self._used - tool_tokens)

    def calibrate(
        self, usage: Usage | None, view: Sequence[Message], total: int, tool_tokens: int, compactor: Compactor | None
    ) -> WindowData | None:
        """Remember a call's real count against its estimate, and what it counted (R-LONG-3, R-LONG-10).

        A count far below what was sent (under half of the measured messages, the tool
        definitions left out: some chat templates drop them) is a server that silently dropped
        the start of the request (R-WIN-8): it calibrates nothing, and the tokens the server did
        take become the window. Returns the event data of a window learned so.
        """
        if usage is None or usage.input_tokens <= 0 or total <= 0:
            return None
        if 2 * usage.input_tokens < self.measured(total - tool_tokens):
            kept = plausible_window(usage.input_tokens + usage.output_tokens)
            return self.learn(kept, WINDOW_FROM_TRUNCATION, compactor)
        self._used, self._sent = usage.input_tokens, total
        self._anchor = (tuple(view), tool_tokens)
        return None

    def figure(
        self, msgs: Sequence[Message], tools: Sequence[ToolDefinition], tool_tokens: int, *, count: bool = True
    ) -> tuple[int, str]:
        """The tokens a request of ``msgs`` and ``tools`` holds, as exactly as the provider allows (R-LONG-10).

        ``count=False`` skips the token counter: R-FIT-1's checks between its steps do not count.
        """
        estimate = estimate_tokens(msgs) + tool_tokens
        if self._counter is not None and count:
            try:
                exact = self._counter.count_tokens(msgs, tools)
            except Exception as exc:  # R-LONG-10: a count that fails leaves the estimate
                _log.warning("counting the request's tokens failed; using the estimate: %s", one_line(str(exc)))
            else:
                if exact > 0 and estimate > 0:
                    self._used, self._sent = exact, estimate
                    self._anchor = (tuple(msgs), tool_tokens)
                return exact, SOURCE_EXACT
        if self._anchor is not None:
            seen, seen_tools = self._anchor
            if seen_tools == tool_tokens and len(msgs) >= len(seen) and tuple(msgs[: len(seen)]) == seen:
                return self._used + self.measured(estimate_tokens(msgs[len(seen) :])), SOURCE_ANCHORED
        return self.measured(estimate), SOURCE_ESTIMATE

    def prepare(self, context: Context, history: Sequence[Message], compactor: Compactor | None, turn: Turn) -> Preparing:
        """One turn's view (R-LONG-4): clear, summarise or fall back when over the trigger, then shorten."""
        working = context.working(history)
        shown, _ = context.shown(working)
        before = estimate_tokens(shown)
        figure, _ = self.figure(shown, turn.tools, turn.tool_tokens)
        step = _Step(shown)
        summarizing = isinstance(compactor, SummarizingCompactor)
        if self.off:
            pass
        elif self.budget > 0 and figure > self.budget:
            tail = compactor.tail_messages if isinstance(compactor, SummarizingCompactor) else DEFAULT_MIN_TAIL_MESSAGES
            step = self._clear(context, working, shown, before, tail)
            cleared = figure if step.view is shown else self.figure(step.view, turn.tools, turn.tool_tokens)[0]
            enough = cleared * CLEAR_TARGET.denominator <= self.budget * CLEAR_TARGET.numerator
            if not enough and isinstance(compactor, SummarizingCompactor):
                step = yield from self._summarize_turn(context, step, compactor, turn)
        elif self.budget <= 0 and isinstance(compactor, SummarizingCompactor) and compactor.over_budget(shown):
            step = yield from self._summarize_turn(context, step, compactor, turn)
        if compactor is not None and not summarizing:
            step.view = compactor.compact(step.view)
        limit = self.message_budget(turn.tool_tokens) if self.budget and not self.off else None
        return self._finish(context, shown, step, before, figure, turn, limit, forced=False)

    def recovery(
        self, error: Harness9Error, context: Context, history: Sequence[Message], compactor: Compactor | None, turn: Turn
    ) -> tuple[WindowData | None, Preparing] | None:
        """The answer to a provider call that failed with ``error`` before any text: None, or the
        smaller window the error names (R-WIN-5) and the harder compaction to call again on (R-LONG-7)."""
        if error.code != CONTEXT_LENGTH_EXCEEDED:
            return None
        learned = self.learn(overflow_window(str(error)), WINDOW_FROM_ERROR, compactor)
        return learned, self.recover(context, history, compactor, turn)

    def recover(self, context: Context, history: Sequence[Message], compactor: Compactor | None, turn: Turn) -> Preparing:
        """The harder compaction after a context-length error (R-LONG-7)."""
        working = context.working(history)
        shown, _ = context.shown(working)
        before = estimate_tokens(shown)
        figure, _ = self.figure(shown, turn.tools, turn.tool_tokens)
        split = summary_split(shown, RECOVERY_TAIL)
        view = None
        if isinstance(compactor, SummarizingCompactor) and not self._paused:
            view = yield from self._summarize(context, shown, compactor, RECOVERY_TAIL, turn, fallback=False)
        if view is None:
            kept = context.kept  # R-LONG-7: the system prompt and the summary in effect stay
            view = repair_orphaned_tool_pairs([*shown[:kept], *shown[max(split, kept) :]])
        limit = self.message_budget(turn.tool_tokens, self._recovery_budget) // 2 if self._recovery_budget else None
        return self._finish(context, shown, _Step(view, TIER_RECOVERY), before, figure, turn, limit, forced=True)

    def compact_now(
        self, session: Session, system: str, compactor: SummarizingCompactor, turn: Turn, focus: str
    ) -> tuple[CompactionData, Context]:
        """Clear and summarise the session now, whatever the budget, and store the checkpoint (R-LONG-9).

        Uses the compactor's tail, or a tail of one message when that leaves nothing to clear or
        summarise. Returns the compaction's data and the context, whose watermark the caller stores.

        Raises:
            EngineError: ``nothing_to_compact``, ``compaction_failed`` or a session error's code;
                nothing was changed.
        """
        try:
            history, context = self.load(session, system, compactor)
            working = context.working(history)
            shown, _ = context.shown(working)
            estimate_tokens(shown)
            figure, _ = self.figure(shown, turn.tools, turn.tool_tokens)
            tails = [compactor.tail_messages]
            if 2 * figure >= self.budget:  # R-LONG-9: a full context is compacted harder
                tails.append(RECOVERY_TAIL)
            for tail in tails:
                split = summary_split(working, tail)
                watermark = next_watermark(working, context.kept, split, context.first_position, context.watermark)
                if has_head(working, split) or watermark > context.watermark:
                    break
            else:
                raise engine_error(NOTHING_TO_COMPACT, Said("err_nothing_to_compact"))  # R-LANG-3
            _, before_count = context.shown(working)
            context.watermark = watermark
            view, count = context.shown(working)
            step = _Step(view, TIER_CLEARED if count > before_count else None, count - before_count)
            if has_head(working, split):
                summarised = drive(self._summarize(context, step.view, compactor, tail, turn, focus, fallback=False))
                if summarised is None:
                    reason = compactor.failures[-1] if compactor.failures else "the summary failed"
                    raise engine_error(COMPACTION_FAILED, one_line(reason))
                step.view, step.tier = summarised, TIER_SUMMARY
            checkpoint = context.checkpoint(history, len(history))
            if checkpoint is not None:
                stateful(session).save_checkpoint(checkpoint)
            state = self.state(context)
            if state is not None and state != context.stored_state:
                stateful(session).save_context_state(state)
        except SessionError as exc:
            raise engine_error(exc.code, one_line(str(exc))) from exc
        after, _ = self.figure(step.view, turn.tools, turn.tool_tokens)
        data = CompactionData(figure, after, len(working), len(step.view), step.tier, step.cleared)
        return data, context

    @property
    def ceiling(self) -> int:
        """C of R-FIT-1: the most a request may hold, leaving the reply its reserve and at least a tenth of the window."""
        return min(self.window - self._reserve, self.window - -(-self.window // REPLY_SHARE))

    def _fits(self, view: Sequence[Message], turn: Turn) -> bool:
        return self.figure(view, turn.tools, turn.tool_tokens, count=False)[0] <= self.ceiling

    def _fit(self, view: list[Message], step: _Step, turn: Turn, limit: int) -> list[Message]:
        """Never send a request over the trigger (R-FIT-1): cut further, in a fixed order, until it fits.

        1. the tail down to the newest prompt (and what followed it); 2. the summary cut to its
        share of the window; 3. every message after the system prompt shortened as far as
        needed. A view that still does not fit fails the turn before the call (R-FIT-2).
        """
        if self.budget <= 0 or self.off or self._fits(view, turn):
            return view
        kept = 2 if len(view) > 1 and is_summary(view[1]) else 1
        prompt = _newest_prompt(view, kept)
        if prompt is not None and prompt > kept:
            view = shorten_view(repair_orphaned_tool_pairs([*view[:kept], *view[prompt:]]), limit)
        if kept == 2 and not self._fits(view, turn):
            summary = view[1]
            cut = shorten_text(summary.content, CHARS_PER_TOKEN * (self.window // SUMMARY_SHARE))
            view = [view[0], Message(summary.role, cut), *view[2:]]
        if not self._fits(view, turn):
            view = shorten_view(view, limit, keep_min=0)
        step.tier = TIER_DEGRADED
        if not self._fits(view, turn):
            raise self._too_small(view, turn)
        return view

    def _too_small(self, view: Sequence[Message], turn: Turn) -> EngineError:
        """R-FIT-2: the one line that names the sizes of a request that cannot fit."""
        prompt = _newest_prompt(view, 1)
        return engine_error(
            CONTEXT_TOO_SMALL,
            CONTEXT_TOO_SMALL_MESSAGE.format(
                needed=self.figure(view, turn.tools, turn.tool_tokens, count=False)[0],
                window=self.window,
                budget=self.budget,
                system=self.measured(estimate_tokens(view[:1])),
                tools=self.measured(turn.tool_tokens),
                prompt=self.measured(estimate_tokens(view[prompt : prompt + 1])) if prompt is not None else 0,
            ),
        )

    def report(self, context: Context, history: Sequence[Message], turn: Turn) -> ContextReport:
        """What the next request would hold, by part: cleared and shortened as it would be, not summarised (R-LONG-17)."""
        working = context.working(history)
        shown, count = context.shown(working)
        view = shown
        if self.budget and not self.off:
            view = shorten_view(shown, self.message_budget(turn.tool_tokens))
        total, source = self.figure(view, turn.tools, turn.tool_tokens)
        rest = range(context.kept, len(view))
        placeholders = [view[i] for i in rest if shown[i] is not working[i]]
        results = [view[i] for i in rest if shown[i] is working[i] and view[i].tool_call_id]
        messages = [view[i] for i in rest if not view[i].tool_call_id]
        summary = view[1 : context.kept]
        parts = (
            ContextPart("system", self.measured(estimate_tokens(view[:1])), 1),
            ContextPart("tools", self.measured(turn.tool_tokens), len(turn.tools)),
            ContextPart("summary", self.measured(estimate_tokens(summary)), len(summary)),
            ContextPart("messages", self.measured(estimate_tokens(messages)), len(messages)),
            ContextPart("tool_results", self.measured(estimate_tokens(results)), len(results)),
            ContextPart("cleared", self.measured(estimate_tokens(placeholders)), count),
        )
        return ContextReport(self.window, self.budget, total, source, parts, self.window_source)

    def _clear(self, context: Context, working: list[Message], shown: list[Message], before: int, tail: int) -> _Step:
        """Tier 0: move the watermark past all but the newest results, when that frees enough (R-LONG-12)."""
        split = summary_split(working, tail)
        watermark = next_watermark(working, context.kept, split, context.first_position, context.watermark)
        if watermark <= context.watermark:
            return _Step(shown)
        view, count = clear_below(working, context.kept, context.first_position, watermark)
        freed = self.measured(before - estimate_tokens(view))
        if freed * CLEAR_AT_LEAST.denominator < max(1, self.budget * CLEAR_AT_LEAST.numerator):
            return _Step(shown)
        _, old = context.shown(working)
        context.watermark = watermark
        return _Step(view, TIER_CLEARED, count - old)

    def _summarize_turn(
        self, context: Context, step: _Step, compactor: SummarizingCompactor, turn: Turn
    ) -> Generator[None, None, _Step]:
        """Tier 1, or tier 2 when the summary fails or the summarizer is paused (R-LONG-5, R-LONG-15)."""
        if self._paused:
            tier = TIER_PAUSED if self._paused == SUMMARY_PAUSE_TURNS else TIER_FALLBACK
            self._paused -= 1
            return _Step(compactor.fall_back(step.view), tier, step.cleared)
        failures = len(compactor.failures)
        view = yield from self._summarize(context, step.view, compactor, compactor.tail_messages, turn)
        if view is None:
            return step
        if len(compactor.failures) == failures:
            self._failures = 0
            return _Step(view, TIER_SUMMARY, step.cleared)
        self._failures += 1
        if self._failures >= SUMMARY_FAILURE_LIMIT:
            self._failures, self._paused = 0, SUMMARY_PAUSE_TURNS
            _log.warning(
                "the summarizer failed %d times in a row; using the fallback for the next %d turns",
                SUMMARY_FAILURE_LIMIT,
                SUMMARY_PAUSE_TURNS,
            )
        return _Step(view, TIER_FALLBACK, step.cleared)

    def _summarize(
        self,
        context: Context,
        view: list[Message],
        compactor: SummarizingCompactor,
        tail: int,
        turn: Turn,
        focus: str = "",
        *,
        fallback: bool = True,
    ) -> Summarizing:
        """Summarise with the pair-safe split (R-LONG-5) and move the checkpoint on success.

        The summarizer sees the previous summary without what its message carries (R-LONG-13);
        the new summary message carries the user's recent requests and the plan (R-LONG-13,
        R-LONG-14). Returns the view, or None when there is nothing to summarise, or when the
        summary failed and ``fallback`` is False (otherwise the fallback's view).
        """
        split = summary_split(view, tail)
        if not has_head(view, split):
            return None
        asked = list(view)
        if context.summary is not None:
            asked[1] = summary_message(summarizer_part(context.summary))
        yield  # R-ENG-27: the summarizer is asked now
        result = compactor.summarize(asked, split, focus, recall=turn.recall)
        if result.summary is None:
            return result.messages if fallback else None
        requests: list[str] = []
        if self._carry:
            previous = carried_requests(context.summary) if context.summary is not None else []
            requests = recent_requests(previous, view[context.kept : split], requests_budget(self.budget))
        last = context.first_position + split - context.kept - 1 if turn.recall else None
        body = summary_body(result.summary, requests, last, self._plan(turn.session))
        context.advance(split, body)
        return repair_orphaned_tool_pairs([view[0], summary_message(body), *view[split:]])

    def _plan(self, session: Session | None) -> str:
        """The session's plan as a summary message ends with it (R-LONG-14); "" when not carried, none or unreadable."""
        if not self._carry or session is None:
            return ""
        try:
            return plan_block(stateful(session).get_todos())
        except SessionError as exc:
            _log.warning("could not read the plan of session %s: %s", session.session_id, exc)
            return ""

    def _finish(
        self,
        context: Context,
        shown: list[Message],
        step: _Step,
        before: int,
        figure: int,
        turn: Turn,
        limit: int | None,
        *,
        forced: bool,
    ) -> Prepared:
        view: Sequence[Message] = step.view
        if limit is not None:
            view = shorten_view(view, limit)
            view = self._fit(view, step, turn, limit)
        after = estimate_tokens(view)
        total = after + turn.tool_tokens
        shown_figure = figure if view == shown else self.figure(view, turn.tools, turn.tool_tokens)[0]
        compaction = None
        if forced or step.tier == TIER_DEGRADED or (view != shown and 20 * (after + 1) <= 19 * before):
            tier = step.tier or TIER_SHORTENED
            compaction = CompactionData(figure, shown_figure, len(shown), len(view), tier, step.cleared)
        return Prepared(view, total, shown_figure, compaction)
