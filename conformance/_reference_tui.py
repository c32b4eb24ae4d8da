"""The terminal UI's pure parts as ops of the reference adapter (``tui_*``).

The screen itself is tested in a real terminal by the Python tests; what a port must reproduce
byte for byte is the text: the status bar and its colours, the compaction notice, the /resume
listing and choice, and the command table's completion and dispatch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from harness9_ref.tui import (
    RESUME_LIMIT,
    StatusState,
    classify_input,
    compaction_notice,
    complete_command,
    parse_resume_choice,
    render_status,
    resume_listing,
)

__all__ = ["TUI_OPS"]


def op_tui_status(inp: Mapping[str, Any]) -> list[list[Any]]:
    """The status bar after the given token updates (none: before the first one)."""
    state = StatusState()
    for update in inp.get("updates", []):
        state = state.apply(update)
    segments = render_status(inp["model"], inp["workdir"], inp["session_id"], state.used, state.window, inp["width"])
    return [[text, colour] for text, colour in segments]


def op_tui_resume(inp: Mapping[str, Any]) -> dict[str, Any]:
    """The /resume lines for ``sessions`` (times at ``tz_offset_minutes`` east of UTC) and the choice."""
    sessions = inp["sessions"]
    lines = resume_listing(sessions, int(inp["tz_offset_minutes"]))
    listed = min(len(sessions), RESUME_LIMIT)
    return {"lines": lines, "choice": None if "typed" not in inp else parse_resume_choice(inp["typed"], listed)}


def op_tui_input(inp: Mapping[str, Any]) -> Any:
    """Tab completion (``"action": "complete"``) or what a submitted line is (``"submit"``)."""
    if inp["action"] == "complete":
        return complete_command(inp["text"])
    kind, text = classify_input(inp["text"])
    return {"kind": kind, "text": text}


TUI_OPS: Final = {
    "tui_status": op_tui_status,
    "tui_notice": lambda inp: compaction_notice(inp),
    "tui_resume": op_tui_resume,
    "tui_input": op_tui_input,
}
