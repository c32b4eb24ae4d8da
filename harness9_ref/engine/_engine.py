"""AgentEngine: the run loop of a coding agent (SPEC R-ENG-1 … R-ENG-17, R-EVT-9; seed 2, 8; D8).

Theory of operation. A run keeps two lists (seed 8.2):

- ``history``, the full conversation: the system prompt, the stored messages, the user's prompt,
  and every assistant message and observation of the run. It only grows.
- the view, derived from ``history`` each turn by the compactor and sent to the provider. It is
  never saved and never appended to, so compaction is non-destructive (R-ENG-8).

``committed`` marks the end of the part of ``history`` that is safe to save: the prompt and every
completed step, a step being an assistant message together with one observation for each of its
calls (R-ENG-12). A failed, cancelled or closed run saves ``history[start_len:committed]``; a
successful run saves ``history[start_len:]``. Either way it is one ``add_messages`` call before
the terminal event (R-ENG-11), and a failed save only logs a warning (R-ENG-13).

Each auxiliary method of seed 8.3 is one method here: ``_load_history_with`` (seed ``loadHistoryWith``),
``_apply_compaction_with`` (``applyCompactionWith``) and ``_save_history_with``
(``saveHistoryWith``); each takes the run's snapshot of the session or compactor, never the
engine's current one (R-ENG-2, seed 8.4).
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Generator, Iterator, Sequence

from ..memory import Compactor, Session, SessionError, estimate_tokens, estimate_tool_tokens
from ..schema import CHUNK_DONE, CHUNK_TEXT, ROLE_SYSTEM, ROLE_USER, Message, ToolCall, ToolDefinition, Usage
from ._constants import (
    CANCELLED,
    CODE_SEPARATOR,
    DEFAULT_MAX_TURNS,
    DEFAULT_SYSTEM_PROMPT,
    INTERNAL_ERROR,
    LOGGER_NAME,
    MAX_TURNS,
    MAX_TURNS_MESSAGE,
    PROVIDER_ERROR,
    PromptBuilder,
    describe,
    internal_message,
    one_line,
)
from ._errors import EngineBusy, EngineError
from ._events import (
    CompactionData,
    DoneData,
    ErrorData,
    Event,
    EventType,
    TextDeltaData,
    TokenUpdateData,
    ToolCallData,
    ToolResultData,
)
from ._iterator import RunIterator
from ._registry import ToolRegistry

if TYPE_CHECKING:
    from ..provider import LLMProvider

__all__ = ["AgentEngine"]  # gets re-exported

_log = logging.getLogger(LOGGER_NAME)


class _Failure(Exception):
    """Ends a run with the error event ``{code, message}``; raised and caught inside the loop."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(eq=False)
class _Run:
    """The state of one run; the session and compactor are its snapshot (R-ENG-2)."""

    prompt: Message
    session: Session | None
    compactor: Compactor | None
    cancelled: threading.Event = field(default_factory=threading.Event)
    history: list[Message] = field(default_factory=list)
    start_len: int = 0
    committed: int = 0  # history[:committed] holds only completed steps (R-ENG-12)
    turns: int = 0  # provider calls so far


def _event_token_update(tokens: int, window: int) -> Event:
    return Event(EventType.TOKEN_UPDATE, TokenUpdateData(tokens, window))


def _event_error(code: str, message: str) -> Event:
    return Event(EventType.ERROR, ErrorData(code, message))


class AgentEngine:
    """Runs prompts against an LLM provider with tools, a session and a compactor (R-ENG).

    Args:
        llm: the provider; the engine only calls its ``generate_stream`` (R-ENG-5 step 7).
        registry: the tools offered to the model and run for it (R-ENG-9).
        workdir: the working directory of the agent (the tools' registry is built on it).
        prompt_builder: returns the system prompt at the start of each run; without one the
            run uses ``DEFAULT_SYSTEM_PROMPT`` (R-ENG-3).
        session: where history is loaded from and saved to; None keeps nothing (R-ENG-4).
        compactor: derives the view sent to the provider; None sends the full history.
        context_window: the model's context window in tokens, 0 when unknown; only reported in
            token updates (R-ENG-7).
        max_turns: the most provider calls one run may make (R-ENG-14).

    Raises:
        ValueError: ``max_turns`` is below 1 or ``context_window`` is negative.

    The engine runs one run at a time (R-ENG-16); ``set_session`` and ``cancel`` may be called
    from any thread.
    """

    def __init__(
        self,
        llm: LLMProvider,
        registry: ToolRegistry,
        workdir: str | os.PathLike[str],
        *,
        prompt_builder: PromptBuilder | None = None,
        session: Session | None = None,
        compactor: Compactor | None = None,
        context_window: int = 0,
        max_turns: int = DEFAULT_MAX_TURNS,
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        if context_window < 0:
            raise ValueError(f"context_window must be 0 (unknown) or positive, got {context_window}")
        self._llm = llm
        self._registry = registry
        self._workdir = Path(workdir)
        self._prompt_builder = prompt_builder
        self._context_window = context_window
        self._max_turns = max_turns
        self._lock = threading.Lock()  # guards _session, _compactor and _active (seed 8.4)
        self._session = session
        self._compactor = compactor
        self._active: _Run | None = None

    @property
    def workdir(self) -> Path:
        return self._workdir

    @property
    def context_window(self) -> int:
        return self._context_window

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

        Safe to call from any thread at any time (seed 8.4 ``SetSession``).
        """
        with self._lock:
            self._session = session

    def cancel(self) -> bool:
        """Ask the run in progress to stop at its next opportunity (R-ENG-15).

        The run checks when each provider chunk arrives, after each text delta is consumed,
        before each tool call and before each provider call. A provider blocked in a read is
        abandoned when its next chunk arrives (or when it times out); a tool already running
        finishes first. Safe to call from any thread.

        Returns:
            True when a run was in progress, False when the engine was idle (nothing happens).
        """
        with self._lock:
            run = self._active
        if run is None:
            return False
        run.cancelled.set()
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
            run = _Run(user, self._session, self._compactor)
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
            raise EngineError(failure.code, failure.message)
        if final is None:  # pragma: no cover - every run ends with done or error (R-EVT-9)
            raise EngineError(INTERNAL_ERROR, "the run ended without a terminal event")
        return final

    def _release(self, run: _Run) -> None:
        with self._lock:
            if self._active is run:
                self._active = None

    def _execute(self, run: _Run) -> Generator[Event, None, None]:
        try:
            try:
                system = self._prompt_builder() if self._prompt_builder is not None else DEFAULT_SYSTEM_PROMPT
                run.history, run.start_len = self._load_history_with(run.session, system, run.prompt)
            except SessionError as exc:  # R-ENG-4: no provider call, nothing saved
                yield _event_error(exc.code, describe(exc))
                return
            except Exception as exc:
                _log.debug("loading the history failed", exc_info=True)
                yield _event_error(INTERNAL_ERROR, internal_message(exc))
                return
            run.committed = len(run.history)  # the prompt alone is worth saving (D8)
            try:
                final = yield from self._turns(run)
            except _Failure as failure:
                self._save_history_with(run.session, run.history, run.start_len, run.committed)
                yield _event_error(failure.code, one_line(failure.message))
                return
            except Exception as exc:  # R-ENG-17
                _log.debug("internal error in a run", exc_info=True)
                self._save_history_with(run.session, run.history, run.start_len, run.committed)
                yield _event_error(INTERNAL_ERROR, internal_message(exc))
                return
            except BaseException:  # the iterator was closed (GeneratorExit), or KeyboardInterrupt
                self._save_history_with(run.session, run.history, run.start_len, run.committed)
                raise
            self._save_history_with(run.session, run.history, run.start_len, len(run.history))
            yield Event(EventType.DONE, DoneData(final, run.turns))
        finally:
            self._release(run)

    def _turns(self, run: _Run) -> Generator[Event, None, Message]:
        """Turns until a reply without tool calls, which is returned (R-ENG-5, R-ENG-10)."""
        while True:
            self._check_cancelled(run)
            tools = list(self._registry.available_tools())
            tool_tokens = estimate_tool_tokens(tools)
            history = tuple(run.history)  # what the compactor and provider see cannot grow under them
            before = estimate_tokens(history)
            view = self._apply_compaction_with(run.compactor, history)
            after = before if run.compactor is None else estimate_tokens(view)
            total = after + tool_tokens
            if run.compactor is not None and 20 * (after + 1) <= 19 * before:  # R-ENG-6, D8
                data = CompactionData(before + tool_tokens, total, len(history), len(view))
                yield Event(EventType.COMPACTION, data)
            yield _event_token_update(total, self._context_window)
            self._check_cancelled(run)  # a summarizing compactor may have taken a while
            run.turns += 1
            reply, usage = yield from self._stream_reply(run, view, tools)
            if usage is not None and usage.input_tokens > 0:  # R-ENG-7
                yield _event_token_update(usage.input_tokens, self._context_window)
            run.history.append(reply)
            if not reply.tool_calls:
                return reply
            for call in reply.tool_calls:  # R-ENG-9
                self._check_cancelled(run)
                yield Event(EventType.TOOL_CALL, ToolCallData(call.id, call.name, call.arguments))
                observation = self._observe(call)
                run.history.append(Message(ROLE_USER, observation, tool_call_id=call.id))
                yield Event(EventType.TOOL_RESULT, ToolResultData(call.id, call.name, observation))
            run.committed = len(run.history)  # the step is complete (R-ENG-12)
            if run.turns >= self._max_turns:  # R-ENG-14
                raise _Failure(MAX_TURNS, MAX_TURNS_MESSAGE.format(max_turns=self._max_turns))

    def _stream_reply(
        self, run: _Run, view: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> Generator[Event, None, tuple[Message, Usage | None]]:
        """One provider call: forward text chunks, return the done chunk's message and usage."""
        stream = iter(self._llm.generate_stream(view, tools))
        try:
            for chunk in stream:
                self._check_cancelled(run)  # a cancel while the provider was blocked abandons it
                if chunk.type == CHUNK_TEXT:
                    if chunk.delta:  # R-EVT-4: deltas are non-empty
                        yield Event(EventType.TEXT_DELTA, TextDeltaData(chunk.delta))
                    self._check_cancelled(run)
                elif chunk.type == CHUNK_DONE:
                    if chunk.message is None:
                        raise _Failure(INTERNAL_ERROR, "the provider's done chunk carries no message")
                    return chunk.message, chunk.usage
                else:  # R-ENG-17: an error chunk "<code>: <message>"
                    code, sep, message = chunk.error.partition(CODE_SEPARATOR)
                    if not sep or not code:
                        code, message = PROVIDER_ERROR, chunk.error
                    raise _Failure(code, message)
            raise _Failure(INTERNAL_ERROR, "the provider's stream ended without a done or error chunk")
        finally:
            self._close_stream(stream)

    @staticmethod
    def _close_stream(stream: Iterator[object]) -> None:
        close = getattr(stream, "close", None)
        if callable(close):
            try:
                close()
            except Exception:  # abandoning a stream must not hide the run's own outcome
                _log.debug("closing the provider stream failed", exc_info=True)

    def _observe(self, call: ToolCall) -> str:
        try:
            return self._registry.execute(call.name, call.arguments)
        except Exception as exc:  # R-ENG-9: a registry should not raise; if it does, say so
            _log.debug("tool %r raised", call.name, exc_info=True)
            return f"error: {describe(exc)}"

    @staticmethod
    def _check_cancelled(run: _Run) -> None:
        if run.cancelled.is_set():
            raise _Failure(CANCELLED, CANCELLED)

    # The three auxiliary methods of seed 8.3, each on the run's snapshot.

    @staticmethod
    def _load_history_with(session: Session | None, system: str, prompt: Message) -> tuple[list[Message], int]:
        """``[system] + stored + [prompt]`` and ``start_len`` (R-ENG-3, R-ENG-4).

        Without a session: ``[system, prompt]``. Raises what ``get_messages`` raises.
        """
        history = [Message(ROLE_SYSTEM, system)]
        if session is not None:
            history.extend(session.get_messages(0))
        start_len = len(history)
        history.append(prompt)
        return history, start_len

    @staticmethod
    def _apply_compaction_with(compactor: Compactor | None, msgs: Sequence[Message]) -> Sequence[Message]:
        """The view sent to the provider: ``compactor.compact(msgs)``, or ``msgs`` without one."""
        if compactor is None:
            return msgs
        return compactor.compact(msgs)

    @staticmethod
    def _save_history_with(session: Session | None, history: Sequence[Message], start_len: int, end: int) -> None:
        """Append ``history[start_len:end]`` to the session in one call (R-ENG-11 … R-ENG-13).

        Without a session nothing happens; a failure is logged as a warning and swallowed.
        """
        if session is None:
            return
        batch = list(history[start_len:end])
        if not batch:
            return
        try:
            session.add_messages(batch)
        except Exception as exc:
            name = getattr(session, "session_id", "(unknown id)")
            _log.warning("could not save %d messages to session %s: %s", len(batch), name, internal_message(exc))
