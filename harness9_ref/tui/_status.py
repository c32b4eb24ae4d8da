"""The status bar (SPEC R-TUI-1 … R-TUI-4, R-TUI-12; seed 10.1, D9).

Pure: ``render_status`` turns the numbers into coloured segments, ``StatusState`` follows the
token updates. Neither knows curses; the screen draws the segments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ..memory import format_token_count
from ._cells import cell_width, cut_cells
from ._text import (
    COLOUR_HIGH,
    COLOUR_OK,
    COLOUR_WARN,
    ELLIPSIS,
    HIGH_PERCENT,
    STATUS_BAR,
    STATUS_CTX,
    STATUS_CTX_GAP,
    STATUS_CTX_UNKNOWN_WINDOW,
    WARN_PERCENT,
)

__all__ = ["Segment", "StatusState", "ctx_colour", "display_model", "render_status"]  # gets re-exported

Segment = tuple[str, Optional[int]]
"""A piece of the status bar: its text and its ANSI 256-colour number, or None (default colour)."""


def display_model(model: str) -> str:
    """The model name without its routing prefix: everything up to its last ``/`` (R-TUI-1)."""
    return model.rpartition("/")[2]


def ctx_colour(pct: int) -> int:
    """The colour of the ctx part for a usage percentage (R-TUI-3): 10, 11 or 9."""
    if pct < WARN_PERCENT:
        return COLOUR_OK
    if pct < HIGH_PERCENT:
        return COLOUR_WARN
    return COLOUR_HIGH


def _ctx_segment(used: int, window: int) -> Segment:
    if window <= 0:
        return STATUS_CTX_UNKNOWN_WINDOW.format(used=format_token_count(used)), None
    pct = used * 100 // window
    text = STATUS_CTX.format(used=format_token_count(used), window=format_token_count(window), pct=pct)
    return text, ctx_colour(pct)


def render_status(
    model: str, workdir: str, session_id: str, used: int | None, window: int, width: int
) -> list[Segment]:
    """The status bar as segments that together fit in ``width`` cells (R-TUI-1 … R-TUI-3, R-TUI-12).

    Args:
        model: the configured model name; its routing prefix is not shown.
        workdir: the absolute working directory.
        session_id: the current session's id; its first 8 characters are shown.
        used: the tokens of the latest token update, or None before the first one (or since
            the last /new or /resume): then there is no ctx part.
        window: the context window (0 = unknown: the ctx part is ``ctx: <used>``, uncoloured).
        width: the screen width in cells.

    Returns:
        ``[(text, colour)]``: the bar up to and including the gap before ``ctx:`` with colour
        None, then the ctx part with colour 10, 11 or 9 (None when the window is unknown).
        Empty segments are left out. When the bar is wider than ``width``, the start of
        ``workdir`` is replaced by ``…`` (as much of its end kept as fits); if even ``…`` alone
        does not fit, the bar is cut at ``width`` cells (R-TUI-12). ``width <= 0`` gives ``[]``.
    """
    ctx: Segment | None = None if used is None else _ctx_segment(used, window)
    tail = cell_width(ctx[0]) if ctx is not None else 0  # head() ends with the gap

    def head(directory: str) -> str:
        text = STATUS_BAR.format(model=display_model(model), workdir=directory, session=session_id[:8])
        return text + STATUS_CTX_GAP if ctx is not None else text

    left = head(workdir)
    if cell_width(left) + tail > width and workdir:
        fixed = cell_width(head("")) + tail + cell_width(ELLIPSIS)
        room = width - fixed  # cells left for the end of the workdir
        left = head(ELLIPSIS + _fit_suffix(workdir, room))
    segments: list[Segment] = [(left, None)]
    if ctx is not None:
        segments.append(ctx)
    return _cut(segments, width)


def _fit_suffix(text: str, room: int) -> str:
    """The longest suffix of ``text`` (shorter than ``text``) that fits in ``room`` cells."""
    if room <= 0:
        return ""
    for start in range(1, len(text)):
        if cell_width(text[start:]) <= room:
            return text[start:]
    return ""


def _cut(segments: list[Segment], width: int) -> list[Segment]:
    out: list[Segment] = []
    room = width
    for text, colour in segments:
        piece = cut_cells(text, room)
        if piece:
            out.append((piece, colour))
        room -= cell_width(piece)
        if piece != text:
            break
    return out


@dataclass(frozen=True, slots=True)
class StatusState:
    """What the status bar knows of the context: ``used`` tokens and the ``window`` (R-TUI-2, R-TUI-4).

    ``StatusState()`` is the state at start-up and after /new or /resume: no ctx part.
    ``updated`` applies one token update: ``used`` always follows it, the window is taken
    from the first update whose ``context_window`` is non-zero and never changes after that
    (seed 12: set once, so the bar does not flicker).
    """

    used: int | None = None
    window: int = 0

    def updated(self, estimated_tokens: int, context_window: int) -> StatusState:
        window = self.window if self.window != 0 else context_window
        return StatusState(estimated_tokens, window)

    def apply(self, update: Mapping[str, Any]) -> StatusState:
        """``updated`` from the JSON data of a token_update event (R-EVT-2)."""
        return self.updated(int(update["estimated_tokens"]), int(update["context_window"]))

    def to_dict(self) -> dict[str, Any]:
        return {"used": self.used, "window": self.window}
