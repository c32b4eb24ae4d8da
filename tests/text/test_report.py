"""The notice of each compaction tier and /context's lines (harness9_ref/text/_report.py; SPEC
R-TUI-5, R-TUI-20, R-TUI-21). The byte-exact texts are conformance cases; here, the rules around them."""

from __future__ import annotations

import pytest

from harness9_ref.engine import CompactionData, ContextPart, ContextReport
from harness9_ref.text import COMPACTION_TIERS, CONTEXT_PARTS, STRINGS, compaction_notice, context_lines


def report(**changes: object) -> ContextReport:
    values: dict[str, object] = {
        "window": 1000,
        "budget": 800,
        "total": 500,
        "source": "estimate",
        "parts": tuple(ContextPart(name, 100, 1) for name in CONTEXT_PARTS[:5]),
    }
    values.update(changes)
    return ContextReport(**values)  # type: ignore[arg-type]


def test_literal_mode_keeps_the_generic_notice() -> None:
    data = CompactionData(12500, 6200, 45, 22)
    assert compaction_notice(data) == "\u26a1 上下文已压缩 \u2014 12.5K \u2192 6.2K tokens\uff0845 \u2192 22 条消息\uff09"
    assert compaction_notice(data.to_dict()) == compaction_notice(data)


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("tier", COMPACTION_TIERS)
def test_each_tier_has_its_own_words(tier: str, lang: str) -> None:
    line = compaction_notice(CompactionData(2000, 1000, 10, 8, tier=tier, cleared=2), lang)
    generic = compaction_notice(CompactionData(2000, 1000, 10, 8), lang)
    assert line != generic and line.startswith("\u26a1 ")
    assert ("2" in line) and ("2K" in line and "1K" in line)
    if tier != "cleared":
        assert line.endswith(STRINGS[lang]["compaction_also_cleared"].format(cleared=2))


def test_the_cleared_count_is_said_once() -> None:
    line = compaction_notice(CompactionData(2000, 1000, 10, 10, tier="cleared", cleared=3))
    assert line.count("3") == 1 and "另清除" not in line


def test_context_lines_follow_the_parts() -> None:
    lines = context_lines(report())
    assert len(lines) == 1 + 5 + 1
    assert lines[1] == "  系统提示：100 tokens（10%）" and lines[2] == "  工具定义（1）：100 tokens（10%）"
    assert lines[-1] == "压缩触发点：800 tokens（80%）"


def test_unknown_parts_and_sources_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown part 'images'"):
        context_lines(report(parts=(ContextPart("images", 1, 1),)))
    with pytest.raises(ValueError, match="unknown source 'guess'"):
        context_lines(report(source="guess"))
