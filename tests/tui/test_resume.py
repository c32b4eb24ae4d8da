"""The /resume and /search listings and the choice (harness9_ref/tui/_resume.py; SPEC R-TUI-8,
R-TUI-18, R-TUI-19)."""

from __future__ import annotations

from typing import Any

import pytest

from harness9_ref.memory.storage import SearchHit, SessionSummary
from harness9_ref.text import CANCELLED_NOTICE, NO_SESSIONS, PAGE_SIZE
from harness9_ref.tui import format_age, listing_lines, parse_listing_choice

NOW = 1779000000
SEED: list[dict[str, Any]] = [
    {
        "id": "f3a2c1b0-4d7e-4c3a-9f12-ab8d1e2c3f01", "created_at": 0, "updated_at": NOW - 600, "message_count": 23,
        "title": "重构 session 模块",
    },
    {"id": "9c1b77a2-8e5f-4b2d-a301-cd4e5f6a7b02", "created_at": 0, "updated_at": NOW - 5900, "message_count": 41, "title": ""},
    {
        "id": "8d4f2e01-1c3b-4a5d-b210-ef7a8b9c0d03", "created_at": 0, "updated_at": NOW - 150000, "message_count": 1,
        "title": "为什么？",
    },
]
SEED_LINES = [
    "可用会话（3 条）：",
    "  [1] f3a2c1b0  10 分钟前  23 条消息  重构 session 模块",
    "  [2] 9c1b77a2  1 小时前  41 条消息",
    "  [3] 8d4f2e01  1 天前  1 条消息  为什么？",
    "输入序号选择（非数字 Enter 取消）：",
]


def many(n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"{i:08x}-0000-4000-8000-000000000000", "created_at": 0, "updated_at": NOW, "message_count": 2, "title": f"t{i}"}
        for i in range(n)
    ]


def test_one_page_of_three() -> None:
    assert listing_lines(SEED, page=1, now=NOW) == SEED_LINES


def test_session_summaries_and_json_objects_give_the_same_lines() -> None:
    summaries = [SessionSummary(**item) for item in SEED]
    assert listing_lines(summaries, page=1, now=NOW) == SEED_LINES


def test_search_hits_show_their_snippet() -> None:
    hits = [SearchHit(SEED[0]["id"], SEED[0]["updated_at"], 23, "title", "…the snippet…")]
    assert listing_lines(hits, page=1, now=NOW, search=True) == [
        "匹配的会话（1 条）：",
        "  [1] f3a2c1b0  10 分钟前  23 条消息  …the snippet…",
        "输入序号选择（非数字 Enter 取消）：",
    ]
    assert listing_lines([], page=1, now=NOW, search=True) == ["没有匹配的会话"]
    assert listing_lines([], page=1, now=NOW, search=True, lang="en") == ["no session matches"]


def test_english() -> None:
    assert listing_lines(SEED, page=1, now=NOW, lang="en") == [
        "Sessions (3):",
        "  [1] f3a2c1b0  10 min ago  23 messages  重构 session 模块",
        "  [2] 9c1b77a2  1 h ago  41 messages",
        "  [3] 8d4f2e01  1 d ago  1 message  为什么？",
        "Type a number to open one (anything else and Enter cancels):",
    ]


def test_no_session_gives_one_line() -> None:
    assert listing_lines([], page=1, now=NOW) == [NO_SESSIONS] == ["没有可恢复的会话"]
    assert listing_lines([], page=1, now=NOW, lang="en") == ["no session to resume"]


def test_ten_fit_one_page_and_the_eleventh_only_says_there_is_more() -> None:
    ten = listing_lines(many(10), page=1, now=NOW)
    assert len(ten) == 12 and ten[0] == "可用会话（10 条）：" and ten[-1] == "输入序号选择（非数字 Enter 取消）："
    eleven = listing_lines(many(11), page=1, now=NOW)
    assert len(eleven) == 12
    assert eleven[0] == "可用会话（第 1 页，本页 10 条）："
    assert eleven[10] == "  [10] 00000009  刚刚  2 条消息  t9"
    assert eleven[-1] == "输入序号选择，n 下一页（其他 Enter 取消）："


def test_later_pages_number_on_and_name_the_keys_that_work() -> None:
    middle = listing_lines(many(11), page=2, now=NOW)  # items 11 … 20 and one more
    assert middle[0] == "可用会话（第 2 页，本页 10 条）："
    assert middle[1].startswith("  [11] 00000000")
    assert middle[-1] == "输入序号选择，n 下一页，p 上一页（其他 Enter 取消）："
    last = listing_lines(many(3), page=3, now=NOW)
    assert last[0] == "可用会话（第 3 页，本页 3 条）："
    assert last[1].startswith("  [21] ") and last[3].startswith("  [23] ")
    assert last[-1] == "输入序号选择，p 上一页（其他 Enter 取消）："


@pytest.mark.parametrize(
    ("d", "zh", "en"),
    [
        (-5, "刚刚", "just now"),
        (0, "刚刚", "just now"),
        (59, "刚刚", "just now"),
        (60, "1 分钟前", "1 min ago"),
        (3599, "59 分钟前", "59 min ago"),
        (3600, "1 小时前", "1 h ago"),
        (86399, "23 小时前", "23 h ago"),
        (86400, "1 天前", "1 d ago"),
        (400 * 86400, "400 天前", "400 d ago"),
    ],
)
def test_ages(d: int, zh: str, en: str) -> None:
    assert format_age(NOW, NOW - d) == zh
    assert format_age(NOW, NOW - d, "en") == en


@pytest.mark.parametrize(
    ("text", "page", "count", "has_next", "choice"),
    [
        ("1", 1, 3, False, 1),
        ("3", 1, 3, False, 3),
        ("  2 \t", 1, 3, False, 2),
        ("02", 1, 3, False, 2),
        ("10", 1, 10, True, 10),
        ("11", 1, 10, True, None),
        ("11", 2, 1, False, 11),
        ("1", 2, 5, False, None),
        ("4", 1, 3, False, None),
        ("0", 1, 3, False, None),
        ("", 1, 3, False, None),
        ("-1", 1, 3, False, None),
        ("1.0", 1, 3, False, None),
        ("１", 1, 3, False, None),  # FULLWIDTH DIGIT ONE
        ("9" * 5000, 1, 10, False, None),
        ("0" * 5000 + "1", 1, 10, False, 1),
        ("n", 1, 10, True, "next"),
        (" n ", 1, 10, True, "next"),
        ("n", 1, 10, False, None),
        ("p", 2, 10, False, "previous"),
        ("p", 1, 10, True, None),
        ("N", 1, 10, True, None),
        ("next", 1, 10, True, None),
    ],
)
def test_parse_listing_choice(text: str, page: int, count: int, has_next: bool, choice: object) -> None:
    assert parse_listing_choice(text, page=page, count=count, has_next=has_next) == choice


def test_page_size_and_cancelled_notice() -> None:
    assert PAGE_SIZE == 10
    assert CANCELLED_NOTICE == "已取消"
