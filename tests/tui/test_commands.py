"""Commands, Tab completion and /help (harness9_ref/tui/_commands.py; SPEC R-TUI-6, R-TUI-14, R-FORK-3)."""

from __future__ import annotations

import pytest

from harness9_ref.text import COMMANDS, STRINGS, UNKNOWN_COMMAND
from harness9_ref.tui import Input, classify_input, complete_command, help_lines


def test_the_command_table() -> None:
    assert COMMANDS == (
        "/new", "/resume", "/fork", "/rewind", "/search", "/compact", "/context", "/show", "/help", "/exit"
    )


def test_search_takes_a_query_and_help_takes_nothing() -> None:
    assert classify_input(" /search flaky  test ") == ("command", "/search flaky  test")
    assert classify_input("/search") == ("command", "/search")
    assert classify_input("/searchdb").kind == "unknown"
    assert classify_input("/help") == ("command", "/help")
    assert classify_input("/help me") == ("unknown", "未知命令：/help me")
    assert classify_input("/help me", "en") == ("unknown", "unknown command: /help me")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_help_names_every_command_in_table_order_then_the_keys(lang: str) -> None:
    lines = help_lines(lang)
    assert lines[0] == STRINGS[lang]["help_commands"]
    assert [line.split()[0] for line in lines[1:-2]] == list(COMMANDS)
    for key in ("Tab", "PageUp/PageDown", "Ctrl+C"):
        assert key in lines[-2]
    for key in ("Enter", "Alt+Enter", "Ctrl+W", "Ctrl+X Ctrl+E"):  # R-TUI-30, R-TUI-32, R-TUI-33
        assert key in lines[-1]


def test_compact_takes_a_focus_and_other_commands_take_nothing() -> None:
    assert classify_input(" /compact the failing tests ") == ("command", "/compact the failing tests")
    assert classify_input("/compact") == ("command", "/compact")
    assert classify_input("/new now").kind == "unknown"
    assert classify_input("/compactor").kind == "unknown"


@pytest.mark.parametrize(
    ("text", "completed"),
    [
        ("/re", "/re"),  # /resume and /rewind
        ("/r", "/re"),
        ("/res", "/resume"),
        ("/rew", "/rewind"),
        ("/f", "/fork"),
        ("/n", "/new"),
        ("/e", "/exit"),
        ("/", "/"),  # nine candidates whose longest common prefix is "/"
        ("/s", "/s"),  # /search and /show (R-TUI-41)
        ("/se", "/search"),
        ("/sh", "/show"),
        ("/h", "/help"),
        ("/c", "/co"),
        ("/con", "/context"),
        ("/com", "/compact"),
        ("/resume", "/resume"),
        ("/x", "/x"),
        ("/new ", "/new "),
        ("/re x", "/re x"),
        ("re", "re"),
        ("", ""),
        (" /re", " /re"),
        ("/RE", "/RE"),
    ],
)
def test_complete_command(text: str, completed: str) -> None:
    assert complete_command(text) == completed


def test_several_candidates_extend_to_their_longest_common_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    import harness9_ref.tui._commands as commands

    monkeypatch.setattr(commands, "COMMANDS", ("/new", "/resume", "/reset", "/exit"))
    assert commands.complete_command("/r") == "/res"
    assert commands.complete_command("/res") == "/res"
    assert commands.complete_command("/resu") == "/resume"


@pytest.mark.parametrize(
    ("text", "result"),
    [
        ("", Input("empty", "")),
        ("  \t", Input("empty", "")),
        ("/new", Input("command", "/new")),
        ("  /resume ", Input("command", "/resume")),
        ("/exit", Input("command", "/exit")),
        ("/foo", Input("unknown", "未知命令：/foo")),
        ("/new now", Input("unknown", "未知命令：/new now")),
        ("/", Input("unknown", "未知命令：/")),
        ("/NEW", Input("unknown", "未知命令：/NEW")),
        ("hello", Input("prompt", "hello")),
        ("  read a.txt ", Input("prompt", "  read a.txt ")),
        ("path/like", Input("prompt", "path/like")),
    ],
)
def test_classify_input(text: str, result: Input) -> None:
    assert classify_input(text) == result


def test_unknown_command_prefix() -> None:
    assert UNKNOWN_COMMAND == "未知命令："
