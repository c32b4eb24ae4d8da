"""The input line (harness9_ref/tui/_editor.py; SPEC R-TUI-6, R-TUI-11)."""

from __future__ import annotations

import pytest

from harness9_ref.text import char_cells
from harness9_ref.tui import LineEditor, _editor
from harness9_ref.tui._editor import InputView, paste_text


def typed(text: str) -> LineEditor:
    editor = LineEditor()
    editor.insert(text)
    return editor


def test_typing_and_moving() -> None:
    editor = typed("helo")
    editor.left()
    editor.insert("l")
    assert (editor.text, editor.cursor) == ("hello", 4)
    editor.home()
    editor.delete()
    assert editor.text == "ello"
    editor.end()
    editor.backspace()
    assert editor.text == "ell"
    editor.insert("\x07\n")  # control characters are not inserted
    assert editor.text == "ell"


def test_kill_before_and_after_the_cursor() -> None:
    editor = typed("hello world")
    for _ in range(5):
        editor.left()
    editor.kill_after()
    assert editor.text == "hello "
    editor.kill_before()
    assert (editor.text, editor.cursor) == ("", 0)


def test_tab_completes_a_command() -> None:
    editor = typed("/res")
    editor.complete()
    assert (editor.text, editor.cursor) == ("/resume", 7)
    editor = typed("hello")
    editor.complete()
    assert editor.text == "hello"


def test_up_and_down_walk_the_history_and_keep_the_draft() -> None:
    editor = LineEditor()
    for line in ("first", "second", "second", "  "):
        editor.set_text(line)
        editor.submit()
    assert editor.history == ["first", "second"]
    editor.insert("draft")
    editor.up()
    assert editor.text == "second"
    editor.up()
    assert editor.text == "first"
    editor.up()
    assert editor.text == "first"
    editor.down()
    assert editor.text == "second"
    editor.down()
    assert editor.text == "draft"
    editor.down()
    assert editor.text == "draft"


def test_submit_without_remembering() -> None:
    editor = typed("3")
    assert editor.submit(remember=False) == "3"
    assert editor.history == []
    assert editor.text == ""


def test_the_view_scrolls_to_keep_the_cursor_visible() -> None:
    editor = typed("abcdefghij")
    assert editor.view(20) == InputView(["abcdefghij"], 0, 10)
    assert editor.view(5) == InputView(["ghij"], 0, 4)
    editor.home()
    assert editor.view(5) == InputView(["abcde"], 0, 0)


def test_the_view_counts_wide_characters() -> None:
    editor = typed("你好世界")
    assert editor.view(20) == InputView(["你好世界"], 0, 8)
    assert editor.view(6) == InputView(["世界"], 0, 4)  # the cursor needs the cell after "界"
    editor.home()
    assert editor.view(6) == InputView(["你好世"], 0, 0)


# R-TUI-29, R-TUI-30: several lines, pasted or typed with Alt+Enter.


def test_a_paste_keeps_its_lines_and_drops_controls() -> None:
    editor = typed("say: ")
    editor.paste("line one\r\nline two\rthree\tfour\x1b[2J\u202e\x07")
    assert editor.text == "say: line one\nline two\nthree\tfour[2J"
    assert editor.cursor == len(editor.text)
    assert paste_text("a\r\n\r\nb") == "a\n\nb"


def test_a_newline_is_typed_and_lines_are_edited_one_at_a_time() -> None:
    editor = typed("first")
    editor.newline()
    editor.insert("second line")
    editor.home()
    assert editor.cursor == len("first\n")
    editor.kill_after()
    assert editor.text == "first\n"
    editor.insert("two")
    editor.up()
    assert editor.cursor == 3  # the same column on the line above
    editor.kill_before()
    assert (editor.text, editor.cursor) == ("st\ntwo", 0)
    editor.down()
    assert editor.cursor == len("st\n")
    editor.end()
    editor.delete_word()
    assert editor.text == "st\n"
    editor.delete_word()  # only the line feed before the cursor: the lines join
    assert editor.text == "st"


def test_up_and_down_leave_the_prompt_for_the_history_only_past_its_ends() -> None:
    editor = typed("old")
    editor.submit()
    editor.paste("a\nb")
    editor.up()
    assert (editor.text, editor.cursor) == ("a\nb", 1)
    editor.up()
    assert editor.text == "old"
    editor.down()
    assert editor.text == "a\nb"


def test_ctrl_w_deletes_the_word_before_the_cursor() -> None:
    editor = typed("git commit  -m")
    editor.delete_word()
    assert editor.text == "git commit  "
    editor.delete_word()
    assert editor.text == "git "
    editor.clear()
    assert (editor.text, editor.cursor) == ("", 0)


def test_tab_reports_the_candidates_it_cannot_choose_between() -> None:
    editor = typed("/re")
    assert editor.complete() == ["/resume", "/rewind"]
    assert editor.text == "/re"
    editor = typed("/n")
    assert editor.complete() == []
    assert editor.text == "/new"


def test_the_view_shows_the_lines_around_the_cursor() -> None:
    editor = LineEditor()
    editor.paste("one\ntwo\nthree\nfour\nfive")
    assert editor.view(10, 3) == InputView(["three", "four", "five"], 2, 4)
    editor.up()
    editor.up()
    assert editor.view(10, 3) == InputView(["two", "three", "four"], 1, 4)
    assert editor.view(10, 1) == InputView(["three"], 0, 4)
    editor.set_text("x\n")
    assert editor.view(10, 4) == InputView(["x", ""], 1, 0)


def test_drawing_walks_only_the_cells_it_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    """R-TUI-31: the old editor measured the whole line again per cell, so a 4,000-character
    paste took a minute; now a redraw looks at the cells it draws, however long the line
    (``benchmarks/bench_paste.py`` times a 100 KB paste)."""
    looked: list[str] = []

    def counted(ch: str) -> int:
        looked.append(ch)
        return char_cells(ch)

    monkeypatch.setattr(_editor, "char_cells", counted)
    editor = LineEditor()
    editor.paste("x" * 100_000 + "\n" + "y" * 100_000)
    editor.up()
    view = editor.view(80, 5)
    assert view.rows == ["x" * 79, "y" * 80] and (view.row, view.column) == (0, 79)
    assert len(looked) <= 4 * 80
