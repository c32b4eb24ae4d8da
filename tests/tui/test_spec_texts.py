"""The UI's fixed texts equal those printed in SPEC.md sections 5.5–5.8, 7.5, 7.6, 9.2, 9.3, 10 and 11, byte for byte
(R-TUI-1, R-TUI-2, R-TUI-5, R-TUI-8, R-TUI-18, R-CLI-13). The strings table itself is pinned
(R-TUI-17) and checked by tests/test_spec_coverage.py."""

from __future__ import annotations

import re

import pytest

from harness9_ref.cli import OFFLINE_NOTICE
from harness9_ref.text import (
    COMPACTION_NOTICE,
    LIST_ITEM,
    LIST_TITLE,
    RESUME_HEADER,
    RESUME_PROMPT,
    STATUS_BAR,
    STATUS_CTX,
    STATUS_CTX_GAP,
    STRINGS,
    compaction_notice,
    model_label,
)
from harness9_ref.tui import render_status
from tests.spec_text import spec_section


def block_after(text: str, caption: str) -> list[str]:
    match = re.search(re.escape(caption) + r".*?```text\n(.*?)\n```", text, re.S)
    assert match is not None, f"no text block after {caption!r} in SPEC.md"
    return match.group(1).split("\n")


@pytest.fixture(scope="module")
def tui_section() -> str:
    return spec_section("Terminal UI")


def as_template(constant: str) -> str:
    """The SPEC spelling of a template constant: {name} fields become <placeholders>."""
    names = {
        "model": "<model>",
        "workdir": "<dir>",
        "session": "<id8>",
        "used": "<used>",
        "window": "<window>",
        "pct": "<pct>",
        "tokens_before": "<before>",
        "tokens_after": "<after>",
        "msgs_before": "<msgs before>",
        "msgs_after": "<msgs after>",
        "n": "<n>",
        "k": "<k>",
        "id": "<id>",
        "time": "<YYYY-MM-DD HH:MM>",
        "count": "<count>",
        "id8": "<id8>",
        "age": "<age>",
        "messages": "<messages word>",
        "title": "<title>",
        "key": "<KEY>",
    }
    return re.sub(r"\{(\w+)\}", lambda m: names[m.group(1)], constant)


def test_status_bar_templates(tui_section: str) -> None:
    before, after = block_after(tui_section, "Status bar (R-TUI-1, R-TUI-2)")
    assert as_template(STATUS_BAR) == before
    assert as_template(STATUS_BAR + STATUS_CTX_GAP + STATUS_CTX) == after


def test_status_bar_example(tui_section: str) -> None:
    example = re.search(r"For example `([^`]*)`", tui_section)
    assert example is not None
    label = model_label("openai", "gpt-4o-mini")
    segments = render_status(label, "/your/project", "f3a2c1b0-0000-4000-8000-000000000000", 45200, 128000, 200)
    assert "".join(text for text, _ in segments) == example.group(1)


def test_compaction_notice_template_and_example(tui_section: str) -> None:
    template, example = block_after(tui_section, "Compaction notice (R-TUI-5)")
    assert as_template(COMPACTION_NOTICE) == template
    data = {"tokens_before": 12500, "tokens_after": 6200, "msgs_before": 45, "msgs_after": 22}
    assert compaction_notice(data) == example


def test_resume_listing_templates(tui_section: str) -> None:
    header, _, prompt = block_after(tui_section, "`/resume` listing (R-TUI-8, R-TUI-18)")
    assert as_template(RESUME_HEADER) == header
    assert prompt == RESUME_PROMPT


def test_listing_item_template() -> None:
    daily = spec_section("Terminal UI")
    assert f"`{as_template(LIST_ITEM + LIST_TITLE)}`" in daily
    assert "`approve_prompt`" in daily and "approve_prompt" in STRINGS["zh"]


def test_fixed_words_of_the_requirements(tui_section: str) -> None:
    for word in ("已取消", "已中断", "错误：", "未知命令：", "没有可恢复的会话"):
        assert f"`{word}" in tui_section


def test_offline_notice() -> None:
    cli = spec_section("Command line")
    assert f"`{as_template(OFFLINE_NOTICE)}`" in cli  # R-CLI-13 names the one key that is missing
