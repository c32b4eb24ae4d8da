"""The lines the conversation pane shows (SPEC R-TUI-10, R-TUI-11, R-TUI-17).

Each function maps JSON-friendly data (an event's ``data`` object or a message) to text; the
pane and ``harness9-ref run`` both use them. A line has a kind that the screen maps to a style.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Literal, NamedTuple

from ..engine import one_line
from ..memory.context import SUMMARY_MARKER, size_text
from ..schema import ROLE_ASSISTANT, Message
from ._strings import DEFAULT_LANG, INPUT_PROMPT, strings_for

__all__ = [
    "DIFF_PANE_LINES",
    "LineKind",
    "PaneLine",
    "ToolResult",
    "diff_pane_lines",
    "error_line",
    "expanded_lines",
    "history_lines",
    "result_lines",
    "split_status",
    "tool_call_line",
    "tool_result_line",
    "user_line",
]

# command: R-APPR-11; added, removed, hunk: the lines of a unified diff shown whole (R-TUI-42)
LineKind = Literal["user", "assistant", "tool", "notice", "error", "command", "added", "removed", "hunk"]

USER_PREFIX: Final = INPUT_PROMPT  # the user's prompt, as it was typed after the input prompt
TOOL_CALL_PREFIX: Final = "\u2192 "  # "→ read_file {...}"
TOOL_RESULT_PREFIX: Final = "\u2190 "  # "← read_file: first line (534 lines, 35.3 KB)"
TOOL_TEXT_LIMIT: Final = 200  # characters of arguments or of a result's first line shown
STATUS_TOOL: Final = "bash"  # R-TUI-40: the tool whose results end with a status line (R-TOOL-18)
# R-TOOL-18: a note of R-TOOL-5, R-TOOL-6 or R-INT-1 as the observation's last line, after its line feed.
_STATUS_LINE: Final = re.compile(
    r"\n(\[(?:exit status -?[0-9]+|killed by signal [0-9]+|timed out after [0-9.e+-]+ s|interrupted)\])\Z"
)
RESULT_INDENT: Final = "  "  # R-CLI-40: before each line of a result shown whole
DIFF_PANE_LINES: Final = 40  # R-APPR-5, R-UNDO-4b: diff lines shown before a question; the rest are counted
_HUNK: Final = re.compile(r"@@ -[0-9]+(?:,[0-9]+)? \+[0-9]+(?:,[0-9]+)? @@")  # R-TUI-42: a unified diff's hunk header


class ToolResult(NamedTuple):
    """A tool result as a tool line stands for it: the tool's name and the whole observation."""

    name: str
    content: str


class PaneLine(NamedTuple):
    """One logical line of the conversation pane; ``text`` may hold newlines. A tool result's
    line keeps the ``result`` it stands for, so it can be shown whole (R-CLI-40)."""

    text: str
    kind: LineKind
    result: ToolResult | None = None


def error_line(message: str, lang: str = DEFAULT_LANG) -> str:
    """``错误：<message>`` (``error: <message>`` in English), the message made one line (R-TUI-10)."""
    return strings_for(lang)["error_line"].format(message=one_line(message))


def _shorten(text: str) -> str:
    return text if len(text) <= TOOL_TEXT_LIMIT else text[: TOOL_TEXT_LIMIT - 1] + "\u2026"


def user_line(prompt: str) -> str:
    """The user's prompt as the pane shows it: ``> <prompt>``."""
    return USER_PREFIX + prompt


def tool_call_line(name: str, arguments: str) -> str:
    """One line for a tool call (R-TUI-11): ``→ <name> <arguments>``."""
    args = _shorten(one_line(arguments))
    return f"{TOOL_CALL_PREFIX}{name} {args}" if args else f"{TOOL_CALL_PREFIX}{name}"


def split_status(observation: str) -> tuple[str, str]:
    """A ``bash`` observation as its output and its status line (R-TOOL-18), ``""`` when it has none.

    The status line is one of the notes the ``bash`` tool writes last (exit status, signal,
    timeout, interrupt: R-TOOL-5, R-TOOL-6, R-INT-1), so a line that tells how the command ended
    can be shown wherever the output is cut. It is read here, where it is shown, from the format
    SPEC pins (tests/tools/test_bash.py reads it back from real commands).
    """
    match = _STATUS_LINE.search(observation)
    if match is None:
        return observation, ""
    return observation[: match.start()], match.group(1)


def _output_and_status(name: str, content: str) -> tuple[str, str]:
    """R-TUI-40: a ``bash`` result's output and its status line (R-TOOL-18); any other result whole."""
    return split_status(content) if name == STATUS_TOOL else (content, "")


def tool_result_line(name: str, content: str, lang: str = DEFAULT_LANG) -> str:
    """One line for a tool result (R-TUI-11, R-TUI-24, R-TUI-40): ``← <name>: <first line> (<n> lines, <size>)``.

    The figures are the whole result's, written as the offline provider reports a result
    (R-CLI-9), so that the line and what the model says of it agree; but a ``bash`` result's
    status line (a timeout, an interrupt, an exit status other than 0) is taken off first, not
    counted, and ends the line, so a command that failed never reads as one that succeeded and
    its one line of output never reads as two (R-TUI-40).
    """
    texts = strings_for(lang)
    output, status = _output_and_status(name, content)
    after = f" {status}" if status else ""
    lines = output.splitlines()
    if not lines:
        return f"{TOOL_RESULT_PREFIX}{name}: {texts['tool_empty']}{after}"
    measure = ""
    if len(lines) > 1:
        measure = " " + texts["tool_lines"].format(n=len(lines), size=size_text(len(output.encode("utf-8"))))
    return f"{TOOL_RESULT_PREFIX}{name}: {_shorten(lines[0])}{measure}{after}"


def result_lines(result: ToolResult, *, whole: bool = False) -> list[str]:
    """R-CLI-40: the lines of a result that its tool line does not show whole, each after
    ``RESULT_INDENT``; none when the line shows it all (one line of output, not cut), unless
    ``whole`` (the terminal UI's expansion, R-TUI-41, which always shows them)."""
    output, _ = _output_and_status(result.name, result.content)
    lines = output.splitlines()
    if not whole and len(lines) <= 1 and all(len(line) <= TOOL_TEXT_LIMIT for line in lines):
        return []
    return [RESULT_INDENT + line if line else "" for line in result.content.splitlines()]


def expanded_lines(result: ToolResult, lang: str = DEFAULT_LANG) -> list[PaneLine]:
    """R-TUI-41, R-TUI-42: a result shown whole in the pane: its tool line, then every line of it,
    those of a unified diff (a result with a hunk header) coloured by their first character."""
    body = result_lines(result, whole=True)
    diff = any(_HUNK.match(line) for line in result.content.splitlines())
    lines = [PaneLine(tool_result_line(result.name, result.content, lang), "tool")]
    lines.extend(PaneLine(line, _diff_kind(line[len(RESULT_INDENT) :]) if diff else "tool") for line in body)
    return lines


def diff_pane_lines(diff: str, lang: str = DEFAULT_LANG, *, coloured: bool = False) -> list[PaneLine]:
    """The pane lines showing a diff before a question (R-APPR-5, R-UNDO-4b): at most
    ``DIFF_PANE_LINES`` of them, then ``diff_more`` counting the others, so that a long file
    does not push the question off the screen; tool lines, or ``coloured`` as R-TUI-42 colours
    a diff's lines (R-TUI-50a)."""
    lines = diff.split("\n")[:-1]  # every diff line ends with a newline (R-TOOL-12)
    shown = [PaneLine(line, _diff_kind(line) if coloured else "tool") for line in lines[:DIFF_PANE_LINES]]
    if len(lines) > len(shown):
        shown.append(PaneLine(strings_for(lang)["diff_more"].format(n=len(lines) - len(shown)), "tool"))
    return shown


def _diff_kind(line: str) -> LineKind:
    """R-TUI-42: ``@@`` starts a hunk header, ``+`` an added line, ``-`` a removed one."""
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "added"
    return "removed" if line.startswith("-") else "tool"


def history_lines(messages: Sequence[Message], lang: str = DEFAULT_LANG) -> list[PaneLine]:
    """The pane's lines for stored messages, as /resume shows them (R-TUI-8).

    User prompts, assistant text, and one line per tool call and per result, as a live run
    shows them. A result names its tool from the call it answers.
    """
    names: dict[str, str] = {}
    out: list[PaneLine] = []
    for msg in messages:
        if msg.tool_call_id:
            name = names.get(msg.tool_call_id, "tool")
            out.append(PaneLine(tool_result_line(name, msg.content, lang), "tool", ToolResult(name, msg.content)))
        elif msg.role == ROLE_ASSISTANT:
            if msg.content:
                out.append(PaneLine(msg.content, "assistant"))
            for call in msg.tool_calls:
                names[call.id] = call.name
                out.append(PaneLine(tool_call_line(call.name, call.arguments), "tool"))
        elif msg.content.startswith(SUMMARY_MARKER):
            out.append(PaneLine(msg.content, "notice"))
        else:
            out.append(PaneLine(user_line(msg.content), "user"))
    return out
