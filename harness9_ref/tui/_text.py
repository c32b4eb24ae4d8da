"""The fixed numbers, layout and Chinese texts of the terminal UI (SPEC R-TUI-1 … R-TUI-19).

The words themselves live in ``STRINGS`` (R-TUI-17, ``_strings.py``); the names here are the
Chinese ones under the names the earlier code and the tests of SPEC section 18 use, plus what
is layout rather than language (separators, indentation, limits, colours). Templates use
``str.format`` fields named after the SPEC placeholders.
"""

from __future__ import annotations

from typing import Final

from ._strings import STRINGS

__all__ = [  # gets re-exported
    "BUSY_COMMAND",
    "BUSY_PROMPT",
    "CANCELLED_NOTICE",
    "COLOUR_HIGH",
    "COLOUR_OK",
    "COLOUR_WARN",
    "COMMANDS",
    "COMPACTING_NOTICE",
    "COMPACTION_NOTICE",
    "COMPACT_COMMAND",
    "CURSES_MISSING",
    "ELLIPSIS",
    "ERROR_PREFIX",
    "HELP_COMMAND",
    "HIGH_PERCENT",
    "INPUT_PROMPT",
    "INPUT_PROMPT_APPROVE",
    "INPUT_PROMPT_BUSY",
    "INTERRUPTED_NOTICE",
    "LIST_ITEM",
    "LIST_TITLE",
    "NO_SESSIONS",
    "PAGE_SIZE",
    "RESUME_HEADER",
    "RESUME_ITEM",
    "RESUME_PROMPT",
    "RESUME_TIME_FORMAT",
    "SEARCH_COMMAND",
    "STATUS_BAR",
    "STATUS_CTX",
    "STATUS_CTX_GAP",
    "STATUS_CTX_UNKNOWN_WINDOW",
    "STATUS_MODEL",
    "STATUS_SEPARATOR",
    "STATUS_WORKDIR_GAP",
    "UNKNOWN_COMMAND",
    "WARN_PERCENT",
]

_ZH: Final = STRINGS["zh"]

# R-TUI-1: the status bar is name, workdir part, separator, session part, and
# the ctx part after STATUS_CTX_GAP. The separator is U+2502 with two spaces on each side.
STATUS_WORKDIR_GAP: Final = "  "  # between the model and "workdir:"; left out with the workdir part (R-TUI-16)
STATUS_SEPARATOR: Final = "  \u2502  "
STATUS_MODEL: Final = "{name} {model}"  # the name part: STRINGS' status_name, one space, the model
STATUS_BAR: Final = (
    STATUS_MODEL.replace("{name}", _ZH["status_name"])
    + STATUS_WORKDIR_GAP + _ZH["status_workdir"] + STATUS_SEPARATOR + _ZH["status_session"]
)
STATUS_CTX_GAP: Final = "  "  # R-TUI-1: between "<id8>..." and "ctx:"
STATUS_CTX: Final = _ZH["status_ctx"]  # R-TUI-2, counts formatted by R-FMT
STATUS_CTX_UNKNOWN_WINDOW: Final = _ZH["status_ctx_unknown"]  # R-TUI-2: the window is 0 (unknown); uncoloured
ELLIPSIS: Final = "\u2026"  # R-TUI-12: replaces the start of a workdir that does not fit

# R-TUI-3: ANSI 256-colour numbers of the ctx part, by pct = used * 100 // window.
COLOUR_OK: Final = 10  # green, pct < WARN_PERCENT
COLOUR_WARN: Final = 11  # yellow, WARN_PERCENT <= pct < HIGH_PERCENT
COLOUR_HIGH: Final = 9  # red, pct >= HIGH_PERCENT (also above 100)
WARN_PERCENT: Final = 50
HIGH_PERCENT: Final = 80

# R-TUI-5: U+26A1, U+2014, U+2192 and the full-width parentheses U+FF08 / U+FF09.
COMPACTION_NOTICE: Final = _ZH["compaction_notice"]

# R-TUI-6, R-TUI-14: the one table of commands, in completion order.
COMMANDS: Final = ("/new", "/resume", "/search", "/compact", "/help", "/exit")
COMPACT_COMMAND: Final = "/compact"  # R-LONG-9: takes a focus after a space
SEARCH_COMMAND: Final = "/search"  # R-TUI-18: takes the query after a space
HELP_COMMAND: Final = "/help"
COMPACTING_NOTICE: Final = _ZH["compacting"]  # shown while /compact summarises
UNKNOWN_COMMAND: Final = _ZH["unknown_command"].replace("{input}", "")  # R-TUI-6: followed by the input

# R-TUI-8, R-TUI-18: the /resume and /search listings.
PAGE_SIZE: Final = 10  # items per page
LIST_ITEM: Final = "  [{k}] {id8}  {age}  {count} {messages}"  # R-TUI-18; the words come from STRINGS
LIST_TITLE: Final = "  {title}"  # after LIST_ITEM when the title (or snippet) is not empty
RESUME_HEADER: Final = _ZH["resume_header"]
RESUME_ITEM: Final = LIST_ITEM + LIST_TITLE
RESUME_PROMPT: Final = _ZH["resume_prompt"]
RESUME_TIME_FORMAT: Final = "%Y-%m-%d %H:%M"  # R-CLI-12's listings; /resume shows ages (R-TUI-19)
NO_SESSIONS: Final = _ZH["no_sessions"]  # instead of the listing when there is no session
CANCELLED_NOTICE: Final = _ZH["cancelled"]  # R-TUI-8: the choice was not a listed number

INPUT_PROMPT: Final = "> "  # before the input line; also before the user's prompts in the pane
INPUT_PROMPT_BUSY: Final = "* "  # before the input line while a turn runs
INPUT_PROMPT_APPROVE: Final = "? "  # before the input line while a command waits for approval (R-APPR-2)
INTERRUPTED_NOTICE: Final = _ZH["interrupted"]  # R-TUI-9: Ctrl+C cancelled the running turn
ERROR_PREFIX: Final = _ZH["error_line"].replace("{message}", "")  # R-TUI-10: followed by the message

# Shown (as error lines) when a prompt, /new or /resume is entered while a turn runs; the
# prompt stays in the input line. The engine runs one turn at a time (R-ENG-16).
BUSY_PROMPT: Final = _ZH["busy_prompt"]
BUSY_COMMAND: Final = _ZH["busy_command"]

# R-TUI-13: what the program says (after "harness9-ref: error: ") when curses is missing.
CURSES_MISSING: Final = (
    "the terminal UI needs the curses module, which this Python does not have; "
    "'harness9-ref run PROMPT' works without it"
)
