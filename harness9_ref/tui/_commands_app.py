"""What the commands of the input line do in the App (SPEC R-TUI-7, R-TUI-8, R-TUI-14,
R-TUI-15, R-TUI-18, R-LONG-9, R-APPR-2).

A base class of ``App``: it keeps the session commands apart from the event and key handling
of ``_app.py``, so each stays readable. Everything here runs on the UI thread.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..engine import EngineError
from ..memory import SessionError
from ._commands import help_lines
from ._context import session_context
from ._lines import LineKind, PaneLine, compaction_notice, error_line, history_lines, user_line
from ._listing import Listing
from ._status import StatusState
from ._text import COMPACT_COMMAND, HELP_COMMAND, SEARCH_COMMAND

if TYPE_CHECKING:
    from ..engine import AgentEngine
    from ..memory import Manager, Session
    from ..schema import ToolDefinition
    from ._app import QueueItem

__all__: list[str] = []


class SessionCommands:
    """/new, /resume, /search, /compact and /help; the listing and the ctx estimate."""

    engine: AgentEngine
    manager: Manager
    session: Session
    lang: str
    texts: Mapping[str, str]
    registry: Any
    long_session: bool
    system_prompt: str
    clock: Callable[[], float]
    status: StatusState
    lines: list[PaneLine]
    items: queue.Queue[QueueItem]
    listing: Listing | None
    scroll: int
    _stream_line: int | None

    def _add(self, text: str, kind: LineKind) -> None:
        self.lines.append(PaneLine(text, kind))

    def _error(self, message: str) -> None:
        self._add(error_line(message, self.lang), "error")

    def _tools(self) -> list[ToolDefinition]:
        available = getattr(self.registry, "available_tools", None)
        return list(available()) if callable(available) else []

    def start_status(self) -> StatusState:
        """The ctx part before the first token update (R-TUI-15); no ctx part if the session cannot be read."""
        try:
            used = session_context(self.session, self.system_prompt, self._tools(), self.long_session)
        except SessionError:
            return StatusState()
        return StatusState(used, self.engine.context_window)

    def _run_command(self, command: str) -> None:
        try:
            if command == "/new":
                self._switch(self.manager.new_session(draft=True), [])
            elif command == HELP_COMMAND:
                for line in help_lines(self.lang):
                    self._add(line, "notice")
            elif command.startswith(COMPACT_COMMAND):
                self._compact(command[len(COMPACT_COMMAND) :].strip())
            elif command.startswith(SEARCH_COMMAND):
                self._search(command[len(SEARCH_COMMAND) :].strip())
            else:
                self._open_listing(Listing("resume", lambda limit, offset: self.manager.recent_sessions(limit, offset)))
        except SessionError as exc:
            self._error(str(exc))

    def _compact(self, focus: str) -> None:
        """/compact [focus]: summarise now on a thread, then show the notice of R-TUI-5 (R-LONG-9)."""
        self._add(self.texts["compacting"], "notice")
        lang = self.lang

        def work() -> None:
            try:
                data = self.engine.compact_now(focus)
            except EngineError as exc:
                self.items.put(PaneLine(error_line(exc.message, lang), "error"))
                return
            self.items.put(PaneLine(compaction_notice(data, lang), "notice"))

        threading.Thread(target=work, name="harness9-compact", daemon=True).start()

    def _search(self, query: str) -> None:
        if not query:
            self._add(self.texts["search_usage"], "error")
            return
        self._open_listing(
            Listing("search", lambda limit, offset: self.manager.search(query, offset + limit)[offset:])
        )

    def _open_listing(self, listing: Listing, page: int = 1) -> None:
        listing.load(page)
        for line in listing.lines(int(self.clock()), self.lang):
            self._add(line, "notice")
        self.listing = None if listing.empty and page == 1 else listing

    def _choose(self, typed: str) -> None:
        """The line typed after a listing page: open, turn the page, or cancel (R-TUI-8, R-TUI-18)."""
        listing, self.listing = self.listing, None
        self._add(user_line(typed), "user")
        choice = None if listing is None else listing.choose(typed)
        try:
            if listing is None or choice is None:
                self._add(self.texts["cancelled"], "notice")
            elif choice == "next":
                self._open_listing(listing, listing.page + 1)
            elif choice == "previous":
                self._open_listing(listing, listing.page - 1)
            else:
                session = self.manager.open_session(listing.item(choice).id)
                self._switch(session, history_lines(session.get_messages(0), self.lang))
        except SessionError as exc:
            self._error(str(exc))

    def _switch(self, session: Session, lines: Sequence[PaneLine]) -> None:
        """Make ``session`` current: engine, approval, status bar and a fresh pane (R-TUI-7, R-TUI-8, R-APPR-2)."""
        self.engine.set_session(session)
        reset = getattr(self.registry, "reset_approval", None)
        if callable(reset):
            reset()
        self.session = session
        self.lines = list(lines)
        self.scroll = 0
        self._stream_line = None
        self.status = self.start_status()
