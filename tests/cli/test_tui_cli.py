"""The terminal UI as the program starts and ends it, on a real pseudo-terminal
(SPEC R-CLI-8, R-CLI-10, R-CLI-14, R-APPR-2, R-INT-2).

The program runs with a pty as its terminal; the test types keys into it and reads what curses
writes, with the escape sequences removed, polling with a bounded timeout. The screen itself is
tested under tmux in tests/tui; here the concern is the wiring: drafts, the approval callback,
the language, and a SIGTERM that must end the UI and every command it started.
"""

from __future__ import annotations

import fcntl
import os
import random
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness9_ref.tools import DECLINED
from harness9_ref.tui._keys import ANSWER_GRACE
from tests.cli.helpers import SESSION, stored
from tests.cli.test_run_cli import processes_with

ESCAPES = re.compile(rb"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[()*+][0-9A-Za-z]|[=>78DEHM])")
TIMEOUT = 15.0


class Terminal:
    """One run of the program on a pty of 30 x 120 cells."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        leader, follower = os.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
        self.leader = leader
        self.output = b""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "harness9_ref", *args],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            env={**env, "TERM": "xterm-256color"},
            cwd=cwd,
            start_new_session=True,
        )
        os.close(follower)

    @property
    def text(self) -> str:
        return ESCAPES.sub(b"", self.output).decode("utf-8", "replace")

    def read(self, seconds: float) -> None:
        ready, _, _ = select.select([self.leader], [], [], seconds)
        if ready:
            try:
                self.output += os.read(self.leader, 65536)
            except OSError:  # the program closed the terminal
                time.sleep(seconds)

    def wait_for(self, condition: Callable[[str], bool]) -> None:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if condition(self.text):
                return
            self.read(0.05)
        raise AssertionError(f"timed out; the screen said:\n{self.text[-2000:]}")

    def type(self, keys: str) -> None:
        os.write(self.leader, keys.encode())

    def finish(self, seconds: float = TIMEOUT) -> int:
        deadline = time.monotonic() + seconds
        while self.process.poll() is None and time.monotonic() < deadline:
            self.read(0.05)
        for _ in range(5):
            self.read(0.02)
        if self.process.poll() is None:
            self.process.kill()
        return self.process.wait()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.leader)


@pytest.fixture
def terminal(env: dict[str, str], work: Path) -> Iterator[Callable[..., Terminal]]:
    started: list[Terminal] = []

    def start(*args: str) -> Terminal:
        started.append(Terminal(["--provider", "offline", *args], env, work))
        return started[-1]

    yield start
    for term in started:
        term.close()


def ready(text: str) -> bool:
    return "ctx:" in text


def test_starting_and_quitting_stores_nothing(terminal: Callable[..., Terminal], db: Path) -> None:
    term = terminal()
    term.wait_for(ready)
    term.type("/exit\r")
    assert term.finish() == 0
    assert stored(db) == {}
    assert SESSION.search(term.text) is None  # no id of a session that does not exist


def test_a_declined_command_does_not_run(terminal: Callable[..., Terminal], db: Path, work: Path) -> None:
    term = terminal("--lang", "en")
    term.wait_for(ready)
    term.type("run echo hi > made.txt\r")
    term.wait_for(lambda text: "1 | echo hi > made.txt" in text and "Run the command above?" in text)  # R-APPR-11
    time.sleep(2 * ANSWER_GRACE + 0.2)  # R-TUI-34: a fresh key press answers, after the grace and a margin
    term.type("n")
    term.wait_for(lambda text: "declined" in text)
    term.type("/exit\r")
    assert term.finish() == 0
    assert not (work / "made.txt").exists()
    found = SESSION.search(term.text)
    assert found is not None, term.text
    assert stored(db)[found.group(1)][2] == DECLINED


def test_yes_runs_commands_without_asking(terminal: Callable[..., Terminal], work: Path) -> None:
    term = terminal("--yes")
    term.wait_for(ready)
    term.type("run echo hi > made.txt\r")
    term.wait_for(lambda text: (work / "made.txt").exists())
    term.type("/exit\r")
    assert term.finish() == 0
    assert "运行上面的命令" not in term.text


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find the command's processes")
def test_sigterm_ends_the_ui_and_its_commands(terminal: Callable[..., Terminal], work: Path) -> None:
    tag = f"30.{random.randrange(10**8):08d}"
    term = terminal("--yes")
    term.wait_for(ready)
    term.type(f"run trap '' TERM; sleep {tag}\r")
    term.wait_for(lambda text: bool(processes_with(tag)))
    start = time.monotonic()
    term.process.send_signal(signal.SIGTERM)
    assert term.finish(10) == 128 + signal.SIGTERM
    assert time.monotonic() - start < 3
    assert processes_with(tag) == []
    assert "Traceback" not in term.text
