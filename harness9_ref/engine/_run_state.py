"""The state of one run and its iterator (SPEC R-ENG-1, R-ENG-2, R-ENG-12, R-ENG-15, R-ENG-16).

``RunState`` is one run's snapshot and progress, ``RunIterator`` hands out its events;
``check_cancelled`` ends a run that was cancelled (R-ENG-15). ``history[start_len:saved]`` is
what the session already holds and ``history[saved:committed]`` what is complete but not yet
stored (the saving parts, ``_saving.py``, move ``saved`` on).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field

from ..memory.context import Compactor
from ..memory.storage import Session
from ..schema import Message
from ._events import ErrorData, Event, EventType, TokenUpdateData
from ._long_session import Context
from ._run_errors import CANCELLED, LOGGER_NAME, engine_error

__all__ = ["RunIterator"]

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
    partial: str = ""  # the text the provider call in flight has streamed (R-ENG-19, R-ENG-24, R-LONG-7)
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
        raise engine_error(CANCELLED, CANCELLED)


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
