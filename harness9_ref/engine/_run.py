"""The state of one run, its iterator and the steps the engine takes on it (SPEC R-ENG-1, R-ENG-2,
R-ENG-11 … R-ENG-16, R-ENG-23 … R-ENG-26, R-LONG-6, R-LONG-16).

``RunState`` is one run's snapshot and progress; ``Failure`` ends a run with an error event;
``RunIterator`` hands out its events. The saves live here too. ``history[start_len:saved]`` is
what the session already holds and ``history[saved:committed]`` what is complete but not yet
stored: the document's engine stores it all with one ``add_messages`` call at the end of the
run (R-ENG-11); a durable run also at the prompt and after each step (R-ENG-23), a failed save
leaving its messages for the next (R-ENG-25). Then, in long-session mode, the run's checkpoint
and context state.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Final

from ..memory.context import Compactor
from ..memory.storage import ContextState, Session, SessionError
from ..schema import Message
from ._errors import CANCELLED, LOGGER_NAME, Failure, error_text, internal_message, one_line
from ._events import ErrorData, Event, EventType, SaveFailedData, TokenUpdateData
from ._long_session import Context

__all__ = [
    "PARTIAL_MARKER",
    "Failure",
    "RunIterator",
    "RunState",
    "check_cancelled",
    "close_stream",
    "event_error",
    "event_token_update",
    "save_progress",
    "save_run",
]

PARTIAL_MARKER: Final = "\n\n[reply cut off: "  # R-ENG-24: then the error's message and "]"

_log = logging.getLogger(LOGGER_NAME)


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
    saved: int = 0  # history[start_len:saved] is stored (R-ENG-23)
    save_error: str = ""  # the last failed save's message, while messages are pending (R-ENG-25)
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


def save_progress(run: RunState) -> None:
    """Store ``history[saved:committed]`` by one ``add_messages`` call, if there is any (R-ENG-23).

    Without a session nothing happens. A failure is logged as a warning and leaves the messages
    pending, so the next save carries them first (R-ENG-13, R-ENG-25).
    """
    session = run.session
    if session is None or run.saved >= run.committed:
        return
    batch = run.history[run.saved : run.committed]
    try:
        session.add_messages(batch)
    except Exception as exc:
        run.save_error = error_text(exc) if isinstance(exc, SessionError) else internal_message(exc)
        name = getattr(session, "session_id", "(unknown id)")
        _log.warning("could not save %d messages to session %s: %s", len(batch), name, run.save_error)
        return
    run.saved = run.committed
    run.save_error = ""


def save_run(run: RunState, state: ContextState | None = None) -> Event | None:
    """The end-of-run save (R-ENG-11, R-ENG-23), then the checkpoint and ``state`` (R-LONG-6, R-LONG-16).

    The checkpoint and state follow only when every message of the run is stored, the state
    only when it differs from the one the run read; a failed save of either is logged and
    changes nothing else. Returns the ``save_failed`` event when messages are left unsaved
    (R-ENG-25), for a run that says so (a durable one); else None.
    """
    session = run.session
    save_progress(run)
    if session is None:
        return None
    if run.saved < run.committed:
        unsaved = run.committed - run.saved
        return Event(EventType.SAVE_FAILED, SaveFailedData(run.saved - run.start_len, unsaved, one_line(run.save_error)))
    checkpoint = run.context.checkpoint(run.history, run.committed)
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
    return None


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
