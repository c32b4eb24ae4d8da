"""Token estimation and display (harness9_ref/memory/context/_tokens.py; SPEC R-TOK, R-FMT)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness9_ref.memory.context import CHARS_PER_TOKEN, estimate_tokens, estimate_tool_tokens, format_token_count
from harness9_ref.schema import Message, ToolDefinition
from tests.fakes import assistant, call, result, system, user


def test_a_token_is_four_bytes() -> None:
    assert CHARS_PER_TOKEN == 4


@pytest.mark.parametrize(
    ("content", "utf8_bytes"),
    [
        ("", 0),
        ("abc", 3),
        ("abcd", 4),
        ("hello world!", 12),
        ("éé", 4),  # 2-byte UTF-8
        ("中文字", 9),  # 3-byte UTF-8
        ("中文字中", 12),
        ("😀", 4),  # 4-byte UTF-8
        ("\U00010348\U00010348", 8),
        ("🇨🇳", 8),  # a flag: two regional indicators
        ("\U0001f469\u200d\U0001f4bb", 11),  # woman technologist: 2 emoji, 1 ZWJ
        ("\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466", 25),  # family: 4 emoji, 3 ZWJ
    ],
)
def test_estimate_counts_utf8_bytes_not_code_points(content: str, utf8_bytes: int) -> None:
    assert estimate_tokens([user(content)]) == utf8_bytes // 4


def test_chinese_text_counts_three_bytes_a_character() -> None:
    assert estimate_tokens([user("上下文" * 100)]) == 225  # 900 bytes; 75 by code points


def test_an_empty_history_is_zero_tokens() -> None:
    assert estimate_tokens([]) == 0


def test_the_division_happens_once_on_the_total() -> None:
    assert estimate_tokens([user("abc"), user("def")]) == 1  # 6 bytes, not 0 + 0
    assert estimate_tokens([user("a")] * 7) == 1
    assert estimate_tokens([user("a")] * 8) == 2


def test_tool_call_id_name_and_arguments_are_counted() -> None:
    msg = assistant("", call("ab", "cd", "ef"))
    assert estimate_tokens([msg]) == 1  # 6 bytes
    assert estimate_tokens([assistant("xy", call("ab", "cd", "ef"))]) == 2  # 8 bytes
    assert estimate_tokens([assistant("", call("ab", "cd", "ef"), call("gh", "ij", "kl"))]) == 3  # 12 bytes


def test_tool_call_id_of_a_result_is_counted() -> None:
    assert estimate_tokens([result("call", "")]) == 1
    assert estimate_tokens([result("call", "abcd")]) == 2


def test_role_and_message_framing_are_not_counted() -> None:
    assert estimate_tokens([system("abcd")]) == estimate_tokens([user("abcd")]) == 1
    assert estimate_tokens([assistant("abcd")]) == 1
    assert estimate_tokens([user("")] * 1000) == 0


def test_estimate_accepts_any_iterable() -> None:
    def messages() -> Iterator[Message]:
        yield user("abcd")
        yield user("efgh")

    assert estimate_tokens(messages()) == 2


def test_a_tool_with_a_null_schema_counts_name_and_description() -> None:
    assert estimate_tool_tokens([ToolDefinition("bash", "Run a shell command", None)]) == 23 // 4


def test_a_tool_schema_counts_as_its_canonical_json_bytes() -> None:
    schema = {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "Shell command, e.g. ls <dir>"}},
        "required": ["command"],
    }
    canonical = (
        '{"properties":{"command":{"description":"Shell command, e.g. ls \\u003cdir\\u003e","type":"string"}},'
        '"required":["command"],"type":"object"}'
    )
    assert len(canonical) == 138
    assert estimate_tool_tokens([ToolDefinition("bash", "Run a shell command", schema)]) == (4 + 19 + 138) // 4


def test_tool_estimate_counts_non_ascii_as_utf8_and_divides_once() -> None:
    tools = [ToolDefinition("a", "中", None), ToolDefinition("b", "文", None)]  # 4 + 4 bytes
    assert estimate_tool_tokens(tools) == 2
    assert estimate_tool_tokens([ToolDefinition("ab", "c", None)] * 2) == 1  # 6 bytes
    assert estimate_tool_tokens([]) == 0


def test_an_empty_schema_object_counts_two_bytes() -> None:
    assert estimate_tool_tokens([ToolDefinition("ab", "", {})]) == 1


# SPEC R-FMT: every example of the section plus the boundaries between the three forms.
@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0"),
        (500, "500"),
        (999, "999"),
        (1000, "1K"),
        (1049, "1K"),
        (1050, "1.1K"),
        (1250, "1.3K"),
        (1350, "1.4K"),
        (45200, "45.2K"),
        (128000, "128K"),
        (131072, "131.1K"),
        (999949, "999.9K"),
        (999950, "1M"),
        (1000000, "1M"),
        (1048576, "1M"),
        (1200000, "1.2M"),
        (1250000, "1.3M"),
        (12_345_678, "12.3M"),
        (999_999_999, "1000M"),
        (-1, "-1"),
        (-1500, "-1500"),
    ],
)
def test_format_token_count(n: int, text: str) -> None:
    assert format_token_count(n) == text
