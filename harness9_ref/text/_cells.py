"""Terminal cell widths of text (SPEC R-TUI-12; the UI is CJK-aware).

A character takes two cells when Unicode gives it the East Asian width W (wide) or F
(full-width), none when it is a combining mark (categories Mn, Me) or a format character
(Cf, such as U+200D ZERO WIDTH JOINER), and one otherwise. Ambiguous characters (A, such as
``…``, ``—``, ``→`` and ``│``) take one cell, as terminals outside CJK locales draw them.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["cell_width", "char_cells", "clean_line", "cut_cells", "wrap_cells"]  # gets re-exported

_ZERO_WIDTH_CATEGORIES: Final = frozenset({"Mn", "Me", "Cf"})
_TAB: Final = "    "  # a tab is shown as four spaces
_REPLACEMENT: Final = "\ufffd"  # shown for other control characters (escape sequences included)


def char_cells(ch: str) -> int:
    """The cells one character takes: 0, 1 or 2."""
    if ch.isascii():
        return 1
    if unicodedata.category(ch) in _ZERO_WIDTH_CATEGORIES:
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def cell_width(text: str) -> int:
    """The cells ``text`` takes on one terminal row."""
    if text.isascii():
        return len(text)
    return sum(char_cells(ch) for ch in text)


def cut_cells(text: str, width: int) -> str:
    """The longest prefix of ``text`` that fits in ``width`` cells (a wide character that would
    straddle the edge is left out, so the result may be one cell short)."""
    if width <= 0:
        return ""
    if text.isascii():
        return text[:width]
    used = 0
    for i, ch in enumerate(text):
        used += char_cells(ch)
        if used > width:
            return text[:i]
    return text


def clean_line(text: str) -> str:
    """``text`` made safe to draw: tabs become spaces, CR is dropped, and every other control
    character but the newline becomes U+FFFD, so tool output cannot move the cursor."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch == "\n" or ch.isprintable() or ch == " ":
            out.append(ch)
        elif ch == "\t":
            out.append(_TAB)
        elif ch == "\r":
            continue
        elif unicodedata.category(ch) == "Cc":
            out.append(_REPLACEMENT)
        else:
            out.append(ch)  # format and separator characters other than controls
    return "".join(out)


def wrap_cells(text: str, width: int) -> list[str]:
    """Split ``text`` into rows of at most ``width`` cells.

    Each newline starts a row. A row breaks after the last space that fits when there is one
    (the space is dropped), else between characters, so CJK text, which has no spaces, breaks
    anywhere. Empty text gives one empty row.
    """
    width = max(width, 2)  # a wide character needs two cells
    rows: list[str] = []
    for para in text.split("\n"):
        if cell_width(para) <= width:
            rows.append(para)
            continue
        row: list[str] = []
        cells = 0
        for ch in para:
            w = char_cells(ch)
            if cells + w > width:
                if ch == " ":
                    rows.append("".join(row))
                    row, cells = [], 0
                    continue
                space = _last_space(row)
                if space > 0:
                    rows.append("".join(row[:space]))
                    row = row[space + 1 :]
                else:
                    rows.append("".join(row))
                    row = []
                cells = sum(char_cells(c) for c in row)
            row.append(ch)
            cells += w
        rows.append("".join(row))
    return rows


def _last_space(row: list[str]) -> int:
    for i in range(len(row) - 1, -1, -1):
        if row[i] == " ":
            return i
    return -1
