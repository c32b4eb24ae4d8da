"""The terminal UI's state and behaviour, without curses (SPEC R-TUI-2 … R-TUI-19, R-TUI-26, R-TUI-27,
R-APPR-2, R-APPR-8, R-INT-4, R-FORK-3 … R-FORK-5).

``App`` owns the conversation pane's lines, the status, the input line and the worker of the
running turn. The screen (``_screen.py``) calls ``submit``, ``interrupt``, ``approval_key``
and ``poll`` and draws what ``pane_rows`` and ``status_segments`` return; everything here can
be driven from a test without a terminal. Everything here runs on the UI thread,
except the work of /compact, which reports back through the queue.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

from .._harness9_error import os_reason
from ..engine import (
    CANCELLED,
    DEFAULT_SYSTEM_PROMPT,
    CompactionData,
    EngineError,
    ErrorData,
    Event,
    EventType,
    InstructionWarning,
    RetryData,
    RunFinished,
    RunWorker,
    SaveFailedData,
    TextDeltaData,
    TokenUpdateData,
    ToolCallData,
    ToolResultData,
    WindowData,
    WorkerItem,
    one_line,
)
from ..memory.storage import FileChangeLog, SessionError, SessionNotFound, session_folder
from ..text import (
    COMPACT_COMMAND,
    CONTEXT_COMMAND,
    DEFAULT_LANG,
    FORK_COMMAND,
    HELP_COMMAND,
    INPUT_PROMPT,
    INPUT_PROMPT_APPROVE,
    INPUT_PROMPT_BUSY,
    REWIND_COMMAND,
    SEARCH_COMMAND,
    SHOW_COMMAND,
    LineKind,
    PaneLine,
    ToolResult,
    clean_line,
    compaction_notice,
    counted,
    error_line,
    expanded_lines,
    history_lines,
    in_language,
    instruction_warning_line,
    model_label,
    not_saved_notice,
    other_folder_line,
    retry_notice,
    run_compaction_notice,
    run_error,
    strings_for,
    tool_call_line,
    tool_result_line,
    user_line,
    window_notice,
    wrap_cells,
)
from ..tools import (
    AllowRule,
    FileChange,
    Rule,
    command_words,
    plan_restores,
    restore,
    restore_lines,
    restored_line,
    rule_offers,
    rule_text,
    rules_directory,
    visible,
)
from ._approver import (
    Answer,
    ApprovalRequest,
    Approver,
    allow_answer,
    allow_line,
    approval_answer,
    approval_header,
    approval_line,
    command_rows,
    diff_lines,
)
from ._commands import classify_input, help_lines
from ._context import context_view, session_context
from ._editor import LineEditor, paste_text
from ._resume import Listing
from ._rewind import Rewind, UndoQuestion, session_prompts
from ._status import Segment, StatusState, render_status

if TYPE_CHECKING:
    from ..engine import AgentEngine, ProjectInstructions
    from ..memory.storage import Manager, Session
    from ..schema import ToolDefinition

__all__ = ["App", "QueueItem"]

QueueItem = WorkerItem | PaneLine | ApprovalRequest
"""What reaches the UI thread: engine events, RUN_FINISHED, a line to show (a log warning), or
a command waiting for approval."""

SHUTDOWN_WAIT: float = 5.0  # seconds /exit waits for a cancelled run to save (R-TUI-9)
WAIT_ROW_AFTER_SECONDS: Final = 1  # R-TUI-27: the waiting row shows once a whole second has passed
COMPLETION_SEPARATOR: Final = "  "  # R-TUI-33: between the candidates Tab lists
EDITED_MAX_CHARS: Final = 1 << 20  # R-TUI-32: what is taken back from the editor's file, as a paste


class _PaneLogHandler(logging.Handler):
    """Shows log warnings (such as a failed save, R-ENG-13) as error lines in the pane."""

    def __init__(self, items: queue.Queue[QueueItem], lang: str) -> None:
        super().__init__(logging.WARNING)
        self._items = items
        self._lang = lang

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._items.put(PaneLine(error_line(record.getMessage(), self._lang), "error"))
        except Exception:  # pragma: no cover - logging must never break the UI
            self.handleError(record)


class App:
    """The UI of one program run.

    Args:
        engine: the agent engine; its session is replaced on /new and /resume.
        manager: where sessions are created, listed, searched and opened.
        session: the current session (R-CLI-8: the UI always has one).
        model: the model the provider's requests carry (R-PRV-27's request model).
        provider: the provider actually used (R-CLI-4); with ``model`` it makes the status
            bar's label (R-TUI-25) and names an unknown model (R-CLI-19).
        base_url: the provider's base URL, None for its default: any other names its server
            in the label (R-TUI-26).
        workdir: the absolute working directory.
        notices: lines shown first, such as the offline provider notice.
        lang: the language of every string shown (R-TUI-17): "zh" or "en".
        registry: the engine's tool registry: its tools count in the ctx estimate (R-TUI-15),
            and /new and /resume call its ``reset_approval`` when it has one (R-APPR-2).
            None: the engine's public ``registry``, if it has one.
        approver: the ``approve`` callback the registry was built with (R-APPR-2), if it was
            made before the App; else pass ``App.approve`` to the registry. Either way the App
            answers the requests from keys.
        long_session: whether the engine runs in long-session mode (the start figure is then
            the engine's ``context_report().total``, R-TUI-15). None: the engine's public
            ``long_session``, else False.
        system_prompt: the engine's system prompt, for the ctx estimate.
        instructions: the engine's prompt builder when it reads AGENTS.md files (R-INST-4):
            the ctx estimate and /context use its builds, and its warnings are shown as
            notice lines (it is told so here).
        clock: Unix time in seconds, for the ages of the listings (R-TUI-19).
        monotonic: the clock of the waits for the model (R-TUI-27).
        hold: called with the id of each session the App is about to make current (/new,
            /resume, /fork, /rewind), before it does; it raises a ``SessionError`` to refuse
            one another program is working on, which leaves the current session as it was
            (R-CLI-27c). None: every session may be made current.

    Raises:
        ValueError: ``lang`` is not a language of R-TUI-17.
    """

    def __init__(
        self,
        engine: AgentEngine,
        manager: Manager,
        session: Session,
        model: str,
        workdir: str,
        *,
        provider: str,
        base_url: str | None = None,
        notices: Iterable[str] = (),
        lang: str = DEFAULT_LANG,
        registry: Any = None,
        approver: Approver | None = None,
        long_session: bool | None = None,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        instructions: ProjectInstructions | None = None,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        hold: Callable[[str], None] | None = None,
    ) -> None:
        self.texts = strings_for(lang)
        self.lang = lang
        self.engine = engine
        self.manager = manager
        self.session = session
        self.model = model
        self.provider = provider
        self.label = model_label(provider, model, base_url)
        self.workdir = workdir
        self.registry: Any = registry if registry is not None else getattr(engine, "registry", None)
        self.long_session = bool(getattr(engine, "long_session", False)) if long_session is None else long_session
        self.system_prompt = system_prompt
        self.instructions = instructions
        self.clock = clock
        self.monotonic = monotonic
        self.hold = hold
        self.editor = LineEditor()
        self.lines: list[PaneLine] = [PaneLine(text, "notice") for text in notices]
        self.items: queue.Queue[QueueItem] = queue.Queue()
        self.worker: RunWorker | None = None
        # set while a listing waits for a number, n or p, or a rewind for the answer about its files (R-TUI-50)
        self.listing: Listing | Rewind | UndoQuestion | None = None
        self.asking: ApprovalRequest | None = None  # set while a command waits for y, n or a
        self.choosing: list[Rule] | None = None  # the offers, while the rule question waits (R-APPR-8)
        self._ask_at: int | None = None  # the header line of a command not yet shown from its top (R-APPR-11)
        self._top_at: int | None = None  # the first line of a result just shown whole, drawn at the top (R-TUI-41)
        self.approver = approver if approver is not None else Approver()
        self.exiting = False
        self.scroll = 0  # rows scrolled up from the bottom of the pane
        self._interrupted = False
        self._stream_line: int | None = None  # index of the assistant line being streamed
        self._waiting_drawn: str | None = None  # the waiting row as the last poll found it (R-TUI-27)
        self._wrapped: list[tuple[str, list[str]]] = []
        self._wrap_width = 0
        self.approver.attach(self.items.put)
        self.engine.set_session(session)
        self.lines.append(PaneLine(self.texts["start_hint"], "notice"))  # R-TUI-23: the way to /help
        self.lines.extend(history_lines(session.get_messages(0), lang))
        if instructions is not None:
            instructions.on_warning = self._instruction_warning
        self.status = self.start_status()

    def _instruction_warning(self, warning: InstructionWarning) -> None:
        """An AGENTS.md warning as a notice line (R-INST-4), from whichever thread built the prompt."""
        self.items.put(PaneLine(instruction_warning_line(warning, self.lang), "notice"))

    # What the screen shows.

    @property
    def running(self) -> bool:
        return self.worker is not None

    @property
    def input_prompt(self) -> str:
        """What precedes the input line: ``> ``, ``* `` while a turn runs, ``? `` while asking."""
        if self.asking is not None:
            return INPUT_PROMPT_APPROVE
        return INPUT_PROMPT_BUSY if self.worker is not None else INPUT_PROMPT

    def status_segments(self, width: int) -> list[Segment]:
        return render_status(
            self.label, self.workdir, self.session.session_id, self.status.used, self.status.window, width, self.lang
        )

    def waiting_line(self) -> str | None:
        """R-TUI-27's row while the turn waits for the model a whole second or more, else None.

        None too once Ctrl+C was pressed (the wait ends with the ``interrupted`` line) and while
        a command waits for approval (then the turn waits for the user).
        """
        worker = self.worker
        if worker is None or self._interrupted or self.asking is not None:
            return None
        seconds = worker.wait.seconds()
        if seconds is None or seconds < WAIT_ROW_AFTER_SECONDS:
            return None
        return self.texts["waiting"].format(seconds=seconds)

    def pane_rows(self, width: int, height: int) -> list[tuple[str, LineKind]]:
        """The last ``height`` rows of the pane (``scroll`` rows up from the bottom), wrapped to
        ``width``; the waiting row of R-TUI-27, when there is one, last."""
        if width != self._wrap_width:
            self._wrapped, self._wrap_width = [], width
        del self._wrapped[len(self.lines) :]
        rows: list[tuple[str, LineKind]] = []
        header_row = top_row = None
        for i, line in enumerate(self.lines):
            if i == self._ask_at:  # R-APPR-11: where the command's header row is
                header_row = len(rows)
            if i == self._top_at:  # R-TUI-41: a result shown whole is read from its first row
                top_row = len(rows)
            if i < len(self._wrapped) and self._wrapped[i][0] == line.text and line.kind != "command":
                wrapped = self._wrapped[i][1]
            elif line.kind == "command":  # R-APPR-11: shown exactly, behind a numbered gutter
                wrapped = command_rows(line.text, width)
            else:
                wrapped = wrap_cells(clean_line(line.text), width)
                entry = (line.text, wrapped)
                if i < len(self._wrapped):
                    self._wrapped[i] = entry
                else:
                    self._wrapped.append(entry)
            rows.extend((row, line.kind) for row in wrapped)
        waiting = self.waiting_line()
        if waiting is not None:  # no line of the conversation: drawn, never kept (R-TUI-27)
            rows.extend((row, "notice") for row in wrap_cells(waiting, width))
        if top_row is not None:
            self.scroll, self._top_at = len(rows) - top_row - height, None
        self.scroll = max(0, min(self.scroll, len(rows) - height))
        end = len(rows) - self.scroll
        if header_row is not None and end - height <= header_row < end:
            self._ask_at = None  # R-APPR-11: the command has been shown from its first row
        return rows[max(0, end - height) : end]

    def page(self, rows: int) -> None:
        """Scroll the pane: positive ``rows`` go back in the conversation."""
        self.scroll = max(0, self.scroll + rows)

    # Input.

    def submit(self) -> None:
        """Enter: act on the input line (R-TUI-6 … R-TUI-9, R-TUI-14, R-TUI-18); while a command
        waits for approval, Enter means no (R-APPR-2)."""
        if self.asking is not None:
            self.approval_key("\n")
            return
        if self.listing is not None:
            self._choose(self.editor.submit(remember=False))
            return
        kind, text = classify_input(self.editor.text, self.lang)
        if kind == "empty":
            self.editor.submit(remember=False)
        elif kind == "prompt":
            if self.running:
                self._error(self.texts["busy_prompt"])
                return  # the prompt stays in the input line
            self.editor.submit()
            self._start(text)
        else:
            self._add(user_line(self.editor.submit().strip()), "user")
            if kind == "unknown":
                self._add(text, "error")
            else:
                self._command(text)

    def paste(self, text: str) -> None:
        """A paste goes into the input box whole, whatever waits for a key (R-TUI-29, R-TUI-34)."""
        self.editor.paste(text)

    def complete(self) -> None:
        """Tab: complete a command; several candidates left are listed on a notice line (R-TUI-33)."""
        candidates = self.editor.complete()
        if candidates:
            self._add(COMPLETION_SEPARATOR.join(candidates), "notice")

    def ctrl_c(self) -> None:
        """Ctrl+C (R-TUI-9, R-TUI-33): cancel the running turn; else cancel a listing waiting for
        its answer, else clear a non-empty input line; on an empty, idle line end the program."""
        if self.worker is None and self.listing is not None:
            self.listing = None
            self.editor.clear()
            self._add(self.texts["cancelled"], "notice")
        elif self.worker is None and self.editor.text:
            self.editor.clear()
        else:
            self.interrupt()

    def edit_prompt(self, edit: Callable[[str], bool]) -> None:
        """R-TUI-32: put the input in a private temporary file, let ``edit`` (the user's editor)
        change it, and take the file back as the input when the editor ended well."""
        descriptor, path = tempfile.mkstemp(prefix="harness9-prompt-", suffix=".md")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as file:
                file.write(self.editor.text)
            if not edit(path):
                self._error(self.texts["edit_failed"])
                return
            with open(path, encoding="utf-8", errors="replace", newline="") as file:
                text = file.read(EDITED_MAX_CHARS + 1)
            self.editor.set_text(paste_text(text[:EDITED_MAX_CHARS]).removesuffix("\n"))
        except OSError as exc:
            self._error(self.texts["edit_failed_reason"].format(reason=os_reason(exc)))
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)

    def approve(self, command: str | FileChange) -> Answer:
        """The registry's ``approve`` callback (R-APPR-1, R-APPR-2); called on the worker thread,
        it blocks until the user answers from a key (or the UI goes away: no)."""
        return self.approver(command)

    def approval_key(self, key: str) -> bool:
        """A key while a command waits (R-APPR-2, ``approval_answer``; R-APPR-8's rule question,
        ``allow_answer``); True when the key was used."""
        if self.asking is None:
            return False
        if self.choosing is not None:
            self._allow_key(key, self.choosing)
            return True
        answer = approval_answer(key)
        if answer is None:
            return True  # swallowed: a stray key neither answers nor edits the input line
        if answer in ("yes", "always") and self._ask_at is not None:  # R-APPR-11: read it first
            self._add(self.texts["approve_read_first"], "notice")
            self._add(approval_line(self.asking.command, self.lang), "notice")
            return True
        if answer == "cancel":
            self.interrupt()
        elif answer == "always" and isinstance(self.asking.command, str):
            self._ask_rule(self.asking.command)  # R-APPR-8: which rule, or this session
        else:
            self.answer(answer)
        return True

    def _ask_rule(self, command: str) -> None:
        self.choosing = rule_offers(command_words(command))
        self._add(allow_line(self.choosing, rules_directory(self.workdir), self.lang), "notice")

    def _allow_key(self, key: str, offers: list[Rule]) -> None:
        meaning = allow_answer(key, offers)
        if meaning is None:
            return  # swallowed, as in the first question
        if meaning == "cancel":
            self.interrupt()
        elif meaning == "back":
            self.choosing = None
            if self.asking is not None:
                self._add(approval_line(self.asking.command, self.lang), "notice")
        elif meaning == "session":
            self.answer("always")
        else:
            self.answer(AllowRule(meaning))

    def answer(self, answer: Answer) -> None:
        """Answer the waiting approval request and say so in the pane."""
        request, self.asking, self.choosing, self._ask_at = self.asking, None, None, None
        if request is None:
            return
        request.answer(answer)
        if isinstance(answer, AllowRule):
            rule, workdir = visible(rule_text(answer.words)), rules_directory(self.workdir)
            self._add(self.texts["allow_added"].format(rule=rule, workdir=workdir), "notice")
        else:
            self._add(self.texts[f"approve_{answer}"], "notice")

    def interrupt(self) -> None:
        """Ctrl+C: cancel the running turn, or end the program when idle (R-TUI-9, R-INT-4).

        A waiting approval is answered no. ``已中断`` shows at once; the engine's cancel
        interrupts the running command (R-INT-3), so the turn ends within seconds and the input
        line is ready again as soon as RUN_FINISHED arrives. A second Ctrl+C while a cancelled
        turn is still finishing ends the program.
        """
        if self.worker is None or self._interrupted:
            self.request_exit()
            return
        self._interrupted = True
        self.worker.cancel()  # the engine interrupts the running command too (R-INT-3)
        if self.asking is not None:  # after the cancel, so the declined call is the turn's last
            self.answer("no")
        self._stream_line = None
        self._add(self.texts["interrupted"], "notice")

    def request_exit(self) -> None:
        """/exit: cancel a running turn first (it saves what R-ENG-12 allows), then end."""
        if self.worker is not None:
            self.worker.cancel()
        if self.asking is not None:
            self.answer("no")
        self.approver.close()
        self.exiting = True

    def shutdown(self, wait: float = SHUTDOWN_WAIT) -> None:
        """Give a cancelled run up to ``wait`` seconds to finish and save."""
        self.approver.close()
        if self.worker is not None:
            self.worker.cancel()
            self.worker.join(wait)

    def log_handler(self) -> logging.Handler:
        """A logging handler that shows warnings in the pane instead of on the terminal."""
        return _PaneLogHandler(self.items, self.lang)

    # Events from the worker thread.

    def poll(self) -> bool:
        """Apply everything the worker has sent; True when something changed, the waiting row's
        seconds included (R-TUI-27: it is redrawn as each second passes)."""
        changed = False
        while True:
            try:
                item = self.items.get_nowait()
            except queue.Empty:
                break
            self.handle(item)
            changed = True
        waiting = self.waiting_line()
        if waiting != self._waiting_drawn:
            self._waiting_drawn = waiting
            changed = True
        return changed

    def handle(self, item: QueueItem) -> None:
        """Apply one event (R-TUI-4, R-TUI-5, R-TUI-10, R-TUI-11) or approval request (R-APPR-2)."""
        if isinstance(item, RunFinished):
            self.worker = None
            self._interrupted = False
            self._stream_line = None
            if self.asking is not None:  # pragma: no cover - the run waits for its answer
                self.answer("no")
        elif isinstance(item, PaneLine):
            self._add(item.text, item.kind)
        elif isinstance(item, ApprovalRequest):
            self._ask(item)
        else:
            self._event(item)

    def _ask(self, request: ApprovalRequest) -> None:
        if self._interrupted or self.exiting or self.asking is not None:
            request.answer("no")
            return
        self._stream_line = None
        self.asking = request
        self.scroll = 0
        if isinstance(request.command, FileChange):  # R-APPR-5: the diff, then the question
            for line in diff_lines(request.command, self.lang):
                self._add(line, "tool")
        else:  # R-APPR-11: the header, every line of the command, then the question
            self._ask_at = len(self.lines)
            self._add(approval_header(request.command, self.lang), "notice")
            self._add(request.command, "command")
        self._add(approval_line(request.command, self.lang), "notice")

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
        elif isinstance(data, CompactionData):  # the bar shows the notice's figure (R-TUI-21)
            notice = run_compaction_notice(data, self.lang)
            if notice is not None:  # R-TUI-36: no notice of a compaction that did not shrink the figure
                self._add(notice, "notice")
            self.status = self.status.updated(data.tokens_after, self.engine.context_window)
        elif isinstance(data, RetryData):  # R-ENG-22
            self._add(retry_notice(data, self.lang), "notice")
        elif isinstance(data, WindowData):  # R-EVT-12: the status bar follows with the next token update
            self._add(window_notice(data, self.lang), "notice")
        elif isinstance(data, SaveFailedData):  # R-TUI-22
            self._add(not_saved_notice(data, self.lang), "error")
        elif isinstance(data, ToolCallData):
            self._add(tool_call_line(data.name, data.arguments), "tool")
        elif isinstance(data, ToolResultData):  # R-TUI-41: the line keeps its result, to be shown whole
            text = tool_result_line(data.name, data.content, self.lang)
            self.lines.append(PaneLine(text, "tool", ToolResult(data.name, data.content)))
        elif isinstance(data, ErrorData) and not (data.code == CANCELLED and self._interrupted):
            self._error(run_error(data, self.lang, self.engine.max_turns, self.provider, self.model))  # R-LANG-3

    # The commands of the input line (R-TUI-7, R-TUI-8, R-TUI-14, R-TUI-15, R-TUI-18, R-TUI-20,
    # R-TUI-21, R-LONG-9).

    def _add(self, text: str, kind: LineKind) -> None:
        self.lines.append(PaneLine(text, kind))

    def _error(self, message: str) -> None:
        self._add(error_line(message, self.lang), "error")

    def _tools(self) -> list[ToolDefinition]:
        available = getattr(self.registry, "available_tools", None)
        return list(available()) if callable(available) else []

    def start_status(self) -> StatusState:
        """The ctx part before the first token update (R-TUI-15): in long-session mode the
        engine's own figure, the one /context and the compaction notice show; no ctx part if
        the session cannot be read."""
        try:
            if self.long_session:
                used = self.engine.context_report().total
            else:
                system = self.instructions() if self.instructions is not None else self.system_prompt
                used = session_context(self.session, system, self._tools())
        except (SessionError, EngineError):
            return StatusState()
        return StatusState(used, self.engine.context_window)

    def _run_command(self, command: str) -> None:
        try:
            if command == "/new":
                session = self.manager.new_session(draft=True, workdir=session_folder(self.workdir), provider=self.label)
                notice = self.texts["new_session"].format(session=session.session_id)  # R-TUI-23
                self._switch(session, [PaneLine(notice, "notice")])
            elif command == FORK_COMMAND:
                self._fork()
            elif command == REWIND_COMMAND:
                self._show_rewind(Rewind(session_prompts(self.session.get_messages(0))))
            elif command == HELP_COMMAND:
                for line in help_lines(self.lang):
                    self._add(line, "notice")
            elif command == CONTEXT_COMMAND:
                self._context()
            elif command.startswith(COMPACT_COMMAND):
                self._compact(command[len(COMPACT_COMMAND) :].strip())
            elif command.startswith(SEARCH_COMMAND):
                self._search(command[len(SEARCH_COMMAND) :].strip())
            else:
                self._open_listing(
                    Listing(
                        "resume",
                        lambda limit, offset: self.manager.recent_sessions(limit, offset),
                        here=session_folder(self.workdir),
                    )
                )
        except SessionError as exc:
            self._error(in_language(exc, self.lang))  # R-LANG-3

    def _fork(self) -> None:
        """/fork: the current session, whole, into a new one, made current (R-FORK-3)."""
        try:
            fork = self.manager.fork_session(self.session.session_id)
        except SessionNotFound:
            self.session.get_messages(1)  # a session deleted meanwhile says so (R-MGR-8); a draft reads as empty
            self._add(self.texts["fork_nothing"], "error")
            return
        messages = fork.get_messages(0)
        notice = self.texts["fork_done"].format(session=fork.session_id, messages=counted(len(messages), "messages", self.lang))
        self._switch(fork, [*history_lines(messages, self.lang), PaneLine(notice, "notice")])

    def _show_rewind(self, rewind: Rewind) -> None:
        """A page of /rewind's prompts, or the line saying there is none (R-FORK-4)."""
        for line in rewind.lines(self.lang):
            self._add(line, "notice")
        self.listing = None if rewind.empty else rewind

    def _rewound(self, rewind: Rewind, choice: int) -> None:
        """The choice of prompt ``choice``: when the turns it drops changed files, their diffs and
        the question first (R-TUI-50a), else the rewind at once; the lines saying why a file is
        left as it is stay in the fork's pane."""
        session = self.session
        changes = session.file_changes_from(rewind.item(choice).position) if isinstance(session, FileChangeLog) else []
        restores = plan_restores(self.workdir, changes) if changes else []
        if not restores:
            self._rewind_to(rewind, choice)
            return
        header = PaneLine(self.texts["undo_header"].format(n=len(restores)), "notice")
        shown = [header, *restore_lines(restores, self.lang)]
        possible = [item for item in restores if not item.problem]
        if not possible:
            self._rewind_to(rewind, choice, shown)
            return
        for line in shown:
            self._add(line.text, line.kind)
        self._add(self.texts["undo_question"], "notice")
        kept = [line for line in shown if line.kind == "error"]
        self.listing = UndoQuestion(rewind, choice, possible, kept)

    def _answered_undo(self, question: UndoQuestion, typed: str) -> None:
        """The answer about the files (R-TUI-50b): restore them on a yes, then rewind either way,
        the lines saying what became of them kept in the fork's pane."""
        said = list(question.left)
        if question.agreed(typed):
            for item in question.restores:
                outcome = restore(item)
                said.append(PaneLine(restored_line(item, outcome, self.lang), "notice" if outcome is None else "error"))
        else:
            said.append(PaneLine(self.texts["undo_kept"], "notice"))
        self._rewind_to(question.rewind, question.choice, said)

    def _rewind_to(self, rewind: Rewind, choice: int, said: Sequence[PaneLine] = ()) -> None:
        """Fork before prompt ``choice``, switch to the fork, and put the prompt in the input line (R-FORK-5);
        ``said`` (what became of the files, R-TUI-50) comes after the fork's messages."""
        prompt = rewind.item(choice)
        fork = self.manager.fork_session(self.session.session_id, prompt.position)
        notice = self.texts["rewind_done"].format(k=choice, session=fork.session_id)
        self._switch(fork, [*history_lines(fork.get_messages(0), self.lang), *said, PaneLine(notice, "notice")])
        self.editor.set_text("")
        self.editor.insert(one_line(prompt.text))  # what typing it gives: one line, printable characters

    def _compact(self, focus: str) -> None:
        """/compact [focus]: clear or summarise now on a thread, then show the tier's notice and
        its figure in the status bar, as for a compaction event (R-TUI-21, R-LONG-9)."""
        self._add(self.texts["compacting"], "notice")
        lang = self.lang

        def compact() -> list[QueueItem]:  # the answer to the command, whatever the figures (R-TUI-36)
            data = self.engine.compact_now(focus)
            update = TokenUpdateData(data.tokens_after, self.engine.context_window)
            return [Event(EventType.TOKEN_UPDATE, update), PaneLine(compaction_notice(data, lang), "notice")]

        self._in_background("harness9-compact", compact)

    def _context(self) -> None:
        """/context: what the next request holds (R-TUI-20), on a thread, since counting it
        exactly may ask the provider (R-LONG-10)."""
        lang = self.lang
        self._in_background(
            "harness9-context",
            lambda: [PaneLine(line, "notice") for line in context_view(self.engine, self.instructions, lang)],
        )

    def _in_background(self, name: str, work: Callable[[], list[QueueItem]]) -> None:
        """Run ``work`` on a thread and hand what it returns, or its engine error as an error
        line, to the UI thread."""
        lang = self.lang

        def run() -> None:
            try:
                items = work()
            except EngineError as exc:
                items = [PaneLine(error_line(in_language(exc, lang), lang), "error")]  # R-LANG-3
            for item in items:
                self.items.put(item)

        threading.Thread(target=run, name=name, daemon=True).start()

    def _search(self, query: str) -> None:
        if not query:
            self._add(self.texts["search_usage"], "error")
            return
        self._open_listing(Listing("search", lambda limit, offset: self.manager.search(query, offset + limit)[offset:]))

    def _open_listing(self, listing: Listing, page: int = 1) -> None:
        listing.load(page)
        for line in listing.lines(int(self.clock()), self.lang):
            self._add(line, "notice")
        self.listing = None if listing.empty and page == 1 else listing

    def _choose(self, typed: str) -> None:
        """The line typed after a listing page: open, turn the page, or cancel (R-TUI-8, R-TUI-18)."""
        listing, self.listing = self.listing, None
        self._add(user_line(typed), "user")
        if isinstance(listing, UndoQuestion):
            try:
                self._answered_undo(listing, typed)
            except SessionError as exc:
                self._error(in_language(exc, self.lang))
            return
        choice = None if listing is None else listing.choose(typed)
        try:
            if listing is None or choice is None:
                self._add(self.texts["cancelled"], "notice")
            elif isinstance(listing, Rewind):
                if isinstance(choice, int):
                    self._rewound(listing, choice)
                else:
                    listing.page += 1 if choice == "next" else -1
                    self._show_rewind(listing)
            elif choice == "next":
                self._open_listing(listing, listing.page + 1)
            elif choice == "previous":
                self._open_listing(listing, listing.page - 1)
            else:
                chosen = listing.item(choice)
                session = self.manager.open_session(chosen.id)
                lines = history_lines(session.get_messages(0), self.lang)
                folder, here = self.manager.session_origin(chosen.id)[0], session_folder(self.workdir)
                if folder != here:  # R-TUI-43: its tools run here, not where it was started
                    lines.append(PaneLine(other_folder_line(folder, here, self.lang), "notice"))
                self._switch(session, lines)
        except SessionError as exc:
            self._error(in_language(exc, self.lang))

    def _switch(self, session: Session, lines: Sequence[PaneLine]) -> None:
        """Make ``session`` current: engine, approval, status bar and a fresh pane (R-TUI-7, R-TUI-8, R-APPR-2).

        Raises:
            SessionError: ``hold`` refuses the session (R-CLI-27c); nothing changed.
        """
        if self.hold is not None:
            self.hold(session.session_id)
        self.engine.set_session(session)
        reset = getattr(self.registry, "reset_approval", None)
        if callable(reset):
            reset()
        self.session = session
        self.lines = list(lines)
        self.scroll = 0
        self._stream_line = None
        self.status = self.start_status()

    # Inner workings.

    def _start(self, prompt: str) -> None:
        self._add(user_line(prompt), "user")
        self.scroll = 0
        self._interrupted = False
        self.worker = RunWorker(self.engine, prompt, self.items.put, self.monotonic, closing=self.long_session).start()

    def show_result(self, number: int | None = None) -> None:
        """/show [N] and Ctrl+O (R-TUI-41): the N-th tool result of the pane (the last without N)
        whole, after the pane's last line, drawn from its first row; the lines are the pane's
        only, never stored, and do not count as results themselves."""
        results = [line.result for line in self.lines if line.result is not None]
        if not results:
            self._add(self.texts["show_none"], "error")
            return
        if number is None:
            number = len(results)
        if not 1 <= number <= len(results):
            self._add(self.texts["show_usage"].format(n=len(results)), "error")
            return
        self._stream_line = None  # streamed text goes on below the result, not above it
        self._top_at = len(self.lines)
        self.lines.extend(expanded_lines(results[number - 1], self.lang))

    def _show_command(self, command: str) -> None:
        """/show, or /show followed by a listed number (R-TUI-18e's digits)."""
        text = command[len(SHOW_COMMAND) :].strip()
        if not text:
            self.show_result()
        elif text.isascii() and text.isdigit():
            self.show_result(int(text))
        else:
            results = sum(line.result is not None for line in self.lines)
            self._add(self.texts["show_usage" if results else "show_none"].format(n=results), "error")

    def _command(self, command: str) -> None:
        if command == "/exit":
            self.request_exit()
        elif command.startswith(SHOW_COMMAND):  # R-TUI-41: also while a turn runs
            self._show_command(command)
        elif command == "/help":
            self._run_command(command)
        elif self.running:
            self._error(self.texts["busy_command"].format(command=command))
        else:
            self._run_command(command)
