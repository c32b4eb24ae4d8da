"""The agent's two faces: ``run`` mode and the terminal UI, wired and cleaned up
(SPEC R-CLI-5, R-CLI-7, R-CLI-8, R-CLI-10, R-INT-2, R-INT-4, R-PRUNE-2, R-APPR-2, R-APPR-3, R-SAFE-2, R-LANG-2).

Both prune expired sessions first (R-PRUNE-2, so ``--continue`` never picks one about to
expire), then open the session (a draft when new, R-FIND-2), then build a registry whose
approval callback fits the mode; the registry is closed on every way out, a signal included,
so no command of the agent outlives it (R-INT-2).
"""

from __future__ import annotations

import logging
import queue
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Final, TextIO

from ..engine import LOGGER_NAME
from ..memory.storage import SessionNotFound
from ..text import run_error, strings_for, terminal_safe
from ..tools import INTERRUPT_GRACE_SECONDS, FileChange, command_lines, require_yes, subject, visible
from ._run_prompt import EXIT_NOT_RUN, EXIT_OK, SESSION_LINE, Note, RunItem, run_prompt
from ._settings import Settings
from ._subcommands import prune_line
from ._wiring import (
    build_engine,
    build_instructions,
    build_provider,
    build_registry,
    open_manager,
    open_session,
    prune_expired,
    request_model_of,
    session_lock,
)

if TYPE_CHECKING:
    from ..memory.storage import Manager
    from ._signals import SignalState

__all__ = ["not_run_lines"]

# R-INT-4: how long the UI's cancelled turn may take to end its command (the grace of R-INT-1
# and a little) before the program goes on; Registry.close() only asks the running command's
# thread to end it, so leaving sooner could leave a command that ignores SIGTERM alive.
STOP_WAIT_SECONDS: Final = INTERRUPT_GRACE_SECONDS + 1.0


def _say(stream: TextIO, line: str) -> None:
    stream.write(line + "\n")
    stream.flush()


def _pruned(manager: Manager, settings: Settings) -> str | None:
    """R-PRUNE-2's line, printed on standard error only when something was deleted."""
    result = prune_expired(manager, settings)
    if result is None:
        return None
    line = prune_line(result, lang=settings.lang)
    _say(sys.stderr, line)
    return line


def not_run_lines(request: str | FileChange, lang: str) -> list[str]:
    """What standard error says of a command or change refused for want of ``--yes`` (R-APPR-12):
    ``cli_not_run`` naming it, made visible (R-APPR-11); a command of several lines gets
    ``cli_not_run_lines`` and then each of its lines behind the numbered gutter, as the terminal
    UI shows them, so a second line can never pass for part of the first."""
    from ..tui import command_rows  # no curses: the rows are text

    texts = strings_for(lang)
    if isinstance(request, FileChange) or "\n" not in request:
        return [texts["cli_not_run"].format(command=visible(subject(request)))]
    rows = command_rows(request)
    return [texts["cli_not_run_lines"].format(n=len(command_lines(request))), *rows]


def run_mode(settings: Settings, signals: SignalState) -> int:
    """``run PROMPT`` (R-CLI-7): commands run only with ``--yes`` (R-APPR-3)."""
    assert settings.prompt is not None
    provider = build_provider(settings)
    items: queue.Queue[RunItem] = queue.Queue()

    refusals: list[str | FileChange] = []

    def refused(request: str | FileChange) -> None:  # on the worker thread: in the order of the events
        refusals.append(request)
        for line in not_run_lines(request, settings.lang):
            items.put(Note(line))

    with open_manager(settings) as manager, session_lock(settings) as lock, _warnings_to(sys.stderr, settings.lang) as warnings:
        _pruned(manager, settings)
        session = open_session(manager, settings, lock, partial(_say, sys.stderr))
        registry = build_registry(settings, None if settings.yes else require_yes(refused))
        try:
            # R-INST-4: an AGENTS.md warning is a warning line, in its place among the events
            instructions = build_instructions(settings, logging.getLogger(__name__).warning)
            engine = build_engine(settings, provider, session, registry, instructions)
            warnings.items = items
            status = run_prompt(
                engine,
                session.session_id,
                settings.prompt,
                sys.stdout,
                sys.stderr,
                items=items,
                interrupt=registry.interrupt,
                lang=settings.lang,
                error_message=partial(
                    run_error,
                    lang=settings.lang,
                    max_turns=settings.max_turns,
                    provider=settings.provider,
                    model=request_model_of(settings),
                ),
                session_exists=partial(_stored, manager, session.session_id),
                raw=settings.raw,
                full=settings.full,
                as_json=settings.json,
            )
            # R-CLI-50: a run that did what it was asked but for a refused command does not say 0
            return EXIT_NOT_RUN if status == EXIT_OK and refusals else status
        finally:
            warnings.items = None
            signals.raising = False  # the clean-up finishes whatever signal comes now
            registry.close()


def tui_mode(settings: Settings, signals: SignalState) -> int:
    """The terminal UI (R-CLI-8): it asks before each command unless ``--yes`` (R-APPR-2).

    The UI package is imported here, not with this module, so that ``run`` and the session
    sub-commands never load it.
    """
    from ..tui import App, Approver, prepare_tui

    screen = prepare_tui()  # before anything is created: no curses or no terminal fails here (R-TUI-13)
    provider = build_provider(settings, streaming_delay=True)
    with open_manager(settings) as manager, session_lock(settings) as lock:
        notices = [settings.notice] if settings.notice is not None else []
        pruned = _pruned(manager, settings)
        if pruned is not None:
            notices.append(pruned)
        session = open_session(manager, settings, lock, notices.append)  # R-CLI-28: in the pane, which hides standard error
        # The registry is built before the App (the engine needs it): the App's Approver is made
        # first and handed to both, so the UI answers the registry's questions (R-APPR-2).
        approver = None if settings.yes else Approver()
        registry = build_registry(settings, approver)
        app: App | None = None
        try:
            instructions = build_instructions(settings)  # the App shows its warnings (R-INST-4)
            engine = build_engine(settings, provider, session, registry, instructions)
            app = App(
                engine,
                manager,
                session,
                request_model_of(settings),
                settings.workdir,
                provider=settings.provider,
                base_url=settings.base_url,
                notices=notices,
                lang=settings.lang,
                registry=registry,
                approver=approver,
                long_session=True,  # build_engine's context part is LongSession (R-LONG-1): the start figure uses its prior
                instructions=instructions,
                hold=lock.hold,  # R-CLI-27c: /new, /resume, /fork and /rewind move the lock
            )
            logger = logging.getLogger(_package_logger())
            handler = app.log_handler()
            logger.addHandler(handler)
            propagate, logger.propagate = logger.propagate, False
            try:
                screen(app)
            finally:
                logger.removeHandler(handler)
                logger.propagate = propagate
        finally:
            signals.raising = False
            if app is not None:  # after a signal the screen loop did not get to it (R-INT-2)
                app.shutdown(STOP_WAIT_SECONDS)
            registry.close()
        if _stored(manager, app.session.session_id):  # a draft never written is no session to resume
            _say(sys.stderr, SESSION_LINE.format(id=app.session.session_id))
    return 0


def _stored(manager: Manager, session_id: str) -> bool:
    """Whether the session has a row: a new one is stored with its first message (R-FIND-2)."""
    try:
        manager.open_session(session_id)
    except SessionNotFound:
        return False
    return True


def _package_logger() -> str:
    return LOGGER_NAME.partition(".")[0]  # "harness9_ref": the engine's and every other module's


class _SafeFormatter(logging.Formatter):
    """A warning's line, ``cli_warning`` in the program's language (R-LANG-2), with its control
    characters made visible, ``--raw`` or not (R-SAFE-2): a warning quotes what failed (a
    database's or a provider's words), which the program does not control."""

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.template = strings_for(lang)["cli_warning"]

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(self.template.format(message=record.getMessage()))


class _WarningLines(logging.Handler):
    """The package's warnings as ``harness9-ref: warning: …`` lines on standard error (R-ENG-13).

    While a run is printed, ``items`` is its queue: a warning then becomes a ``Note`` printed in
    its place among the events, after the streamed text's line is ended, instead of cutting
    into that line from the engine's thread.
    """

    def __init__(self, stream: TextIO) -> None:
        super().__init__(logging.WARNING)
        self.stream = stream
        self.items: queue.Queue[RunItem] | None = None

    def emit(self, record: logging.LogRecord) -> None:
        line = self.format(record)
        items = self.items
        if items is not None:
            items.put(Note(line))
            return
        self.stream.write(line + "\n")
        self.stream.flush()


@contextmanager
def _warnings_to(stream: TextIO, lang: str) -> Iterator[_WarningLines]:
    logger = logging.getLogger(_package_logger())
    handler = _WarningLines(stream)
    handler.setFormatter(_SafeFormatter(lang))
    logger.addHandler(handler)
    propagate, logger.propagate = logger.propagate, False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
