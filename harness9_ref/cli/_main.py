"""``harness9-ref``: the terminal UI, ``run PROMPT`` without it, and the session sub-commands
(SPEC R-CLI-1 … R-CLI-18, R-PG-10, R-INT-4, R-PRUNE-2, R-APPR-2, R-APPR-3, R-SAFE-2, R-LANG-1 … R-LANG-4).

Every failure is one line ``harness9-ref: error: <message>`` on standard error and exit status
1; invalid options exit 2 (R-CLI-6). No traceback and no Python exception name ever reaches the
user (R-CLI-13): an unexpected exception is reported as ``internal error: <message>``. The
message may quote a file, a provider or a database, so its control characters are made
visible (R-SAFE-2), ``--raw`` or not. The line is in the language of R-LANG-1, known as soon as
the options are parsed (before that, HARNESS9_LANG's or the locale's), and an error worded by
a key is written in it here, once (R-LANG-3).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from .._harness9_error import Harness9Error
from ..engine import one_line
from ..text import in_language, strings_for, terminal_safe
from ._agent import run_mode, tui_mode
from ._parser import EXIT_USAGE, parse_args
from ._prompt import read_prompt
from ._run_prompt import EXIT_FAILED
from ._settings import UsageError, reporting_language, resolve_settings
from ._signals import RUN_SIGNALS, TUI_SIGNALS, Signalled, exit_status, on_signals
from ._subcommands import run_command, run_copy, run_fork
from ._wiring import check_workdir

__all__ = ["main"]

def main(argv: Sequence[str] | None = None) -> int:
    """Run the program with ``argv`` (default ``sys.argv[1:]``) and return its exit status."""
    lang = reporting_language({}, os.environ)  # R-LANG-1 before the options are known
    try:
        options = parse_args(sys.argv[1:] if argv is None else argv)
        lang = reporting_language(options, os.environ)
        return _main(options)
    except SystemExit as exc:  # --help, --version, bad options
        return exc.code if isinstance(exc.code, int) else EXIT_FAILED
    except (KeyboardInterrupt, Signalled) as exc:  # a signal before or after the run (R-INT-4)
        return exit_status(exc)
    except Harness9Error as exc:  # every failure the program expects (R-CLI-6)
        return _fail(_describe(exc, lang), lang, EXIT_USAGE if isinstance(exc, UsageError) else EXIT_FAILED)
    except Exception as exc:  # never a traceback (R-CLI-6), never a type name (R-CLI-13)
        return _fail(strings_for(lang)["cli_internal"].format(message=_describe(exc, lang)), lang)


def _describe(exc: BaseException, lang: str) -> str:
    text = one_line(in_language(exc, lang))  # R-LANG-3
    if text:
        return text
    return exc.code.replace("_", " ") if isinstance(exc, Harness9Error) else strings_for(lang)["cli_unexpected"]


def _fail(message: str, lang: str, status: int = EXIT_FAILED) -> int:
    sys.stderr.write(strings_for(lang)["cli_error"].format(message=terminal_safe(message)) + "\n")
    sys.stderr.flush()
    return status


def _main(options: dict[str, object]) -> int:
    if options.get("command") == "run":
        options["prompt"] = read_prompt(str(options.get("prompt", "")), sys.stdin)  # R-CLI-11
    settings = resolve_settings(options, os.environ, os.getcwd())
    if settings.command == "copy":
        return run_copy(settings, sys.stdout)  # R-PG-10
    if settings.command == "fork":
        return run_fork(settings, sys.stdout, sys.stderr)  # R-FORK-1, R-CLI-60
    if settings.command not in ("tui", "run"):
        return run_command(settings, sys.stdout, sys.stderr)
    if settings.notice is not None:
        _say(settings.notice)  # R-CLI-4
    check_workdir(settings)
    if settings.command == "run":
        with on_signals(RUN_SIGNALS) as signals:
            return run_mode(settings, signals)
    with on_signals(TUI_SIGNALS) as signals:
        return tui_mode(settings, signals)


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
