"""Since when a run waits for the model, from the events it hands out (harness9_ref/engine/_worker.py;
SPEC R-TUI-27, R-CLI-23).

``ModelWait`` is fed events by hand on a settable clock; a ``RunWorker`` is run to its end on a
real engine with a scripted provider, and on one whose reply is held back until the test lets
it go, to see the wait as the UI's thread sees it.
"""

from __future__ import annotations

import queue
from pathlib import Path

from harness9_ref.engine import (
    RUN_FINISHED,
    AgentEngine,
    DoneData,
    ErrorData,
    Event,
    EventType,
    ModelWait,
    RetryData,
    RunWorker,
    TextDeltaData,
    TokenUpdateData,
    ToolCallData,
    ToolResultData,
    WorkerItem,
)
from harness9_ref.schema import Message
from harness9_ref.testing import Reply, ScriptedProvider
from harness9_ref.tools import Registry
from tests.fakes import Clock, HeldBack, assistant

TOKENS = Event(EventType.TOKEN_UPDATE, TokenUpdateData(100, 1000))
DELTA = Event(EventType.TEXT_DELTA, TextDeltaData("Hel"))
CALL = Event(EventType.TOOL_CALL, ToolCallData("c1", "bash", "{}"))
RESULT = Event(EventType.TOOL_RESULT, ToolResultData("c1", "bash", "ok"))
RETRY = Event(EventType.RETRY, RetryData(2, 3, 1.5, "overloaded", "busy"))
DONE = Event(EventType.DONE, DoneData(Message("assistant", "hi"), 1))
ERROR = Event(EventType.ERROR, ErrorData("cancelled", "cancelled"))


def test_the_wait_counts_from_the_start_and_from_each_event_but_a_tool_call() -> None:
    clock = Clock(100)
    wait = ModelWait(clock)
    assert wait.seconds() is None  # no run yet
    wait.start()  # a summary or the first request: the run waits until its first event
    clock.now += 2.9
    assert wait.seconds() == 2  # whole seconds
    wait.saw(TOKENS)  # the request goes out: the wait for its first piece starts now
    clock.now += 7.5
    assert wait.seconds() == 7 and wait.state() == (102.9, 7)
    wait.saw(DELTA)  # a piece arrived: a pause before the next one counts anew
    clock.now += 1
    assert wait.seconds() == 1
    wait.saw(CALL)  # the tool's time (an approval, a command) is no wait for the model
    clock.now += 60
    assert wait.seconds() is None and wait.state() is None
    wait.saw(RESULT)  # the next request, perhaps after a summary
    clock.now += 3
    assert wait.seconds() == 3
    wait.saw(RETRY)  # a retry's delay and the next attempt
    assert wait.seconds() == 0


def test_after_the_terminal_event_nothing_waits() -> None:
    for terminal in (DONE, ERROR):
        wait = ModelWait(Clock(0))
        wait.start()
        wait.saw(terminal)
        assert wait.seconds() is None


def test_a_worker_keeps_the_wait_as_the_ui_thread_reads_it(tmp_path: Path) -> None:
    """R-TUI-27b: while the provider holds its reply back the wait grows; when the run is over there is none."""
    clock = Clock(0)
    provider = HeldBack()
    items: queue.Queue[WorkerItem] = queue.Queue()
    worker = RunWorker(AgentEngine(provider, Registry(tmp_path)), "hello", items.put, clock).start()
    assert provider.asked.wait(5)
    first = items.get(timeout=5)
    assert isinstance(first, Event) and first.type == EventType.TOKEN_UPDATE  # the request is out
    clock.now += 12
    assert worker.wait.seconds() == 12
    provider.release.set()
    while items.get(timeout=5) is not RUN_FINISHED:
        pass
    assert worker.join(5)
    assert worker.wait.seconds() is None


def test_a_finished_run_leaves_no_wait_behind(tmp_path: Path) -> None:
    items: queue.Queue[WorkerItem] = queue.Queue()
    engine = AgentEngine(ScriptedProvider([Reply(assistant("done"))]), Registry(tmp_path))
    worker = RunWorker(engine, "hello", items.put).start()
    assert worker.join(5)
    assert worker.wait.seconds() is None
