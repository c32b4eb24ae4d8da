"""The real program inside tmux (harness9_ref/tui/_screen.py; SPEC R-TUI-1 … R-TUI-19, R-APPR-2,
R-INT-4, R-CLI-8).

Each test starts ``python -m harness9_ref --provider offline`` in a detached tmux session of
120 x 40 cells on a private server (its socket in ``tmp_path``), types with ``send-keys`` and reads the screen with
``capture-pane``, polling with a bounded timeout. The database and HARNESS9_HOME are in
``tmp_path``. The status bar is the second row from the bottom, the input line the last.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from harness9_ref.tui._keys import ANSWER_GRACE

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed; these tests drive the terminal UI inside tmux"
)

ROOT = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT = 120, 40
TIMEOUT = 15.0
POLL = 0.05
STATUS = re.compile(
    r"^\[harness9\] (?:offline|\S+:\S+)  workdir: (.+)  \u2502  session: ([0-9a-f]{8})\.\.\.(?:  ctx: (\S+) \((\d+)%\))?$"
)
NOTICE = "\u26a1 上下文已压缩"
EXIT_STATUS = re.compile(r"^\[exit status (\d+)\]$", re.M)


def _terminal() -> str:
    found = (
        subprocess.run(["infocmp", "tmux-256color"], capture_output=True, check=False)
        if shutil.which("infocmp")
        else None
    )
    return "tmux-256color" if found is not None and found.returncode == 0 else "screen-256color"


class Screen:
    """One tmux server with one session running the program."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.db = tmp_path / "home" / "sessions.db"
        self.db.parent.mkdir(exist_ok=True)  # R-CLI-13: --db names a file in an existing folder
        self.workdir = tmp_path / "work"
        self.workdir.mkdir(exist_ok=True)
        conf = tmp_path / "tmux.conf"
        # exit-empty off: a test that kills its session and starts another (a restart) keeps the
        # server, instead of racing a server that is exiting for its socket.
        conf.write_text(
            f"set -g default-terminal {_terminal()}\nset -g remain-on-exit on\nset -g status off\n"
            "set -s exit-empty off\n"
        )
        socket = tmp_path / "tmux.sock"  # a private server, and nothing left behind in /tmp/tmux-<uid>
        if len(str(socket)) > 100:  # beyond what a Unix socket path may hold
            socket = Path(tempfile.gettempdir()) / f"h9-{uuid.uuid4().hex[:12]}.sock"
        self.socket = socket
        self.base = ["tmux", "-u", "-S", str(socket), "-f", str(conf)]
        self.env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        self.env["LANG"] = "C.UTF-8"

    def tmux(self, *args: str) -> str:
        result = subprocess.run(
            [*self.base, *args], capture_output=True, text=True, env=self.env, timeout=TIMEOUT, check=False
        )
        assert result.returncode == 0, f"tmux {' '.join(args)}: {result.stderr}"
        return result.stdout

    def start(
        self,
        *options: str,
        window: int = 2000,
        lang: str | None = "zh",
        locale: tuple[str, ...] = ("LANG=C.UTF-8",),
        environ: Mapping[str, str] | None = None,
    ) -> None:
        """Start the program; ``lang`` is HARNESS9_LANG (None: unset, so ``locale``'s variables
        choose, R-LANG-1); ``environ`` adds variables (a key and base URL for a loopback model)."""
        chosen = [f"HARNESS9_LANG={lang}"] if lang is not None else ["-u", "HARNESS9_LANG"]
        program = [
            "env", "-u", "OPENAI_API_KEY", "-u", "ANTHROPIC_API_KEY", "-u", "LLM_MODEL",
            "-u", "LC_ALL", "-u", "LC_MESSAGES", *chosen,
            f"PYTHONPATH={ROOT}", f"HARNESS9_HOME={self.db.parent}", *locale,
            *(f"{name}={value}" for name, value in (environ or {}).items()),
            sys.executable, "-m", "harness9_ref", "--provider", "offline", "--model", "openai/gpt-4o-mini",
            "--db", str(self.db), "--context-window", str(window), "--workdir", str(self.workdir), *options,
        ]  # fmt: skip
        # The shell reports the exit status: tmux's own pane_dead_status is sometimes left empty.
        command = shlex.join(program) + '; echo "[exit status $?]"'
        self.tmux("new-session", "-d", "-x", str(WIDTH), "-y", str(HEIGHT), "-s", "main", command)

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, env=self.env, timeout=TIMEOUT, check=False)
        self.socket.unlink(missing_ok=True)

    # Reading.

    def rows(self, escapes: bool = False) -> list[str]:
        text = self.tmux("capture-pane", "-p", *(["-e"] if escapes else []), "-t", "main")
        rows = text.split("\n")[:HEIGHT]
        return rows + [""] * (HEIGHT - len(rows))

    def text(self) -> str:
        return "\n".join(self.rows())

    def history(self) -> str:
        """Everything the pane showed, wrapped rows joined (after the program ended, its last
        lines may have scrolled into tmux's history)."""
        return self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "main")

    def status(self) -> re.Match[str]:
        match = STATUS.match(self.rows()[-2].rstrip())
        assert match is not None, self.text()
        return match

    def dead(self) -> bool:
        return self.tmux("list-panes", "-t", "main", "-F", "#{pane_dead}").strip() == "1"

    def wait_exit(self) -> str:
        """Wait for the program to end and return its exit status, as the shell printed it."""
        self.wait(lambda: EXIT_STATUS.search(self.history()) is not None, "the program to exit")
        match = EXIT_STATUS.search(self.history())
        assert match is not None
        return match.group(1)

    def wait(self, predicate: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not predicate():
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}; the screen:\n{self.text()}")
            time.sleep(POLL)

    def wait_text(self, text: str) -> None:
        self.wait(lambda: text in self.text(), repr(text))

    def wait_idle(self) -> None:
        self.wait(
            lambda: self.rows()[-1].rstrip() == ">" and STATUS.match(self.rows()[-2].rstrip()) is not None,
            "an idle input line",
        )

    # Typing.

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "main", "-l", text)

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "main", *keys)

    def answer(self, *keys: str) -> None:
        """Answer a question that is on the screen, as a person does: after a pause longer
        than the grace in which keys are still typing (R-TUI-34), counted from when the program
        read the key before, which a loaded machine delays: twice the grace and a margin."""
        time.sleep(2 * ANSWER_GRACE + 0.2)
        self.keys(*keys)

    def say(self, text: str) -> None:
        """Type a line, press Enter and wait until the turn is over.

        The line is seen in the input line before Enter and gone from it after, so that a
        prompt said twice is not taken as answered by the echo of the first one (and the idle
        input line of before Enter as the end of its turn). A line wider than the pane scrolls
        in the input line: for it the echo alone is waited for.
        """
        self.type(text)
        typed = "> " + text
        if len(typed) < WIDTH:
            self.wait(lambda: self.rows()[-1].rstrip() == typed.rstrip(), f"{text!r} in the input line")
            self.keys("Enter")
            self.wait(lambda: self.rows()[-1].rstrip() != typed.rstrip(), f"{text!r} taken from the input line")
        else:
            self.keys("Enter")
        self.wait(lambda: typed in self.text(), f"the echo of {text!r}")
        self.wait_idle()

    def say_until(self, text: str, prompts: tuple[str, ...] = ("one", "two", "three", "four", "five")) -> None:
        """Say ``prompts`` one by one until ``text`` shows (a compaction notice, within a few turns)."""
        for prompt in prompts:
            self.say(prompt)
            if text in self.text():
                return
        pytest.fail(f"{text!r} not shown after {len(prompts)} turns; the screen:\n{self.text()}")


def started(screen: Screen, *options: str, window: int = 2000, environ: Mapping[str, str] | None = None) -> Screen:
    screen.start(*options, window=window, environ=environ)
    screen.wait_idle()
    return screen


def test_a_prompt_streams_a_reply_and_the_status_bar_shows_the_context(screen: Screen) -> None:
    started(screen)
    status = screen.status()
    assert str(screen.workdir).endswith(status.group(1).lstrip("\u2026"))
    assert status.group(3) is not None and status.group(3).endswith("/2K")  # from start-up (R-TUI-15)
    screen.type("hello 你好")
    screen.keys("Enter")
    seen_streaming = False
    deadline = time.monotonic() + TIMEOUT
    while True:
        text = screen.text()
        if 'Offline reply to "hello 你好".' in text and "Ctrl+C interrupts a turn." not in text:
            seen_streaming = True
        if "Ctrl+C interrupts a turn." in text and screen.rows()[-1].rstrip() == ">":
            break
        assert time.monotonic() < deadline, text
        time.sleep(0.02)
    assert seen_streaming, "the reply appeared all at once"
    rows = screen.rows()
    assert "> hello 你好" in rows
    assert any(
        re.fullmatch(
            r"This conversation holds 2 messages, about \d+ tokens by the char\u00f74 estimate\. Message by message:",
            row.rstrip(),
        )
        for row in rows
    )
    status = screen.status()
    assert status.group(3) is not None and status.group(3).endswith("/2K")
    assert int(status.group(4)) < 50
    coloured = re.search(r"((?:\x1b\[[0-9;]*m)+)ctx: ", screen.rows(escapes=True)[-2])
    assert coloured is not None and re.search(r"\[(?:[0-9;]*;)?(92|32|38;5;10)m", coloured.group(1)), coloured


def test_read_shows_the_tool_call_and_its_result(screen: Screen) -> None:
    (screen.workdir / "notes.txt").write_text("hello world\nsecond line\n", encoding="utf-8")
    started(screen).say("read notes.txt")
    rows = [row.rstrip() for row in screen.rows()]
    at = rows.index("> read notes.txt")
    assert rows[at + 1 : at + 5] == [
        "Reading notes.txt.",
        '\u2192 read_file {"path": "notes.txt"}',
        "\u2190 read_file: hello world \uff082 \u884c\uff0c24 B\uff09",  # zh: R-TUI-17b
        "The tool calls of the last step returned:",
    ]


def test_compaction_is_announced_within_a_few_turns(screen: Screen) -> None:
    started(screen)
    screen.say_until(NOTICE)
    notice = next(row.rstrip() for row in screen.rows() if row.startswith(NOTICE))
    assert re.fullmatch(r"\u26a1 上下文已压缩：\S+ \u2014 \S+ \u2192 \S+ tokens(?:\uff08\d+ \u2192 \d+ 条消息\uff09)?\S*", notice)
    assert int(screen.status().group(4)) >= 50  # yellow or red by now


def test_compact_summarises_on_request(screen: Screen) -> None:
    """/compact in the real terminal (SPEC R-LONG-9): the notice appears and the session has a checkpoint."""
    started(screen, window=100_000)
    for prompt in ("one", "two", "three", "four"):
        screen.say(prompt)
    screen.say("/compact keep the numbers")
    screen.wait(lambda: NOTICE in screen.text(), "the compaction notice")
    notice = next(row.rstrip() for row in screen.rows() if row.startswith(NOTICE))
    assert notice.endswith("\uff089 \u2192 8 条消息\uff09")


def test_new_starts_a_session_and_clears_the_pane(screen: Screen) -> None:
    started(screen).say("hello")
    old = screen.status().group(2)
    screen.type("/new")
    screen.keys("Enter")
    screen.wait(lambda: screen.status().group(2) != old, "a new session id")
    rows = screen.rows()[:-2]
    assert rows[0].startswith("已新建会话 " + screen.status().group(2))  # R-TUI-23: the pane's only line
    assert all(not row.strip() for row in rows[1:])
    assert screen.status().group(3) is not None  # the empty session's figure (R-TUI-15)


def test_resume_lists_sessions_and_a_number_opens_one(screen: Screen) -> None:
    started(screen).say("remember this")
    old = screen.status().group(2)
    screen.type("/new")
    screen.keys("Enter")
    screen.wait(lambda: screen.status().group(2) != old, "a new session id")
    screen.say("/resume")
    rows = [row.rstrip() for row in screen.rows()]
    assert "可用会话（1 条）：" in rows  # the new session holds nothing: not listed (R-TUI-18)
    assert f"  [1] {old}  刚刚  2 条消息  remember this" in rows
    number = "1"
    screen.type(number)
    screen.keys("Enter")
    screen.wait(lambda: screen.status().group(2) == old, "the resumed session in the status bar")
    rows = [row.rstrip() for row in screen.rows()]
    assert rows[0] == "> remember this"
    assert rows[1] == 'Offline reply to "remember this".'


def test_anything_but_a_number_cancels_the_resume(screen: Screen) -> None:
    started(screen).say("something to list")
    sid = screen.status().group(2)
    screen.say("/resume")
    screen.say("abc")
    assert [row.rstrip() for row in screen.rows() if row.strip()][-4:-2] == ["> abc", "已取消"]
    assert screen.status().group(2) == sid


def test_tab_completes_a_command(screen: Screen) -> None:
    started(screen)
    screen.type("/res")
    screen.keys("Tab")
    screen.wait(lambda: screen.rows()[-1].rstrip() == "> /resume", "the completed command")
    screen.keys("Enter")
    screen.wait_text("没有可恢复的会话")


def test_unknown_commands_and_the_input_history(screen: Screen) -> None:
    started(screen).say("/hepl")
    assert "未知命令：/hepl" in [row.rstrip() for row in screen.rows()]
    screen.keys("Up")
    screen.wait(lambda: screen.rows()[-1].rstrip() == "> /hepl", "the previous input")
    screen.keys("Down")
    screen.wait(lambda: screen.rows()[-1].rstrip() == ">", "the empty draft")


def test_ctrl_c_interrupts_a_running_turn_and_keeps_the_conversation(screen: Screen) -> None:
    started(screen)
    screen.type("run sleep 1; echo late")
    screen.keys("Enter")
    screen.wait_text('\u2192 bash {"command": "sleep 1; echo late"}')
    screen.wait_text("1 | sleep 1; echo late")  # R-APPR-11: the command's row, then the question
    screen.wait_text("运行上面的命令？")
    screen.answer("y")
    screen.wait_text("已允许")
    screen.keys("C-c")
    screen.wait_text("已中断")
    screen.wait_idle()
    rows = [row.rstrip() for row in screen.rows()]
    assert "> run sleep 1; echo late" in rows and "Running `sleep 1; echo late`." in rows
    assert not any(row.startswith("错误：") for row in rows)
    assert not screen.dead()


def test_ctrl_c_when_idle_exits(screen: Screen) -> None:
    started(screen).say("hello")  # a session that holds something is named on the way out
    sid = screen.status().group(2)
    screen.keys("C-c")
    assert screen.wait_exit() == "0"
    assert f"session: {sid}" in screen.history()


def test_exit_exits(screen: Screen) -> None:
    started(screen).say("hello")
    screen.type("/exit")
    screen.keys("Enter")
    assert screen.wait_exit() == "0"
    assert re.search(r"^session: [0-9a-f-]{36}$", screen.history(), re.M)
    assert "Traceback" not in screen.history()


def test_resume_at_start_shows_the_stored_messages(screen: Screen) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HARNESS9_HOME": str(screen.db.parent)}
    command = [sys.executable, "-m", "harness9_ref", "--provider", "offline", "--db", str(screen.db)]
    run = subprocess.run(
        [*command, "run", "from the command line"],
        capture_output=True, text=True, env=env, timeout=TIMEOUT, check=True, cwd=screen.workdir,  # the UI's folder (R-CLI-53)
    )  # fmt: skip
    sid = run.stderr.split("session: ")[1].strip()
    started(screen, "--resume", sid)
    assert screen.status().group(2) == sid[:8]
    assert screen.rows()[0].rstrip() == "输入 /help 查看命令和按键"  # R-TUI-23: before the history
    assert screen.rows()[1].rstrip() == "> from the command line"


def test_an_unknown_resume_id_is_a_one_line_error(screen: Screen) -> None:
    screen.start("--resume", "0000", lang="en")
    assert screen.wait_exit() == "1"
    lines = [line for line in screen.history().split("\n") if line.strip() and not line.startswith("Pane is dead")]
    assert len(lines) == 2 and lines[1] == "[exit status 1]"
    assert lines[0].startswith("harness9-ref: error: ") and "'0000'" in lines[0]
