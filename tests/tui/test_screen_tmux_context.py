"""/context, /compact and the start figure in the real program inside tmux (harness9_ref/tui;
SPEC R-TUI-15, R-TUI-20, R-TUI-21, R-CLI-15).

Same harness as test_screen_tmux.py. What a user reads must agree: the status bar after
``/compact`` shows the notice's figure, ``/context`` the same total, and a resumed session opens
with the engine's figure, not an estimate above the window.
"""

from __future__ import annotations

import re

import pytest

from .test_screen_tmux import Screen, pytestmark, started  # noqa: F401  (pytestmark: skipped without tmux)
from .test_screen_tmux_daily import rows

CONTEXT_HEADER = re.compile(r"^下一次请求：(\S+) / (\S+) tokens（(\d+)%，(\S+)）$")
NOTICE_AFTER = re.compile(r"^\u26a1 上下文已压缩：\S+ \u2014 \S+ \u2192 (\S+) tokens")


def context(screen: Screen) -> list[str]:
    """Type /context and return its lines, from the header to the trigger line."""
    before = sum(1 for row in rows(screen) if CONTEXT_HEADER.match(row))
    screen.type("/context")
    screen.keys("Enter")
    screen.wait(lambda: sum(1 for row in rows(screen) if CONTEXT_HEADER.match(row)) > before, "the /context lines")
    screen.wait(lambda: any(row.startswith(("压缩触发点：", "自动压缩已关闭")) for row in rows(screen)), "the trigger")
    shown = rows(screen)
    start = max(i for i, row in enumerate(shown) if CONTEXT_HEADER.match(row))
    end = next(i for i in range(start, len(shown)) if shown[i].startswith(("压缩触发点：", "自动压缩已关闭")))
    return shown[start : end + 1]


def status_used(screen: Screen) -> str:
    used = screen.status().group(3)
    assert used is not None, screen.text()
    return used.split("/")[0]


def test_context_lists_the_parts_and_the_trigger(screen: Screen) -> None:
    (screen.workdir / "notes.txt").write_text("remember the milk\n" * 20, encoding="utf-8")
    started(screen, window=100_000)
    screen.say("read notes.txt")
    lines = context(screen)
    header = CONTEXT_HEADER.match(lines[0])
    assert header is not None and header.group(2) == "100K"
    assert lines[2] == "    AGENTS.md：无"  # R-INST-5: no AGENTS.md in the home folder or the working directory
    parts = [line for line in lines[1:-1] if not line.startswith("    ")]
    labels = [re.sub(r"（\d+）$", "", line.strip().split("：")[0]) for line in parts]
    assert labels == ["系统提示", "工具定义", "摘要", "消息", "工具结果", "已清除的工具结果"]
    assert parts[2] == "  摘要：0 tokens（0%）"
    assert re.fullmatch(r"  工具结果（1）：\S+ tokens（\d+%）", parts[4])
    assert lines[-1] == "压缩触发点：80K tokens（80%）"  # R-CMP-4's default


@pytest.mark.parametrize(
    ("options", "trigger"),
    [
        (["--compact-at", "0.5"], "压缩触发点：1K tokens（50%）"),
        (["--compact-at", "off"], "自动压缩已关闭：只在模型因请求过长而拒绝时压缩"),
    ],
)
def test_the_trigger_follows_compact_at(screen: Screen, options: list[str], trigger: str) -> None:
    started(screen, *options)
    assert context(screen)[-1] == trigger


def test_compact_notice_status_bar_and_context_show_one_figure(screen: Screen) -> None:
    started(screen, window=100_000)
    for prompt in ("one", "two", "three", "four"):
        screen.say(prompt)
    screen.say("/compact")
    screen.wait(lambda: any(NOTICE_AFTER.match(row) for row in rows(screen)), "the compaction notice")
    notice = next(row for row in rows(screen) if NOTICE_AFTER.match(row))
    assert notice.startswith("\u26a1 上下文已压缩：总结了较早的对话 \u2014 "), notice  # says what it did
    match = NOTICE_AFTER.match(notice)
    assert match is not None
    screen.wait(lambda: status_used(screen) == match.group(1), "the status bar to show the notice's figure")
    header = CONTEXT_HEADER.match(context(screen)[0])
    assert header is not None and header.group(1) == match.group(1)


def test_a_resumed_session_opens_with_the_engines_figure(screen: Screen) -> None:
    """``-c`` opens with the figure /context gave before the program ended (the calibration is
    kept with the session, R-LONG-16), not a prior's estimate."""
    started(screen, window=2500)  # a small window: the session is compacted on the way
    for prompt in ("one", "two", "three", "four", "five", "six"):
        screen.say(prompt)
    before = CONTEXT_HEADER.match(context(screen)[0])
    assert before is not None
    screen.type("/exit")
    screen.keys("Enter")
    assert screen.wait_exit() == "0"
    screen.close()
    again = Screen(screen.tmp_path)
    try:
        started(again, "-c", window=2500)
        assert status_used(again) == before.group(1)
        after = CONTEXT_HEADER.match(context(again)[0])
        assert after is not None and after.groups() == before.groups()
    finally:
        again.close()


def test_compact_says_what_it_did_when_only_tool_results_can_go(screen: Screen) -> None:
    """Reads fill the history with tool results; /compact clears the old ones or summarises
    them, and says which; cleared results show in /context."""
    (screen.workdir / "notes.txt").write_text("remember the milk\n" * 200, encoding="utf-8")
    started(screen, window=100_000)
    for _ in range(6):
        screen.say("read notes.txt")
    screen.say("/compact")
    screen.wait(lambda: any(NOTICE_AFTER.match(row) for row in rows(screen)), "the compaction notice")
    notice = next(row for row in rows(screen) if NOTICE_AFTER.match(row))
    assert re.match(r"\u26a1 上下文已压缩：(清除了 \d+ 条旧工具结果|总结了较早的对话) \u2014 ", notice), notice
    cleared = re.match(r"\u26a1 上下文已压缩：清除了 (\d+) 条", notice)  # else summarised, cleared results too
    lines = context(screen)
    if cleared is not None:
        assert any(line.startswith(f"  已清除的工具结果（{cleared.group(1)}）") for line in lines), lines
    else:
        summary = next(line for line in lines if line.startswith("  摘要："))
        assert not summary.startswith("  摘要：0 "), lines
