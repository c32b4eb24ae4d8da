"""The iterator of a run's events (SPEC R-ENG-1, R-ENG-15, R-ENG-16)."""

from __future__ import annotations

from typing import Callable, Generator, Iterator

from ._events import Event

__all__ = ["RunIterator"]


class RunIterator(Iterator[Event]):
    """The iterator ``run_stream`` returns: a generator that frees the engine when closed.

    A generator closed before its first ``next()`` runs none of its code, so it would never
    leave the engine; this wrapper releases it in that case too. Dropping the iterator closes it.
    """

    def __init__(self, events: Generator[Event, None, None], release: Callable[[], None]) -> None:
        self._events = events
        self._release = release

    def __iter__(self) -> RunIterator:
        return self

    def __next__(self) -> Event:
        return next(self._events)

    def close(self) -> None:
        """Cancel the run if it has not ended: save what R-ENG-12 allows and free the engine."""
        try:
            self._events.close()
        finally:
            self._release()

    def __del__(self) -> None:
        self.close()
