"""``harness9-ref run PROMPT``: one prompt without the terminal UI (SPEC R-CLI-7).

The assistant's text goes to standard output as it streams; tool activity, compaction notices
and finally ``session: <id>`` go to standard error. The engine runs on a worker thread, so
Ctrl+C (KeyboardInterrupt in the main thread) cancels the run through ``engine.cancel()``; the
run then saves what R-ENG-12 allows and the program exits 130. A second Ctrl+C stops waiting.
"""

from __future__ import annotations

import io
import os
import queue
from typing import TYPE_CHECKING, Final, TextIO

from ..engine import CANCELLED, CompactionData, ErrorData, TextDeltaData, ToolCallData, ToolResultData
from ..tui import RunFinished, RunWorker, WorkerItem, compaction_notice, tool_call_line, tool_result_line
from ._settings import PROG

if TYPE_CHECKING:
    from ..engine import AgentEngine

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "SESSION_LINE", "run_prompt"]

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1  # R-CLI-6, R-CLI-7
EXIT_INTERRUPTED: Final = 130  # R-CLI-7: after Ctrl+C (128 + SIGINT)
SESSION_LINE: Final = "session: {id}"  # R-CLI-7: the last line on standard error
POLL_SECONDS: Final = 0.1


def _silence(stream: TextIO) -> None:
    """Point a stream whose reader went away at the null device, so later flushes do not fail."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError, io.UnsupportedOperation):
        pass


class _Printer:
    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err
        self.open_line = False  # text was written to out without its final newline
        self.out_closed = False  # the reader of out went away (``run … | head -1``): the run goes on
        self.error: ErrorData | None = None

    def write(self, text: str) -> None:
        if self.out_closed:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except BrokenPipeError:
            self.out_closed = True
            _silence(self.out)

    def end_text(self) -> None:
        if self.open_line:
            self.write("\n")
            self.open_line = False

    def note(self, line: str) -> None:
        self.end_text()
        self.err.write(line + "\n")
        self.err.flush()

    def handle(self, item: WorkerItem) -> None:
        if isinstance(item, RunFinished):
            return
        data = item.data
        if isinstance(data, TextDeltaData):
            self.write(data.delta)
            self.open_line = not data.delta.endswith("\n")
        elif isinstance(data, ToolCallData):
            self.note(tool_call_line(data.name, data.arguments))
        elif isinstance(data, ToolResultData):
            self.note(tool_result_line(data.name, data.content))
        elif isinstance(data, CompactionData):
            self.note(compaction_notice(data))
        elif isinstance(data, ErrorData):
            self.end_text()
            self.error = data
        elif item.is_terminal:
            self.end_text()


def run_prompt(engine: AgentEngine, session_id: str, prompt: str, out: TextIO, err: TextIO) -> int:
    """Run ``prompt`` and report it; returns the exit status (0, 1 or 130)."""
    items: queue.Queue[WorkerItem] = queue.Queue()
    printer = _Printer(out, err)
    worker = RunWorker(engine, prompt, items.put).start()
    interrupted = False
    while True:
        try:
            try:
                item = items.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            if isinstance(item, RunFinished):
                break
            printer.handle(item)
        except KeyboardInterrupt:
            if interrupted:  # a second Ctrl+C: stop waiting for a tool that does not finish
                break
            interrupted = True
            worker.cancel()
    printer.end_text()
    error = printer.error
    if interrupted:
        message = error.message if error is not None and error.code == CANCELLED else CANCELLED
        err.write(f"{PROG}: error: {message}\n")
    elif error is not None:
        err.write(f"{PROG}: error: {error.message}\n")
    err.write(SESSION_LINE.format(id=session_id) + "\n")
    err.flush()
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FAILED if error is not None else EXIT_OK
