"""The offline provider (harness9_ref/offline.py; SPEC R-CLI-9, R-PRV-1, R-PRV-19)."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest

from harness9_ref.engine import AgentEngine, EventType, LiteralContext
from harness9_ref.memory.context import (
    SUMMARY_MARKER,
    SUMMARY_SYSTEM_PROMPT,
    SUMMARY_TEMPLATE,
    SummarizationCompactor,
    estimate_tokens,
    estimate_tool_tokens,
    new_summarization_compactor,
)
from harness9_ref.memory.storage import MemorySession
from harness9_ref.offline import OfflineProvider
from harness9_ref.provider import LLMProvider
from harness9_ref.schema import CHUNK_DONE, CHUNK_TEXT, Message, ToolCall
from harness9_ref.tools import BASH_TOOL, EDIT_FILE_TOOL, READ_FILE_TOOL, WRITE_FILE_TOOL, Registry

TOOLS = [READ_FILE_TOOL, BASH_TOOL, EDIT_FILE_TOOL, WRITE_FILE_TOOL]
SYSTEM = Message("system", "You are harness9.")
HEADINGS = [line.split(":**")[0] + ":**" for line in SUMMARY_TEMPLATE.split("\n")]


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the offline provider opened a connection")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


def ask(*messages: Message, tools: list[Any] | None = None) -> Message:
    reply, _ = OfflineProvider().generate(list(messages), TOOLS if tools is None else tools)
    return reply


def test_it_is_an_llm_provider_and_a_summarizer() -> None:
    assert isinstance(OfflineProvider(), LLMProvider)
    SummarizationCompactor(OfflineProvider(), 10)  # type-checks as a Summarizer


def test_the_same_request_gives_the_same_reply() -> None:
    for prompt in ("hello", "read a.txt", "run ls", "你好"):
        request = [SYSTEM, Message("user", prompt)]
        first = OfflineProvider().generate(request, TOOLS)
        assert OfflineProvider().generate(list(request), list(TOOLS)) == first
        assert [c.to_dict() for c in OfflineProvider().generate_stream(request, TOOLS)] == [
            c.to_dict() for c in OfflineProvider().generate_stream(request, TOOLS)
        ]


@pytest.mark.parametrize(
    ("prompt", "name", "arguments", "text"),
    [
        ("read notes.txt", "read_file", {"path": "notes.txt"}, "Reading notes.txt."),
        ("read  src/main.py ", "read_file", {"path": "src/main.py"}, "Reading src/main.py."),
        ("read 中文.txt", "read_file", {"path": "中文.txt"}, "Reading 中文.txt."),
        ("run ls -la", "bash", {"command": "ls -la"}, "Running `ls -la`."),
        ("run echo 'a b' | wc -c", "bash", {"command": "echo 'a b' | wc -c"}, "Running `echo 'a b' | wc -c`."),
        (
            "edit src/a.py return 1 => return  2",
            "edit_file",
            {"path": "src/a.py", "old_text": "return 1", "new_text": "return  2"},
            "Editing src/a.py.",
        ),
        ("edit a.txt x =>  => y", "edit_file", {"path": "a.txt", "old_text": "x", "new_text": " => y"}, "Editing a.txt."),
        ("write notes.md # Notes ", "write_file", {"path": "notes.md", "content": "# Notes "}, "Writing notes.md."),
        ("write empty.txt", "write_file", {"path": "empty.txt", "content": ""}, "Writing empty.txt."),
    ],
)
def test_read_and_run_become_tool_calls(prompt: str, name: str, arguments: dict[str, str], text: str) -> None:
    reply = ask(SYSTEM, Message("user", prompt))
    assert reply.role == "assistant" and reply.content == text
    (call,) = reply.tool_calls
    assert call.name == name and json.loads(call.arguments) == arguments
    assert re.fullmatch(r"call_offline_[0-9a-f]{16}", call.id)


def test_call_ids_differ_between_requests() -> None:
    first = ask(SYSTEM, Message("user", "read a.txt")).tool_calls[0].id
    second = (
        ask(SYSTEM, Message("user", "x"), Message("assistant", "y"), Message("user", "read a.txt")).tool_calls[0].id
    )
    assert first != second


@pytest.mark.parametrize(
    "prompt", ["read ", "read", "run   ", "Read a.txt", "please read a.txt", " run ls", "edit a.txt x", "write "]
)
def test_other_prompts_get_a_plain_reply(prompt: str) -> None:
    reply = ask(SYSTEM, Message("user", prompt))
    assert reply.tool_calls == ()


def test_no_tool_call_when_the_tool_is_not_offered() -> None:
    assert ask(SYSTEM, Message("user", "read a.txt"), tools=[BASH_TOOL]).tool_calls == ()
    assert ask(SYSTEM, Message("user", "run ls"), tools=[]).tool_calls == ()


def test_a_plain_reply_quotes_the_prompt_and_counts_the_messages() -> None:
    reply = ask(SYSTEM, Message("user", "first"), Message("assistant", "ok"), Message("user", "what is 中文?"))
    lines = reply.content.split("\n")
    assert lines[0] == 'Offline reply to "what is 中文?".'
    assert lines[1].startswith("This conversation holds 4 messages, about ")
    assert lines[2:6] == [
        "  1. system, 4 tokens: You are harness9.",
        "  2. user, 1 token: first",
        "  3. assistant, 0 tokens: ok",
        "  4. user, 3 tokens: what is 中文?",
    ]


def test_a_summarized_conversation_is_mentioned() -> None:
    reply = ask(SYSTEM, Message("user", SUMMARY_MARKER + "\n**Goal:** x"), Message("user", "go on"))
    assert "one of them a summary of older ones" in reply.content


def test_after_tool_results_it_reports_them() -> None:
    calls = (ToolCall("c1", "read_file", '{"path":"a.txt"}'), ToolCall("c2", "bash", '{"command":"ls"}'))
    reply = ask(
        SYSTEM,
        Message("user", "do it"),
        Message("assistant", "", calls),
        Message("user", "alpha\nbeta\n", tool_call_id="c1"),
        Message("user", "", tool_call_id="c2"),
    )
    assert reply.tool_calls == ()
    assert reply.content == "\n".join(
        [
            "The tool calls of the last step returned:",
            '- read_file a.txt: 2 lines, 11 B; first line: "alpha"',
            '- bash ls: 0 lines, 0 B; first line: ""',
            "That is all the offline provider can say about them; ask for another file or command.",
        ]
    )


def summarize(prompt: str) -> str:
    return ask(Message("system", SUMMARY_SYSTEM_PROMPT), Message("user", prompt), tools=[]).content


def test_a_summarizer_request_gets_the_five_headings() -> None:
    summary = summarize(
        "Conversation to summarize:\n[user]: fix the bug in app.py\n[assistant]: Reading app.py.\n"
        '[tool_call read_file(c1)]: {"path":"app.py"}\n[tool_result c1]: print(1)\nmore\n[user]: thanks'
    )
    lines = summary.split("\n")
    assert [line.split(":**")[0] + ":**" for line in lines] == HEADINGS
    assert lines[0] == "**Goal:** fix the bug in app.py"
    assert lines[1] == "**Progress:** 5 earlier messages summarized: 2 user requests and 1 tool calls."
    assert lines[4] == "**Critical Context:** read_file app.py"


def test_an_incremental_request_merges_the_previous_summary() -> None:
    first = summarize('Conversation to summarize:\n[user]: goal one\n[tool_call bash(c1)]: {"command":"make"}')
    second = summarize(
        f"<previous-summary>\n{first}\n</previous-summary>\n\nNew conversation to merge:\n"
        '[user]: goal two\n[tool_call read_file(c2)]: {"path":"x.py"}'
    )
    lines = second.split("\n")
    assert lines[0] == "**Goal:** goal one"
    assert lines[1] == "**Progress:** 4 earlier messages summarized: 2 user requests and 2 tool calls."
    assert lines[4] == "**Critical Context:** bash make; read_file x.py"


def test_an_empty_summarizer_request_still_gets_a_summary() -> None:
    summary = summarize("Conversation to summarize:\n")
    assert summary.split("\n")[0] == "**Goal:** Not stated yet."
    assert summary.strip()


def test_usage_is_the_estimate_of_request_and_reply() -> None:
    request = [SYSTEM, Message("user", "hello 世界")]
    reply, usage = OfflineProvider().generate(request, TOOLS)
    assert usage is not None
    assert usage.input_tokens == estimate_tokens(request) + estimate_tool_tokens(TOOLS)
    assert usage.output_tokens == estimate_tokens([reply])
    call_reply, call_usage = OfflineProvider().generate([SYSTEM, Message("user", "read a")], TOOLS)
    assert call_usage is not None and call_usage.output_tokens == estimate_tokens([call_reply]) > 0


def test_the_stream_is_word_sized_text_chunks_then_one_done_chunk() -> None:
    request = [SYSTEM, Message("user", "hello there")]
    reply, usage = OfflineProvider().generate(request, TOOLS)
    chunks = list(OfflineProvider().generate_stream(request, TOOLS))
    *texts, done = chunks
    assert len(texts) > 3
    assert all(c.type == CHUNK_TEXT and len(c.delta.split()) == 1 for c in texts)
    assert "".join(c.delta for c in texts) == reply.content
    assert done.type == CHUNK_DONE and done.message == reply and done.usage == usage


def test_chunk_delay_waits_before_each_text_chunk() -> None:
    waits: list[float] = []
    provider = OfflineProvider(chunk_delay=0.25, sleep=waits.append)
    chunks = list(provider.generate_stream([SYSTEM, Message("user", "run ls")], TOOLS))
    assert waits == [0.25] * (len(chunks) - 1)
    assert chunks[-1].message is not None and chunks[-1].message.tool_calls[0].name == "bash"


def test_with_a_window_of_2000_compaction_shows_within_five_turns(tmp_path: Path) -> None:
    provider = OfflineProvider()
    compactor = new_summarization_compactor(provider, 2000)
    engine = AgentEngine(
        provider, Registry(tmp_path), session=MemorySession(), compactor=compactor, context=LiteralContext(2000)
    )
    turns = []
    for n, prompt in enumerate(("hello", "what can you do", "tell me more", "ok", "and then"), start=1):
        if any(e.type == EventType.COMPACTION for e in engine.run_stream(prompt)):
            turns.append(n)
    assert turns and turns[0] <= 5
    assert compactor.failures == []  # the offline provider summarized; the fallback was not needed


def test_an_edit_round_trip_through_the_engine(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("colour = red\n")
    engine = AgentEngine(OfflineProvider(), Registry(tmp_path))
    events = list(engine.run_stream("edit a.txt red => blue"))
    results = [e.data.to_dict()["content"] for e in events if e.type == EventType.TOOL_RESULT]
    assert results == ["edited a.txt: +1 -1 lines"]
    assert (tmp_path / "a.txt").read_text() == "colour = blue\n"
    assert "- edit_file a.txt: 1 line" in events[-1].data.to_dict()["message"]["content"]


def test_a_tool_round_trip_through_the_engine(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("line one\nline two\n")
    provider = OfflineProvider()
    engine = AgentEngine(provider, Registry(tmp_path))
    events = list(engine.run_stream("read a.txt"))
    kinds = [e.type for e in events]
    assert kinds.count(EventType.TOOL_CALL) == 1 and kinds.count(EventType.TOOL_RESULT) == 1
    assert kinds[-1] == EventType.DONE
    final = events[-1].data
    assert '- read_file a.txt: 2 lines, 18 B; first line: "line one"' in final.to_dict()["message"]["content"]
