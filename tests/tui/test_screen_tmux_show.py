"""A tool result as a person meets it in the real program inside tmux (harness9_ref/tui;
SPEC R-TUI-40, R-TUI-41, R-TUI-42, R-CLI-41).

Same harness as test_screen_tmux.py, with ``--yes`` so the offline provider's commands run: a
command past a one-second ``--bash-timeout`` says so on its tool line, Ctrl+O shows the last
result whole from its tool line, ``/show N`` an earlier one, and a diff's lines are coloured.
"""

from __future__ import annotations

import re

from .test_screen_tmux import Screen, pytestmark, started  # noqa: F401  (pytestmark: skipped without tmux)
from .test_screen_tmux_daily import rows

SGR = re.compile(r"\x1b\[([0-9;]*)m")
PLAIN = {"", "0", "39", "49"}  # resets and default colours: no colour of the line's own
DIFF = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old\n+new\n"


def test_a_timed_out_command_says_so_on_its_tool_line(screen: Screen) -> None:
    started(screen, "--yes", "--bash-timeout", "1").say("run sleep 30; echo done")
    assert "\u2190 bash: (no output) [timed out after 1 s]" in rows(screen)


def test_ctrl_o_and_show_show_a_result_whole(screen: Screen) -> None:
    started(screen, "--yes").say("run echo first")
    screen.say("run seq 1 60")
    assert "\u2190 bash: 1 \uff0860 \u884c\uff0c171 B\uff09" in rows(screen)
    screen.keys("C-o")
    screen.wait(lambda: rows(screen)[0] == "\u2190 bash: 1 \uff0860 \u884c\uff0c171 B\uff09", "the result from its tool line")
    assert rows(screen)[1:4] == ["  1", "  2", "  3"]
    screen.keys("PageDown")
    screen.wait(lambda: "  60" in rows(screen), "the end of the result")
    screen.type("/show 1")
    screen.keys("Enter")
    screen.wait(lambda: rows(screen)[-5:-2] == ["> /show 1", "\u2190 bash: first", "  first"], "the first result")
    screen.say("/show 9")
    assert "\u7528\u6cd5\uff1a/show [\u5e8f\u53f7]\uff0c\u5e8f\u53f7\u4e3a 1 \u5230 2" in rows(screen)  # show_usage, n = 2


def test_a_diff_shown_whole_is_coloured(screen: Screen) -> None:
    (screen.workdir / "x.diff").write_text(DIFF, encoding="utf-8")
    started(screen, "--yes").say("run cat x.diff")
    screen.keys("C-o")
    screen.wait(lambda: "  +new" in rows(screen), "the diff's lines")
    coloured = {
        SGR.sub("", row).rstrip(): frozenset(p for params in SGR.findall(row) for p in params.split(";")) - PLAIN
        for row in screen.rows(escapes=True)
    }
    added, removed, hunk = coloured["  +new"], coloured["  -old"], coloured["  @@ -1 +1 @@"]
    assert added and removed and hunk
    assert len({added, removed, hunk}) == 3
    assert coloured["  +++ b/x.py"] == added and coloured["  --- a/x.py"] == removed
