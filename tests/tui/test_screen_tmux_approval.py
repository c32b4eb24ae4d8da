"""What an approval shows, in the real program inside tmux (SPEC R-APPR-11, R-APPR-2).

A model server on 127.0.0.1 (tests/local_server.py's, made to answer the first request with a
``bash`` call) asks for a command of several lines, as a model can and as the offline provider's
one-line prompts cannot; the screen is read with ``capture-pane``, and the commands really run,
so what ``y`` ran is checked on the disk.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from harness9_ref.text import STRINGS
from tests.local_server import LocalServer

from .test_screen_tmux import HEIGHT, Screen, pytestmark, started  # noqa: F401  (pytestmark: skipped without tmux)

EN = STRINGS["en"]


@dataclass
class CommandServer(LocalServer):
    """Answers the first request with one ``bash`` call of ``command``, every later one with text."""

    command: str = ""

    def events(self) -> list[dict[str, object]]:
        if len(self.headers) > 1:
            return super().events()
        call = {"index": 0, "id": "call_1", "type": "function"}
        function = {"name": "bash", "arguments": json.dumps({"command": self.command})}
        return [
            {"choices": [{"index": 0, "delta": {"tool_calls": [{**call, "function": function}]}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        ]


@pytest.fixture
def server() -> Iterator[CommandServer]:
    serving = CommandServer()
    yield serving
    serving.close()


def ask(screen: Screen, server: CommandServer, command: str) -> list[str]:
    """Start the program on ``server``, send a prompt, and return the screen's rows once the
    question waits."""
    server.command = command
    server.start()
    started(screen, "--provider", "openai", "--model", "m", "--lang", "en", environ={"OPENAI_BASE_URL": server.url})
    screen.type("clean up")
    screen.keys("Enter")
    screen.wait(lambda: screen.rows()[-1].rstrip() == "?", "the question's input line")
    return [row.rstrip() for row in screen.rows()]


def test_both_lines_of_a_command_are_shown_and_y_runs_what_was_shown(screen: Screen, server: CommandServer) -> None:
    """R-APPR-11c: the second line of the command is a row of its own, numbered, above the
    question; y then runs both lines, nothing more."""
    (screen.workdir / "important_dir").mkdir()
    shown = ask(screen, server, "echo Cleaning up, will not touch:\nrm -rf important_dir")
    at = shown.index(EN["approve_header"].format(n=2))
    assert shown[at + 1 : at + 4] == [
        "1 | echo Cleaning up, will not touch:",
        "2 | rm -rf important_dir",
        EN["approve_prompt"],
    ]
    assert not any("touch:  rm" in row or "touch: rm" in row for row in shown)  # never one joined line
    screen.answer("y")
    screen.wait_text("\u2190 bash: Cleaning up, will not touch:")
    screen.wait_idle()
    assert not (screen.workdir / "important_dir").exists()  # what was shown is what ran


def test_n_keeps_the_hidden_line_from_running(screen: Screen, server: CommandServer) -> None:
    (screen.workdir / "important_dir").mkdir()
    ask(screen, server, "echo Cleaning up, will not touch:\nrm -rf important_dir")
    screen.answer("n")
    screen.wait_text(EN["approve_no"])
    screen.wait_idle()
    assert (screen.workdir / "important_dir").is_dir()


def test_a_command_taller_than_the_pane_is_paged_through_before_y_counts(screen: Screen, server: CommandServer) -> None:
    """R-APPR-11d: y before the command's first line has been on the screen adds a notice and
    runs nothing; PageUp shows the first lines, PageDown goes back, and then y runs it."""
    command = "\n".join(f"echo line {k}" for k in range(1, HEIGHT + 10)) + "\ntouch made.txt"
    shown = ask(screen, server, command)
    assert "1 | echo line 1" not in [row.strip() for row in shown]  # the top is above the pane
    screen.answer("y")
    screen.wait_text(EN["approve_read_first"])
    assert not (screen.workdir / "made.txt").exists()
    screen.keys("PageUp", "PageUp")
    screen.wait(lambda: " 1 | echo line 1" in screen.rows(), "the command's first line")
    screen.keys("PageDown", "PageDown")
    screen.answer("y")
    screen.wait_text("\u2190 bash: line 1")
    screen.wait_idle()
    assert (screen.workdir / "made.txt").exists()
