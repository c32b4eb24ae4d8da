"""AgentEngine: the run loop of a coding agent (SPEC R-ENG-1 … R-ENG-26, R-EVT-9 … R-EVT-11).

Theory of operation. A run keeps two lists (R-ENG-8):

- ``history``, the full conversation: the system prompt, the stored messages, the user's prompt,
  and every assistant message and observation of the run. It only grows.
- the view, derived from ``history`` each turn by the compactor and sent to the provider. It is
  never saved and never appended to, so compaction is non-destructive (R-ENG-8).

``committed`` marks the end of the part of ``history`` that is safe to save: the prompt and every
completed step, a step being an assistant message together with one observation for each of its
calls (R-ENG-12). A failed, cancelled or closed run saves ``history[start_len:committed]``; a
successful run saves ``history[start_len:]``, before the terminal event (R-ENG-11); a failed save
only logs a warning (R-ENG-13).

The engine is composed of parts, each with the design document's behaviour by default:

- the context part (``context``) loads a run's history and prepares each turn's view:
  ``LiteralContext`` (``_context.py``) as the document's run loop, or ``LongSession``
  (``_long_session.py``: checkpoints, clearing, summaries, fitting and recovery, R-LONG);
- the saving part (``saving``): ``SaveAtEnd``, one ``add_messages`` call at the end (R-ENG-11),
  or ``SaveAsItGoes``, the prompt first and each step once complete (R-ENG-23 … R-ENG-26)
  (``_saving.py``);
- the retry policy (``retry``, ``_retry.py``, R-ENG-18 … R-ENG-22);
- its own tools (``own_tools``): ``OwnTools`` offers ``recall`` and ``todo`` beside the registry's
  and answers them (``_own_tools.py``, R-LONG-18); without it the registry's tools alone.

A failure inside a run is an exception that travels once, as raised: the provider's typed error
(taken from its error chunk, R-ENG-17) or an ``EngineError`` for the engine's own codes; ``_execute``
alone turns it into the error event.

The auxiliary methods of the run loop are ``_load_history_with`` (``loadHistoryWith``), ``_prepare``
(``applyCompactionWith``) and the saving part's (``saveHistoryWith``); each takes the run's
snapshot of the session or compactor, never the engine's current one (R-ENG-2).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Final

from ..memory.context import Compactor, estimate_tool_tokens
from ..memory.storage import ChangeRecorder, FileChangeLog, FileChangeRecord, Session, SessionError
from ..provider import ProviderError
from ..schema import (
    CHUNK_DONE,
    CHUNK_TEXT,
    ROLE_SYSTEM,
    ROLE_USER,
    Message,
    StreamChunk,
    ToolCall,
    ToolDefinition,
    Usage,
)
from ._context import NO_SUMMARY_HERE, ContextStrategy, LiteralContext
from ._events import (
    CompactionData,
    ContextReport,
    DoneData,
    ErrorData,
    Event,
    EventType,
    RetryData,
    TextDeltaData,
    ToolCallData,
    ToolResultData,
)
from ._long_session import (
    CONTEXT_LENGTH_EXCEEDED,
    NOTHING_TO_COMPACT,
    RECOVERY_FAILED_MESSAGE,
    Context,
    Prepared,
    Preparing,
    Turn,
    stateful,
)
from ._own_tools import HistorySource, ListHistory, OwnTools, SessionHistory
from ._retry import RetryingSummarizer, RetryPolicy, hints_of, retry_delay, should_retry
from ._run_errors import (
    CODE_SEPARATOR,
    INTERNAL_ERROR,
    LOGGER_NAME,
    MAX_TURNS,
    MAX_TURNS_MESSAGE,
    PROVIDER_ERROR,
    EngineBusy,
    EngineError,
    engine_error,
    error_text,
    internal_message,
    one_line,
)
from ._run_state import RunIterator, RunState, check_cancelled, close_stream, event_error, event_token_update
from ._saving import SaveAtEnd
from ._seams import DEFAULT_MAX_TURNS, DEFAULT_SYSTEM_PROMPT, PromptBuilder, SummarizingCompactor, ToolRegistry

if TYPE_CHECKING:
    from ..provider import LLMProvider

__all__ = ["AgentEngine"]

_log = logging.getLogger(LOGGER_NAME)

# What ends a run with its own code and message (R-ENG-17): the provider's typed error, as its
# error chunk carried it, and the engine's own. Anything else is an internal error.
RUN_FAILURES: Final = (ProviderError, EngineError)


class AgentEngine:
    """Runs prompts against an LLM provider with tools, a session and a compactor (R-ENG).

    Args:
        llm: the provider; the engine only calls its ``generate_stream`` (R-ENG-5 step 7).
        registry: the tools offered to the model and run for it (R-ENG-9).
        prompt_builder: returns the system prompt at the start of each run; without one the
            run uses ``DEFAULT_SYSTEM_PROMPT`` (R-ENG-3).
        session: where history is loaded from and saved to; None keeps nothing (R-ENG-4).
        compactor: derives the view sent to the provider; None sends the full history.
        context: the context part, which loads a run's history and prepares each turn's view:
            ``LiteralContext(window)`` follows R-ENG literally (the default, with the window
            unknown), ``LongSession(window, …)`` is long-session mode (R-LONG).
        saving: when a run stores its messages: ``SaveAtEnd()`` once at its end (the default,
            R-ENG-11), ``SaveAsItGoes()`` the prompt first and each step as it completes, keeping
            the text of a reply cut short and ending with a ``save_failed`` event when messages
            could not be stored (R-ENG-23 … R-ENG-26).
        own_tools: ``OwnTools()`` offers the engine's ``recall`` and ``todo`` tools beside the
            registry's and answers them itself (R-LONG-18, R-RCL); summaries then say that
            removed messages can be recalled (R-LONG-13). None: the registry's tools alone.
        retry: how often a provider call that failed before any text is made again, and how
            the engine waits (R-ENG-18); the default makes no retry.
        summary_retries: the ``RetryingSummarizer`` its builder put in the compactor, around
            the summarizer (R-ENG-27): each run reports its retries as ``retry`` events and its
            cancel ends their waits. None when the summarizer's calls are not retried. The
            engine never looks inside or changes the compactor it is given.
        max_turns: the most provider calls one run may make (R-ENG-14).

    Raises:
        ValueError: ``max_turns`` is below 1.

    The engine runs one run at a time (R-ENG-16); ``set_session`` and ``cancel`` may be called
    from any thread.
    """

    def __init__(
        self,
        llm: LLMProvider,
        registry: ToolRegistry,
        *,
        prompt_builder: PromptBuilder | None = None,
        session: Session | None = None,
        compactor: Compactor | None = None,
        context: ContextStrategy | None = None,
        saving: SaveAtEnd | None = None,
        own_tools: OwnTools | None = None,
        retry: RetryPolicy | None = None,
        summary_retries: RetryingSummarizer | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        self._llm = llm
        self._registry = registry
        self._prompt_builder = prompt_builder
        self._max_turns = max_turns
        self._lock = threading.Lock()  # guards _session, _compactor and _active (R-ENG-2, R-ENG-16)
        self._session = session
        self._compactor = compactor
        self._active: RunState | None = None
        self._context = context if context is not None else LiteralContext()
        self._saving = saving if saving is not None else SaveAtEnd()
        self._own_tools = own_tools
        self._retry = retry if retry is not None else RetryPolicy()
        self._summary_retries = summary_retries

    @property
    def context_window(self) -> int:
        """The window in force: as given, or the smaller one learned from the server (R-WIN-5)."""
        return self._context.window

    @property
    def max_turns(self) -> int:
        return self._max_turns

    @property
    def session(self) -> Session | None:
        """The session the next run will use."""
        with self._lock:
            return self._session

    @property
    def running(self) -> bool:
        """True while a run is in progress (from ``run_stream`` until its iterator ends or closes)."""
        with self._lock:
            return self._active is not None

    def set_session(self, session: Session | None) -> None:
        """Use ``session`` from the next run on; a run in progress keeps its own (R-ENG-2).

        Safe to call from any thread at any time (R-ENG-2).
        """
        with self._lock:
            self._session = session

    def cancel(self) -> bool:
        """Ask the run in progress to stop at its next opportunity (R-ENG-15, R-INT-3).

        The run checks when each provider chunk arrives, after each text delta is consumed,
        before each tool call and before each provider call. A provider blocked in a read is
        interrupted by its ``interrupt()``, when it has one (R-PRV-3: its stream ends at once
        and the check on that chunk ends the run), and else abandoned when its next chunk
        arrives (or when it times out). A running tool is ended by the registry's
        ``interrupt()``, when it has one (after the flag is set, so the next tool call cannot
        start), and its observation completes the step; else it finishes first. Safe to call
        from any thread. Returns False when the engine was idle (nothing happens).
        """
        with self._lock:
            run = self._active
        if run is None:
            return False
        run.cancelled.set()
        for part in (self._llm, self._registry):
            interrupt = getattr(part, "interrupt", None)
            if callable(interrupt):
                interrupt()
        return True

    def run_stream(self, prompt: str) -> RunIterator:
        """Start a run of ``prompt`` and return an iterator of its events as they happen (R-ENG-1, R-EVT-9).

        The run starts here: the session and compactor are read now (R-ENG-2). The iterator
        ends with exactly one ``done`` or ``error`` event. Closing it early (``close()``, or
        dropping it) cancels the run: what R-ENG-12 allows is saved and no terminal event is
        emitted, since nobody is listening (R-ENG-15). Until the iterator ends or is closed the
        engine is busy.

        Raises:
            EngineBusy: another run is in progress (R-ENG-16).
            SchemaError: ``prompt`` is not a string of Unicode scalar values (R-MSG-6).
        """
        user = Message(ROLE_USER, prompt)
        with self._lock:
            if self._active is not None:
                raise EngineBusy()
            run = RunState(user, self._session, self._compactor)
            self._active = run
        return RunIterator(self._execute(run), lambda: self._release(run))

    def run(self, prompt: str) -> Message:
        """Run ``prompt`` to the end and return the final assistant message (R-ENG-1).

        Raises:
            EngineError: the run failed; ``code`` and ``message`` are those of its error event.
            EngineBusy: another run is in progress (R-ENG-16).
        """
        final: Message | None = None
        failure: ErrorData | None = None
        for event in self.run_stream(prompt):
            if isinstance(event.data, DoneData):
                final = event.data.message
            elif isinstance(event.data, ErrorData):
                failure = event.data
        if failure is not None:
            raise engine_error(failure.code, failure.message)
        if final is None:  # pragma: no cover - every run ends with done or error (R-EVT-9)
            raise engine_error(INTERNAL_ERROR, "the run ended without a terminal event")
        return final

    def compact_now(self, focus: str = "") -> CompactionData:
        """Summarise the current session now, whatever the budget, and store the checkpoint (R-LONG-9).

        ``focus`` is passed to the summarizer (R-FOLD-5). Works with the long-session context part only.

        Returns:
            The compaction's data, as the automatic compaction event reports it.

        Raises:
            EngineBusy: a run is in progress.
            EngineError: ``nothing_to_compact`` (no session, not in long-session mode, a
                compactor that does not summarise, or nothing old enough to summarise),
                ``compaction_failed`` (the summarizer failed; nothing changed), or a session
                error's code.
        """
        placeholder = RunState(Message(ROLE_USER, focus), None, None)
        with self._lock:
            if self._active is not None:
                raise EngineBusy()
            session, compactor = self._session, self._compactor
            self._active = placeholder  # no run may start meanwhile (R-ENG-16)
        try:
            if session is None or not isinstance(compactor, SummarizingCompactor):
                raise engine_error(NOTHING_TO_COMPACT, NO_SUMMARY_HERE)
            data, _ = self._context.compact_now(session, self._system_prompt(), compactor, self._turn_inputs(session), focus)
            return data
        finally:
            self._release(placeholder)

    def context_report(self) -> ContextReport:
        """What the next request would hold, by part, without compacting anything (R-LONG-17).

        Reads the current session as a run would load it (R-LONG-2), with the tools offered
        now. With the literal context part the parts are those of the full stored history.

        Raises:
            EngineBusy: a run is in progress.
            EngineError: the session could not be read (its error's code).
        """
        placeholder = RunState(Message(ROLE_USER, ""), None, None)
        with self._lock:
            if self._active is not None:
                raise EngineBusy()
            session = self._session
            self._active = placeholder
        try:
            turn = self._turn_inputs(session)
            try:
                history, context = self._load_history_with(session, self._system_prompt(), self._compactor)
            except SessionError as exc:
                raise engine_error(exc.code, one_line(str(exc))) from exc
            return self._context.report(context, history, turn)
        finally:
            self._release(placeholder)

    def _turn_inputs(self, session: Session | None) -> Turn:
        """The tools of this turn and whose plan a summary in it carries (R-ENG-5 step 1, R-LONG-13, R-LONG-18).

        The engine's own tools, when it has them, come after the registry's (R-LONG-18).
        """
        tools = list(self._registry.available_tools())
        own = self._own_tools
        if own is not None:
            tools = own.offer(tools)
        return Turn(tools, estimate_tool_tokens(tools), session, recall=own is not None)

    def _system_prompt(self) -> str:
        return self._prompt_builder() if self._prompt_builder is not None else DEFAULT_SYSTEM_PROMPT

    def _release(self, run: RunState) -> None:
        with self._lock:
            if self._active is run:
                self._active = None

    def _execute(self, run: RunState) -> Generator[Event, None, None]:
        try:
            try:
                run.history, run.context = self._load_history_with(run.session, self._system_prompt(), run.compactor)
                run.start_len = run.saved = len(run.history)
                run.history.append(run.prompt)
            except SessionError as exc:  # R-ENG-4: no provider call, nothing saved
                yield event_error(exc.code, error_text(exc))
                return
            except Exception as exc:
                _log.debug("loading the history failed", exc_info=True)
                yield event_error(INTERNAL_ERROR, internal_message(exc))
                return
            run.committed = len(run.history)  # the prompt alone is worth saving (R-ENG-12)
            self._saving.started(run)
            try:
                final = yield from self._turns(run)
            except RUN_FAILURES as failure:  # the one place a failure becomes the error event (R-ENG-17)
                message = one_line(str(failure))
                self._saving.cut_short(run, message)
                yield from self._end(run, event_error(failure.code, message))
                return
            except Exception as exc:  # R-ENG-17
                _log.debug("internal error in a run", exc_info=True)
                yield from self._end(run, event_error(INTERNAL_ERROR, internal_message(exc)))
                return
            except BaseException:  # the iterator was closed (GeneratorExit), or KeyboardInterrupt
                self._saving.ended(run, self._context.state(run.context))
                raise
            run.committed = len(run.history)  # R-ENG-11: the final reply too
            yield from self._end(run, Event(EventType.DONE, DoneData(final, run.turns)))
        finally:
            self._release(run)

    def _end(self, run: RunState, terminal: Event) -> Generator[Event, None, None]:
        """Save, say so when the saving part left messages unsaved (R-ENG-25), then the terminal event."""
        unsaved = self._saving.ended(run, self._context.state(run.context))
        if unsaved is not None:
            yield unsaved
        yield terminal

    def _turns(self, run: RunState) -> Generator[Event, None, Message]:
        """Turns until a reply without tool calls, which is returned (R-ENG-5's steps, R-ENG-10)."""
        while True:
            check_cancelled(run)
            turn = self._turn_inputs(run.session)  # (1) the tools offered and their tokens
            prepared = yield from self._view(run, self._prepare(run, turn))  # (2) … (6)
            reply, usage, prepared = yield from self._reply(run, turn, prepared)  # (7)
            yield from self._count(run, usage, prepared, turn.tool_tokens)  # (8)
            run.history.append(reply)  # (9)
            if not reply.tool_calls:
                return reply  # R-ENG-10
            yield from self._act(run, reply.tool_calls)  # (10)
            run.committed = len(run.history)  # the step is complete (R-ENG-12)
            self._saving.stepped(run)
            check_cancelled(run)  # an interrupted tool ends the run as cancelled, not max_turns (R-INT-3)
            if run.rounds >= self._max_turns:  # R-ENG-14, R-LONG-8
                raise engine_error(MAX_TURNS, MAX_TURNS_MESSAGE.format(max_turns=self._max_turns))

    def _view(self, run: RunState, work: Preparing) -> Generator[Event, None, Prepared]:
        """Steps 2 … 6 of R-ENG-5: the view ``work`` prepares, the optional compaction event, the token update.

        The summarizer's ``retry`` events come first, as they happen (R-ENG-27).
        """
        prepared = yield from self._forwarding(run, work)
        if prepared.compaction is not None:
            yield Event(EventType.COMPACTION, prepared.compaction)
        yield event_token_update(prepared.shown, self.context_window)
        return prepared

    def _reply(
        self, run: RunState, turn: Turn, prepared: Prepared
    ) -> Generator[Event, None, tuple[Message, Usage | None, Prepared]]:
        """Step 7: the provider call on the view, and the view it was made on.

        The context part may answer a call that failed before any text with a view to call again
        on, once: long-session mode's harder compaction after a context-length error (R-LONG-7),
        after taking the smaller window the error may name (R-WIN-5).
        """
        check_cancelled(run)  # a summarizing compactor may have taken a while
        run.turns += 1
        run.rounds += 1
        try:
            reply, usage = yield from self._call(run, prepared.view, turn.tools)
            return reply, usage, prepared
        except RUN_FAILURES as failure:
            history = tuple(run.history)
            recovery = None if run.partial else self._context.recovery(failure, run.context, history, run.compactor, turn)
            if recovery is None:
                raise
        learned, recover = recovery
        if learned is not None:  # R-WIN-5: the error named a smaller window
            yield Event(EventType.WINDOW, learned)
        prepared = yield from self._view(run, recover)
        check_cancelled(run)
        run.turns += 1
        try:
            reply, usage = yield from self._call(run, prepared.view, turn.tools)
        except RUN_FAILURES as again:
            if again.code == CONTEXT_LENGTH_EXCEEDED:
                raise engine_error(again.code, RECOVERY_FAILED_MESSAGE.format(message=str(again))) from None
            raise
        return reply, usage, prepared

    def _count(self, run: RunState, usage: Usage | None, prepared: Prepared, tool_tokens: int) -> Generator[Event, None, None]:
        """Step 8: the provider's count as a token update (R-ENG-7), after the context part learns from it (R-LONG-3)."""
        learned = self._context.calibrate(usage, prepared.view, prepared.total, tool_tokens, run.compactor)
        if learned is not None:  # R-WIN-8: the server dropped part of the request
            yield Event(EventType.WINDOW, learned)
        if usage is not None and usage.input_tokens > 0:  # R-ENG-7
            yield event_token_update(usage.input_tokens, self.context_window)

    def _act(self, run: RunState, calls: Sequence[ToolCall]) -> Generator[Event, None, None]:
        """Step 10: each tool call and its observation, appended in order (R-ENG-9)."""
        for call in calls:
            check_cancelled(run)
            yield Event(EventType.TOOL_CALL, ToolCallData(call.id, call.name, call.arguments))
            observation = self._observe(run, call)
            run.history.append(Message(ROLE_USER, observation, tool_call_id=call.id))
            yield Event(EventType.TOOL_RESULT, ToolResultData(call.id, call.name, observation))

    def _forwarding(self, run: RunState, work: Preparing) -> Generator[Event, None, Prepared]:
        """``work`` to its end, yielding the ``retry`` events of its summarizer calls as they happen (R-ENG-27).

        ``work`` runs on the run's thread up to the moment it asks the summarizer. Without a
        retrying summarizer it simply goes on; with one, the next stretch (the summary first)
        runs on a helper thread. A turn that makes no summary starts no thread.
        """
        summarizer = self._summary_retries
        while True:
            try:
                next(work)  # up to a summary, or to the end
            except StopIteration as end:
                prepared: Prepared = end.value
                return prepared
            if summarizer is not None and (done := (yield from _on_helper(run, work, summarizer))) is not None:
                return done

    def _prepare(self, run: RunState, turn: Turn) -> Preparing:
        """This turn's view, as the context part makes it: the document's (R-ENG-5) or long-session mode's (R-LONG-4)."""
        history = tuple(run.history)  # what the compactor and provider see cannot grow under them
        return self._context.prepare(run.context, history, run.compactor, turn)

    def _call(
        self, run: RunState, view: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> Generator[Event, None, tuple[Message, Usage | None]]:
        """A provider call, made again after a wait while R-ENG-19 allows (R-ENG-18 … R-ENG-21).

        Each retry is one more provider call for ``turns`` but the same turn for the limit of
        R-ENG-14; the view and tools are those of the first attempt.
        """
        policy = self._retry
        retry = 0
        while True:
            try:
                return (yield from self._stream_reply(run, view, tools))
            except RUN_FAILURES as failure:
                hints = hints_of(failure)
                if retry >= policy.max_retries or not should_retry(hints, bool(run.partial)):
                    raise
                retry += 1
                delay = retry_delay(retry, hints.retry_after, policy.random)
                data = RetryData(retry + 1, policy.max_retries + 1, delay, failure.code, one_line(str(failure)))
                yield Event(EventType.RETRY, data)
                policy.wait(run.cancelled, delay)
                check_cancelled(run)  # R-ENG-21: a cancel during the wait ends the run at once
                run.turns += 1

    def _stream_reply(
        self, run: RunState, view: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> Generator[Event, None, tuple[Message, Usage | None]]:
        """One provider call: forward text chunks, return the done chunk's message and usage.

        ``run.partial`` gathers the text the call gives, for a failure after it (R-ENG-19,
        R-ENG-24, R-LONG-7); it is emptied when the call ends with its message.
        """
        stream = _provider_stream(self._llm, view, tools)
        run.partial = ""
        try:
            for chunk in stream:
                check_cancelled(run)  # a cancel while the provider was blocked abandons it
                if chunk.type == CHUNK_TEXT:
                    if chunk.delta:  # R-EVT-4: deltas are non-empty
                        run.partial += chunk.delta
                        yield Event(EventType.TEXT_DELTA, TextDeltaData(chunk.delta))
                    check_cancelled(run)
                elif chunk.type == CHUNK_DONE:
                    if chunk.message is None:
                        raise engine_error(INTERNAL_ERROR, "the provider's done chunk carries no message")
                    run.partial = ""
                    return chunk.message, chunk.usage
                else:
                    raise _chunk_failure(chunk)
            raise engine_error(INTERNAL_ERROR, "the provider's stream ended without a done or error chunk")
        finally:
            close_stream(stream)

    def _observe(self, run: RunState, call: ToolCall) -> str:
        own = self._own_tools
        if own is not None and own.answers(call.name):
            return own.answer(call.name, call.arguments, self._history_source(run), run.session)
        try:
            recorded = getattr(self._registry, "execute_recorded", None)
            if recorded is not None and isinstance(run.session, FileChangeLog):
                observation: str = recorded(call.name, call.arguments, _recorder(run.session, call.id))
                return observation
            return self._registry.execute(call.name, call.arguments)
        except Exception as exc:  # R-ENG-9: a registry should not raise; if it does, say so
            _log.debug("tool %r raised", call.name, exc_info=True)
            return f"error: {error_text(exc)}"

    @staticmethod
    def _history_source(run: RunState) -> HistorySource:
        """What recall reads (R-LONG-18): the stored messages as the run found them, then the run's own.

        Without a session, the run's messages from the prompt on.
        """
        if run.session is None:
            return ListHistory(run.history[1:])
        context = run.context
        stored = context.covered + run.start_len - context.base
        return SessionHistory(stateful(run.session), run.history[run.start_len :], stored)

    # The three auxiliary methods of the run loop, each on the run's snapshot (R-ENG-2).

    def _load_history_with(
        self, session: Session | None, system: str, compactor: Compactor | None = None
    ) -> tuple[list[Message], Context]:
        """``[system] + stored`` and the checkpoint in effect (R-ENG-3, R-ENG-4, R-LONG-2).

        Without a session: ``[system]``. Else as the context part loads it: in long-session mode a
        valid checkpoint replaces the messages it covers by its summary. Raises what the session raises.
        """
        if session is None:
            return [Message(ROLE_SYSTEM, system)], Context()
        return self._context.load(session, system, compactor)


def _recorder(session: FileChangeLog, call_id: str) -> ChangeRecorder:
    """What the tools tell of each change the call ``call_id`` made: it goes into the session at
    once, before the step's messages are saved, so a process killed in between loses no record
    (R-UNDO-2a). A record that cannot be stored is a warning; the change stands."""

    def record(path: str, before: bytes | None, after: bytes) -> None:
        try:
            session.add_file_change(FileChangeRecord.of(call_id, path, before, after))
        except Exception as exc:
            _log.warning("could not record the change of %s for undo: %s", path, error_text(exc))

    return record


def _on_helper(run: RunState, work: Preparing, summarizer: RetryingSummarizer) -> Generator[Event, None, Prepared | None]:
    """One stretch of ``work`` (a summary, and what follows up to the next one) on a helper thread (R-ENG-27).

    Meanwhile this generator hands out each retry the summarizer reports (blocking on a queue,
    not polling). The thread is always waited for, so the run's state has one writer at a time;
    what the stretch raised is raised here. Returns the view when ``work`` ended, else None.
    """
    reports: queue.Queue[RetryData | None] = queue.Queue()
    ended: list[Prepared] = []
    raised: list[BaseException] = []

    def target() -> None:
        try:
            next(work)
        except StopIteration as end:
            ended.append(end.value)
        except BaseException as exc:  # handed to the run's own thread below
            raised.append(exc)
        finally:
            reports.put(None)

    summarizer.bind(run.cancelled, reports.put)
    thread = threading.Thread(target=target, name="harness9-compaction", daemon=True)
    thread.start()
    try:
        while (data := reports.get()) is not None:
            yield Event(EventType.RETRY, data)
    finally:
        if thread.is_alive():  # the consumer closed the iterator: stop any wait, then finish
            run.cancelled.set()
        thread.join()
        summarizer.bind()
    if raised:
        raise raised[0]
    return ended[0] if ended else None


def _provider_stream(
    llm: LLMProvider, view: Sequence[Message], tools: Sequence[ToolDefinition]
) -> Generator[StreamChunk, None, None]:
    """The provider's stream of ``view`` and ``tools``, closed when this one is.

    A provider reports a failure by an error chunk (R-PRV-19); an exception it raises instead,
    typed or not, is an internal error (R-ENG-17), never retried (R-ENG-19 rule 6).
    """
    try:
        stream = iter(llm.generate_stream(view, tools))
    except Exception as exc:
        raise _raised(exc) from exc
    try:
        while True:
            try:
                chunk = next(stream)
            except StopIteration:
                return
            except Exception as exc:
                raise _raised(exc) from exc
            yield chunk
    finally:
        close_stream(stream)


def _raised(exc: Exception) -> EngineError:
    _log.debug("the provider raised instead of sending an error chunk", exc_info=exc)
    return engine_error(INTERNAL_ERROR, internal_message(exc))


def _chunk_failure(chunk: StreamChunk) -> ProviderError | EngineError:
    """The failure an error chunk reports, to raise as it is (R-ENG-17, R-ENG-19).

    Its typed error when it carries a provider's, with R-ERR-2's ``status``, ``retry_after`` and
    ``should_retry``. Else an ``EngineError`` of the same code and message: from another typed
    error, or read from the text ``"<code>: <message>"`` (R-PRV-19), as a provider of another
    package may only give the text.
    """
    failure = chunk.failure
    if isinstance(failure, ProviderError):
        return failure
    if failure is not None:
        return engine_error(failure.code, str(failure))
    code, sep, message = chunk.error.partition(CODE_SEPARATOR)
    if not sep or not code:
        return engine_error(PROVIDER_ERROR, chunk.error)
    return engine_error(code, message)
