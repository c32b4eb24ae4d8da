"""Terminal cell widths of text (SPEC R-TUI-12; the UI is CJK-aware).

A character takes two cells when Unicode gives it the East Asian width W (wide) or F
(full-width), none when it is a combining mark (categories Mn, Me) or a format character
(Cf, such as U+200D ZERO WIDTH JOINER), and one otherwise. Ambiguous characters (A, such as
``…``, ``—``, ``→`` and ``│``) take one cell, as terminals outside CJK locales draw them.

Text from files, commands, providers and the database reaches the terminal only through
``terminal_safe`` (SPEC R-SAFE-1): its control characters are shown as U+FFFD instead of being
obeyed, so no escape sequence of a file the model read can clear the screen or set the title,
and no bidirectional override can make a line read as something else. The pane draws
``clean_line``, the same mapping with tabs as spaces.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = [
    "BIDI_CONTROLS",
    "CONTROL_REPLACEMENT",
    "cell_width",
    "char_cells",
    "clean_line",
    "cut_cells",
    "terminal_safe",
    "wrap_cells",
]

_ZERO_WIDTH_CATEGORIES: Final = frozenset({"Mn", "Me", "Cf"})
_TAB: Final = "    "  # a tab is shown as four spaces (R-SAFE-1)
CONTROL_REPLACEMENT: Final = "\ufffd"  # R-SAFE-1: shown for a control character (escape sequences included)
# R-SAFE-1: the embeddings, overrides and isolates, which can reorder the rest of a line. The
# implicit marks U+200E, U+200F and U+061C are kept: they cannot, and right-to-left text needs them.
BIDI_CONTROLS: Final = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_KEPT_CONTROLS: Final = frozenset("\t\n")
_REMOVED: Final = "\r"
_SAFE_TABLE: Final[dict[int, str | None]] = {
    **{
        code: CONTROL_REPLACEMENT
        for code in (*range(0x20), *range(0x7F, 0xA0))  # C0, DEL, C1
        if chr(code) not in _KEPT_CONTROLS
    },
    **{ord(ch): CONTROL_REPLACEMENT for ch in BIDI_CONTROLS},
    ord(_REMOVED): None,
}


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


def terminal_safe(text: str) -> str:
    """``text`` with its control characters made visible (R-SAFE-1): newline and tab kept, CR
    removed, C0 and C1 controls, DEL and the bidirectional overrides as U+FFFD.

    Each character is mapped on its own, so a stream cleaned chunk by chunk gives the same
    text as the whole cleaned at once.
    """
    if text.isprintable():  # the common case, no control, no format character: nothing to map
        return text
    return text.translate(_SAFE_TABLE)


def clean_line(text: str) -> str:
    """``text`` as the pane draws it (R-SAFE-1): ``terminal_safe``, each tab as four spaces."""
    return terminal_safe(text).replace("\t", _TAB)


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
