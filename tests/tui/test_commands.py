"""Commands and Tab completion (harness9_ref/tui/_commands.py; SPEC R-TUI-6; seed 10.3)."""

from __future__ import annotations

import pytest

from harness9_ref.tui import COMMANDS, UNKNOWN_COMMAND, Input, classify_input, complete_command


def test_the_command_table() -> None:
    assert COMMANDS == ("/new", "/resume", "/compact", "/exit")


def test_compact_takes_a_focus_and_other_commands_take_nothing() -> None:
    assert classify_input(" /compact the failing tests ") == ("command", "/compact the failing tests")
    assert classify_input("/compact") == ("command", "/compact")
    assert classify_input("/new now").kind == "unknown"
    assert classify_input("/compactor").kind == "unknown"


@pytest.mark.parametrize(
    ("text", "completed"),
    [
        ("/re", "/resume"),
        ("/r", "/resume"),
        ("/n", "/new"),
        ("/e", "/exit"),
        ("/", "/"),  # three candidates whose longest common prefix is "/"
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
