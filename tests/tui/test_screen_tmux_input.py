"""The input box in the real program inside tmux: paste, several lines, the editor, Ctrl+C,
Ctrl+W, Tab's candidates, and keys typed before an approval question (SPEC R-TUI-29, R-TUI-32,
R-TUI-33, R-TUI-34).

tmux delivers a paste as a terminal does: ``paste-buffer -p`` brackets it when the program
asked for bracketed paste, plain ``paste-buffer`` sends its lines with carriage returns, as
a terminal without that mode would.
"""

from __future__ import annotations

import itertools
import sqlite3
import stat
import time
from collections.abc import Iterator

import pytest

from harness9_ref.text import STRINGS

from .test_screen_tmux import Screen, pytestmark, started  # noqa: F401  (pytestmark: skipped without tmux)
from .test_screen_tmux_approval import CommandServer

EN = STRINGS["en"]


def paste(screen: Screen, text: str, bracketed: bool = True) -> None:
    clip = screen.tmp_path / "clip.txt"
    clip.write_text(text, encoding="utf-8")
    screen.tmux("load-buffer", "-b", "clip", str(clip))
    screen.tmux("paste-buffer", "-b", "clip", *(["-p"] if bracketed else []), "-t", "main")


def stored_prompts(screen: Screen) -> list[str]:
    with sqlite3.connect(screen.db) as db:
        return [row[0] for row in db.execute("SELECT content FROM messages WHERE role = 'user' ORDER BY id")]


@pytest.mark.parametrize("bracketed", [True, False], ids=["bracketed", "unbracketed"])
def test_a_pasted_block_of_three_lines_is_one_prompt(screen: Screen, bracketed: bool) -> None:
    """R-TUI-29: the lines wait in the input box, on rows of their own, until Enter sends them
    as one prompt; nothing is sent by the paste, and no 'a turn is running' error."""
    started(screen, "--lang", "en")
    paste(screen, "line one\nline two\nline three", bracketed)
    rows = ["> line one", "  line two", "  line three"]
    screen.wait(lambda: [r.rstrip() for r in screen.rows()[-3:]] == rows, "three input rows")
    assert "> line one" not in "\n".join(screen.rows()[:-3])  # not sent
    screen.keys("Enter")
    screen.wait_idle()
    assert stored_prompts(screen) == ["line one\nline two\nline three"]
    assert EN["busy_prompt"] not in screen.text()


def test_alt_enter_and_a_backslash_start_a_new_line(screen: Screen) -> None:
    started(screen, "--lang", "en")
    screen.type("first")
    screen.keys("M-Enter")
    screen.type("second\\")
    screen.keys("Enter")  # typed keys, each in a read of its own: wait for the new line first
    screen.wait(lambda: [r.rstrip() for r in screen.rows()[-3:]] == ["> first", "  second", ""], "the new line")
    screen.type("third")
    screen.wait(lambda: screen.rows()[-1].rstrip() == "  third", "the third row")
    screen.keys("Enter")
    screen.wait_idle()
    assert stored_prompts(screen) == ["first\nsecond\nthird"]


def test_a_long_paste_arrives_whole(screen: Screen) -> None:
    """R-TUI-29, R-TUI-31: a 20,000-character line pasted at once is in the input whole, its
    end in view; the old editor needed minutes for a fifth of it."""
    started(screen, "--lang", "en")
    text = "".join(f"{i:05d}," for i in range(3334))[:20_000]
    paste(screen, text)
    screen.wait(lambda: screen.rows()[-1].rstrip().endswith(text[-30:]), "the end of the paste")
    screen.keys("Enter")
    screen.wait_idle()
    assert stored_prompts(screen) == [text]


def test_ctrl_c_clears_the_input_then_quits(screen: Screen) -> None:
    """R-TUI-33: Ctrl+C with text in the input clears it and keeps the program; on an empty
    input it ends the program (R-TUI-9)."""
    started(screen, "--lang", "en")
    screen.type("half a thought")
    screen.wait(lambda: "half a thought" in screen.rows()[-1], "the typed text")
    screen.keys("C-c")
    screen.wait_idle()
    assert not screen.dead()
    screen.keys("C-c")
    assert screen.wait_exit() == "0"


def test_ctrl_c_cancels_a_listing_without_quitting(screen: Screen) -> None:
    started(screen, "--lang", "en")
    screen.say("remember me")
    screen.type("/resume")
    screen.keys("Enter")
    screen.wait_text(EN["resume_prompt"])
    screen.keys("C-c")
    screen.wait_text(EN["cancelled"])
    screen.wait_idle()
    screen.say("still here")
    assert not screen.dead()


def test_ctrl_w_deletes_a_word_and_tab_lists_the_candidates(screen: Screen) -> None:
    started(screen, "--lang", "en")
    screen.type("git commit -m")
    screen.keys("C-w")
    screen.wait(lambda: screen.rows()[-1].rstrip() == "> git commit", "one word less")
    screen.keys("C-u")
    screen.type("/re")
    screen.keys("Tab")
    screen.wait_text("/resume  /rewind")
    assert screen.rows()[-1].rstrip() == "> /re"


def test_ctrl_x_ctrl_e_edits_the_prompt_in_the_editor(screen: Screen) -> None:
    """R-TUI-32: the editor gets the input in a file and what it saves becomes the input."""
    editor = screen.tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "%s\\nadded by the editor\\n" "$(cat "$1")" > "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    started(screen, "--lang", "en", environ={"EDITOR": str(editor)})
    screen.type("draft")
    screen.keys("C-x", "C-e")
    screen.wait(lambda: [r.rstrip() for r in screen.rows()[-2:]] == ["> draft", "  added by the editor"], "the edited input")
    screen.keys("Enter")
    screen.wait_idle()
    assert stored_prompts(screen) == ["draft\nadded by the editor"]


@pytest.fixture
def slow_server() -> Iterator[CommandServer]:
    serving = CommandServer(delay=1.0)
    yield serving
    serving.close()


def test_keys_typed_as_the_question_appears_do_not_answer_it(screen: Screen, slow_server: CommandServer) -> None:
    """R-TUI-34: typing that goes on while the question appears (a key every 0.1 s, n and y
    among them, from before the question until after it) answers nothing: the text waits in
    the input box whole, and a y pressed after a pause approves."""
    slow_server.command = "echo ran > proof.txt"
    slow_server.start()
    started(screen, "--provider", "openai", "--model", "m", "--lang", "en", environ={"OPENAI_BASE_URL": slow_server.url})
    screen.type("clean up")
    screen.keys("Enter")
    screen.wait(lambda: screen.rows()[-1].startswith("*"), "the running turn")
    typed, letters, shown_at = "", itertools.cycle("no yes "), None
    deadline = time.monotonic() + 10
    while shown_at is None or time.monotonic() - shown_at < 0.3:
        assert time.monotonic() < deadline, screen.text()
        letter = next(letters)
        screen.type(letter)
        typed += letter
        time.sleep(0.1)
        if shown_at is None and screen.rows()[-1].startswith("?"):
            shown_at = time.monotonic()
    screen.wait(lambda: screen.rows()[-1].rstrip() == ("? " + typed).rstrip(), "the typed text in the input box")
    assert EN["approve_no"] not in screen.text() and EN["approve_yes"] not in screen.text()
    screen.answer("y")
    screen.wait(lambda: (screen.workdir / "proof.txt").exists(), "the approved command")
    screen.wait(lambda: screen.rows()[-1].rstrip() == ("> " + typed).rstrip(), "the typed text back in the input")
