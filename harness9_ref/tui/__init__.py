"""The terminal UI (SPEC section "Terminal UI": R-TUI-1 … R-TUI-13; seed 10, D9).

Its pure parts are plain functions of JSON-friendly values, with conformance cases:
``render_status`` and ``StatusState`` (the status bar), ``compaction_notice``,
``resume_listing`` and ``parse_resume_choice`` (/resume), ``complete_command`` and
``classify_input`` (the command table), and the fixed texts as constants.

Importing this package does not import curses: ``run_tui`` imports it when the UI starts
and raises ``TuiUnavailable`` with a one-line message when it is missing (R-TUI-13).
"""

from ._app import App, QueueItem
from ._cells import cell_width, char_cells, clean_line, cut_cells, wrap_cells
from ._commands import Input, InputKind, classify_input, complete_command
from ._editor import LineEditor
from ._launch import ScreenError, TuiUnavailable, prepare_tui, run_tui
from ._lines import (
    LineKind,
    PaneLine,
    compaction_notice,
    error_line,
    history_lines,
    tool_call_line,
    tool_result_line,
    user_line,
)
from ._resume import SessionLike, parse_resume_choice, resume_listing
from ._status import Segment, StatusState, ctx_colour, display_model, render_status
from ._text import (
    BUSY_COMMAND,
    BUSY_PROMPT,
    CANCELLED_NOTICE,
    COLOUR_HIGH,
    COLOUR_OK,
    COLOUR_WARN,
    COMMANDS,
    COMPACTION_NOTICE,
    CURSES_MISSING,
    ELLIPSIS,
    ERROR_PREFIX,
    HIGH_PERCENT,
    INPUT_PROMPT,
    INPUT_PROMPT_BUSY,
    INTERRUPTED_NOTICE,
    NO_SESSIONS,
    RESUME_HEADER,
    RESUME_ITEM,
    RESUME_LIMIT,
    RESUME_PROMPT,
    RESUME_TIME_FORMAT,
    STATUS_BAR,
    STATUS_CTX,
    STATUS_CTX_GAP,
    STATUS_CTX_UNKNOWN_WINDOW,
    UNKNOWN_COMMAND,
    WARN_PERCENT,
)
from ._worker import RUN_FINISHED, RunFinished, RunWorker, WorkerItem

__all__ = (
    "BUSY_COMMAND",
    "BUSY_PROMPT",
    "CANCELLED_NOTICE",
    "COLOUR_HIGH",
    "COLOUR_OK",
    "COLOUR_WARN",
    "COMMANDS",
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
    "RUN_FINISHED",
    "STATUS_BAR",
    "STATUS_CTX",
    "STATUS_CTX_GAP",
    "STATUS_CTX_UNKNOWN_WINDOW",
    "UNKNOWN_COMMAND",
    "WARN_PERCENT",
    "App",
    "Input",
    "InputKind",
    "LineEditor",
    "LineKind",
    "PaneLine",
    "QueueItem",
    "RunFinished",
    "RunWorker",
    "ScreenError",
    "Segment",
    "SessionLike",
    "StatusState",
    "TuiUnavailable",
    "WorkerItem",
    "cell_width",
    "char_cells",
    "classify_input",
    "clean_line",
    "compaction_notice",
    "complete_command",
    "ctx_colour",
    "cut_cells",
    "display_model",
    "error_line",
    "history_lines",
    "parse_resume_choice",
    "prepare_tui",
    "render_status",
    "resume_listing",
    "run_tui",
    "tool_call_line",
    "tool_result_line",
    "user_line",
    "wrap_cells",
)
