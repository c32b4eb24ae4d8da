"""One figure for one context, in the real program inside tmux (harness9_ref/tui; SPEC R-TUI-15,
R-TUI-35, R-TUI-36, R-TUI-20, R-TUI-5).

Same harness as test_screen_tmux.py. A person keeps the program open for many prompts at a small
window; after each turn the status bar, ``/context``'s total and every compaction notice must
tell the same number, and no notice may report a compaction that made the context larger.
"""

from __future__ import annotations

import re

from .test_screen_tmux import Screen, pytestmark, started  # noqa: F401  (pytestmark: skipped without tmux)
from .test_screen_tmux_context import CONTEXT_HEADER, status_used

NOTICE_FIGURES = re.compile(r"^\u26a1 上下文已压缩\S* \u2014 (\S+) \u2192 (\S+) tokens")


def context_total(screen: Screen) -> str:
    """Type /context and return the total its header shows (R-TUI-20b): the header below the
    newest echo of the command, the pane's last lines (older ones scroll away)."""
    screen.type("/context")
    screen.keys("Enter")
    screen.wait_idle()

    def header() -> re.Match[str] | None:
        shown = [row.rstrip() for row in screen.rows()[:-2]]
        echo = max((i for i, row in enumerate(shown) if row.startswith("> ")), default=None)
        ours = echo is not None and shown[echo] == "> /context"  # a prompt was the last thing said before
        found = [CONTEXT_HEADER.match(row) for row in shown[echo:]] if ours else []
        return next((m for m in found if m is not None), None)

    screen.wait(lambda: header() is not None, "the /context header")
    found = header()
    assert found is not None
    return found.group(1)


def tokens(text: str) -> float:
    """A count as R-FMT writes it (``729``, ``1.1K``) back to a number, to compare two of them."""
    return float(text[:-1]) * 1000 if text.endswith("K") else float(text)


PROMPTS = tuple(f"prompt number {n}: tell me about the context window" for n in range(1, 10))


def test_status_bar_context_and_notices_show_one_figure_prompt_after_prompt(screen: Screen) -> None:
    started(screen, window=2000)
    assert status_used(screen) == context_total(screen)  # R-TUI-15: before any prompt
    for prompt in PROMPTS:
        screen.say(prompt)
        used = status_used(screen)
        total = context_total(screen)
        assert used == total, (prompt, used, total, screen.text())  # R-TUI-35
    notices = [NOTICE_FIGURES.match(row) for row in screen.history().splitlines()]
    shown = [(m.group(1), m.group(2)) for m in notices if m is not None]
    assert shown, screen.history()  # nine prompts at 2K compact on the way
    for before, after in shown:  # R-TUI-36: a notice only for a context that got smaller
        assert tokens(after) <= tokens(before), shown  # equal only as R-FMT rounds them
