"""Cell widths and wrapping (harness9_ref/text/_cells.py; SPEC R-TUI-12)."""

from __future__ import annotations

import pytest

from harness9_ref.text import cell_width, char_cells, clean_line, cut_cells, wrap_cells


@pytest.mark.parametrize(
    ("ch", "cells"),
    [
        ("a", 1),
        ("中", 2),
        ("，", 2),  # full-width comma (F)
        ("（", 2),
        ("\u26a1", 2),  # ⚡ is wide
        ("\u2026", 1),  # … is ambiguous: one cell
        ("\u2502", 1),
        ("\u2014", 1),
        ("\u2192", 1),
        ("é", 1),
        ("\u0301", 0),  # combining acute accent
        ("\u200d", 0),  # zero width joiner
        ("😀", 2),
    ],
)
def test_char_cells(ch: str, cells: int) -> None:
    assert char_cells(ch) == cells


def test_cell_width() -> None:
    assert cell_width("") == 0
    assert cell_width("abc") == 3
    assert cell_width("上下文已压缩") == 12
    assert cell_width("e\u0301") == 1


@pytest.mark.parametrize(
    ("text", "width", "cut"),
    [
        ("hello", 3, "hel"),
        ("hello", 0, ""),
        ("\u0301a", 0, ""),
        ("hello", 1, "h"),
        ("中文", 1, ""),
        ("中文字", 4, "中文"),
        ("中文字", 5, "中文"),
        ("a中文", 2, "a"),
        ("abc", 10, "abc"),
    ],
)
def test_cut_cells_never_splits_a_wide_character(text: str, width: int, cut: str) -> None:
    assert cut_cells(text, width) == cut


def test_wrap_breaks_after_the_last_space_that_fits() -> None:
    assert wrap_cells("the quick brown fox", 10) == ["the quick", "brown fox"]
    assert wrap_cells("abcdefghijkl", 5) == ["abcde", "fghij", "kl"]
    assert wrap_cells("a\n\nb", 5) == ["a", "", "b"]
    assert wrap_cells("", 5) == [""]
    assert wrap_cells("12345 678", 5) == ["12345", "678"]


def test_wrap_counts_wide_characters_as_two_cells() -> None:
    assert wrap_cells("上下文已压缩了", 6) == ["上下文", "已压缩", "了"]
    assert wrap_cells("a上下文", 4) == ["a上", "下文"]
    for row in wrap_cells("⚡ 上下文已压缩 — 12.5K → 6.2K tokens（45 → 22 条消息）", 11):
        assert cell_width(row) <= 11


def test_clean_line_makes_text_safe_to_draw() -> None:
    assert clean_line("plain 中文") == "plain 中文"
    assert clean_line("a\tb") == "a    b"
    assert clean_line("a\r\nb") == "a\nb"
    assert clean_line("\x1b[31mred\x1b[0m") == "\ufffd[31mred\ufffd[0m"
    assert clean_line("bell\x07") == "bell\ufffd"
