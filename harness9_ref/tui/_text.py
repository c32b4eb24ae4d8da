"""The fixed texts and numbers of the terminal UI (SPEC R-TUI-1 … R-TUI-13; seed 10, D9).

Every string the UI shows that the specification fixes is a constant here, so a port (and the
tests, which compare them with SPEC section 18) can take them byte for byte. Templates use
``str.format`` fields named after the SPEC placeholders.
"""

from __future__ import annotations

from typing import Final

__all__ = [  # gets re-exported
    "BUSY_COMMAND",
    "BUSY_PROMPT",
    "CANCELLED_NOTICE",
    "COLOUR_HIGH",
    "COLOUR_OK",
    "COLOUR_WARN",
    "COMMANDS",
    "COMPACTING_NOTICE",
    "COMPACT_COMMAND",
    "COMPACTION_NOTICE",
    "CURSES_MISSING",
    "ELLIPSIS",
    "ERROR_PREFIX",
    "HIGH_PERCENT",
    "INPUT_PROMPT",
    "INPUT_PROMPT_BUSY",
    "INTERRUPTED_NOTICE",
    "NO_SESSIONS",
    "RESUME_HEADER",
    "RESUME_ITEM",
    "RESUME_LIMIT",
    "RESUME_PROMPT",
    "RESUME_TIME_FORMAT",
    "STATUS_BAR",
    "STATUS_CTX",
    "STATUS_CTX_GAP",
    "STATUS_CTX_UNKNOWN_WINDOW",
    "UNKNOWN_COMMAND",
    "WARN_PERCENT",
]

# R-TUI-1 (D9, seed 10.1): the status bar without its ctx part. The separator is U+2502 with
# two spaces on each side; {session} is the first 8 characters of the id.
STATUS_BAR: Final = "[harness9] {model}  workdir: {workdir}  \u2502  session: {session}..."
STATUS_CTX_GAP: Final = "  "  # R-TUI-1: between "<id8>..." and "ctx:"
STATUS_CTX: Final = "ctx: {used}/{window} ({pct}%)"  # R-TUI-2, counts formatted by R-FMT
STATUS_CTX_UNKNOWN_WINDOW: Final = "ctx: {used}"  # R-TUI-2: the window is 0 (unknown); uncoloured
ELLIPSIS: Final = "\u2026"  # R-TUI-12: replaces the start of a workdir that does not fit

# R-TUI-3 (seed 10.1): ANSI 256-colour numbers of the ctx part, by pct = used * 100 // window.
COLOUR_OK: Final = 10  # green, pct < WARN_PERCENT
COLOUR_WARN: Final = 11  # yellow, WARN_PERCENT <= pct < HIGH_PERCENT
COLOUR_HIGH: Final = 9  # red, pct >= HIGH_PERCENT (also above 100)
WARN_PERCENT: Final = 50
HIGH_PERCENT: Final = 80

# R-TUI-5 (seed 10.2): U+26A1, U+2014, U+2192 and the full-width parentheses U+FF08 / U+FF09.
COMPACTION_NOTICE: Final = (
    "\u26a1 上下文已压缩 \u2014 {tokens_before} \u2192 {tokens_after} tokens"
    "\uff08{msgs_before} \u2192 {msgs_after} 条消息\uff09"
)

# R-TUI-6 (seed 10.3 builtinCmds): the one table of commands, in completion order.
COMMANDS: Final = ("/new", "/resume", "/compact", "/exit")
COMPACT_COMMAND: Final = "/compact"  # R-LONG-9: the one command that takes text after it, the focus
COMPACTING_NOTICE: Final = "正在压缩上下文…"  # shown while /compact summarises
UNKNOWN_COMMAND: Final = "未知命令："  # R-TUI-6: followed by the input

# R-TUI-8 (seed 10.3): the /resume listing.
RESUME_LIMIT: Final = 10  # sessions listed
RESUME_HEADER: Final = "可用会话（{n} 条）："
RESUME_ITEM: Final = "  [{k}] {id}  {time}  {count} 条消息"
RESUME_TIME_FORMAT: Final = "%Y-%m-%d %H:%M"  # the session's updated_at in local time
RESUME_PROMPT: Final = "输入序号选择（非数字 Enter 取消）："
NO_SESSIONS: Final = "没有可恢复的会话"  # instead of the listing when there is no session
CANCELLED_NOTICE: Final = "已取消"  # R-TUI-8: the choice was not a listed number

INPUT_PROMPT: Final = "> "  # before the input line; also before the user's prompts in the pane
INPUT_PROMPT_BUSY: Final = "* "  # before the input line while a turn runs
INTERRUPTED_NOTICE: Final = "已中断"  # R-TUI-9: Ctrl+C cancelled the running turn
ERROR_PREFIX: Final = "错误："  # R-TUI-10: followed by the error event's one-line message

# Shown (after ERROR_PREFIX) when a prompt, /new or /resume is entered while a turn runs; the
# prompt stays in the input line. The engine runs one turn at a time (R-ENG-16).
BUSY_PROMPT: Final = "a turn is running; wait for it or press Ctrl+C"
BUSY_COMMAND: Final = "{command} is not available while a turn is running; press Ctrl+C first"

# R-TUI-13: what the program says (after "harness9-ref: error: ") when curses is missing.
CURSES_MISSING: Final = (
    "the terminal UI needs the curses module, which this Python does not have; "
    "'harness9-ref run PROMPT' works without it"
)
