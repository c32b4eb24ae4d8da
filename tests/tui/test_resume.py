"""The /resume listing and choice (harness9_ref/tui/_resume.py; SPEC R-TUI-8; seed 10.3)."""

from __future__ import annotations

from datetime import timedelta, timezone

import pytest

from harness9_ref.memory import SessionInfo
from harness9_ref.tui import CANCELLED_NOTICE, NO_SESSIONS, parse_resume_choice, resume_listing

# The document's example; 1778999400 is 2026-05-17 06:30 UTC, 14:30 at UTC+8.
SEED = [
    {"id": "f3a2c1b0-4d7e-4c3a-9f12-ab8d1e2c3f01", "created_at": 0, "updated_at": 1778999400, "message_count": 23},
    {"id": "9c1b77a2-8e5f-4b2d-a301-cd4e5f6a7b02", "created_at": 0, "updated_at": 1778894100, "message_count": 41},
    {"id": "8d4f2e01-1c3b-4a5d-b210-ef7a8b9c0d03", "created_at": 0, "updated_at": 1778850000, "message_count": 7},
]
SEED_LINES = [
    "可用会话（3 条）：",
    "  [1] f3a2c1b0-4d7e-4c3a-9f12-ab8d1e2c3f01  2026-05-17 14:30  23 条消息",
    "  [2] 9c1b77a2-8e5f-4b2d-a301-cd4e5f6a7b02  2026-05-16 09:15  41 条消息",
    "  [3] 8d4f2e01-1c3b-4a5d-b210-ef7a8b9c0d03  2026-05-15 21:00  7 条消息",
    "输入序号选择（非数字 Enter 取消）：",
]


def test_the_documents_example_at_utc_plus_8() -> None:
    assert resume_listing(SEED, 480) == SEED_LINES
    assert resume_listing(SEED, timezone(timedelta(hours=8))) == SEED_LINES


def test_session_infos_and_json_objects_give_the_same_lines() -> None:
    infos = [SessionInfo(**item) for item in SEED]
    assert resume_listing(infos, 480) == SEED_LINES


def test_the_time_is_shown_in_the_given_zone() -> None:
    assert resume_listing(SEED[:1], 0)[1] == "  [1] f3a2c1b0-4d7e-4c3a-9f12-ab8d1e2c3f01  2026-05-17 06:30  23 条消息"
    assert resume_listing(SEED[:1], -300)[1].endswith("2026-05-17 01:30  23 条消息")


def test_no_session_gives_one_line() -> None:
    assert resume_listing([], 0) == [NO_SESSIONS] == ["没有可恢复的会话"]


def test_only_the_ten_first_are_listed() -> None:
    infos = [
        {"id": f"{i:08x}-0000-4000-8000-000000000000", "created_at": 0, "updated_at": 0, "message_count": i}
        for i in range(12)
    ]
    lines = resume_listing(infos, 0)
    assert len(lines) == 12
    assert lines[0] == "可用会话（10 条）："
    assert lines[10] == "  [10] 00000009-0000-4000-8000-000000000000  1970-01-01 00:00  9 条消息"
    assert lines[11] == "输入序号选择（非数字 Enter 取消）："


@pytest.mark.parametrize(
    ("text", "count", "choice"),
    [
        ("1", 3, 1),
        ("3", 3, 3),
        ("  2 \t", 3, 2),
        ("02", 3, 2),
        ("10", 10, 10),
        ("4", 3, None),
        ("0", 3, None),
        ("00", 3, None),
        ("", 3, None),
        ("   ", 3, None),
        ("-1", 3, None),
        ("+1", 3, None),
        ("1.0", 3, None),
        ("1 2", 3, None),
        ("one", 3, None),
        ("١", 3, None),  # ARABIC-INDIC DIGIT ONE is a digit, but not ASCII
        ("１", 3, None),  # FULLWIDTH DIGIT ONE
        ("1", 0, None),
        ("9" * 5000, 10, None),
        ("0" * 5000 + "1", 10, 1),
    ],
)
def test_parse_resume_choice(text: str, count: int, choice: int | None) -> None:
    assert parse_resume_choice(text, count) == choice


def test_cancelled_notice() -> None:
    assert CANCELLED_NOTICE == "已取消"
