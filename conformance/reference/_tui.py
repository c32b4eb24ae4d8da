"""The terminal UI's pure parts as ops of the reference adapter (``tui_*``).

The screen itself is tested in a real terminal by the Python tests; what a port must reproduce
byte for byte is the text, in both languages of R-TUI-17: the status bar and its colours at
every width, its figure before the first token update, the compaction notice of each tier,
/context's lines, the /resume and
/search listings with their ages and pages and the choice that follows, the command table's
completion and dispatch, /help, the strings table itself, and the mapping that makes control
characters visible (R-SAFE-1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from conformance.reference._memory import InvalidInput
from harness9_ref.engine import closing_data, one_line
from harness9_ref.provider import OFFICIAL_BASE_URLS, request_model
from harness9_ref.schema import ToolDefinition, messages_from_list
from harness9_ref.text import (
    DEFAULT_LANG,
    PAGE_SIZE,
    STRINGS,
    ToolResult,
    clean_line,
    compaction_notice,
    context_lines,
    context_report_from_dict,
    model_label,
    not_saved_notice,
    result_lines,
    retry_notice,
    run_compaction_notice,
    terminal_safe,
    tool_result_line,
    window_notice,
)
from harness9_ref.tools import FileChange, command_words, rule_offers
from harness9_ref.tui import (
    LineEditor,
    Rewind,
    StatusState,
    allow_answer,
    allow_line,
    approval_answer,
    approval_header,
    approval_line,
    classify_input,
    command_rows,
    complete_command,
    context_estimate,
    diff_lines,
    help_lines,
    listing_lines,
    parse_listing_choice,
    render_status,
    session_prompts,
)

__all__ = ["TUI_OPS"]

APPROVE_WIDTH: Final = 80  # R-APPR-11: the width of approve_prompt's rows when the case gives none


def _lang(inp: Mapping[str, Any]) -> str:
    return str(inp.get("lang", DEFAULT_LANG))


def op_tui_status(inp: Mapping[str, Any]) -> list[list[Any]]:
    """The status bar at start-up (R-TUI-15: ``start`` describes the session, or gives the
    engine's context report in long-session mode; none: no ctx part) after the given token
    updates, a ``{"report": …}`` among them being the closing token update of that report (R-TUI-37)."""
    start = inp.get("start")
    state = StatusState()
    if start is not None and "report" in start:
        report = context_report_from_dict(start["report"])
        state = StatusState(report.total, report.window)
    elif start is not None:
        state = StatusState(_start_figure(start), int(start["window"]))
    for update in inp.get("updates", []):  # R-TUI-37: {"report": …} is a run's closing token update
        state = state.apply(closing_data(context_report_from_dict(update["report"])).to_dict() if "report" in update else update)
    provider = str(inp["provider"])  # R-TUI-25, R-TUI-26: the label from the provider, what it sends and where
    base_url = str(inp.get("base_url", OFFICIAL_BASE_URLS.get(provider, "")))
    label = model_label(provider, request_model(provider, str(inp["model"]), base_url), base_url)
    segments = render_status(label, inp["workdir"], inp["session_id"], state.used, state.window, inp["width"], _lang(inp))
    return [[text, colour] for text, colour in segments]


def _start_figure(inp: Mapping[str, Any]) -> int:
    """R-TUI-15's figure without long-session mode for a session storing ``stored``."""
    tools = [ToolDefinition.from_dict(t, f"tools[{n}]") for n, t in enumerate(inp.get("tools", []))]
    return context_estimate(str(inp["system"]), messages_from_list(inp["stored"], "stored"), tools)


def op_tui_resume(inp: Mapping[str, Any]) -> dict[str, Any]:
    """Page ``page`` of the /resume (or, with ``search``, /search) listing of ``sessions`` at
    time ``now``, and what ``typed`` asks for: a number, "next", "previous" or null."""
    sessions = inp["sessions"]
    page = int(inp.get("page", 1))
    fetched = sessions[(page - 1) * PAGE_SIZE : page * PAGE_SIZE + 1]  # as the UI fetches: one more
    lines = listing_lines(
        fetched,
        page=page,
        now=int(inp["now"]),
        search=bool(inp.get("search", False)),
        lang=_lang(inp),
        here=inp.get("here"),
    )
    choice = None
    if "typed" in inp:
        shown = min(len(fetched), PAGE_SIZE)
        choice = parse_listing_choice(inp["typed"], page=page, count=shown, has_next=len(fetched) > PAGE_SIZE)
    return {"lines": lines, "choice": choice}


def _rewind(inp: Mapping[str, Any]) -> dict[str, Any]:
    """Page ``page`` (default: the last) of /rewind's listing of the prompts of ``messages``
    (R-FORK-4), what ``typed`` asks for, and for a number the position the fork ends at and
    what the input line then holds (R-FORK-5)."""
    rewind = Rewind(session_prompts(messages_from_list(inp["messages"])), int(inp.get("page", 0)))
    choice = rewind.choose(inp["typed"]) if "typed" in inp else None
    answer: dict[str, Any] = {"lines": rewind.lines(_lang(inp)), "choice": choice}
    if isinstance(choice, int):
        editor = LineEditor()
        editor.insert(one_line(rewind.item(choice).text))  # as the UI puts it there
        answer.update(at=rewind.item(choice).position, input_line=editor.text)
    return answer


_EDIT_KEYS: Final = {
    "newline": LineEditor.newline,
    "backspace": LineEditor.backspace,
    "delete": LineEditor.delete,
    "left": LineEditor.left,
    "right": LineEditor.right,
    "home": LineEditor.home,
    "end": LineEditor.end,
    "up": LineEditor.up,
    "down": LineEditor.down,
    "ctrl+u": LineEditor.kill_before,
    "ctrl+k": LineEditor.kill_after,
    "ctrl+w": LineEditor.delete_word,
}


def _edit(keys: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    """The input box after ``keys`` (R-TUI-29, R-TUI-30, R-TUI-33): each ``{"text"}`` typed,
    ``{"paste"}`` pasted or ``{"key"}`` one of ``_EDIT_KEYS``, on an empty box without history;
    the text and the cursor as an index into it."""
    editor = LineEditor()
    for key in keys:
        if "text" in key:
            editor.insert(key["text"])
        elif "paste" in key:
            editor.paste(key["paste"])
        elif key.get("key") in _EDIT_KEYS:
            _EDIT_KEYS[key["key"]](editor)
        else:
            raise InvalidInput(f"edit: not a key of the protocol: {json.dumps(key)}")
    return {"text": editor.text, "cursor": editor.cursor}


def op_tui_input(inp: Mapping[str, Any]) -> Any:
    """Tab completion (``complete``), /rewind's listing and choice (``rewind``, R-FORK-4, R-FORK-5),
    what a submitted line is (``submit``), /help's lines
    (``help``), the whole table of strings (``strings``) in ``lang``, what a key means while a
    command waits for approval (``approve``), the lines asking about a command (``approve_prompt``,
    R-APPR-11, its rows ``width`` cells wide),
    the lines shown for a change (``approve_change``, R-APPR-5), the rule question for the
    command ``text`` in ``workdir`` (``allow_prompt``) and what a key ``text`` means while it
    waits for the command ``command`` (``allow_key``, R-APPR-8)
    or the lines of /context for a context report (``context``, R-TUI-20; with the AGENTS.md
    files of the system prompt as ``instructions``, R-INST-5), the line of a
    retry event's data (``retry`` with ``event``, R-ENG-22), the line of a tool result event's
    data (``tool_result`` with ``event``, R-TUI-24), or ``text`` with its control
    characters made visible (``terminal_safe``) and as the pane draws it (``pane_line``, R-SAFE-1)."""
    if inp["action"] == "complete":
        return complete_command(inp["text"])
    if inp["action"] == "candidates":  # R-TUI-33: what Tab lists when it cannot choose
        editor = LineEditor()
        editor.set_text(inp["text"])
        return editor.complete()
    if inp["action"] == "edit":
        return _edit(inp["keys"])
    if inp["action"] == "rewind":
        return _rewind(inp)
    if inp["action"] == "help":
        return help_lines(_lang(inp))
    if inp["action"] == "strings":
        return dict(STRINGS[_lang(inp)])
    if inp["action"] == "approve":
        return approval_answer(inp["text"])
    if inp["action"] == "approve_prompt":  # R-APPR-11: the header, the command's rows, the question
        command = inp["text"]
        rows = command_rows(command, inp.get("width", APPROVE_WIDTH))
        return [approval_header(command, _lang(inp)), *rows, approval_line(command, _lang(inp))]
    if inp["action"] == "approve_change":  # R-APPR-5: the diff's pane lines, then the question
        change = FileChange(inp["tool"], inp["path"], inp["diff"])
        return [*diff_lines(change, _lang(inp)), approval_line(change, _lang(inp))]
    if inp["action"] == "allow_prompt":
        return allow_line(rule_offers(command_words(inp["text"])), inp["workdir"], _lang(inp))
    if inp["action"] == "allow_key":
        meaning = allow_answer(inp["text"], rule_offers(command_words(inp["command"])))
        return list(meaning) if isinstance(meaning, tuple) else meaning
    if inp["action"] == "context":  # R-INST-5: with "instructions", the AGENTS.md files' lines
        return context_lines(context_report_from_dict(inp["report"]), _lang(inp), inp.get("instructions"))
    if inp["action"] == "retry":
        return retry_notice(inp["event"], _lang(inp))
    if inp["action"] == "window":  # R-EVT-12, R-TUI-28
        return window_notice(inp["event"], _lang(inp))
    if inp["action"] == "not_saved":
        return not_saved_notice(inp["event"], _lang(inp))
    if inp["action"] == "tool_result":
        return tool_result_line(inp["event"]["name"], inp["event"]["content"], _lang(inp))
    if inp["action"] == "tool_result_full":  # R-CLI-40: the tool line, then the result's lines
        result = ToolResult(inp["event"]["name"], inp["event"]["content"])
        return [tool_result_line(result.name, result.content, _lang(inp)), *result_lines(result)]
    if inp["action"] == "terminal_safe":
        return terminal_safe(inp["text"])
    if inp["action"] == "pane_line":
        return clean_line(inp["text"])
    kind, text = classify_input(inp["text"], _lang(inp))
    return {"kind": kind, "text": text}


def op_tui_notice(inp: Mapping[str, Any]) -> str | None:
    """The compaction notice of the event data (R-TUI-5, R-TUI-21: with ``tier`` and ``cleared``) in
    ``lang``: a run's, None when it did not shrink the figure (R-TUI-36); with ``"command": true``
    the answer of ``/compact``, shown whatever the figures (R-TUI-21b)."""
    if inp.get("command", False):
        return compaction_notice(inp, _lang(inp))
    return run_compaction_notice(inp, _lang(inp))


TUI_OPS: Final = {
    "tui_status": op_tui_status,
    "tui_notice": op_tui_notice,
    "tui_resume": op_tui_resume,
    "tui_input": op_tui_input,
}
