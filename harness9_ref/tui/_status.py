"""The status bar (SPEC R-TUI-1 … R-TUI-4, R-TUI-12, R-TUI-15, R-TUI-16, R-TUI-25, R-TUI-26).

Pure: ``render_status`` turns the numbers into coloured segments, ``StatusState`` follows the
token updates. Neither knows curses; the screen draws the segments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..memory.context import format_token_count
from ..text import (
    COLOUR_HIGH,
    COLOUR_OK,
    COLOUR_WARN,
    DEFAULT_LANG,
    ELLIPSIS,
    HIGH_PERCENT,
    STATUS_CTX_GAP,
    STATUS_MODEL,
    STATUS_SEPARATOR,
    STATUS_WORKDIR_GAP,
    WARN_PERCENT,
    cell_width,
    cut_cells,
    strings_for,
)

__all__ = ["Segment", "StatusState", "ctx_colour", "render_status"]

Segment = tuple[str, int | None]
"""A piece of the status bar: its text and its ANSI 256-colour number, or None (default colour)."""


def ctx_colour(pct: int) -> int:
    """The colour of the ctx part for a usage percentage (R-TUI-3): 10, 11 or 9."""
    if pct < WARN_PERCENT:
        return COLOUR_OK
    if pct < HIGH_PERCENT:
        return COLOUR_WARN
    return COLOUR_HIGH


def _ctx_segment(used: int, window: int, texts: Mapping[str, str]) -> Segment:
    if window <= 0:
        return texts["status_ctx_unknown"].format(used=format_token_count(used)), None
    pct = used * 100 // window
    text = texts["status_ctx"].format(used=format_token_count(used), window=format_token_count(window), pct=pct)
    return text, ctx_colour(pct)


def render_status(
    label: str,
    workdir: str,
    session_id: str,
    used: int | None,
    window: int,
    width: int,
    lang: str = DEFAULT_LANG,
) -> list[Segment]:
    """The status bar as segments that together fit in ``width`` cells (R-TUI-1 … R-TUI-3, R-TUI-12, R-TUI-16).

    Args:
        label: the model label of R-TUI-25 (``model_label``), shown as given.
        workdir: the absolute working directory.
        session_id: the current session's id; its first 8 characters are shown.
        used: the tokens the ctx part shows (R-TUI-15's estimate, then each token update's),
            or None for a bar without a ctx part.
        window: the context window (0 = unknown: the ctx part is ``ctx: <used>``, uncoloured).
        width: the screen width in cells.
        lang: the language of R-TUI-17.

    Returns:
        ``[(text, colour)]``: the bar up to and including the gap before ``ctx:`` with colour
        None, then the ctx part with colour 10, 11 or 9 (None when the window is unknown).
        Empty segments are left out. A bar wider than ``width`` loses, in this order, until it
        fits (R-TUI-16): the start of ``workdir`` (replaced by ``…``, down to ``…`` and the
        last path component), the workdir part with the gap before it, the model; then the
        part left of ``ctx:`` is cut where that keeps the whole session part (and one space
        before ``ctx:``), else the separator and session part go and the rest is cut, and the
        ctx part itself only when it alone is wider than the screen. ``width <= 0`` gives ``[]``.
    """
    texts = strings_for(lang)
    ctx: Segment | None = None if used is None else _ctx_segment(used, window, texts)
    room = width - (cell_width(ctx[0]) if ctx is not None else 0)
    session = texts["status_session"].format(session=session_id[:8])
    name = texts["status_name"]
    with_model = STATUS_MODEL.format(name=name, model=label)

    def left(head: str, directory: str | None) -> str:
        workdir_part = "" if directory is None else STATUS_WORKDIR_GAP + texts["status_workdir"].format(workdir=directory)
        text = head + workdir_part + STATUS_SEPARATOR + session
        return text + STATUS_CTX_GAP if ctx is not None else text

    candidates = [left(with_model, d) for d in _shortened(workdir)]
    candidates += [left(with_model, None), left(name, None)]
    chosen = next((c for c in candidates if cell_width(c) <= room), None)
    if chosen is None:  # a cut inside the session part would leave half an id: drop the part
        whole = cell_width(name + STATUS_SEPARATOR + session) + (1 if ctx is not None else 0)
        chosen = candidates[-1] if whole <= room else name + (STATUS_CTX_GAP if ctx is not None else "")
    segments: list[Segment] = []
    if room > 0:
        segments.append((cut_cells(chosen, room), None))
    if ctx is not None:
        segments.append((cut_cells(ctx[0], width), ctx[1]))
    return [(text, colour) for text, colour in segments if text]


def _shortened(workdir: str) -> list[str]:
    """``workdir``, then ``…`` and ever shorter ends of it, the last being ``…`` and the last
    path component with its ``/`` (R-TUI-12, R-TUI-16)."""
    out = [workdir]
    last = workdir.rstrip("/").rfind("/")
    out.extend(ELLIPSIS + workdir[start:] for start in range(1, last + 1))
    return out


@dataclass(frozen=True, slots=True)
class StatusState:
    """What the status bar knows of the context: ``used`` tokens and the ``window`` (R-TUI-2, R-TUI-4).

    At start-up and after /new or /resume the UI starts from ``StatusState(estimate, window)``
    with R-TUI-15's estimate and the configured window; ``StatusState()`` has no ctx part.
    ``updated`` applies one token update: ``used`` always follows it, the window is taken
    from the first update whose ``context_window`` is non-zero and never changes after that
    (R-TUI-4: set once, so the bar does not flicker).
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
