"""One run of the engine in a worker thread, its events handed over through a queue
(SPEC R-TUI-9, R-TUI-27, R-TUI-37, R-CLI-7, R-CLI-23; the engine and the UI run in separate threads, R-ENG-2).

The worker only iterates ``engine.run_stream`` and puts each event on the queue; whoever owns
the queue (the UI thread, or ``harness9-ref run``) draws them. Cancelling goes through
``engine.cancel()``, so the run ends with its own ``cancelled`` error event and saves what
R-ENG-12 allows. As it hands the events out, the worker keeps a ``ModelWait``: since when the
run has been waiting for the model, which the UI and run mode show (R-TUI-27, R-CLI-23). Asked
to, it closes a run with the figure of the next request (R-TUI-37), so the status bar and
``run --json`` end a run on the figure ``/context`` shows (R-TUI-35).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final

from ._engine import AgentEngine
from ._events import ContextReport, ErrorData, Event, EventType, TokenUpdateData
from ._run_errors import INTERNAL_ERROR, EngineError, one_line

__all__ = ["RUN_FINISHED", "ModelWait", "RunFinished", "RunWorker", "WorkerItem", "closing_data", "closing_update"]


class RunFinished:
    """Put on the queue after the last event of a run; the worker thread is ending."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "RUN_FINISHED"


RUN_FINISHED: Final = RunFinished()

WorkerItem = Event | RunFinished


class ModelWait:
    """Since when a run has been waiting for the model, from the events it handed out (R-TUI-27).

    A run waits for the model from its start and after each event other than ``tool_call``,
    until its next event: the wait for a reply's first piece, a pause between pieces, a
    summary before a compaction event, a retry's delay. A ``tool_call`` starts the tool's time
    (an approval, a command), which is no wait; after the terminal event nothing waits. The
    pieces of a tool call's arguments are no event, so such a reply reads as a wait until its
    ``tool_call``. Written by the worker thread, read by the UI's: one attribute, replaced whole.

    Args:
        clock: monotonic seconds.
    """

    __slots__ = ("_clock", "since")

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.since: float | None = None  # the clock when the wait began; None: no wait

    def start(self) -> None:
        """The run begins: it waits (a summary, or the first request) until its first event."""
        self.since = self._clock()

    def saw(self, event: Event) -> None:
        """``event`` was handed out: a new wait begins, unless a tool now runs or the run is over."""
        self.since = None if event.type == EventType.TOOL_CALL or event.is_terminal else self._clock()

    def seconds(self) -> int | None:
        """The whole seconds of the wait so far, or None when the run does not wait for the model."""
        state = self.state()
        return None if state is None else state[1]

    def state(self) -> tuple[float, int] | None:
        """When the wait began and its whole seconds so far, read at once; None when there is none."""
        since = self.since
        return None if since is None else (since, max(0, int(self._clock() - since)))


def closing_data(report: ContextReport) -> TokenUpdateData:
    """The closing token update of a report (R-TUI-37): its ``total`` and ``window``.

    The total, not the sum of the parts: each part is measured on its own (R-LONG-17b), so the
    parts need not add up to the figure of the whole request, which ``/context`` heads with.
    """
    return TokenUpdateData(report.total, report.window)


def closing_update(engine: AgentEngine) -> Event | None:
    """The closing token update of a run (R-TUI-37): ``closing_data`` of ``context_report()``,
    the figure of the next request as it stands; None when the report fails (a session error:
    the bar keeps the run's last figure).

    The run's own last token update is the figure of the request it sent, without the reply
    that came back; ``/context`` counts the reply (R-TUI-35). This update makes the two one figure.
    """
    try:
        report = engine.context_report()
    except EngineError:
        return None
    return Event(EventType.TOKEN_UPDATE, closing_data(report))


class RunWorker:
    """Runs one prompt on a daemon thread and hands its events, then RUN_FINISHED, to ``put``
    (a queue's ``put``). In long-session mode the terminal event is followed by the closing
    token update of R-TUI-37, before RUN_FINISHED, so no new run can start between them.

    An exception that escapes the engine (``EngineBusy``, or anything unexpected) becomes an
    ``error`` event, so the queue always ends with one terminal event and RUN_FINISHED.
    ``wait`` says since when the run has been waiting for the model (R-TUI-27).
    """

    def __init__(
        self,
        engine: AgentEngine,
        prompt: str,
        put: Callable[[WorkerItem], None],
        clock: Callable[[], float] = time.monotonic,
        *,
        closing: bool = False,
    ) -> None:
        self._engine = engine
        self._closing = closing  # long-session mode: close with the report's figure (R-TUI-37)
        self._prompt = prompt
        self._put = put
        self.wait = ModelWait(clock)
        self._thread = threading.Thread(target=self._run, name="harness9-run", daemon=True)

    def start(self) -> RunWorker:
        self.wait.start()
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
                self._hand_out(event)
            if not terminal:  # pragma: no cover - every run ends with done or error (R-EVT-9)
                self._hand_out(_error(INTERNAL_ERROR, "the run ended without a terminal event"))
        except EngineError as exc:
            self._hand_out(_error(exc.code, exc.message))
        except Exception as exc:  # never a traceback on the user's screen (R-TUI-10)
            text = one_line(str(exc))
            self._hand_out(_error(INTERNAL_ERROR, f"{type(exc).__name__}: {text}" if text else type(exc).__name__))
        finally:
            self.wait.since = None
            closing = closing_update(self._engine) if self._closing else None
            if closing is not None:
                self._put(closing)
            self._put(RUN_FINISHED)

    def _hand_out(self, event: Event) -> None:
        self.wait.saw(event)  # first: a reader never sees the event with the wait that came before it
        self._put(event)


def _error(code: str, message: str) -> Event:
    return Event(EventType.ERROR, ErrorData(code, message))
