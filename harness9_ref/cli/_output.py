"""What the line modes write: text with its control characters made visible, or as received
with ``--raw`` (SPEC R-SAFE-1, R-SAFE-2).

Text from files, commands, the provider and the database reaches standard output and standard
error only through one of these filters, so an escape sequence a file holds is shown, not
obeyed. ``run`` streams through ``terminal_safe`` (tabs kept: the answer is text to copy); the
session sub-commands print the pane's lines, tabs as spaces (``clean_line``, R-CLI-12).
"""

from __future__ import annotations

from collections.abc import Callable

from ..text import clean_line, terminal_safe

__all__ = ["Filter", "line_filter", "stream_filter"]

Filter = Callable[[str], str]


def as_received(text: str) -> str:
    """``--raw``: the text unchanged, control characters included (R-SAFE-2)."""
    return text


def stream_filter(raw: bool) -> Filter:
    """``run`` mode's filter of the answer and its lines on standard error (R-SAFE-2)."""
    return as_received if raw else terminal_safe


def line_filter(raw: bool) -> Filter:
    """The session sub-commands' filter of each line they print (R-CLI-12, R-SAFE-2)."""
    return as_received if raw else clean_line
