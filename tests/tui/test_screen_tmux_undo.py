"""/rewind putting back the files the dropped turns changed, in the real program inside tmux
(harness9_ref/tui; SPEC R-UNDO-4, R-TUI-50).

Same harness as test_screen_tmux.py, with ``--yes`` so the offline provider's ``write`` and
``edit`` prompts change real files in the screen's working folder; the SQLite file is real. The
diff is shown coloured before the question, and the files change only after a yes.
"""

from __future__ import annotations

from .test_screen_tmux import Screen, pytestmark, started  # noqa: F401  (pytestmark: skipped without tmux)
from .test_screen_tmux_daily import rows
from .test_screen_tmux_fork import EN
from .test_screen_tmux_show import PLAIN, SGR


def edited(screen: Screen) -> Screen:
    """Two prompts: a.txt written, then edited; /rewind listed, the second prompt chosen."""
    started(screen, "--yes", "--lang", "en").say("write a.txt hello")
    screen.say("edit a.txt hello => bye")
    assert (screen.workdir / "a.txt").read_text() == "bye"
    screen.say("/rewind")
    screen.type("2")
    screen.keys("Enter")
    screen.wait(lambda: EN["undo_question"] in rows(screen), "the question about the files")
    return screen


def test_the_diff_is_shown_coloured_and_y_restores_then_rewinds(screen: Screen) -> None:
    """R-TUI-50a: header, the diff from now to before, the question; R-TUI-50b: y restores the
    file, then the rewind happens with the prompt in the input line."""
    shown = rows(edited(screen))
    at = shown.index(EN["undo_header"].format(n=1))
    assert shown[at + 1 : at + 4] == ["--- a/a.txt", "+++ b/a.txt", "@@ -1 +1 @@"]
    assert (screen.workdir / "a.txt").read_text() == "bye"  # nothing written before the answer
    coloured = {
        SGR.sub("", row).rstrip(): frozenset(p for params in SGR.findall(row) for p in params.split(";")) - PLAIN
        for row in screen.rows(escapes=True)
    }
    added, removed, hunk = coloured["+hello"], coloured["-bye"], coloured["@@ -1 +1 @@"]
    assert added and removed and hunk and len({added, removed, hunk}) == 3
    screen.type("y")
    screen.keys("Enter")
    screen.wait(lambda: rows(screen)[-1] == "> edit a.txt hello => bye", "the prompt in the input line")
    assert (screen.workdir / "a.txt").read_text() == "hello"
    assert EN["undo_restored"].format(path="a.txt") in screen.history()


def test_anything_else_keeps_the_files_and_still_rewinds(screen: Screen) -> None:
    """R-TUI-50b: Enter alone is no."""
    edited(screen)
    screen.keys("Enter")
    screen.wait(lambda: rows(screen)[-1] == "> edit a.txt hello => bye", "the prompt in the input line")
    assert (screen.workdir / "a.txt").read_text() == "bye"
    assert EN["undo_kept"] in screen.history()


def test_a_file_changed_since_is_said_and_no_question_is_asked(screen: Screen) -> None:
    """R-UNDO-4a, R-TUI-50a: nothing can be restored, so the rewind goes on at once."""
    started(screen, "--yes", "--lang", "en").say("write a.txt hello")
    (screen.workdir / "a.txt").write_text("mine")
    screen.say("/rewind")
    screen.type("1")
    screen.keys("Enter")
    screen.wait(lambda: rows(screen)[-1] == "> write a.txt hello", "the prompt in the input line")
    assert EN["undo_changed"].format(path="a.txt") in screen.history()
    assert EN["undo_question"] not in screen.history()
    assert (screen.workdir / "a.txt").read_text() == "mine"
