"""The command line's grammar (SPEC R-CLI-1, R-CLI-2, R-CLI-6).

The options are accepted before and after ``run``. Every parse error is one line
``harness9-ref: error: <message>`` on standard error with exit status 2 (R-CLI-6); ``--help``
and ``--version`` print to standard output and exit 0.
"""

from __future__ import annotations

import argparse
import sys
from typing import Final, NoReturn, Sequence

from .. import __version__
from ..engine import DEFAULT_MAX_TURNS
from ._settings import (
    DEFAULT_MODEL,
    ENV_ANTHROPIC_API_KEY,
    ENV_ANTHROPIC_BASE_URL,
    ENV_MODEL,
    ENV_OPENAI_API_KEY,
    ENV_OPENAI_BASE_URL,
    PROG,
    PROVIDERS,
)

__all__ = ["EXIT_USAGE", "USAGE", "parse_args"]  # gets re-exported

EXIT_USAGE: Final = 2  # R-CLI-6: invalid options

USAGE: Final = f"""\
{PROG} [OPTIONS]              start the terminal UI
       {PROG} [OPTIONS] run PROMPT   run one prompt without the UI"""

DESCRIPTION: Final = """\
A coding agent with context engineering: the conversation is kept in a session database,
measured in tokens, and summarized when it outgrows the model's context window."""

EPILOG: Final = f"""\
environment:
  {ENV_MODEL}             the model when --model is not given (default {DEFAULT_MODEL})
  {ENV_OPENAI_API_KEY}, {ENV_ANTHROPIC_API_KEY}
                        API keys; without the chosen provider's key the offline provider answers
  {ENV_OPENAI_BASE_URL}, {ENV_ANTHROPIC_BASE_URL}
                        API roots for compatible servers and routers
  HARNESS9_HOME         folder of the default database (default ~/.harness9)

terminal UI: /new starts a session, /resume picks a saved one, /exit leaves; Tab completes a
command; Ctrl+C interrupts a turn, or leaves when none is running.

The bash tool is not a sandbox: commands run with your permissions and can reach any file you
can; the working directory is only where they start."""


UNKNOWN_COMMAND: Final = "unknown command {word!r}; to send a prompt without the UI use: {prog} run PROMPT"
_COMMAND_METAVAR: Final = "COMMAND"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        if message.startswith(f"argument {_COMMAND_METAVAR}: invalid choice: "):
            word = message.split("invalid choice: ", 1)[1].split(" (choose", 1)[0].strip("'")
            message = UNKNOWN_COMMAND.format(word=word, prog=PROG)
        sys.stderr.write(f"{PROG}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _common() -> _Parser:
    common = _Parser(add_help=False, argument_default=argparse.SUPPRESS)
    common.add_argument("--model", metavar="NAME", help=f"model name (default: ${ENV_MODEL}, else {DEFAULT_MODEL})")
    common.add_argument(
        "--provider",
        choices=PROVIDERS,
        help="provider (default: anthropic for claude* names, else openai; offline when its API key is missing)",
    )
    common.add_argument(
        "--db",
        metavar="PATH",
        help="session database (default: $HARNESS9_HOME/sessions.db, else ~/.harness9/sessions.db)",
    )
    common.add_argument(
        "--context-window", type=_positive, metavar="N", help="context window in tokens (default: the model's)"
    )
    common.add_argument("--resume", metavar="SESSION_ID", help="continue a saved session (default: a new one)")
    common.add_argument("--workdir", metavar="DIR", help="working directory of the tools (default: the current one)")
    common.add_argument(
        "--max-turns",
        type=_positive,
        metavar="N",
        help=f"model calls allowed per prompt (default: {DEFAULT_MAX_TURNS})",
    )
    return common


def _build() -> _Parser:
    common = _common()
    formatter = argparse.RawDescriptionHelpFormatter
    parser = _Parser(
        prog=PROG, usage=USAGE, description=DESCRIPTION, epilog=EPILOG, parents=[common], formatter_class=formatter
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar=_COMMAND_METAVAR, title="commands")
    run = commands.add_parser(
        "run",
        parents=[common],
        prog=f"{PROG} run",
        usage=f"{PROG} [OPTIONS] run PROMPT",
        description="Run one prompt without the terminal UI: the answer goes to standard output, "
        "tool activity and the session id to standard error.",
        help="run one prompt without the UI",
        formatter_class=formatter,
    )
    run.add_argument("prompt", metavar="PROMPT", help="what to ask")
    return parser


def parse_args(argv: Sequence[str]) -> dict[str, object]:
    """Parse ``argv`` (without the program name) into the options that were given.

    Raises:
        SystemExit: 2 after printing one error line; 0 after ``--help`` or ``--version``.
    """
    options = vars(_build().parse_args(list(argv)))
    if options.get("command") == "run" and not str(options.get("prompt", "")).strip():
        _Parser(prog=PROG).error("PROMPT is empty")
    return {name: value for name, value in options.items() if value is not None}
