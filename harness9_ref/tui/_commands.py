"""Commands of the input line, their Tab completion and /help (SPEC R-TUI-6, R-TUI-14, R-TUI-20, R-FORK-3)."""

from __future__ import annotations

import os.path
from typing import Final, Literal, NamedTuple

from ..text import COMMANDS, COMPACT_COMMAND, DEFAULT_LANG, SEARCH_COMMAND, SHOW_COMMAND, strings_for

__all__ = [
    "HELP_KEYS",
    "Input",
    "InputKind",
    "classify_input",
    "command_candidates",
    "complete_command",
    "help_lines",
]

InputKind = Literal["empty", "command", "unknown", "prompt"]

# R-TUI-14: the lines of /help, one per command of COMMANDS (in its order), then the keys.
HELP_KEYS: Final = (
    "help_commands",
    "help_new",
    "help_resume",
    "help_fork",
    "help_rewind",
    "help_search",
    "help_compact",
    "help_context",
    "help_show",
    "help_help",
    "help_exit",
    "help_keys",
    "help_keys_edit",
)
_TAKES_TEXT: Final = (COMPACT_COMMAND, SEARCH_COMMAND, SHOW_COMMAND)  # followed by a space and text: focus, query, number


class Input(NamedTuple):
    """What a submitted line is: ``kind`` and the text that goes with it.

    - ``("empty", "")``: only white space; nothing happens.
    - ``("command", "/new")``: one of COMMANDS; ``/compact`` and ``/search`` may be followed by a
      space and their text (``("command", "/compact the tests")``, ``("command", "/search db")``).
    - ``("unknown", "未知命令：/foo")``: starts with ``/`` but is no command; the text is the
      line to show, and nothing is sent to the model.
    - ``("prompt", text)``: sent to the model as typed.
    """

    kind: InputKind
    text: str


def command_candidates(text: str) -> list[str]:
    """The commands Tab may complete ``text`` to (R-TUI-6): those of COMMANDS, in their order,
    starting with ``text`` when it starts with ``/`` and holds no white space; else none."""
    if not text.startswith("/") or any(ch.isspace() for ch in text):
        return []
    return [command for command in COMMANDS if command.startswith(text)]


def complete_command(text: str) -> str:
    """Tab completion of the input line (R-TUI-6): one candidate replaces the input, several
    extend it to their longest common prefix, none leave it unchanged."""
    candidates = command_candidates(text)
    if not candidates:
        return text
    return os.path.commonprefix(candidates)  # noqa: RUF071 (command names, not paths: a character prefix is meant)


def help_lines(lang: str = DEFAULT_LANG) -> list[str]:
    """What /help shows (R-TUI-14): a heading, one line per command, then the keys."""
    texts = strings_for(lang)
    return [texts[key] for key in HELP_KEYS]


def classify_input(text: str, lang: str = DEFAULT_LANG) -> Input:
    """Sort a submitted line into prompt, command, unknown command or nothing (R-TUI-6).

    Surrounding white space is ignored for commands; a prompt is kept exactly as typed. The
    line of an unknown command is in ``lang`` (R-TUI-17). A text of several lines is a prompt,
    whatever it starts with: commands are one line, and a pasted path is no command (R-TUI-30).
    """
    stripped = text.strip()
    if not stripped:
        return Input("empty", "")
    if stripped.startswith("/") and "\n" not in stripped:
        if stripped in COMMANDS or stripped.startswith(tuple(c + " " for c in _TAKES_TEXT)):
            return Input("command", stripped)
        return Input("unknown", strings_for(lang)["unknown_command"].format(input=stripped))
    return Input("prompt", text)
