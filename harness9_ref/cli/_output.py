"""What the line modes write: text with its control characters made visible, or as received
with ``--raw`` (SPEC R-SAFE-1, R-SAFE-2); ``run --json``'s lines (R-CLI-17).

Text from files, commands, the provider and the database reaches standard output and standard
error only through one of these filters, so an escape sequence a file holds is shown, not
obeyed. ``run`` streams through ``terminal_safe`` (tabs kept: the answer is text to copy); the
session sub-commands print the pane's lines, tabs as spaces (``clean_line``, R-CLI-12).
A JSON line needs no filter: it carries every text exactly, with the characters a terminal
could obey or a reader could split a line at written as escapes (``json_line``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from ..text import BIDI_CONTROLS, clean_line, terminal_safe

__all__ = ["Filter", "json_line", "line_filter", "stream_filter"]

Filter = Callable[[str], str]

# R-CLI-17: what JSON may leave unescaped but a terminal could obey (DEL, C1 controls, the
# bidirectional controls of R-SAFE-1) or a reader could end a line at (U+0085, U+2028, U+2029);
# JSON itself escapes C0. These characters occur only inside the strings of a JSON text.
_ESCAPED: Final = re.compile("[\x7f-\x9f\u2028\u2029" + "".join(sorted(BIDI_CONTROLS)) + "]")


def json_line(value: Mapping[str, Any]) -> str:
    """``value`` as one line of ``run --json`` (R-CLI-17): compact JSON, UTF-8 kept, ending in LF.

    The escapes leave the value unchanged for any JSON reader, so the text is exact (nothing is
    replaced as ``terminal_safe`` replaces it) and still safe on a terminal.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _ESCAPED.sub(lambda match: f"\\u{ord(match.group()):04x}", text) + "\n"


def as_received(text: str) -> str:
    """``--raw``: the text unchanged, control characters included (R-SAFE-2)."""
    return text


def stream_filter(raw: bool) -> Filter:
    """``run`` mode's filter of the answer and its lines on standard error (R-SAFE-2)."""
    return as_received if raw else terminal_safe


def line_filter(raw: bool) -> Filter:
    """The session sub-commands' filter of each line they print (R-CLI-12, R-SAFE-2)."""
    return as_received if raw else clean_line
