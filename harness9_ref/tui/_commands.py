"""Commands of the input line and their Tab completion (SPEC R-TUI-6; seed 10.3 builtinCmds)."""

from __future__ import annotations

import os.path
from typing import Literal, NamedTuple

from ._text import COMMANDS, COMPACT_COMMAND, UNKNOWN_COMMAND

__all__ = ["Input", "InputKind", "classify_input", "complete_command"]  # gets re-exported

InputKind = Literal["empty", "command", "unknown", "prompt"]


class Input(NamedTuple):
    """What a submitted line is: ``kind`` and the text that goes with it.

    - ``("empty", "")``: only white space; nothing happens.
    - ``("command", "/new")``: one of COMMANDS; ``/compact`` may be followed by a space and its
      focus (``("command", "/compact the tests")``).
    - ``("unknown", "未知命令：/foo")``: starts with ``/`` but is no command; the text is the
      line to show, and nothing is sent to the model.
    - ``("prompt", text)``: sent to the model as typed.
    """

    kind: InputKind
    text: str


def complete_command(text: str) -> str:
    """Tab completion of the input line (R-TUI-6).

    When ``text`` starts with ``/`` and holds no space, the COMMANDS starting with it are the
    candidates: one replaces the input, several extend it to their longest common prefix,
    none leave it unchanged. Any other input is returned unchanged.
    """
    if not text.startswith("/") or " " in text:
        return text
    candidates = [command for command in COMMANDS if command.startswith(text)]
    if not candidates:
        return text
    return os.path.commonprefix(candidates)


def classify_input(text: str) -> Input:
    """Sort a submitted line into prompt, command, unknown command or nothing (R-TUI-6).

    Surrounding white space is ignored for commands; a prompt is kept exactly as typed.
    """
    stripped = text.strip()
    if not stripped:
        return Input("empty", "")
    if stripped.startswith("/"):
        if stripped in COMMANDS or stripped.startswith(COMPACT_COMMAND + " "):
            return Input("command", stripped)
        return Input("unknown", UNKNOWN_COMMAND + stripped)
    return Input("prompt", text)
