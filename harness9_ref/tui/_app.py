"""The terminal UI's state and behaviour, without curses (SPEC R-TUI-2 … R-TUI-11; seed 10).

``App`` owns the conversation pane's lines, the status, the input line and the worker of the
running turn. The screen (``_screen.py``) calls ``submit``, ``interrupt`` and ``poll`` and
draws what ``pane_rows`` and ``status_segments`` return; everything here can be driven from a
test without a terminal.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import TYPE_CHECKING, Iterable, Sequence, Union

from ..engine import (
    CANCELLED,
    CompactionData,
    EngineError,
    ErrorData,
    Event,
    TextDeltaData,
    TokenUpdateData,
    ToolCallData,
    ToolResultData,
)
from ..memory import SessionError, SessionInfo
from ._cells import clean_line, wrap_cells
from ._commands import classify_input
from ._editor import LineEditor
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
from ._resume import parse_resume_choice, resume_listing
from ._status import Segment, StatusState, render_status
from ._text import (
    BUSY_COMMAND,
    BUSY_PROMPT,
    CANCELLED_NOTICE,
    COMPACT_COMMAND,
    COMPACTING_NOTICE,
    INPUT_PROMPT,
    INPUT_PROMPT_BUSY,
    INTERRUPTED_NOTICE,
    RESUME_LIMIT,
)
from ._worker import RunFinished, RunWorker, WorkerItem

if TYPE_CHECKING:
    from datetime import tzinfo

    from ..engine import AgentEngine
    from ..memory import Manager, SQLiteSession

__all__ = ["App", "QueueItem"]  # gets re-exported

QueueItem = Union[WorkerItem, PaneLine]
"""What reaches the UI thread: engine events, RUN_FINISHED, or a line to show (a log warning)."""

SHUTDOWN_WAIT: float = 5.0  # seconds /exit waits for a cancelled run to save (R-TUI-9)


class _PaneLogHandler(logging.Handler):
    """Shows log warnings (such as a failed save, R-ENG-13) as error lines in the pane."""

    def __init__(self, items: queue.Queue[QueueItem]) -> None:
        super().__init__(logging.WARNING)
        self._items = items

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._items.put(PaneLine(error_line(record.getMessage()), "error"))
        except Exception:  # pragma: no cover - logging must never break the UI
            self.handleError(record)


class App:
    """The UI of one program run.

    Args:
        engine: the agent engine; its session is replaced on /new and /resume.
        manager: where sessions are created, listed and opened.
        session: the current session (R-CLI-8: the UI always has one).
        model: the configured model name (the status bar drops its routing prefix).
        workdir: the absolute working directory.
        notices: lines shown first, such as the offline provider notice.
        tz: the time zone of the /resume listing (None: local time).
    """

    def __init__(
        self,
        engine: AgentEngine,
        manager: Manager,
        session: SQLiteSession,
        model: str,
        workdir: str,
        *,
        notices: Iterable[str] = (),
        tz: tzinfo | None = None,
    ) -> None:
        self.engine = engine
        self.manager = manager
        self.session = session
        self.model = model
        self.workdir = workdir
        self.tz = tz
        self.editor = LineEditor()
        self.status = StatusState()
        self.lines: list[PaneLine] = [PaneLine(text, "notice") for text in notices]
        self.items: queue.Queue[QueueItem] = queue.Queue()
        self.worker: RunWorker | None = None
        self.choices: list[SessionInfo] | None = None  # set while /resume waits for a number
        self.exiting = False
        self.scroll = 0  # rows scrolled up from the bottom of the pane
        self._interrupted = False
        self._stream_line: int | None = None  # index of the assistant line being streamed
        self._wrapped: list[tuple[str, list[str]]] = []
        self._wrap_width = 0
        self.engine.set_session(session)
        self.lines.extend(history_lines(session.get_messages(0)))

    # What the screen shows.

    @property
    def running(self) -> bool:
        return self.worker is not None

    @property
    def input_prompt(self) -> str:
        """What precedes the input line: INPUT_PROMPT, or INPUT_PROMPT_BUSY while a turn runs."""
        return INPUT_PROMPT_BUSY if self.worker is not None else INPUT_PROMPT

    def status_segments(self, width: int) -> list[Segment]:
        return render_status(
            self.model, self.workdir, self.session.session_id, self.status.used, self.status.window, width
        )

    def pane_rows(self, width: int, height: int) -> list[tuple[str, LineKind]]:
        """The last ``height`` rows of the pane (``scroll`` rows up from the bottom), wrapped to ``width``."""
        if width != self._wrap_width:
            self._wrapped, self._wrap_width = [], width
        del self._wrapped[len(self.lines) :]
        rows: list[tuple[str, LineKind]] = []
        for i, line in enumerate(self.lines):
            if i < len(self._wrapped) and self._wrapped[i][0] == line.text:
                wrapped = self._wrapped[i][1]
            else:
                wrapped = wrap_cells(clean_line(line.text), width)
                entry = (line.text, wrapped)
                if i < len(self._wrapped):
                    self._wrapped[i] = entry
                else:
                    self._wrapped.append(entry)
            rows.extend((row, line.kind) for row in wrapped)
        self.scroll = max(0, min(self.scroll, len(rows) - height))
        end = len(rows) - self.scroll
        return rows[max(0, end - height) : end]

    def page(self, rows: int) -> None:
        """Scroll the pane: positive ``rows`` go back in the conversation."""
        self.scroll = max(0, self.scroll + rows)

    # Input.

    def submit(self) -> None:
        """Enter: act on the input line (R-TUI-6 … R-TUI-9)."""
        if self.choices is not None:
            self._choose(self.editor.submit(remember=False))
            return
        kind, text = classify_input(self.editor.text)
        if kind == "empty":
            self.editor.submit(remember=False)
        elif kind == "prompt":
            if self.running:
                self._add(error_line(BUSY_PROMPT), "error")
                return  # the prompt stays in the input line
            self.editor.submit()
            self._start(text)
        else:
            self._add(user_line(self.editor.submit().strip()), "user")
            if kind == "unknown":
                self._add(text, "error")
            else:
                self._command(text)

    def interrupt(self) -> None:
        """Ctrl+C: cancel the running turn, or end the program when idle (R-TUI-9).

        A second Ctrl+C while a cancelled turn is still finishing (a tool that does not stop
        at once) ends the program.
        """
        if self.worker is None or self._interrupted:
            self.request_exit()
            return
        self._interrupted = True
        self.worker.cancel()
        self._stream_line = None
        self._add(INTERRUPTED_NOTICE, "notice")

    def request_exit(self) -> None:
        """/exit: cancel a running turn first (it saves what R-ENG-12 allows), then end."""
        if self.worker is not None:
            self.worker.cancel()
        self.exiting = True

    def shutdown(self, wait: float = SHUTDOWN_WAIT) -> None:
        """Give a cancelled run up to ``wait`` seconds to finish and save."""
        if self.worker is not None:
            self.worker.cancel()
            self.worker.join(wait)

    def log_handler(self) -> logging.Handler:
        """A logging handler that shows warnings in the pane instead of on the terminal."""
        return _PaneLogHandler(self.items)

    # Events from the worker thread.

    def poll(self) -> bool:
        """Apply everything the worker has sent; True when something changed."""
        changed = False
        while True:
            try:
                item = self.items.get_nowait()
            except queue.Empty:
                return changed
            self.handle(item)
            changed = True

    def handle(self, item: QueueItem) -> None:
        """Apply one event (R-TUI-4, R-TUI-5, R-TUI-10, R-TUI-11)."""
        if isinstance(item, RunFinished):
            self.worker = None
            self._interrupted = False
            self._stream_line = None
        elif isinstance(item, PaneLine):
            self._add(item.text, item.kind)
        else:
            self._event(item)

    def _event(self, event: Event) -> None:
        data = event.data
        if isinstance(data, TextDeltaData):
            if self._interrupted:
                return
            if self._stream_line is not None:
                line = self.lines[self._stream_line]
                self.lines[self._stream_line] = PaneLine(line.text + data.delta, line.kind)
            else:
                self._stream_line = len(self.lines)
                self.lines.append(PaneLine(data.delta, "assistant"))
            return
        self._stream_line = None
        if isinstance(data, TokenUpdateData):
            self.status = self.status.updated(data.estimated_tokens, data.context_window)
        elif isinstance(data, CompactionData):
            self._add(compaction_notice(data), "notice")
        elif isinstance(data, ToolCallData):
            self._add(tool_call_line(data.name, data.arguments), "tool")
        elif isinstance(data, ToolResultData):
            self._add(tool_result_line(data.name, data.content), "tool")
        elif isinstance(data, ErrorData) and not (data.code == CANCELLED and self._interrupted):
            self._add(error_line(data.message), "error")

    # Inner workings.

    def _add(self, text: str, kind: LineKind) -> None:
        self.lines.append(PaneLine(text, kind))

    def _start(self, prompt: str) -> None:
        self._add(user_line(prompt), "user")
        self.scroll = 0
        self._interrupted = False
        self.worker = RunWorker(self.engine, prompt, self.items.put).start()

    def _command(self, command: str) -> None:
        if command == "/exit":
            self.request_exit()
            return
        if self.running:
            self._add(error_line(BUSY_COMMAND.format(command=command)), "error")
            return
        try:
            if command == "/new":
                self._switch(self.manager.new_session(), [])
            elif command.startswith(COMPACT_COMMAND):
                self._compact(command[len(COMPACT_COMMAND) :].strip())
            else:
                self._list_sessions()
        except SessionError as exc:
            self._add(error_line(str(exc)), "error")

    def _compact(self, focus: str) -> None:
        """/compact [focus]: summarise now on a thread, then show the notice of R-TUI-5 (R-LONG-9)."""
        self._add(COMPACTING_NOTICE, "notice")

        def work() -> None:
            try:
                data = self.engine.compact_now(focus)
            except EngineError as exc:
                self.items.put(PaneLine(error_line(exc.message), "error"))
                return
            self.items.put(PaneLine(compaction_notice(data), "notice"))

        threading.Thread(target=work, name="harness9-compact", daemon=True).start()

    def _list_sessions(self) -> None:
        infos = self.manager.list_sessions()[:RESUME_LIMIT]
        for line in resume_listing(infos, self.tz):
            self._add(line, "notice")
        self.choices = infos or None

    def _choose(self, typed: str) -> None:
        choices, self.choices = self.choices or [], None
        self._add(user_line(typed), "user")
        k = parse_resume_choice(typed, len(choices))
        if k is None:
            self._add(CANCELLED_NOTICE, "notice")
            return
        try:
            session = self.manager.open_session(choices[k - 1].id)
            stored = session.get_messages(0)
        except SessionError as exc:
            self._add(error_line(str(exc)), "error")
            return
        self._switch(session, history_lines(stored))

    def _switch(self, session: SQLiteSession, lines: Sequence[PaneLine]) -> None:
        """Make ``session`` current: engine, status bar and a fresh pane (R-TUI-7, R-TUI-8)."""
        self.engine.set_session(session)
        self.session = session
        self.status = StatusState()
        self.lines = list(lines)
        self.scroll = 0
        self._stream_line = None
