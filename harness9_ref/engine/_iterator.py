"""The iterator of a run's events (SPEC R-ENG-1, R-ENG-15, R-ENG-16)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator

from ._events import Event

__all__ = ["RunIterator"]  # gets re-exported


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
