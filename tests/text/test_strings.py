"""The strings table of both languages (harness9_ref/text/_strings.py; SPEC R-TUI-17).

The pin test (tests/test_spec_coverage.py) compares STRINGS_TABLE with SPEC.md; these check
what makes the table safe to use: both languages fill the same fields, no text carries white
space an editor would strip, and the earlier constants are the Chinese texts.
"""

from __future__ import annotations

import string

import pytest

import harness9_ref.text as text_package
from harness9_ref.memory.storage import NOT_OURS
from harness9_ref.text import LANGS, STRINGS, STRINGS_TABLE, parse_strings, strings_for


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_two_languages_with_the_same_keys_and_fields() -> None:
    assert LANGS == ("zh", "en")
    assert STRINGS["zh"].keys() == STRINGS["en"].keys()
    for key in STRINGS["zh"]:
        assert fields(STRINGS["zh"][key]) == fields(STRINGS["en"][key]), key


def test_no_text_starts_or_ends_with_white_space() -> None:
    for lang in LANGS:
        for key, text in STRINGS[lang].items():
            assert text and text == text.strip(), (lang, key)
    assert not STRINGS_TABLE.endswith("\n")


def test_the_earlier_constants_are_the_chinese_texts() -> None:
    zh = STRINGS["zh"]
    assert zh["compaction_notice"] == text_package.COMPACTION_NOTICE
    assert zh["resume_header"] == text_package.RESUME_HEADER and zh["resume_prompt"] == text_package.RESUME_PROMPT
    assert zh["no_sessions"] == text_package.NO_SESSIONS and zh["cancelled"] == text_package.CANCELLED_NOTICE
    assert text_package.INTERRUPTED_NOTICE == zh["interrupted"] == "已中断"
    assert text_package.UNKNOWN_COMMAND + "/x" == zh["unknown_command"].format(input="/x") == "未知命令：/x"
    assert text_package.ERROR_PREFIX == "错误："
    assert text_package.STATUS_BAR == "[harness9] {model}  workdir: {workdir}  \u2502  session: {session}..."


def test_an_unknown_language_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown language 'de': expected one of zh, en"):
        strings_for("de")


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("a = b", "not 'key = text'"),
        ("[zh]\nno separator", "not 'key = text'"),
        ("[zh]\na = 1\na = 2", "'a' comes twice"),
        ("[zh]\na = 1\n[en]\nb = 1", "keys of \\[en\\] differ"),
        ("[zh]\nnot a key = 1", "not 'key = text'"),
    ],
)
def test_malformed_tables_are_refused(table: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_strings(table)


def test_a_text_may_contain_the_separator() -> None:
    assert parse_strings("[zh]\na = x = y") == {"zh": {"a": "x = y"}}


def test_the_foreign_file_error_ends_with_r_db_2s_message() -> None:
    """R-CLI-13c, R-LANG-3: the command line's English line for another program's file is R-DB-2's message."""
    assert STRINGS["en"]["err_not_ours"] == "{path}: " + NOT_OURS
