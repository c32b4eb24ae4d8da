"""The conversation pane's lines (harness9_ref/text/_lines.py; SPEC R-TUI-5, R-TUI-10, R-TUI-11)."""

from __future__ import annotations

import pytest

from harness9_ref.engine import CompactionData, ErrorData
from harness9_ref.schema import Message, ToolCall
from harness9_ref.text import (
    COMPACTION_NOTICE,
    PaneLine,
    ToolResult,
    compaction_notice,
    diff_pane_lines,
    error_line,
    history_lines,
    run_error,
    tool_call_line,
    tool_result_line,
    user_line,
)


@pytest.mark.parametrize(
    ("data", "notice"),
    [
        ((12500, 6200, 45, 22), "\u26a1 上下文已压缩 \u2014 12.5K \u2192 6.2K tokens\uff0845 \u2192 22 条消息\uff09"),
        ((1700, 1500, 10, 8), "⚡ 上下文已压缩 — 1.7K → 1.5K tokens（10 → 8 条消息）"),
        ((999, 500, 9, 8), "⚡ 上下文已压缩 — 999 → 500 tokens（9 → 8 条消息）"),
        ((1049, 1050, 3, 2), "⚡ 上下文已压缩 — 1K → 1.1K tokens（3 → 2 条消息）"),
        ((1200000, 999950, 400, 8), "⚡ 上下文已压缩 — 1.2M → 1M tokens（400 → 8 条消息）"),
    ],
)
def test_compaction_notice_formats_counts_by_r_fmt(data: tuple[int, int, int, int], notice: str) -> None:
    before, after, msgs_before, msgs_after = data
    as_json = {"tokens_before": before, "tokens_after": after, "msgs_before": msgs_before, "msgs_after": msgs_after}
    assert compaction_notice(as_json) == notice
    assert compaction_notice(CompactionData(before, after, msgs_before, msgs_after)) == notice


def test_the_notice_uses_the_documents_characters() -> None:
    assert COMPACTION_NOTICE.startswith("\u26a1 ")
    for ch in ("\u2014", "\u2192", "\uff08", "\uff09"):
        assert ch in COMPACTION_NOTICE


@pytest.mark.parametrize(
    ("message", "line"),
    [
        (
            "openai: HTTP 401 invalid_api_key: Incorrect API key",
            "错误：openai: HTTP 401 invalid_api_key: Incorrect API key",
        ),
        ("first\nsecond\r\nthird", "错误：first second third"),
        ("", "错误："),
    ],
)
def test_error_line_is_one_line(message: str, line: str) -> None:
    assert error_line(message) == line


def test_tool_lines() -> None:
    assert tool_call_line("read_file", '{"path": "notes.txt"}') == '\u2192 read_file {"path": "notes.txt"}'
    assert tool_call_line("bash", "") == "\u2192 bash"
    assert tool_call_line("bash", '{"command":\n"ls"}') == '\u2192 bash {"command": "ls"}'
    assert tool_result_line("read_file", "hello") == "\u2190 read_file: hello"
    assert tool_result_line("read_file", "hello\nworld\n", "en") == "\u2190 read_file: hello (2 lines, 12 B)"
    assert tool_result_line("bash", "a\nb\nc", "en") == "\u2190 bash: a (3 lines, 5 B)"
    assert tool_result_line("bash", "a\nb\nc", "zh") == "\u2190 bash: a \uff083 \u884c\uff0c5 B\uff09"  # R-TUI-17b
    big = "# title\n" + "é" * 20000 + "\n" * 533  # R-TUI-24: the whole result's figures, R-TOOL-9's size
    assert tool_result_line("read_file", big, "en") == "\u2190 read_file: # title (534 lines, 40.5 KB)"
    assert tool_result_line("read_file", big, "zh") == "\u2190 read_file: # title \uff08534 \u884c\uff0c40.5 KB\uff09"
    assert tool_result_line("bash", "", "en") == "\u2190 bash: (empty)"
    assert tool_result_line("bash", "", "zh") == "\u2190 bash: \uff08\u7a7a\uff09"
    long = tool_result_line("bash", "x" * 500)
    assert long == "\u2190 bash: " + "x" * 199 + "\u2026"


def test_history_lines_show_stored_messages_as_a_live_run_does() -> None:
    call = ToolCall("c1", "read_file", '{"path":"a.txt"}')
    stored = [
        Message("user", "read a.txt"),
        Message("assistant", "Reading a.txt.", (call,)),
        Message("user", "alpha\nbeta", tool_call_id="c1"),
        Message("assistant", "Done."),
        Message("user", "[Conversation Summary]\n**Goal:** x"),
        Message("assistant", "", (ToolCall("c2", "bash", '{"command":"ls"}'),)),
        Message("user", "(no output)", tool_call_id="c2"),
        Message("user", "orphan", tool_call_id="c9"),
    ]
    assert history_lines(stored) == [
        PaneLine("> read a.txt", "user"),
        PaneLine("Reading a.txt.", "assistant"),
        PaneLine('\u2192 read_file {"path":"a.txt"}', "tool"),
        PaneLine("\u2190 read_file: alpha \uff082 \u884c\uff0c10 B\uff09", "tool", ToolResult("read_file", "alpha\nbeta")),
        PaneLine("Done.", "assistant"),
        PaneLine("[Conversation Summary]\n**Goal:** x", "notice"),
        PaneLine('\u2192 bash {"command":"ls"}', "tool"),
        PaneLine("\u2190 bash: (no output)", "tool", ToolResult("bash", "(no output)")),
        PaneLine("\u2190 tool: orphan", "tool", ToolResult("tool", "orphan")),
    ]


def test_user_line() -> None:
    assert user_line("你好") == "> 你好"


def test_an_unknown_model_is_one_line_naming_it_and_how_to_choose_another() -> None:
    """R-CLI-19: the provider's words kept, the model and --model / LLM_MODEL added; other errors as they are."""
    words = "anthropic: HTTP 404 not_found_error: Not found"
    assert run_error(ErrorData("model_not_found", words), "en", 0, "anthropic", "claude-x") == (
        f"anthropic has no model claude-x: choose one with --model or LLM_MODEL ({words})"
    )
    assert run_error(ErrorData("model_not_found", "a\nb"), "zh", 0, "openai", "m") == (
        "openai 没有模型 m：请用 --model 或 LLM_MODEL 选择一个模型（a b）"
    )
    assert run_error(ErrorData("invalid_request", words), "en", 0, "anthropic", "claude-x") == words


def test_a_diff_before_a_question_is_coloured_only_when_asked() -> None:
    """R-TUI-50a: the undo question's diff has R-TUI-42's kinds; the approval's (R-APPR-5) only tool lines."""
    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same\n"
    assert [line.kind for line in diff_pane_lines(diff, coloured=True)] == [
        "removed",
        "added",
        "hunk",
        "removed",
        "added",
        "tool",
    ]
    assert {line.kind for line in diff_pane_lines(diff)} == {"tool"}
