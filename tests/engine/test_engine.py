"""The run loop (harness9_ref/engine/_engine.py; SPEC R-ENG-1 … R-ENG-17, R-EVT-9).

The example of SPEC section 7.1 is read from SPEC.md itself and compared line by line with the
JSON of the events. Providers and registries are the scripted ones of ``harness9_ref.testing``;
sessions are real (``MemorySession``, and ``SQLiteSession`` on a file where it matters).
"""

from __future__ import annotations

import gc
import json
import logging
import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from harness9_ref import Harness9Error
from harness9_ref.engine import (
    DEFAULT_SYSTEM_PROMPT,
    AgentEngine,
    EngineBusy,
    EngineError,
    Event,
    EventType,
    LiteralContext,
    RetryPolicy,
    SaveAsItGoes,
)
from harness9_ref.memory.storage import Manager, MemorySession, SessionNotFound
from harness9_ref.provider import RateLimitError
from harness9_ref.schema import CHUNK_DONE, CHUNK_ERROR, CHUNK_TEXT, Message, StreamChunk, ToolCall, ToolDefinition, Usage
from harness9_ref.testing import Failure, Reply, ScriptedProvider, ScriptedRegistry
from tests.fakes import assistant, call, result, system, user
from tests.spec_text import spec_section

SYSTEM = "You are harness9."
BASH_LS = ToolCall("c1", "bash", '{"command":"ls"}')
TOOL = ToolDefinition("bash", "Run a command.", {"type": "object"})


def dumps(event: Event) -> str:
    return json.dumps(event.to_dict(), separators=(",", ":"), ensure_ascii=False)


def spec_example_lines() -> list[str]:
    section = spec_section("Engine run loop")
    block = re.search(r"one JSON object per\nline:\n\n```text\n(.*?)\n```", section, re.S)
    assert block is not None, "the example of SPEC section 7.1 was not found"
    return block.group(1).split("\n")


def engine(
    provider: ScriptedProvider,
    registry: ScriptedRegistry | None = None,
    **options: object,
) -> AgentEngine:
    options.setdefault("prompt_builder", lambda: SYSTEM)
    return AgentEngine(provider, registry or ScriptedRegistry(), **options)  # type: ignore[arg-type]


def types(events: Sequence[Event]) -> list[str]:
    return [e.type.value for e in events]


def tool_step(*ids: str) -> Reply:
    return Reply(assistant("", *(call(i) for i in ids)))


def final(text: str = "Done.") -> Reply:
    return Reply(assistant(text))


class CountingCompactor:
    """Returns a view of a chosen estimate: the system message then one message of ``tokens * 4`` bytes."""

    def __init__(self, tokens: int) -> None:
        self.tokens = tokens
        self.inputs: list[list[Message]] = []

    def compact(self, msgs: Sequence[Message]) -> list[Message]:
        self.inputs.append(list(msgs))
        return [msgs[0].__class__("system", ""), user("x" * (4 * self.tokens))]


class GatedProvider:
    """Streams ``first`` as a text chunk, then waits for ``gate`` before the done chunk."""

    def __init__(self, first: str = "Thinking") -> None:
        self.first = first
        self.gate = threading.Event()
        self.streaming = threading.Event()
        self.closed = threading.Event()
        self.finished = False

    def generate(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> tuple[Message, Usage | None]:
        raise NotImplementedError

    def generate_stream(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> Iterator[StreamChunk]:
        try:
            yield StreamChunk(CHUNK_TEXT, delta=self.first)
            self.streaming.set()
            assert self.gate.wait(10), "the test never opened the gate"
            yield StreamChunk(CHUNK_TEXT, delta=" more")
            self.finished = True
            yield StreamChunk(CHUNK_DONE, message=assistant(self.first + " more"))
        finally:
            self.closed.set()


class FailingSession(MemorySession):
    def add_messages(self, msgs: Sequence[Message]) -> None:
        raise OSError("disk full")


# R-ENG-1, R-ENG-5, R-ENG-7, R-EVT-9: the example of SPEC section 7.1


def run_spec_example(session: object) -> list[str]:
    provider = ScriptedProvider(
        [Reply(assistant("", BASH_LS), Usage(812, 20)), Reply(assistant("Two files."), Usage(845, 3))]
    )
    registry = ScriptedRegistry([], {"bash": "a.go\nb.go"})
    eng = engine(provider, registry, session=session, context=LiteralContext(128000))
    return [dumps(e) for e in eng.run_stream("List files")]


def test_the_spec_example_gives_exactly_its_events_and_saves_four_messages() -> None:
    session = MemorySession()
    assert run_spec_example(session) == spec_example_lines()
    assert session.get_messages() == [
        user("List files"),
        assistant("", BASH_LS),
        result("c1", "a.go\nb.go"),
        assistant("Two files."),
    ]


def test_the_spec_example_saves_the_same_messages_to_an_sqlite_session(tmp_path: Path) -> None:
    with Manager(tmp_path / "sessions.db") as manager:
        session = manager.new_session()
        assert run_spec_example(session) == spec_example_lines()
        again = manager.open_session(session.session_id).get_messages()
    assert [m.content for m in again] == ["List files", "", "a.go\nb.go", "Two files."]


def test_run_returns_the_final_message() -> None:
    eng = engine(ScriptedProvider([tool_step("a"), final("All good.")]), ScriptedRegistry([], {"bash": "ok"}))
    assert eng.run("go") == assistant("All good.")


# R-ENG-3, R-ENG-4: loading, the system prompt


def test_without_a_session_the_history_is_system_and_prompt_and_nothing_is_saved() -> None:
    provider = ScriptedProvider([final()])
    events = list(engine(provider).run_stream("hello"))
    assert types(events) == ["token_update", "text_delta", "done"]
    assert provider.requests[0].messages == (system(SYSTEM), user("hello"))


def test_stored_messages_are_loaded_unchanged_between_system_and_prompt() -> None:
    stored = [user("earlier"), assistant("", call("k", arguments="{not json")), result("k", "out"), assistant("ok")]
    session = MemorySession()
    session.add_messages(stored)
    provider = ScriptedProvider([final()])
    engine(provider, session=session).run("now")
    assert provider.requests[0].messages == (system(SYSTEM), *stored, user("now"))
    assert session.get_messages() == [*stored, user("now"), assistant("Done.")]


def test_the_system_prompt_is_never_stored_and_is_built_at_each_run() -> None:
    prompts = iter(["first prompt", "second prompt"])
    session = MemorySession()
    provider = ScriptedProvider([final(), final()])
    eng = engine(provider, session=session, prompt_builder=lambda: next(prompts))
    eng.run("a")
    eng.run("b")
    assert [r.messages[0] for r in provider.requests] == [system("first prompt"), system("second prompt")]
    assert all(m.role != "system" for m in session.get_messages())


def test_without_a_prompt_builder_the_default_prompt_is_message_zero() -> None:
    provider = ScriptedProvider([final()])
    AgentEngine(provider, ScriptedRegistry()).run("hi")
    assert provider.requests[0].messages[0] == system(DEFAULT_SYSTEM_PROMPT)
    assert "read_file" in DEFAULT_SYSTEM_PROMPT and "bash" in DEFAULT_SYSTEM_PROMPT


def test_a_session_error_while_loading_ends_the_run_without_a_provider_call_or_a_save() -> None:
    class GoneSession(MemorySession):
        saved: ClassVar[list[Message]] = []

        def get_messages(self, limit: int = 0) -> list[Message]:
            raise SessionNotFound(f"session {self.session_id} does not exist")

        def add_messages(self, msgs: Sequence[Message]) -> None:
            self.saved.extend(msgs)

    session = GoneSession()
    provider = ScriptedProvider([final()])
    events = list(engine(provider, session=session).run_stream("hi"))
    data = {"code": "session_not_found", "message": f"session {session.session_id} does not exist"}
    assert [e.to_dict() for e in events] == [{"type": "error", "data": data}]
    assert provider.requests == [] and session.saved == []


# R-ENG-5, R-ENG-6: compaction


def history_of_100_tokens() -> tuple[str, str]:
    """A system prompt and a user prompt whose estimate together is exactly 100 tokens."""
    return "s" * 200, "u" * 200


@pytest.mark.parametrize(("after", "fires"), [(94, True), (95, False), (0, True), (100, False), (120, False)])
def test_the_compaction_event_fires_only_when_more_than_five_percent_was_saved(after: int, fires: bool) -> None:
    system_text, prompt = history_of_100_tokens()
    registry = ScriptedRegistry([TOOL])
    tool_tokens = len("bash" + "Run a command." + '{"type":"object"}') // 4
    compactor = CountingCompactor(after)
    provider = ScriptedProvider([final()])
    eng = engine(provider, registry, compactor=compactor, prompt_builder=lambda: system_text, context=LiteralContext(1000))
    events = list(eng.run_stream(prompt))
    expected = ["token_update", "text_delta", "done"]
    if fires:
        expected.insert(0, "compaction")
        assert events[0].to_dict()["data"] == {
            "tokens_before": 100 + tool_tokens,
            "tokens_after": after + tool_tokens,
            "msgs_before": 2,
            "msgs_after": 2,
        }
    assert types(events) == expected
    token_update = events[1 if fires else 0]
    assert token_update.to_dict()["data"] == {"estimated_tokens": after + tool_tokens, "context_window": 1000}
    assert provider.requests[0].messages == (system(""), user("x" * (4 * after)))


def test_without_a_compactor_no_compaction_event_is_emitted() -> None:
    session = MemorySession()
    session.add_messages([user("x" * 4000)] * 5)
    events = list(engine(ScriptedProvider([final()]), session=session).run_stream("hi"))
    assert EventType.COMPACTION not in [e.type for e in events]


def test_the_view_is_never_saved_and_each_turn_compacts_the_full_history() -> None:
    session = MemorySession()
    compactor = CountingCompactor(1)
    provider = ScriptedProvider([tool_step("a"), tool_step("b"), final()])
    eng = engine(provider, ScriptedRegistry([], {"bash": "out"}), session=session, compactor=compactor)
    eng.run("go")
    assert [len(msgs) for msgs in compactor.inputs] == [2, 4, 6]  # the full history grows
    assert all(len(r.messages) == 2 for r in provider.requests)  # the provider only sees views
    assert session.get_messages() == [
        user("go"), assistant("", call("a")), result("a", "out"), assistant("", call("b")), result("b", "out"),
        assistant("Done."),
    ]  # fmt: skip


# R-ENG-7: the second token update


@pytest.mark.parametrize(
    ("usage", "second"), [(None, None), (Usage(0, 50), None), (Usage(1234, 0), 1234), (Usage(7, 9000), 7)]
)
def test_the_second_token_update_carries_input_tokens_only_when_they_are_positive(
    usage: Usage | None, second: int | None
) -> None:
    events = list(engine(ScriptedProvider([Reply(assistant("hi"), usage)]), context=LiteralContext(0)).run_stream("x"))
    updates = [e.to_dict()["data"] for e in events if e.type is EventType.TOKEN_UPDATE]
    assert updates[0] == {"estimated_tokens": len(SYSTEM + "x") // 4, "context_window": 0}
    assert updates[1:] == ([] if second is None else [{"estimated_tokens": second, "context_window": 0}])


# R-ENG-9: tool calls


def test_several_calls_run_in_call_order_and_their_results_follow_in_that_order() -> None:
    registry = ScriptedRegistry([TOOL], ["one", "two", "three"])
    provider = ScriptedProvider([tool_step("a", "b", "c"), final()])
    events = list(engine(provider, registry).run_stream("go"))
    assert types(events) == ["token_update", *["tool_call", "tool_result"] * 3, "token_update", "text_delta", "done"]
    results = [e.to_dict()["data"] for e in events if e.type is EventType.TOOL_RESULT]
    assert results == [
        {"tool_call_id": "a", "name": "bash", "content": "one"},
        {"tool_call_id": "b", "name": "bash", "content": "two"},
        {"tool_call_id": "c", "name": "bash", "content": "three"},
    ]
    assert registry.calls == [("bash", '{"command":"ls"}')] * 3
    assert provider.requests[1].messages[2:] == (
        assistant("", call("a"), call("b"), call("c")), result("a", "one"), result("b", "two"), result("c", "three")
    )
    assert provider.requests[1].tools == (TOOL,)


def test_a_registry_that_raises_gives_an_error_observation_and_the_run_goes_on() -> None:
    registry = ScriptedRegistry([], {"bash": RuntimeError("no\nshell")})
    provider = ScriptedProvider([tool_step("a"), final()])
    events = list(engine(provider, registry).run_stream("go"))
    assert events[2].to_dict()["data"]["content"] == "error: no shell"
    assert events[-1].type is EventType.DONE


# R-ENG-11, R-ENG-12, R-ENG-17: failures and what they save


def test_a_provider_error_saves_the_prompt_and_completed_steps_but_not_the_partial_reply() -> None:
    session = MemorySession()
    provider = ScriptedProvider(
        [tool_step("a"), Failure("overloaded", "anthropic: HTTP 529 overloaded_error: Overloaded", ("Half a rep",))]
    )
    events = list(engine(provider, ScriptedRegistry([], {"bash": "out"}), session=session).run_stream("go"))
    assert types(events)[-2:] == ["text_delta", "error"]
    assert events[-1].to_dict()["data"] == {
        "code": "overloaded",
        "message": "anthropic: HTTP 529 overloaded_error: Overloaded",
    }
    assert session.get_messages() == [user("go"), assistant("", call("a")), result("a", "out")]


def test_an_error_chunk_without_a_code_is_a_provider_error_and_its_message_is_one_line() -> None:
    class Raw(ScriptedProvider):
        def generate_stream(
            self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
        ) -> Iterator[StreamChunk]:
            yield StreamChunk("error", error="something\nbroke")

    events = list(engine(Raw([])).run_stream("go"))
    assert events[-1].to_dict()["data"] == {"code": "provider_error", "message": "something broke"}


def test_an_exhausted_script_fails_the_run_with_its_code() -> None:
    events = list(engine(ScriptedProvider([])).run_stream("go"))
    data = events[-1].to_dict()["data"]
    assert data["code"] == "script_exhausted" and data["message"].startswith("scripted: the script is exhausted")


def test_a_provider_exception_is_an_internal_error_on_one_line_and_completed_steps_are_saved() -> None:
    session = MemorySession()
    provider = ScriptedProvider([tool_step("a"), ValueError("bad\nthing")])
    eng = engine(provider, ScriptedRegistry([], {"bash": "out"}), session=session)
    with pytest.raises(EngineError) as info:
        eng.run("go")
    assert (info.value.code, info.value.message) == ("internal_error", "ValueError: bad thing")
    assert session.get_messages() == [user("go"), assistant("", call("a")), result("a", "out")]


@pytest.mark.parametrize(
    ("chunks", "message"),
    [
        ([], "the provider's stream ended without a done or error chunk"),
        ([StreamChunk(CHUNK_DONE)], "the provider's done chunk carries no message"),
    ],
)
def test_a_stream_without_a_final_message_is_an_internal_error(chunks: list[StreamChunk], message: str) -> None:
    class Broken(ScriptedProvider):
        def generate_stream(
            self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
        ) -> Iterator[StreamChunk]:
            yield from chunks

    events = list(engine(Broken([])).run_stream("go"))
    assert events[-1].to_dict()["data"] == {"code": "internal_error", "message": message}


def test_empty_text_chunks_are_not_forwarded() -> None:
    provider = ScriptedProvider([Reply(assistant("ab"), chunks=("a", "", "b"))])
    events = list(engine(provider).run_stream("go"))
    assert [e.to_dict()["data"] for e in events if e.type is EventType.TEXT_DELTA] == [{"delta": "a"}, {"delta": "b"}]


# R-ENG-14: the turn limit


def test_the_turn_limit_runs_the_last_steps_tools_then_fails_with_max_turns() -> None:
    session = MemorySession()
    registry = ScriptedRegistry([], {"bash": "out"})
    provider = ScriptedProvider([tool_step("a"), tool_step("b"), final()])
    events = list(engine(provider, registry, session=session, max_turns=2).run_stream("go"))
    assert types(events)[-3:] == ["tool_call", "tool_result", "error"]
    assert events[-1].to_dict()["data"] == {"code": "max_turns", "message": "turn limit reached (2 turns)"}
    assert len(provider.requests) == 2 and len(registry.calls) == 2
    assert session.get_messages() == [
        user("go"), assistant("", call("a")), result("a", "out"), assistant("", call("b")), result("b", "out")
    ]  # fmt: skip


def test_a_final_answer_on_the_last_allowed_turn_succeeds() -> None:
    provider = ScriptedProvider([tool_step("a"), final()])
    events = list(engine(provider, ScriptedRegistry([], {"bash": "out"}), max_turns=2).run_stream("go"))
    assert events[-1].to_dict()["data"]["turns"] == 2


@pytest.mark.parametrize("max_turns", [0, -1])
def test_max_turns_below_one_is_refused(max_turns: int) -> None:
    with pytest.raises(ValueError, match="max_turns"):
        engine(ScriptedProvider([]), max_turns=max_turns)


# R-ENG-15: cancellation


def test_cancel_from_another_thread_abandons_the_stream_and_saves_completed_steps() -> None:
    session = MemorySession()
    provider = GatedProvider()
    eng = AgentEngine(provider, ScriptedRegistry(), session=session)
    events: list[Event] = []
    worker = threading.Thread(target=lambda: events.extend(eng.run_stream("go")))
    worker.start()
    assert provider.streaming.wait(10)
    assert eng.cancel() is True
    provider.gate.set()
    worker.join(10)
    assert types(events) == ["token_update", "text_delta", "error"]
    assert events[-1].to_dict()["data"] == {"code": "cancelled", "message": "cancelled"}
    assert provider.closed.is_set() and not provider.finished
    assert session.get_messages() == [user("go")]
    assert not eng.running and eng.cancel() is False


class GatedFailingProvider:
    """Waits for ``gate`` while the call is in progress, then sends an error chunk."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.waiting = threading.Event()

    def generate(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> tuple[Message, Usage | None]:
        raise NotImplementedError

    def generate_stream(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> Iterator[StreamChunk]:
        self.waiting.set()
        assert self.gate.wait(10), "the test never opened the gate"
        yield StreamChunk(CHUNK_ERROR, error="server_error: the upstream went away")


def test_a_cancel_pending_when_an_error_chunk_arrives_wins_over_the_providers_error() -> None:
    """R-ENG-15b: the check on each chunk comes before the chunk is looked at, so a cancel made
    while the provider was blocked, on another thread, ends the run as cancelled, not with the
    provider's error."""
    session = MemorySession()
    provider = GatedFailingProvider()
    eng = AgentEngine(provider, ScriptedRegistry(), session=session)
    events: list[Event] = []
    worker = threading.Thread(target=lambda: events.extend(eng.run_stream("go")))
    worker.start()
    assert provider.waiting.wait(10)
    assert eng.cancel() is True
    provider.gate.set()
    worker.join(10)
    assert types(events) == ["token_update", "error"]
    assert events[-1].to_dict()["data"] == {"code": "cancelled", "message": "cancelled"}
    assert session.get_messages() == [user("go")]


def test_cancel_before_a_tool_call_leaves_the_step_unsaved_and_the_call_unstarted() -> None:
    session = MemorySession()
    registry = ScriptedRegistry([], {"bash": "out"})
    eng = engine(ScriptedProvider([tool_step("a"), tool_step("b", "c"), final()]), registry, session=session)
    seen = []
    for event in eng.run_stream("go"):
        seen.append(event)
        if event.type is EventType.TOOL_RESULT and event.to_dict()["data"]["tool_call_id"] == "b":
            eng.cancel()
    assert types(seen)[-2:] == ["tool_result", "error"]
    assert [name for name, _ in registry.calls] == ["bash", "bash"]  # "c" never ran
    assert session.get_messages() == [user("go"), assistant("", call("a")), result("a", "out")]


def test_closing_the_iterator_cancels_the_run_saves_and_frees_the_engine() -> None:
    session = MemorySession()
    provider = GatedProvider()
    eng = AgentEngine(provider, ScriptedRegistry(), session=session)
    events = eng.run_stream("go")
    assert next(events).type is EventType.TOKEN_UPDATE
    assert next(events).type is EventType.TEXT_DELTA
    events.close()
    assert provider.closed.is_set() and not provider.finished
    assert session.get_messages() == [user("go")]
    assert not eng.running
    assert list(events) == []


def test_closing_or_dropping_an_unstarted_iterator_frees_the_engine_and_saves_nothing() -> None:
    session = MemorySession()
    eng = engine(ScriptedProvider([final(), final()]), session=session)
    eng.run_stream("never").close()
    assert not eng.running
    eng.run_stream("dropped")
    gc.collect()
    assert not eng.running
    assert session.get_messages() == []
    assert eng.run("now") == assistant("Done.")


def test_closing_after_the_terminal_event_saves_nothing_more() -> None:
    session = MemorySession()
    events = engine(ScriptedProvider([final()]), session=session).run_stream("go")
    for event in events:
        if event.is_terminal:
            events.close()
    assert session.get_messages() == [user("go"), assistant("Done.")]


# R-ENG-16, R-ENG-2: one run at a time, snapshots


def test_a_second_run_while_one_is_running_raises_engine_busy_at_once_and_the_first_goes_on() -> None:
    eng = engine(ScriptedProvider([final("first")]))
    first = eng.run_stream("one")
    next(first)
    with pytest.raises(EngineBusy) as info:
        eng.run_stream("two")
    assert info.value.code == "engine_busy"
    with pytest.raises(EngineBusy):
        eng.run("two")
    assert types(list(first)) == ["text_delta", "done"]
    assert not eng.running


def test_set_session_during_a_run_applies_from_the_next_run() -> None:
    old, new = MemorySession(), MemorySession()
    provider = ScriptedProvider([tool_step("a"), final(), final()])
    eng = engine(provider, ScriptedRegistry([], {"bash": "out"}), session=old)
    events = eng.run_stream("first")
    next(events)
    eng.set_session(new)
    assert eng.session is new
    list(events)
    assert len(old.get_messages()) == 4 and new.get_messages() == []
    eng.run("second")
    assert new.get_messages() == [user("second"), assistant("Done.")]


# R-ENG-13: a failed save only logs


def test_a_failed_save_logs_a_warning_and_keeps_the_outcome(caplog: pytest.LogCaptureFixture) -> None:
    session = FailingSession()
    with caplog.at_level(logging.WARNING, logger="harness9_ref.engine"):
        ok = list(engine(ScriptedProvider([final()]), session=session).run_stream("go"))
        failed = list(engine(ScriptedProvider([Failure("timeout", "slow")]), session=session).run_stream("go"))
    assert ok[-1].type is EventType.DONE
    assert failed[-1].to_dict()["data"] == {"code": "timeout", "message": "slow"}
    warnings = [r for r in caplog.records if r.name == "harness9_ref.engine" and r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert session.session_id in warnings[0].getMessage() and "disk full" in warnings[0].getMessage()


def test_a_durable_run_logs_each_failed_save_and_ends_with_save_failed(caplog: pytest.LogCaptureFixture) -> None:
    """R-ENG-25, R-EVT-11: each failed save is a warning; the run's end says what was lost."""
    session = FailingSession()
    with caplog.at_level(logging.WARNING, logger="harness9_ref.engine"):
        events = list(engine(ScriptedProvider([final()]), session=session, saving=SaveAsItGoes()).run_stream("go"))
    assert [e.type for e in events][-2:] == [EventType.SAVE_FAILED, EventType.DONE]
    assert events[-2].to_dict()["data"] == {"saved": 0, "unsaved": 2, "message": "OSError: disk full"}
    warnings = [r.getMessage() for r in caplog.records if r.name == "harness9_ref.engine" and r.levelno == logging.WARNING]
    assert warnings == [
        f"could not save {n} messages to session {session.session_id}: OSError: disk full" for n in (1, 2)
    ]


# R-EVT-1 … R-EVT-9: the events themselves


def test_every_event_is_json_with_its_members_in_spec_order() -> None:
    order = {
        "token_update": ["estimated_tokens", "context_window"],
        "compaction": ["tokens_before", "tokens_after", "msgs_before", "msgs_after"],
        "text_delta": ["delta"],
        "tool_call": ["id", "name", "arguments"],
        "tool_result": ["tool_call_id", "name", "content"],
        "done": ["message", "turns"],
        "error": ["code", "message"],
    }
    provider = ScriptedProvider([Reply(assistant("", call("a")), Usage(10, 1)), final("✓ 完成")])
    eng = engine(provider, ScriptedRegistry([], {"bash": "out"}), compactor=CountingCompactor(0))
    events = list(eng.run_stream("go " * 100))
    events += list(engine(ScriptedProvider([])).run_stream("go"))
    assert set(types(events)) == set(order)
    for event in events:
        as_json = json.loads(json.dumps(event.to_dict()))
        assert list(as_json) == ["type", "data"]
        assert list(as_json["data"]) == order[as_json["type"]]


def test_an_event_refuses_data_of_another_type() -> None:
    from harness9_ref.engine import DoneData, ErrorData

    with pytest.raises(TypeError, match="DoneData"):
        Event(EventType.DONE, ErrorData("x", "y"))
    assert Event(EventType.DONE, DoneData(assistant("a"), 1)).is_terminal


def test_a_prompt_that_is_not_unicode_is_refused_before_the_run_starts() -> None:
    eng = engine(ScriptedProvider([final()]))
    with pytest.raises(ValueError):
        eng.run_stream("\ud800")
    assert not eng.running


def test_a_keyboard_interrupt_in_a_tool_saves_completed_steps_frees_the_engine_and_propagates() -> None:
    session = MemorySession()
    registry = ScriptedRegistry([], ["out", KeyboardInterrupt()])
    eng = engine(ScriptedProvider([tool_step("a"), tool_step("b"), final()]), registry, session=session)
    with pytest.raises(KeyboardInterrupt):
        eng.run("go")
    assert session.get_messages() == [user("go"), assistant("", call("a")), result("a", "out")]
    assert not eng.running


def test_a_compactor_that_raises_is_an_internal_error_and_the_prompt_is_saved() -> None:
    class Broken:
        def compact(self, msgs: Sequence[Message]) -> list[Message]:
            raise LookupError()

    session = MemorySession()
    events = list(engine(ScriptedProvider([final()]), session=session, compactor=Broken()).run_stream("go"))
    assert events[-1].to_dict()["data"] == {"code": "internal_error", "message": "LookupError"}
    assert session.get_messages() == [user("go")]


def test_a_cancel_while_a_tool_runs_lets_it_finish_and_stops_before_the_next_provider_call() -> None:
    session = MemorySession()
    provider = ScriptedProvider([tool_step("a"), final()])

    class CancellingRegistry(ScriptedRegistry):
        def execute(self, name: str, arguments: str) -> str:
            eng.cancel()
            return "finished anyway"

    eng = engine(provider, CancellingRegistry(), session=session)
    events = list(eng.run_stream("go"))
    assert types(events) == ["token_update", "tool_call", "tool_result", "error"]
    assert len(provider.requests) == 1
    assert session.get_messages() == [user("go"), assistant("", call("a")), result("a", "finished anyway")]


def test_a_real_summarization_compactor_compacts_each_turn_and_the_session_keeps_everything() -> None:
    from harness9_ref.memory.context import SUMMARY_MARKER, SummarizationCompactor

    session = MemorySession()
    session.add_messages([user("old " * 100), assistant("old answer " * 40)] * 5)
    summarizer = ScriptedProvider([assistant("**Goal:** a"), assistant("**Goal:** b")])
    compactor = SummarizationCompactor(summarizer, max_tokens=300, min_tail_messages=2)
    provider = ScriptedProvider([tool_step("a"), final()])
    eng = engine(provider, ScriptedRegistry([], {"bash": "out"}), session=session, compactor=compactor)
    events = list(eng.run_stream("new task"))
    assert types(events).count("compaction") == 2
    first = events[0].to_dict()["data"]
    assert first["msgs_before"] == 12 and first["msgs_after"] == 4
    assert first["tokens_after"] < first["tokens_before"]
    assert provider.requests[0].messages[1] == user(f"{SUMMARY_MARKER}\n**Goal:** a")
    assert len(summarizer.requests) == 2 and summarizer.requests[0].tools == ()
    assert len(session.get_messages()) == 10 + 4


def test_a_real_token_budget_compactor_sends_the_newest_messages() -> None:
    from harness9_ref.memory.context import TokenBudgetCompactor

    session = MemorySession()
    session.add_messages([user(f"message {i} " + "x" * 400) for i in range(20)])
    provider = ScriptedProvider([final()])
    events = list(engine(provider, session=session, compactor=TokenBudgetCompactor(1000, 2)).run_stream("latest"))
    assert events[0].type is EventType.COMPACTION
    sent = provider.requests[0].messages
    assert sent[0] == system(SYSTEM) and sent[-1] == user("latest")
    assert len(session.get_messages()) == 22


class _TypedFailureProvider:
    """A provider whose error chunk carries its typed error and a text that says otherwise."""

    def generate(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> tuple[Message, Usage | None]:
        raise AssertionError("not called")

    def generate_stream(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> Iterator[StreamChunk]:
        failure = RateLimitError("slow down: later", provider="x")
        yield StreamChunk(CHUNK_ERROR, error="garbled", failure=failure)


def test_an_error_chunk_with_a_typed_error_is_read_from_the_error_not_its_text() -> None:
    """R-ENG-17a: the code and message come from the typed error the provider attached."""
    with pytest.raises(EngineError) as caught:
        AgentEngine(_TypedFailureProvider(), ScriptedRegistry(), prompt_builder=lambda: SYSTEM).run("hi")
    assert (caught.value.code, caught.value.message) == ("rate_limit", "slow down: later")


class _OtherTypedFailureProvider:
    """A provider of another package whose error chunk carries a typed error that is no provider error."""

    def generate(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> tuple[Message, Usage | None]:
        raise AssertionError("not called")

    def generate_stream(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> Iterator[StreamChunk]:
        yield StreamChunk(CHUNK_ERROR, error="garbled", failure=_QuotaSpent("the month's tokens are spent"))


class _QuotaSpent(Harness9Error):
    code = "quota_spent"


def test_an_error_chunk_with_another_typed_error_gives_its_code_and_message() -> None:
    """R-ENG-17a: an engine error of the typed error's own code and text, not one read from the chunk's text."""
    with pytest.raises(EngineError) as caught:
        AgentEngine(_OtherTypedFailureProvider(), ScriptedRegistry(), prompt_builder=lambda: SYSTEM).run("hi")
    assert (caught.value.code, caught.value.message) == ("quota_spent", "the month's tokens are spent")


class _RaisingProvider:
    """A provider that raises its typed error instead of ending its stream with an error chunk."""

    def __init__(self, *, streamed: bool) -> None:
        self.streamed = streamed  # raise while streaming, after a text chunk, or when called
        self.calls = 0

    def generate(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> tuple[Message, Usage | None]:
        raise AssertionError("not called")

    def generate_stream(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> Iterator[StreamChunk]:
        self.calls += 1
        if not self.streamed:
            raise RateLimitError("slow down", provider="x")
        return self._chunks()

    def _chunks(self) -> Iterator[StreamChunk]:
        yield StreamChunk(CHUNK_TEXT, delta="partly")
        raise RateLimitError("slow down", provider="x")


@pytest.mark.parametrize("streamed", [False, True])
def test_a_typed_error_the_provider_raises_is_an_internal_error_never_retried(streamed: bool) -> None:
    """R-ENG-17, R-ENG-19 rule 6: only an error chunk carries the provider's code; a raised error is internal."""
    provider = _RaisingProvider(streamed=streamed)
    retry = RetryPolicy(2, wait=lambda cancelled, seconds: None)
    with pytest.raises(EngineError) as caught:
        AgentEngine(provider, ScriptedRegistry(), prompt_builder=lambda: SYSTEM, retry=retry).run("hi")
    assert (caught.value.code, caught.value.message) == ("internal_error", "RateLimitError: slow down")
    assert provider.calls == 1
