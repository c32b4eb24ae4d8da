"""``harness9-ref run PROMPT``: one prompt without the terminal UI (SPEC R-CLI-7, R-CLI-23, R-INT-4, R-APPR-3,
R-SAFE-2, R-LANG-2).

The assistant's text goes to standard output as it streams; tool activity, compaction notices, retries,
the commands refused for want of ``--yes`` and finally ``session: <id>`` go to standard error.
All of it passes ``terminal_safe`` (R-SAFE-1) unless ``--raw``; the error line always does. Every
line the program words is in the language of R-LANG-1 (the run's ``cancelled`` and ``max_turns``
errors too, by their codes, R-LANG-3); the JSON lines are data and stay as the run has them. A
run that could not store all of its messages (a ``save_failed`` event, R-ENG-25) fails with a
line saying how many were lost, and names no session that was never created.
The engine runs on a worker thread, so a signal (``Signalled`` or KeyboardInterrupt in the main
thread) cancels the run through ``engine.cancel()`` and interrupts the running command; the run
then saves what R-ENG-12 allows and the program exits with 128 + the signal's number. A run that
has not ended ``CANCEL_WAIT_SECONDS`` after the first signal is no longer awaited, so the program
always ends within R-INT-4's 3 seconds; a second signal does not cut that short, since the worker
thread is the one that sends the SIGKILL to a command that ignores SIGTERM.

With ``--json`` (R-CLI-16 … R-CLI-18) standard output holds one JSON line per event instead:
the session's line first, the terminal event last (held back until the run is over, so that
after a signal it is always the ``cancelled`` error); standard error keeps only the notes.

While the run waits for the model (the worker's ``ModelWait``, R-TUI-27), a waiting line goes
to standard error after WAIT_NOTICE_SECONDS (R-CLI-23): on a terminal one line rewritten in
place each second and erased before anything else is written, elsewhere a whole line now and
then; never while a streamed line is open on standard output, never after a signal.
"""

from __future__ import annotations

import io
import os
import queue
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Final, NamedTuple, TextIO

from ..engine import (
    CANCELLED,
    INTERNAL_ERROR,
    CompactionData,
    ErrorData,
    Event,
    EventType,
    ModelWait,
    RetryData,
    RunFinished,
    RunWorker,
    SaveFailedData,
    TextDeltaData,
    ToolCallData,
    ToolResultData,
    WindowData,
    WorkerItem,
    one_line,
)
from ..text import (
    STRINGS,
    ToolResult,
    result_lines,
    retry_notice,
    run_compaction_notice,
    run_error,
    strings_for,
    terminal_safe,
    tool_call_line,
    tool_result_line,
    window_notice,
    without_type_name,
)
from ._output import Filter, json_line, stream_filter
from ._signals import Signalled, exit_status

if TYPE_CHECKING:
    from ..engine import AgentEngine

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_NOT_RUN",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "NOT_RUN_LINE",
    "SESSION_LINE",
    "WAIT_NOTICE_SECONDS",
    "WAIT_REPEAT_SECONDS",
    "run_prompt",
]

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1  # R-CLI-6, R-CLI-7
EXIT_NOT_RUN: Final = 3  # R-CLI-50: the run ended well, but something was refused for want of --yes
EXIT_INTERRUPTED: Final = 130  # R-CLI-7, R-INT-4: after Ctrl+C (128 + SIGINT)
EXIT_TERMINATED: Final = 143  # R-INT-4: after SIGTERM (128 + SIGTERM)
SESSION_LINE: Final = "session: {id}"  # R-CLI-7: the last line on standard error
SESSION_EVENT: Final = "session"  # R-CLI-16: the type of run --json's first line
NOT_RUN_LINE: Final = STRINGS["en"]["cli_not_run"]  # R-APPR-3, in English (R-LANG-2)
POLL_SECONDS: Final = 0.1
CANCEL_WAIT_SECONDS: Final = 2.5  # R-INT-4: the run's own end is awaited this long after a signal
WAIT_NOTICE_SECONDS: Final = 5  # R-CLI-23: a wait for the model is told once it is this long
WAIT_REPEAT_SECONDS: Final = 30  # R-CLI-23: off a terminal, at most one waiting line this often
ERASE_TO_END: Final = "\x1b[K"  # R-CLI-23: ANSI EL, erase from the cursor to the end of the line
ERASE_LINE: Final = "\r" + ERASE_TO_END  # R-CLI-23: to the line's start, then erase it


class Note(NamedTuple):
    """A line for standard error from another thread (R-APPR-3), printed in the order of the events."""

    line: str


RunItem = WorkerItem | Note


def silence(stream: TextIO) -> None:
    """Point a stream whose reader went away at the null device, so later flushes do not fail."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError, io.UnsupportedOperation):
        pass


def _note(err: TextIO, safe: Filter, line: str) -> None:
    """A line on standard error, through run mode's filter (R-SAFE-2), with or without ``--json`` (R-CLI-18)."""
    err.write(safe(line) + "\n")
    err.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (ValueError, io.UnsupportedOperation):  # closed, or no file behind it
        return False


class _WaitLines:
    """R-CLI-23's waiting line on standard error, from the worker's ``ModelWait``.

    ``tick`` is called a few times a second; ``clear`` before anything else is written. On a
    terminal the line is rewritten in place (``\r<text>\x1b[K``) as each second passes and
    erased by ``clear``, so it never stays among the run's lines; elsewhere (a log, a pipe) a
    whole line is written at WAIT_NOTICE_SECONDS and then at most every WAIT_REPEAT_SECONDS of
    the same wait, so a long wait leaves a few lines, not one a second.
    """

    def __init__(self, err: TextIO, lang: str, wait: ModelWait) -> None:
        self.err = err
        self.template = strings_for(lang)["waiting"]
        self.wait = wait
        self.in_place = _is_terminal(err)
        self.shown = False  # an in-place line is on the screen
        self.since: float | None = None  # the wait the lines so far were of
        self.due = WAIT_NOTICE_SECONDS  # the seconds of that wait at which the next line is due

    def tick(self, quiet: bool) -> None:
        """Write what the wait calls for now; ``quiet`` (a streamed line is open on standard
        output, or a signal came) writes nothing and erases an in-place line."""
        state = self.wait.state()
        if quiet or state is None or state[1] < WAIT_NOTICE_SECONDS:
            self.clear()
            return
        since, seconds = state
        if since != self.since:  # a new wait: its lines start again
            self.since, self.due = since, WAIT_NOTICE_SECONDS
        if seconds < self.due:
            return
        text = self.template.format(seconds=seconds)
        if self.in_place:
            self._write("\r" + text + ERASE_TO_END)
            self.shown = True
            self.due = seconds + 1
        else:
            self._write(text + "\n")
            self.due = seconds + WAIT_REPEAT_SECONDS

    def clear(self) -> None:
        """Erase the in-place line, if one is shown, before anything else is written."""
        if self.shown:
            self.shown = False
            self._write(ERASE_LINE)

    def _write(self, text: str) -> None:
        self.err.write(text)
        self.err.flush()


class _Printer:
    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        lang: str,
        safe: Filter,
        full: bool = False,
    ) -> None:
        self.out = out
        self.err = err
        self.lang = lang
        self.safe = safe  # R-SAFE-2: every text of the run passes it on its way out
        self.full = full  # R-CLI-40: each tool result whole after its line
        self.open_line = False  # text was written to out without its final newline
        self.out_closed = False  # the reader of out went away (``run … | head -1``): the run goes on
        self.error: ErrorData | None = None
        self.not_saved: SaveFailedData | None = None

    def write(self, text: str) -> None:
        if self.out_closed:
            return
        try:
            self.out.write(self.safe(text))
            self.out.flush()
        except BrokenPipeError:
            self.out_closed = True
            silence(self.out)

    def end_text(self) -> None:
        if self.open_line:
            self.write("\n")
            self.open_line = False

    def note(self, line: str) -> None:
        self.end_text()
        _note(self.err, self.safe, line)

    def handle(self, item: RunItem) -> None:
        if isinstance(item, RunFinished):
            return
        if isinstance(item, Note):
            self.note(item.line)
            return
        data = item.data
        if isinstance(data, TextDeltaData):
            self.write(data.delta)
            self.open_line = not data.delta.endswith("\n")
        elif isinstance(data, ToolCallData):
            self.note(tool_call_line(data.name, data.arguments))
        elif isinstance(data, ToolResultData):
            self.note(tool_result_line(data.name, data.content, self.lang))
            for line in result_lines(ToolResult(data.name, data.content)) if self.full else ():
                self.note(line)
        elif isinstance(data, CompactionData):
            notice = run_compaction_notice(data, self.lang)
            if notice is not None:  # R-TUI-36: none for a compaction that did not shrink the figure
                self.note(notice)
        elif isinstance(data, RetryData):
            self.note(retry_notice(data, self.lang))
        elif isinstance(data, WindowData):  # R-EVT-12
            self.note(window_notice(data, self.lang))
        elif isinstance(data, SaveFailedData):
            self.not_saved = data
        elif isinstance(data, ErrorData):
            self.end_text()
            self.error = data
        elif item.is_terminal:
            self.end_text()


class _JsonPrinter:
    """``run --json`` (R-CLI-16, R-CLI-17): each event one JSON line on ``out``, notes on ``err``.

    The terminal event is kept in ``terminal`` and written by ``finish``, so that nothing
    follows it and a signal can put the ``cancelled`` error in its place (R-CLI-16).
    """

    def __init__(self, out: TextIO, err: TextIO, safe: Filter) -> None:
        self.out = out
        self.err = err
        self.safe = safe  # R-CLI-18: the notes are the lines run mode writes, --raw or not
        self.out_closed = False
        self.open_line = False  # its lines are whole: a waiting line never cuts one (R-CLI-23)
        self.terminal: Event | None = None
        self.error: ErrorData | None = None
        self.not_saved: SaveFailedData | None = None

    def line(self, value: dict[str, object]) -> None:
        if self.out_closed:
            return
        try:
            self.out.write(json_line(value))
            self.out.flush()
        except BrokenPipeError:
            self.out_closed = True
            silence(self.out)

    def note(self, line: str) -> None:
        _note(self.err, self.safe, line)

    def handle(self, item: RunItem) -> None:
        if isinstance(item, RunFinished):
            return
        if isinstance(item, Note):
            self.note(item.line)
            return
        data = item.data
        if isinstance(data, SaveFailedData):
            self.not_saved = data
            item = Event(item.type, replace(data, message=without_type_name(data.message)))
        if item.is_terminal:
            self.terminal = item
            self.error = data if isinstance(data, ErrorData) else None
            return
        self.line(item.to_dict())

    def finish(self, signalled: bool) -> None:
        """Write the terminal event: after a signal, the run's own ``cancelled`` error or one in its place."""
        terminal = self.terminal
        if signalled and (self.error is None or self.error.code != CANCELLED):
            terminal = Event(EventType.ERROR, ErrorData(CANCELLED, CANCELLED))
        elif terminal is not None and self.error is not None and self.error.code == INTERNAL_ERROR:
            message = without_type_name(self.error.message) or STRINGS["en"]["cli_unexpected"]  # R-CLI-13
            terminal = Event(EventType.ERROR, ErrorData(INTERNAL_ERROR, message))
        if terminal is not None:
            self.line(terminal.to_dict())


def run_prompt(
    engine: AgentEngine,
    session_id: str,
    prompt: str,
    out: TextIO,
    err: TextIO,
    *,
    items: queue.Queue[RunItem] | None = None,
    interrupt: Callable[[], None] | None = None,
    lang: str = "en",
    error_message: Callable[[ErrorData], str] | None = None,
    session_exists: Callable[[], bool] = lambda: True,
    raw: bool = False,
    as_json: bool = False,
    full: bool = False,
) -> int:
    """Run ``prompt`` and report it; returns the exit status (0, 1, or 128 + a signal's number).

    Args:
        items: the queue the events arrive on; pass one to let another thread add ``Note``
            lines in their place among the events (the approval callback of R-APPR-3).
        interrupt: called on a signal besides ``engine.cancel()``, so the running command is
            stopped (``Registry.interrupt``, R-INT-1) whatever the engine does with a cancel.
        lang: the language of every line the program words (R-LANG-2).
        error_message: what the run's error line says of its error event: ``run_error`` in
            ``lang`` with the engine's turn limit and the request's provider and model (R-LANG-3,
            R-CLI-19); by default in ``lang``, naming neither.
        session_exists: asked after a run that left messages unsaved with none stored, so
            that no session line names a session that was never created (R-CLI-7).
        raw: write the text as received, control characters included (``--raw``, R-SAFE-2).
        as_json: write the events as JSON lines (``--json``, R-CLI-16 … R-CLI-18).
        full: write each tool result whole after its line (``--full``, R-CLI-40).
    """
    queued: queue.Queue[RunItem] = items if items is not None else queue.Queue()
    printer: _Printer | _JsonPrinter
    if as_json:
        printer = _JsonPrinter(out, err, stream_filter(raw))
        printer.line({"type": SESSION_EVENT, "data": {"id": session_id}})
    else:
        printer = _Printer(out, err, lang, stream_filter(raw), full)
    worker = RunWorker(engine, prompt, queued.put, closing=as_json).start()  # R-TUI-37
    waiting = _WaitLines(err, lang, worker.wait)
    signalled: BaseException | None = None
    deadline = 0.0
    while True:
        try:
            if signalled is not None and time.monotonic() > deadline:
                break  # the run did not end in time: stop waiting (R-INT-4)
            waiting.tick(quiet=signalled is not None or printer.open_line)
            try:
                item = queued.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            if isinstance(item, RunFinished):
                break
            waiting.clear()
            printer.handle(item)
        except (KeyboardInterrupt, Signalled) as exc:
            if signalled is not None:  # a later signal changes nothing: the deadline already runs
                continue
            signalled = exc
            deadline = time.monotonic() + CANCEL_WAIT_SECONDS
            worker.cancel()
            if interrupt is not None:
                interrupt()
    waiting.clear()
    _drain(queued, printer)
    if isinstance(printer, _JsonPrinter):
        printer.finish(signalled is not None)
        return _status(signalled, printer.error, printer.not_saved)
    printer.end_text()
    texts = strings_for(lang)
    error = printer.error
    if signalled is not None:
        err.write(texts["cli_error"].format(message=texts["cancelled"]) + "\n")
    elif error is not None:
        message = error_message(error) if error_message is not None else run_error(error, lang)
        err.write(texts["cli_error"].format(message=terminal_safe(one_line(message))) + "\n")  # R-SAFE-2: always safe
    lost = printer.not_saved
    exists = lost is None or lost.saved > 0 or session_exists()
    if lost is not None:
        total = lost.saved + lost.unsaved
        text = texts["err_not_saved"].format(unsaved=lost.unsaved, total=total, message=without_type_name(lost.message))
        text += "" if exists else texts["cli_not_created"]
        err.write(texts["cli_error"].format(message=terminal_safe(text)) + "\n")  # R-SAFE-2: always safe
    if exists:
        err.write(SESSION_LINE.format(id=session_id) + "\n")
    err.flush()
    return _status(signalled, error, lost)


def _status(signalled: BaseException | None, error: ErrorData | None, lost: SaveFailedData | None) -> int:
    """R-CLI-7's exit status, with or without ``--json`` (R-CLI-18)."""
    if signalled is not None:
        return exit_status(signalled)
    return EXIT_FAILED if error is not None or lost is not None else EXIT_OK


def _drain(queued: queue.Queue[RunItem], printer: _Printer | _JsonPrinter) -> None:
    """Print what arrived but was not shown when the waiting stopped early (never blocks)."""
    while True:
        try:
            item = queued.get_nowait()
        except queue.Empty:
            return
        if not isinstance(item, RunFinished):
            printer.handle(item)
