"""Clearing stale tool results in a view, the cheap tier before any summary (SPEC R-LONG-11, R-LONG-12).

In a coding agent most of the context is tool output that the model read once and acted on: a
file it has since changed, a test run it has since repeated. Replacing such an old result with a
one-line placeholder frees most of the room a summary would, without a model call and without
losing anything, since the placeholder says where the full text is (its position in the session)
and how to read it back (the recall tool, R-RCL).

Which results are cleared is decided by one number, the *watermark*: every clearable result at a
stored position below it is shown as a placeholder, in this request and every later one. The
watermark only moves forward, so a result once cleared stays cleared and the request prefix stays
the same from turn to turn, as a provider's prompt cache needs. Like shortening (R-TRIM), clearing
changes the view only; pairs stay intact (the placeholder keeps its ``tool_call_id``) and the
stored history is never rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ...schema import Message
from ._tokens import utf8_len

__all__ = [
    "CLEARED_RESULT",
    "CLEAR_EXCLUDED_TOOLS",
    "CLEAR_KEEP_RESULTS",
    "clear_below",
    "cleared_placeholder",
    "next_watermark",
]

# R-LONG-11: the text that stands for a cleared result.
CLEARED_RESULT: Final = (
    "[tool result cleared to save context: {tool}, {bytes} bytes, message {position}; "
    "the recall tool reads it back by that position]"
)
CLEAR_KEEP_RESULTS: Final = 3  # R-LONG-12: the newest clearable results before the tail stay
# R-LONG-11: the engine's own tools; clearing what recall just read back would invite a loop.
CLEAR_EXCLUDED_TOOLS: Final = frozenset({"recall", "todo"})
UNKNOWN_TOOL: Final = "unknown tool"


def cleared_placeholder(tool: str, size: int, position: int) -> str:
    """The placeholder of a result of ``size`` bytes from ``tool`` at ``position`` (R-LONG-11a).

    The name goes in last: a name is any text the model chose, and one holding ``{bytes}`` or
    ``{position}`` must not take the number meant for the template's own placeholder.
    """
    return CLEARED_RESULT.replace("{bytes}", str(size), 1).replace("{position}", str(position), 1).replace("{tool}", tool, 1)


def _tool_names(msgs: Sequence[Message]) -> dict[str, str]:
    """The tool name of every call id in ``msgs`` (the last call of an id wins, as results follow it)."""
    return {call.id: call.name for msg in msgs for call in msg.tool_calls}


def clearable(msgs: Sequence[Message], kept: int, stop: int, first_position: int) -> list[tuple[int, str]]:
    """``(index, placeholder)`` of each result in ``msgs[kept:stop]`` that clearing may replace (R-LONG-11).

    A result is clearable when its tool is not one of CLEAR_EXCLUDED_TOOLS and its placeholder
    is shorter, in bytes, than its content. ``msgs[kept]`` is at stored position ``first_position``.
    """
    names = _tool_names(msgs)
    found: list[tuple[int, str]] = []
    for index in range(kept, min(stop, len(msgs))):
        msg = msgs[index]
        if not msg.tool_call_id:
            continue
        tool = names.get(msg.tool_call_id, UNKNOWN_TOOL)
        if tool in CLEAR_EXCLUDED_TOOLS:
            continue
        size = utf8_len(msg.content)
        placeholder = cleared_placeholder(tool, size, first_position + index - kept)
        if utf8_len(placeholder) < size:
            found.append((index, placeholder))
    return found


def clear_below(msgs: Sequence[Message], kept: int, first_position: int, watermark: int) -> tuple[list[Message], int]:
    """``msgs`` with every clearable result at a position below ``watermark`` replaced, and how many (R-LONG-11)."""
    stop = kept + max(0, watermark - first_position)
    view = list(msgs)
    cleared = clearable(msgs, kept, stop, first_position)
    for index, placeholder in cleared:
        msg = msgs[index]
        view[index] = Message(msg.role, placeholder, msg.tool_calls, msg.tool_call_id)
    return view, len(cleared)


def next_watermark(msgs: Sequence[Message], kept: int, split: int, first_position: int, watermark: int) -> int:
    """Where clearing would move the watermark: past all but the newest CLEAR_KEEP_RESULTS results before ``split`` (R-LONG-12).

    Returns ``watermark`` itself when there are no more than CLEAR_KEEP_RESULTS clearable
    results at or above it before ``split``.
    """
    candidates = [index for index, _ in clearable(msgs, kept, split, first_position)]
    fresh = [index for index in candidates if first_position + index - kept >= watermark]
    if len(fresh) <= CLEAR_KEEP_RESULTS:
        return watermark
    return first_position + fresh[-CLEAR_KEEP_RESULTS] - kept
