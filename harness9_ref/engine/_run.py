"""The state of one run, its iterator and the steps the engine takes on it (SPEC R-ENG-1, R-ENG-2,
R-ENG-11 … R-ENG-16, R-LONG-6, R-LONG-16).

``RunState`` is one run's snapshot and progress; ``Failure`` ends a run with an error event;
``RunIterator`` hands out its events. The save at the end of a run lives here too: one
``add_messages`` call, then, in long-session mode, the run's checkpoint and context state.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field

from ..memory import Compactor, ContextState, Session
from ..schema import Message
from ._errors import CANCELLED, LOGGER_NAME, internal_message
from ._events import ErrorData, Event, EventType, TokenUpdateData
from ._long_session import Context
from ._retry import RetryHints

__all__ = [
    "Failure",
    "RunIterator",
    "RunState",
    "check_cancelled",
    "close_stream",
    "event_error",
    "event_token_update",
    "save_run",
]

_log = logging.getLogger(LOGGER_NAME)


class Failure(Exception):
    """Ends a run with the error event ``{code, message}``; raised and caught inside the loop."""

    def __init__(self, code: str, message: str, *, after_text: bool = False, hints: RetryHints | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.after_text = after_text  # the provider had streamed text before failing (R-LONG-7, R-ENG-19)
        self.hints = hints  # a provider failure's retry hints (R-ENG-19); None for the engine's own


@dataclass(eq=False)
class RunState:
    """The state of one run; the session and compactor are its snapshot (R-ENG-2)."""

    prompt: Message
    session: Session | None
    compactor: Compactor | None
    cancelled: threading.Event = field(default_factory=threading.Event)
    history: list[Message] = field(default_factory=list)
    start_len: int = 0
    committed: int = 0  # history[:committed] holds only completed steps (R-ENG-12)
    turns: int = 0  # provider calls so far
    rounds: int = 0  # turns so far; a turn recovered from a context-length error is one (R-LONG-8)
    context: Context = field(default_factory=Context)  # the checkpoint in effect (R-LONG-2)


def event_token_update(tokens: int, window: int) -> Event:
    return Event(EventType.TOKEN_UPDATE, TokenUpdateData(tokens, window))


def event_error(code: str, message: str) -> Event:
    return Event(EventType.ERROR, ErrorData(code, message))


def close_stream(stream: Iterator[object]) -> None:
    close = getattr(stream, "close", None)
    if callable(close):
        try:
            close()
        except Exception:  # abandoning a stream must not hide the run's own outcome
            _log.debug("closing the provider stream failed", exc_info=True)


def check_cancelled(run: RunState) -> None:
    if run.cancelled.is_set():
        raise Failure(CANCELLED, CANCELLED)


def save_run(run: RunState, end: int, state: ContextState | None = None) -> None:
    """Save ``history[start_len:end]``, then, in long-session mode, the checkpoint and ``state`` (R-LONG-6, R-LONG-16).

    The state is saved only when it differs from the one the run read; a failed save of either
    is logged and changes nothing else.
    """
    session = run.session
    if not save_history_with(session, run.history, run.start_len, end) or session is None:
        return
    checkpoint = run.context.checkpoint(run.history, end)
    try:
        if checkpoint is not None:
            session.save_checkpoint(checkpoint)
    except Exception as exc:
        _log.warning("could not save the checkpoint of session %s: %s", session.session_id, internal_message(exc))
    try:
        if state is not None and state != run.context.stored_state:
            session.save_context_state(state)
    except Exception as exc:
        _log.warning("could not save the context state of session %s: %s", session.session_id, internal_message(exc))


def save_history_with(session: Session | None, history: Sequence[Message], start_len: int, end: int) -> bool:
    """Append ``history[start_len:end]`` to the session in one call (R-ENG-11 … R-ENG-13).

    Without a session nothing happens; a failure is logged as a warning and swallowed.
    Returns False only when the save failed.
    """
    if session is None:
        return True
    batch = list(history[start_len:end])  # never empty: it holds the prompt at least
    try:
        session.add_messages(batch)
    except Exception as exc:
        name = getattr(session, "session_id", "(unknown id)")
        _log.warning("could not save %d messages to session %s: %s", len(batch), name, internal_message(exc))
        return False
    return True


class RunIterator(Iterator[Event]):
    """The events of one run, as ``AgentEngine.run_stream`` returns them.

    ``close()`` cancels a run that has not ended (R-ENG-15); dropping the iterator closes it.
    The engine is free as soon as the terminal event is handed out, so a consumer that stops
    there (as the command line and the UI do) can start the next run without closing this one.
    Iterate it from one thread; use ``AgentEngine.cancel()`` from others. (It wraps a generator
    because a generator closed before its first ``next()`` runs none of its code, so it could
    not free the engine.)
    """

    def __init__(self, events: Generator[Event, None, None], release: Callable[[], None]) -> None:
        self._events = events
        self._release = release

    def __iter__(self) -> RunIterator:
        return self

    def __next__(self) -> Event:
        event = next(self._events)
        if event.is_terminal:  # the run is over and saved: the next may start at once (R-ENG-16)
            self._release()
        return event

    def close(self) -> None:
        """Cancel the run if it has not ended: save what R-ENG-12 allows and free the engine."""
        try:
            self._events.close()
        finally:
            self._release()

    def __del__(self) -> None:
        self.close()
