"""Run mode's waiting lines, in process (harness9_ref/cli/_run_prompt.py; SPEC R-CLI-23).

``_WaitLines`` is ticked by hand on a settable clock, writing to a stream that is or is not a
terminal; ``run_prompt`` runs a real engine whose provider pauses for real, with the notice
brought forward to one second so that a test takes two.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import harness9_ref.cli._run_prompt as run_module
from harness9_ref.cli import WAIT_NOTICE_SECONDS, WAIT_REPEAT_SECONDS, run_prompt
from harness9_ref.cli._run_prompt import _WaitLines
from harness9_ref.engine import AgentEngine, Event, EventType, ModelWait, TokenUpdateData
from harness9_ref.schema import CHUNK_DONE, CHUNK_TEXT, Message, StreamChunk, ToolDefinition
from harness9_ref.tools import Registry
from tests.fakes import Clock, assistant

ERASE = "\r\x1b[K"
TOKENS = Event(EventType.TOKEN_UPDATE, TokenUpdateData(10, 100))


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def ticking(err: io.StringIO, lang: str = "en") -> tuple[_WaitLines, ModelWait, Clock]:
    clock = Clock(0)
    wait = ModelWait(clock)
    wait.start()
    return _WaitLines(err, lang, wait), wait, clock


def test_off_a_terminal_a_whole_line_at_five_seconds_then_every_thirty() -> None:
    err = io.StringIO()
    lines, wait, clock = ticking(err)
    for _ in range(100):  # 100 s, ticked ten times a second as run_prompt does
        for _ in range(10):
            lines.tick(quiet=False)
            clock.now += 0.1
    assert err.getvalue().splitlines() == [f"waiting for the model\u2026 {s} s" for s in (5, 35, 65, 95)]
    assert (WAIT_NOTICE_SECONDS, WAIT_REPEAT_SECONDS) == (5, 30)
    wait.saw(TOKENS)  # a new wait: its lines start again at five seconds
    err.truncate(0)
    err.seek(0)
    clock.now += 4.9
    lines.tick(quiet=False)
    assert err.getvalue() == ""
    clock.now += 0.1
    lines.tick(quiet=False)
    assert err.getvalue() == "waiting for the model\u2026 5 s\n"


def test_on_a_terminal_one_line_rewritten_each_second_and_erased() -> None:
    err = Terminal()
    lines, _, clock = ticking(err, "zh")
    clock.now += 4.99
    lines.tick(quiet=False)
    assert err.getvalue() == ""
    for _ in range(3):
        clock.now += 0.5
        lines.tick(quiet=False)
        lines.tick(quiet=False)  # the same second twice: written once
    assert err.getvalue() == (
        "\r正在等待模型\u2026 5 秒\x1b[K" "\r正在等待模型\u2026 6 秒\x1b[K"
    )  # 4.99 + 1.5 = 6.49: seconds 5 and 6
    lines.clear()
    lines.clear()  # erased once
    assert err.getvalue().endswith("\x1b[K" + ERASE) and err.getvalue().count(ERASE) == 1


def test_quiet_writes_nothing_and_erases_the_line() -> None:
    """A streamed line open on standard output, or a signal: nothing, and an in-place line goes."""
    err = Terminal()
    lines, _, clock = ticking(err)
    clock.now += 6
    lines.tick(quiet=False)
    lines.tick(quiet=True)
    clock.now += 10
    lines.tick(quiet=True)
    assert err.getvalue() == "\rwaiting for the model\u2026 6 s\x1b[K" + ERASE


class Pausing:
    """A provider that sends ``Hello``, pauses ``pause`` seconds inside the line, then ``there.\\n``,
    after first keeping the request ``first`` seconds (a server reading the prompt)."""

    def __init__(self, first: float, pause: float) -> None:
        self.first, self.pause = first, pause

    def generate(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> tuple[Message, None]:
        return assistant("summary"), None

    def generate_stream(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> Iterator[StreamChunk]:
        time.sleep(self.first)
        yield StreamChunk(CHUNK_TEXT, delta="Hello ")
        time.sleep(self.pause)
        yield StreamChunk(CHUNK_TEXT, delta="there.\n")
        yield StreamChunk(CHUNK_DONE, message=assistant("Hello there.\n"))


@pytest.mark.parametrize("as_json", [False, True])
def test_a_run_tells_the_wait_before_the_first_piece_but_never_inside_a_line(
    as_json: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R-CLI-23c: the line before the first piece; the pause inside ``Hello there.`` is not told
    without --json (the line would be cut), and with --json it goes to standard error only."""
    monkeypatch.setattr(run_module, "WAIT_NOTICE_SECONDS", 1)
    out, err = io.StringIO(), io.StringIO()
    engine = AgentEngine(Pausing(1.5, 1.5), Registry(tmp_path))
    assert run_prompt(engine, "sid-w", "hello", out, err, as_json=as_json) == 0
    waiting = [line for line in err.getvalue().splitlines() if line.startswith("waiting for the model")]
    if as_json:
        assert waiting == ["waiting for the model\u2026 1 s"] * 2  # stdout's lines are whole: both waits are told
        assert all(line.startswith("{") for line in out.getvalue().splitlines())
    else:
        assert waiting == ["waiting for the model\u2026 1 s"]
        assert out.getvalue() == "Hello there.\n"
        assert err.getvalue().splitlines()[-1] == "session: sid-w"
