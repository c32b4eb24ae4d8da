"""``harness9-ref``: the terminal UI, or ``run PROMPT`` without it (SPEC R-CLI-1 … R-CLI-9).

Every failure is one line ``harness9-ref: error: <message>`` on standard error and exit status
1; invalid options exit 2 (R-CLI-6). No traceback ever reaches the user: an unexpected
exception is reported as ``internal error: <type>: <message>``.
"""

from __future__ import annotations

import logging
import os
import sys
from contextlib import contextmanager
from typing import Final, Iterator, Sequence, TextIO

from ..engine import LOGGER_NAME, EngineError, one_line
from ..memory import SessionError
from ..provider import ProviderError
from ..tui import App, ScreenError, prepare_tui
from ._parser import parse_args
from ._run import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, SESSION_LINE, run_prompt
from ._settings import OFFLINE_NOTICE, PROG, Settings, resolve_settings
from ._wiring import CliError, build_engine, build_provider, check_workdir, open_manager, open_session

__all__ = ["main"]

WARNING_LINE: Final = PROG + ": warning: %(message)s"  # engine warnings in run mode (R-ENG-13)
_EXPECTED: Final = (SessionError, ProviderError, EngineError, ScreenError, CliError, OSError, ValueError)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the program with ``argv`` (default ``sys.argv[1:]``) and return its exit status."""
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except SystemExit as exc:  # --help, --version, bad options
        return exc.code if isinstance(exc.code, int) else EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except _EXPECTED as exc:
        return _fail(one_line(str(exc)) or type(exc).__name__)
    except Exception as exc:  # never a traceback (R-CLI-6)
        text = one_line(str(exc))
        return _fail(
            f"internal error: {type(exc).__name__}: {text}" if text else f"internal error: {type(exc).__name__}"
        )


def _fail(message: str) -> int:
    sys.stderr.write(f"{PROG}: error: {message}\n")
    sys.stderr.flush()
    return EXIT_FAILED


def _main(argv: Sequence[str]) -> int:
    settings = resolve_settings(parse_args(argv), os.environ, os.getcwd())
    if settings.fell_back:
        sys.stderr.write(OFFLINE_NOTICE + "\n")  # R-CLI-4
        sys.stderr.flush()
    check_workdir(settings)
    if settings.command == "run":
        return _run(settings)
    return _tui(settings)


def _run(settings: Settings) -> int:
    assert settings.prompt is not None
    provider = build_provider(settings)
    with open_manager(settings) as manager, _warnings_to(sys.stderr):
        session = open_session(manager, settings)
        engine = build_engine(settings, provider, session)
        return run_prompt(engine, session.session_id, settings.prompt, sys.stdout, sys.stderr)


def _tui(settings: Settings) -> int:
    screen = prepare_tui()  # before anything is created: no curses or no terminal fails here (R-TUI-13)
    provider = build_provider(settings, streaming_delay=True)
    with open_manager(settings) as manager:
        session = open_session(manager, settings)
        engine = build_engine(settings, provider, session)
        notices = [OFFLINE_NOTICE] if settings.fell_back else []
        app = App(engine, manager, session, settings.model, settings.workdir, notices=notices)
        logger = logging.getLogger(_package_logger())
        handler = app.log_handler()
        logger.addHandler(handler)
        propagate, logger.propagate = logger.propagate, False
        try:
            screen(app)
        finally:
            logger.removeHandler(handler)
            logger.propagate = propagate
        sys.stderr.write(SESSION_LINE.format(id=app.session.session_id) + "\n")
    return EXIT_OK


def _package_logger() -> str:
    return LOGGER_NAME.partition(".")[0]  # "harness9_ref": the engine's and every other module's


@contextmanager
def _warnings_to(stream: TextIO) -> Iterator[None]:
    logger = logging.getLogger(_package_logger())
    handler = logging.StreamHandler(stream)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter(WARNING_LINE))
    logger.addHandler(handler)
    propagate, logger.propagate = logger.propagate, False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
