"""Long-session mode of the engine (harness9_ref/engine/_long_session.py; SPEC R-LONG, R-CKP-5, R-FOLD, R-TRIM).

The conformance cases pin the exact events and requests; these tests check what a case cannot:
real SQLite sessions across engines, corrupt rows, failing saves, threads, and long sessions
against a provider that counts tokens the way real tokenizers do (more than bytes / 4) and
rejects every request above its window, as the real APIs do.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from fractions import Fraction
from pathlib import Path

import pytest

from harness9_ref.engine import (
    AgentEngine,
    EngineBusy,
    EngineError,
    EventType,
    LiteralContext,
    LongSession,
    SummarizingCompactor,
    TokenUpdateData,
)
from harness9_ref.memory.context import (
    SUMMARY_SYSTEM_PROMPT,
    TokenBudgetCompactor,
    estimate_tool_tokens,
    new_summarization_compactor,
)
from harness9_ref.memory.storage import Checkpoint, ContextState, Manager, MemorySession, SessionDatabaseError, message_anchor
from harness9_ref.offline import OfflineProvider
from harness9_ref.provider import ContextLengthExceeded
from harness9_ref.schema import CHUNK_ERROR, Message, StreamChunk, ToolDefinition, Usage
from harness9_ref.testing import Reply, ScriptedProvider, ScriptedRegistry
from harness9_ref.tools import Registry

SYSTEM = "You are harness9."


class StrictWindow:
    """A provider with a real API's limits: it counts a token per 3 bytes and refuses what does not fit.

    It wraps the offline provider, which answers chat and summarizer requests deterministically,
    and records the size of every request it was sent.
    """

    def __init__(self, window: int) -> None:
        self.window = window
        self.inner = OfflineProvider()
        self.sizes: list[int] = []
        self.summaries: list[str] = []  # the user prompt of every summarizer request
        self.rejected = 0

    def _count(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
        text = sum(len(m.content.encode()) + sum(len(c.arguments.encode()) for c in m.tool_calls) for m in messages)
        return (text + 2) // 3 + estimate_tool_tokens(tools) * 4 // 3

    def _admit(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
        tokens = self._count(messages, tools)
        self.sizes.append(tokens)
        if messages and messages[0].content == SUMMARY_SYSTEM_PROMPT:
            self.summaries.append(messages[1].content)
        if tokens > self.window:
            self.rejected += 1
            raise ContextLengthExceeded(f"{tokens} tokens is more than the window of {self.window}", provider="strict")
        return tokens

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message | None, Usage | None]:
        tokens = self._admit(messages, available_tools)
        reply, usage = self.inner.generate(messages, available_tools)
        return reply, Usage(tokens, usage.output_tokens if usage else 0)

    def generate_stream(self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]) -> Iterator[StreamChunk]:
        try:
            tokens = self._admit(messages, available_tools)
        except ContextLengthExceeded as exc:
            yield StreamChunk(CHUNK_ERROR, error=f"{exc.code}: {exc}")
            return
        for chunk in self.inner.generate_stream(messages, available_tools):
            if chunk.usage is not None:
                chunk = StreamChunk(chunk.type, chunk.delta, chunk.message, chunk.error, Usage(tokens, chunk.usage.output_tokens))
            yield chunk


def agent(provider: object, session: object, workdir: Path, window: int, *, long_session: bool = True) -> AgentEngine:
    """The engine as the CLI wires it (R-CLI-5, R-LONG-1)."""
    return AgentEngine(
        provider,  # type: ignore[arg-type]
        Registry(workdir),
        prompt_builder=lambda: SYSTEM,
        session=session,  # type: ignore[arg-type]
        compactor=new_summarization_compactor(provider, window, request_limit=window // 2),  # type: ignore[arg-type]
        context=LongSession(window) if long_session else LiteralContext(window),
    )


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    (path / "big.txt").write_text("".join(f"line {i:05d} of a large file\n" for i in range(1600)), encoding="utf-8")
    (path / "small.txt").write_text("a small file\n", encoding="utf-8")
    return path


def long_conversation(n: int) -> Iterator[str]:
    """Prompts of a working session: questions, commands, and now and then a 40 KB file."""
    for i in range(n):
        if i % 7 == 3:
            yield "read big.txt"
        elif i % 5 == 1:
            yield f"run echo step {i} && ls"
        else:
            yield f"question {i}: what should we change next in module_{i % 4}.py? " + "details " * 20


def test_a_long_session_in_a_small_window_never_sends_a_request_above_it(tmp_path: Path, workdir: Path) -> None:
    """The issue's scenario in-process: every prompt succeeds, with a new engine for each (as ``run --resume``)."""
    window = 4000
    provider = StrictWindow(window)
    with Manager(tmp_path / "sessions.db") as manager:
        session_id = manager.new_session().session_id
        for prompt in long_conversation(60):
            engine = agent(provider, manager.open_session(session_id), workdir, window)
            reply = engine.run(prompt)
            assert reply.content
        stored = manager.open_session(session_id).get_messages()
        checkpoint = manager.open_session(session_id).get_checkpoint()
    assert max(provider.sizes) <= window and provider.rejected == 0
    assert provider.summaries, "the session was long enough to be summarised"
    assert all(s.startswith("<previous-summary>") for s in provider.summaries[1:]), "every later summary is incremental"
    assert checkpoint is not None and 1 <= checkpoint.covered <= len(stored)
    assert checkpoint.anchor == message_anchor(stored[checkpoint.covered - 1])
    reads = sum(1 for p in long_conversation(60) if p == "read big.txt")
    assert sum(1 for m in stored if m.content.startswith("line 00000")) == reads


def test_the_literal_engine_overflows_where_long_session_mode_does_not(tmp_path: Path, workdir: Path) -> None:
    """The baseline the issue measured: without the mode the same session sends requests above the window."""
    provider = StrictWindow(4000)
    session = MemorySession()
    failures = 0
    for prompt in long_conversation(25):
        try:
            agent(provider, session, workdir, 4000, long_session=False).run(prompt)
        except EngineError as exc:
            failures += exc.code == "context_length_exceeded"
    assert failures > 0 and provider.rejected > 0


def test_a_checkpoint_survives_a_restart_on_a_real_file(tmp_path: Path, workdir: Path) -> None:
    provider = StrictWindow(3000)
    path = tmp_path / "sessions.db"
    with Manager(path) as manager:
        session = manager.new_session()
        for prompt in long_conversation(12):
            agent(provider, session, workdir, 3000).run(prompt)
        first = session.get_checkpoint()
        session_id = session.session_id
    assert first is not None
    with Manager(path) as manager:  # a new process would see the same
        session = manager.open_session(session_id)
        assert session.get_checkpoint() == first
        before = len(provider.sizes)
        reply = agent(provider, session, workdir, 3000).run("and now?")
    assert len(provider.sizes) > before
    assert "one of them a summary of older ones" in reply.content  # the offline provider saw the summary


def test_a_corrupt_checkpoint_row_is_ignored_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "sessions.db"
    with Manager(path) as manager:
        session = manager.new_session()
        session.add_messages([Message("user", "one"), Message("assistant", "two")])
        session.save_checkpoint(Checkpoint(1, message_anchor(Message("user", "one")), "S"))
        session_id = session.session_id
    conn = sqlite3.connect(path)
    conn.execute("UPDATE checkpoints SET covered = 'abc'")
    conn.commit()
    conn.close()
    provider = ScriptedProvider([Reply(Message("assistant", "fine"))])
    with Manager(path) as manager, caplog.at_level(logging.WARNING):
        session = manager.open_session(session_id)
        engine = AgentEngine(provider, ScriptedRegistry(), prompt_builder=lambda: SYSTEM, session=session, context=LongSession(0))
        assert engine.run("three").content == "fine"
        assert [m.content for m in session.get_messages()] == ["one", "two", "three", "fine"]
    assert [m.content for m in provider.requests[0].messages] == [SYSTEM, "one", "two", "three"]
    assert "ignoring the checkpoint" in caplog.text and session_id in caplog.text


class MessagesOnly:
    """A store of sessions that keeps messages and nothing else: the narrow Session of R-SES-1."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.session_id = "0b7e5a4c-1d2e-4f3a-8b5c-6d7e8f9a0b1c"

    def get_messages(self, limit: int = 0) -> list[Message]:
        return list(self.messages[-limit:] if limit else self.messages)

    def add_messages(self, msgs: Sequence[Message]) -> None:
        self.messages.extend(msgs)

    def pop_message(self) -> Message | None:
        return self.messages.pop() if self.messages else None

    def clear(self) -> None:
        self.messages.clear()


def test_a_session_of_messages_alone_serves_the_document_engine_but_not_long_session_mode() -> None:
    """R-SES-1: long-session mode asks for the session's state (R-LONG-2, R-LONG-16); without it the run
    fails before any provider call, saving nothing, and the document's engine needs only messages."""
    session = MessagesOnly()
    provider = ScriptedProvider([Reply(Message("assistant", "fine"))])
    plain = AgentEngine(provider, ScriptedRegistry(), prompt_builder=lambda: SYSTEM, session=session)
    assert plain.run("one").content == "fine"
    assert [m.content for m in session.messages] == ["one", "fine"]
    long = AgentEngine(provider, ScriptedRegistry(), prompt_builder=lambda: SYSTEM, session=session, context=LongSession(0))
    with pytest.raises(EngineError) as failed:
        long.run("two")
    assert failed.value.code == "internal_error"
    assert "long-session mode needs a session that keeps its state; a MessagesOnly keeps only messages" in failed.value.message
    assert len(provider.requests) == 1 and [m.content for m in session.messages] == ["one", "fine"]


class FailingCheckpointSession(MemorySession):
    def save_checkpoint(self, cp: Checkpoint) -> None:
        raise sqlite3.OperationalError("disk I/O error")


def test_a_failed_checkpoint_save_only_logs(caplog: pytest.LogCaptureFixture) -> None:
    session = FailingCheckpointSession()
    session.add_messages([Message("user", "x" * 400), Message("assistant", "y" * 400)] * 3)
    provider = ScriptedProvider([Message("assistant", "SUMMARY"), Message("assistant", "done")])
    compactor = new_summarization_compactor(provider, 200)
    engine = AgentEngine(
        provider, ScriptedRegistry(), prompt_builder=lambda: SYSTEM, session=session,
        compactor=compactor, context=LongSession(200),
    )
    with caplog.at_level(logging.WARNING):
        assert engine.run("go").content == "done"
    assert len(session.get_messages()) == 8
    assert "could not save the checkpoint" in caplog.text


class FailingStateSession(MemorySession):
    def save_context_state(self, state: ContextState) -> None:
        raise SessionDatabaseError("disk full")


def test_a_failed_context_state_save_only_logs(caplog: pytest.LogCaptureFixture) -> None:
    """R-LONG-16c: the run succeeds and keeps its messages; only a warning says the state was lost."""
    session = FailingStateSession()
    provider = ScriptedProvider([Reply(Message("assistant", "done"), usage=Usage(1000, 5))])
    engine = AgentEngine(provider, ScriptedRegistry(), prompt_builder=lambda: SYSTEM, session=session, context=LongSession(0))
    with caplog.at_level(logging.WARNING):
        assert engine.run("go").content == "done"
    assert [m.content for m in session.get_messages()] == ["go", "done"]
    assert "could not save the context state" in caplog.text


class RefusingCheckpointSession(MemorySession):
    """A store that refuses the checkpoint with a session error, as a full disk does."""

    def save_checkpoint(self, cp: Checkpoint) -> None:
        raise SessionDatabaseError("disk full")


def test_compact_now_raises_the_code_of_a_failed_checkpoint_save() -> None:
    """R-LONG-9e: unlike a run (R-LONG-6b), compact_now reports the failed save as its error."""
    session = RefusingCheckpointSession()
    session.add_messages([Message("user", "x" * 400), Message("assistant", "y" * 400)] * 4)
    provider = ScriptedProvider([Message("assistant", "SUMMARY")])
    engine = AgentEngine(
        provider, ScriptedRegistry(), prompt_builder=lambda: SYSTEM, session=session,
        compactor=new_summarization_compactor(provider, 200), context=LongSession(200),
    )
    with pytest.raises(EngineError) as info:
        engine.compact_now()
    assert (info.value.code, str(info.value)) == ("database_error", "disk full")
    assert session.get_checkpoint() is None


def test_compact_now_is_refused_while_a_run_is_in_progress() -> None:
    started, release = threading.Event(), threading.Event()

    class Slow(ScriptedProvider):
        def generate_stream(
            self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
        ) -> Iterator[StreamChunk]:
            started.set()
            release.wait(5)
            yield from super().generate_stream(messages, available_tools)

    session = MemorySession()
    provider = Slow([Message("assistant", "done")])
    engine = AgentEngine(
        provider, ScriptedRegistry(), session=session,
        compactor=new_summarization_compactor(provider, 1000), context=LongSession(1000),
    )
    worker = threading.Thread(target=engine.run, args=("go",))
    worker.start()
    assert started.wait(5)
    with pytest.raises(EngineBusy):
        engine.compact_now()
    release.set()
    worker.join(5)
    with pytest.raises(EngineError) as info:  # two stored messages: nothing old enough
        engine.compact_now()
    assert info.value.code == "nothing_to_compact"


def test_a_run_cannot_start_while_compact_now_summarises() -> None:
    inside, release = threading.Event(), threading.Event()

    class SlowSummarizer(ScriptedProvider):
        def generate(
            self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
        ) -> tuple[Message, Usage | None]:
            inside.set()
            release.wait(5)
            return super().generate(messages, available_tools)

    session = MemorySession()
    session.add_messages([Message("user", f"m{i}") for i in range(10)])
    provider = SlowSummarizer([Message("assistant", "SUMMARY")])
    engine = AgentEngine(
        provider, ScriptedRegistry(), session=session,
        compactor=new_summarization_compactor(provider, 1000), context=LongSession(1000),
    )
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(engine.compact_now("tests")))
    worker.start()
    assert inside.wait(5)
    with pytest.raises(EngineBusy):
        engine.run_stream("now")
    release.set()
    worker.join(5)
    assert outcome and session.get_checkpoint() == Checkpoint(4, message_anchor(Message("user", "m3")), "SUMMARY")


def test_the_status_figure_is_the_calibrated_one() -> None:
    """R-LONG-3a: the first token update of a turn scales the estimate by the last real count."""
    provider = ScriptedProvider(
        [Reply(Message("assistant", "a"), Usage(300, 1)), Reply(Message("assistant", "b"), Usage(310, 1))]
    )
    engine = AgentEngine(
        provider, ScriptedRegistry(), prompt_builder=lambda: "s" * 400, context=LongSession(100_000)
    )
    first = [e.data for e in engine.run_stream("x" * 396) if e.type == EventType.TOKEN_UPDATE]
    second = [e.data for e in engine.run_stream("y" * 396) if e.type == EventType.TOKEN_UPDATE]
    assert isinstance(first[0], TokenUpdateData) and isinstance(second[0], TokenUpdateData)
    assert first[0].estimated_tokens == 199 * 4 // 3  # (400 + 396) // 4 by the prior of a token per 3 bytes
    assert second[0].estimated_tokens == 199 * 300 // 199  # no session: the same size, scaled by the real 300 / 199


def test_the_summarization_compactor_is_what_long_session_mode_needs() -> None:
    """The engine asks for its own protocol, which memory's compactor meets by its shape alone."""
    compactor: SummarizingCompactor = new_summarization_compactor(OfflineProvider(), 1000)
    assert isinstance(compactor, SummarizingCompactor)
    assert not isinstance(TokenBudgetCompactor(1000), SummarizingCompactor)


@pytest.mark.parametrize("compact_at", [Fraction(0), Fraction(-1, 2), Fraction(11, 10)])
def test_a_trigger_outside_zero_to_one_is_refused(compact_at: Fraction) -> None:
    with pytest.raises(ValueError, match="compact_at"):
        LongSession(0, compact_at)


@pytest.mark.parametrize("part", [LiteralContext, LongSession])
def test_a_negative_window_is_refused_by_either_context_part(part: type[LiteralContext | LongSession]) -> None:
    with pytest.raises(ValueError, match=r"context_window must be 0 \(unknown\) or positive, got -1"):
        part(-1)


def test_a_negative_reply_reserve_is_refused() -> None:
    with pytest.raises(ValueError, match="reserve"):
        LongSession(0, reserve=-1)


def test_context_report_is_refused_during_a_run() -> None:
    provider = ScriptedProvider([Reply(Message("assistant", "done"))])
    engine = AgentEngine(provider, ScriptedRegistry(), session=MemorySession(), context=LongSession(1000))
    events = engine.run_stream("go")
    next(events)
    with pytest.raises(EngineBusy):
        engine.context_report()
    list(events)
    report = engine.context_report()
    assert [part.name for part in report.parts] == ["system", "tools", "summary", "messages", "tool_results", "cleared"]
    assert report.total == sum(part.tokens for part in report.parts) or report.source == "anchored"


def test_a_counter_that_raises_anything_leaves_the_estimate(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
            raise ConnectionResetError("reset by peer")

    provider = ScriptedProvider([Reply(Message("assistant", "done"))])
    engine = AgentEngine(provider, ScriptedRegistry(), context=LongSession(1000, counter=Broken()))
    with caplog.at_level(logging.WARNING):
        assert engine.run("x" * 300).content == "done"
    assert "counting the request's tokens failed; using the estimate: reset by peer" in caplog.text
