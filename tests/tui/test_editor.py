"""The input line (harness9_ref/tui/_editor.py; SPEC R-TUI-6, R-TUI-11)."""

from __future__ import annotations

from harness9_ref.tui import LineEditor


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
    assert editor.view(20) == ("abcdefghij", 10)
    shown, cursor = editor.view(5)
    assert (shown, cursor) == ("ghij", 4)
    editor.home()
    assert editor.view(5) == ("abcde", 0)


def test_the_view_counts_wide_characters() -> None:
    editor = typed("你好世界")
    assert editor.view(20) == ("你好世界", 8)
    assert editor.view(6) == ("世界", 4)  # the cursor needs the cell after "界"
    editor.home()
    assert editor.view(6) == ("你好世", 0)
