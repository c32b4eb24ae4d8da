"""Control characters made visible (harness9_ref/text/_cells.py; SPEC R-SAFE-1).

The mapping is checked over every code point of the ranges it names and their neighbours, so a
range cut one short or one long fails here, and chunk by chunk against the whole text.
"""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from harness9_ref.text import BIDI_CONTROLS, CONTROL_REPLACEMENT, clean_line, terminal_safe

C0 = [chr(c) for c in range(0x20) if chr(c) not in "\t\n\r"]
C1 = [chr(c) for c in range(0x80, 0xA0)]
BIDI = [*map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))]


def test_the_replacement_and_the_bidi_controls_are_those_spec_names() -> None:
    assert CONTROL_REPLACEMENT == "\ufffd"
    assert frozenset(BIDI) == BIDI_CONTROLS


def test_every_control_and_override_becomes_the_replacement() -> None:
    for ch in [*C0, "\x7f", *C1, *BIDI]:
        assert terminal_safe(f"a{ch}b") == "a\ufffdb", hex(ord(ch))


def test_newline_and_tab_are_kept_and_cr_is_removed() -> None:
    assert terminal_safe("a\tb\nc") == "a\tb\nc"
    assert terminal_safe("one\r\ntwo\rthree") == "one\ntwothree"
    assert terminal_safe("\r") == ""


def test_the_neighbours_of_each_range_are_kept() -> None:
    for code in (0x20, 0x7E, 0xA0, 0xA1, 0x2029, 0x202F, 0x2065, 0x206A):
        assert terminal_safe(chr(code)) == chr(code), hex(code)


def test_the_implicit_direction_marks_and_other_format_characters_are_kept() -> None:
    for ch in ("\u200e", "\u200f", "\u061c", "\u200d", "\u200b", "\ufeff", "\u2028", "\u0301"):
        assert terminal_safe(f"x{ch}y") == f"x{ch}y", hex(ord(ch))


def test_ordinary_unicode_is_kept() -> None:
    text = "plain 中文 ｶﾀｶﾅ 👩\u200d💻 é e\u0301 \U0010ffff \U000e0001"  # emoji ZWJ sequence, unassigned
    assert terminal_safe(text) == text


def test_escape_sequences_are_shown_not_obeyed() -> None:
    assert terminal_safe("\x1b[2J\x1b]0;title\x07\x9b31m") == "\ufffd[2J\ufffd]0;title\ufffd\ufffd31m"
    assert terminal_safe("\u202eevil\u202c") == "\ufffdevil\ufffd"


def test_only_the_named_characters_change() -> None:
    for code in range(0x10000):
        ch = chr(code)
        if unicodedata.category(ch) == "Cs":
            continue
        named = ch in C0 or ch == "\x7f" or ch in C1 or ch in BIDI
        expected = "" if ch == "\r" else CONTROL_REPLACEMENT if named else ch
        assert terminal_safe(ch) == expected, hex(code)


@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"))))
def test_pieces_give_what_the_whole_gives(pieces: list[str]) -> None:
    assert "".join(terminal_safe(p) for p in pieces) == terminal_safe("".join(pieces))


def test_clean_line_is_terminal_safe_with_tabs_as_four_spaces() -> None:
    assert clean_line("a\tb\r\n\x1b[1m\u202e") == "a    b\n\ufffd[1m\ufffd"
    assert clean_line("\t") == "    "
