"""A tool result shown whole in the pane, without a terminal (harness9_ref/tui/_app.py; SPEC R-TUI-41, R-TUI-42).

Driven as in test_app.py on a real SQLite file, with the offline provider calling the real
``bash`` tool: Ctrl+O and /show add the result's lines after the pane's last line and put its
tool line at the top of the pane; a diff's lines get the kinds the screen colours.
"""

from __future__ import annotations

from pathlib import Path

from harness9_ref.memory.storage import Manager
from harness9_ref.schema import Message, ToolCall
from harness9_ref.text import STRINGS

from .test_app import make_app, send, texts

EN = STRINGS["en"]
LINES = "run printf 'one\\ntwo\\nthree\\n'"
LINES_TOOL = "\u2190 bash: one (3 lines, 14 B)"
DIFF = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-old\n+new\n same\n"


def test_show_without_a_result_says_so(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path, lang="en")
    send(app, "/show")
    app.show_result()  # Ctrl+O
    assert texts(app) == ["> /show", EN["show_none"], EN["show_none"]]
    assert app.lines[-1].kind == "error"


def test_ctrl_o_shows_the_last_result_whole_from_its_tool_line(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path, lang="en")
    send(app, "run echo first")
    send(app, LINES)
    app.page(5)  # scrolled back: the result is still shown from its tool line
    app.show_result()
    assert texts(app)[-4:] == [LINES_TOOL, "  one", "  two", "  three"]
    assert app.pane_rows(80, 3) == [(LINES_TOOL, "tool"), ("  one", "tool"), ("  two", "tool")]
    app.page(-3)  # PageDown goes on through it
    assert app.pane_rows(80, 3)[-1] == ("  three", "tool")


def test_show_n_counts_the_results_of_the_pane_and_not_its_own_lines(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path, lang="en")
    send(app, "run echo first")
    send(app, LINES)
    send(app, "/show 1")
    assert texts(app)[-2:] == ["\u2190 bash: first", "  first"]  # a short one is shown too
    for typed in ("/show 3", "/show 0", "/show x", "/show -1"):
        send(app, typed)
        assert texts(app)[-1] == EN["show_usage"].format(n=2), typed
    send(app, "/show 01")  # a listed number: leading zeros allowed (R-TUI-18e)
    assert texts(app)[-1] == "  first"


def test_show_finds_the_results_of_a_resumed_session(manager: Manager, tmp_path: Path) -> None:
    call = ToolCall("c1", "bash", '{"command":"git diff"}')
    manager.new_session().add_messages(
        [Message("user", "diff"), Message("assistant", "", (call,)), Message("user", DIFF, tool_call_id="c1")]
    )
    app = make_app(manager, tmp_path, lang="en")
    send(app, "/resume")
    send(app, "1")
    send(app, "/show 1")
    shown = app.lines[-7:]
    assert [line.text for line in shown] == [
        "\u2190 bash: --- a/x.py (6 lines, 54 B)",
        *("  " + line for line in DIFF.splitlines()),
    ]
    assert [line.kind for line in shown] == ["tool", "removed", "added", "hunk", "removed", "added", "tool"]


def test_lines_starting_with_plus_are_no_diff_without_a_hunk_header(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path, lang="en")
    send(app, "run printf '+ one\\n- two\\n'")
    app.show_result()
    assert [line.kind for line in app.lines[-3:]] == ["tool", "tool", "tool"]
