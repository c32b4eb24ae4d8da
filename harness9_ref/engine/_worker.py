"""One run of the engine in a worker thread, its events handed over through a queue
(SPEC R-TUI-9, R-CLI-7; the engine and the UI run in separate threads, R-ENG-2).

The worker only iterates ``engine.run_stream`` and puts each event on the queue; whoever owns
the queue (the UI thread, or ``harness9-ref run``) draws them. Cancelling goes through
``engine.cancel()``, so the run ends with its own ``cancelled`` error event and saves what
R-ENG-12 allows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final

from ._engine import AgentEngine
from ._errors import INTERNAL_ERROR, EngineError, one_line
from ._events import ErrorData, Event, EventType

__all__ = ["RUN_FINISHED", "RunFinished", "RunWorker", "WorkerItem"]  # gets re-exported


class RunFinished:
    """Put on the queue after the last event of a run; the worker thread is ending."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "RUN_FINISHED"


RUN_FINISHED: Final = RunFinished()

WorkerItem = Event | RunFinished


class RunWorker:
    """Runs one prompt on a daemon thread and hands its events, then RUN_FINISHED, to ``put``
    (a queue's ``put``).

    An exception that escapes the engine (``EngineBusy``, or anything unexpected) becomes an
    ``error`` event, so the queue always ends with one terminal event and RUN_FINISHED.
    """

    def __init__(self, engine: AgentEngine, prompt: str, put: Callable[[WorkerItem], None]) -> None:
        self._engine = engine
        self._prompt = prompt
        self._put = put
        self._thread = threading.Thread(target=self._run, name="harness9-run", daemon=True)

    def start(self) -> RunWorker:
        self._thread.start()
        return self

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def cancel(self) -> None:
        """Ask the run to stop at its next opportunity (R-ENG-15)."""
        self._engine.cancel()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread; True when it has ended."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        try:
            terminal = False
            for event in self._engine.run_stream(self._prompt):
                terminal = terminal or event.is_terminal
                self._put(event)
            if not terminal:  # pragma: no cover - every run ends with done or error (R-EVT-9)
                self._put(_error(INTERNAL_ERROR, "the run ended without a terminal event"))
        except EngineError as exc:
            self._put(_error(exc.code, exc.message))
        except Exception as exc:  # never a traceback on the user's screen (R-TUI-10)
            text = one_line(str(exc))
            self._put(_error(INTERNAL_ERROR, f"{type(exc).__name__}: {text}" if text else type(exc).__name__))
        finally:
            self._put(RUN_FINISHED)


def _error(code: str, message: str) -> Event:
    return Event(EventType.ERROR, ErrorData(code, message))
