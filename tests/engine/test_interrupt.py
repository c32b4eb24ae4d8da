"""cancel() interrupts the running tool and a wait for the model (harness9_ref/engine/_engine.py; SPEC R-INT-3,
R-ENG-12, R-ENG-15, R-PRV-3).

The engine runs the real ``harness9_ref.tools.Registry``, so the tool is a real ``bash``
process; the provider is scripted, except for the wait for a silent model: a real
``OpenAIProvider`` against a loopback server that never answers. ``cancel()`` comes from another
thread, as it does from the terminal UI or a signal handler.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from harness9_ref.engine import AgentEngine, Event, EventType
from harness9_ref.memory.storage import MemorySession
from harness9_ref.provider import OpenAIProvider
from harness9_ref.schema import ToolCall
from harness9_ref.testing import Reply, ScriptedProvider
from harness9_ref.tools import INTERRUPTED_NOTE, Registry
from tests.fakes import assistant, result, user
from tests.provider.helpers import Loopback, loopback
from tests.tools.processes import is_gone, pids, wait_for_files

SLEEP = ToolCall("c1", "bash", json.dumps({"command": "echo $$ > shell; echo started; sleep 30"}))


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    with Registry(tmp_path) as registry:
        yield registry


def run_and_cancel(eng: AgentEngine, prompt: str, workdir: Path) -> tuple[list[Event], float]:
    """Run ``prompt`` here and cancel it from another thread once the command wrote ``shell``.

    Returns the run's events and the seconds it took.
    """
    events: list[Event] = []

    def cancel() -> None:
        wait_for_files(workdir, "shell")
        eng.cancel()

    canceller = threading.Thread(target=cancel, daemon=True)
    canceller.start()
    started = time.monotonic()
    events.extend(eng.run_stream(prompt))
    took = time.monotonic() - started
    canceller.join(5)
    return events, took


def test_cancel_interrupts_a_running_command_saves_its_observation_and_fails_cancelled(
    registry: Registry, tmp_path: Path
) -> None:
    session = MemorySession()
    provider = ScriptedProvider([Reply(assistant("", SLEEP)), Reply(assistant("never asked"))])
    eng = AgentEngine(provider, registry, session=session)
    events, took = run_and_cancel(eng, "wait a bit", tmp_path)
    assert took < 3
    observation = "started\n" + INTERRUPTED_NOTE
    assert [e.type for e in events][-3:] == [EventType.TOOL_CALL, EventType.TOOL_RESULT, EventType.ERROR]
    assert events[-2].to_dict()["data"] == {"tool_call_id": "c1", "name": "bash", "content": observation}
    assert events[-1].to_dict()["data"] == {"code": "cancelled", "message": "cancelled"}
    assert session.get_messages() == [user("wait a bit"), assistant("", SLEEP), result("c1", observation)]
    assert provider.remaining == 1  # no further turn
    assert all(is_gone(pid) for pid in pids(tmp_path, "shell"))


def test_an_interrupted_step_on_the_last_turn_still_fails_cancelled_not_max_turns(
    registry: Registry, tmp_path: Path
) -> None:
    eng = AgentEngine(ScriptedProvider([Reply(assistant("", SLEEP))]), registry, max_turns=1)
    events, _ = run_and_cancel(eng, "go", tmp_path)
    assert events[-1].to_dict()["data"]["code"] == "cancelled"


def test_a_cancel_between_tool_calls_still_prevents_the_next_call(registry: Registry, tmp_path: Path) -> None:
    first = ToolCall("c1", "bash", json.dumps({"command": "echo one"}))
    second = ToolCall("c2", "bash", json.dumps({"command": "touch second-ran"}))
    session = MemorySession()
    provider = ScriptedProvider([Reply(assistant("", first)), Reply(assistant("", second))])
    eng = AgentEngine(provider, registry, session=session)
    seen: list[Event] = []
    for event in eng.run_stream("go"):
        seen.append(event)
        if event.type is EventType.TOOL_RESULT:
            eng.cancel()  # nothing is running now: interrupt() does nothing, the flag stops the next call
    assert seen[-1].to_dict()["data"]["code"] == "cancelled"
    assert not (tmp_path / "second-ran").exists()
    assert session.get_messages() == [user("go"), assistant("", first), result("c1", "one\n")]


def test_cancel_when_idle_interrupts_nothing(registry: Registry, tmp_path: Path) -> None:
    eng = AgentEngine(ScriptedProvider([]), registry)
    assert eng.cancel() is False
    assert registry.execute("bash", json.dumps({"command": "echo fine"})) == "fine\n"


def test_cancel_ends_a_wait_for_a_silent_model_at_once(registry: Registry) -> None:
    """R-PRV-3, R-ENG-15: cancel() interrupts the provider's stream, so a run waiting for a server
    that reads a long prompt (and sends nothing meanwhile) ends now, not at the next piece or the timeout."""

    def silent(handler: BaseHTTPRequestHandler, server: Loopback) -> None:
        server.release.wait(30)

    with loopback(silent) as server:
        eng = AgentEngine(OpenAIProvider("local-model", "", server.url, timeout=60), registry, session=MemorySession())

        def cancel() -> None:
            deadline = time.monotonic() + 5
            while not server.received and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.2)  # the engine is now blocked in the provider's read
            eng.cancel()

        canceller = threading.Thread(target=cancel, daemon=True)
        canceller.start()
        started = time.monotonic()
        events = list(eng.run_stream("explain the repository"))
        took = time.monotonic() - started
        canceller.join(5)
    assert events[-1].type == EventType.ERROR and events[-1].data.to_dict()["code"] == "cancelled"
    assert took < 3, f"the run took {took:.1f} s to end after the cancel"
