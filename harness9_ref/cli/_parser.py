"""The command line's grammar (SPEC R-CLI-1, R-CLI-2, R-CLI-6, R-CLI-10 … R-CLI-16, R-SAFE-2).

The agent's options are accepted before and after ``run``; the session sub-commands (R-CLI-12)
take ``--db`` after their name too. Every parse error is one line ``harness9-ref: error:
<message>`` on standard error with exit status 2 (R-CLI-6); ``--help`` and ``--version`` print
to standard output and exit 0.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final, NoReturn

from .. import __version__
from ..engine import DEFAULT_MAX_TURNS
from ..memory.storage import HOME_ENV
from ..provider import DEFAULT_TIMEOUT
from ..tools import DEFAULT_BASH_TIMEOUT
from ._settings import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_MODEL,
    ENV_ANTHROPIC_API_KEY,
    ENV_ANTHROPIC_BASE_URL,
    ENV_BASH_TIMEOUT,
    ENV_COMPACT_AT,
    ENV_DB,
    ENV_LANG,
    ENV_MODEL,
    ENV_OPENAI_API_KEY,
    ENV_OPENAI_BASE_URL,
    ENV_SUMMARY_MODEL,
    ENV_TIMEOUT,
    ENV_TTL_DAYS,
    ENV_YES,
    LANGUAGES,
    LOCAL_TIMEOUT,
    MAX_TIMEOUT,
    PROG,
    PROVIDERS,
    parse_compact_at,
    parse_model_name,
    parse_timeout,
)

__all__ = ["DEFAULT_LIMIT", "EXIT_USAGE", "MAX_CONTEXT_WINDOW", "USAGE", "parse_args"]

EXIT_USAGE: Final = 2  # R-CLI-6: invalid options
MAX_CONTEXT_WINDOW: Final = 100_000_000  # R-CLI-13: a larger --context-window is a typo
DEFAULT_LIMIT: Final = 20  # R-CLI-12: sessions and search

_USAGE_LINES: Final = (  # R-CLI-1, R-CLI-12: the forms of the command, each with what it does
    ("[OPTIONS]", "start the terminal UI"),
    ("[OPTIONS] run PROMPT", "run one prompt without the UI (PROMPT - reads standard input)"),
    ("sessions [--limit N] [--any-folder]", "list this folder's recent sessions (or every folder's)"),
    ("show SESSION", "print a session's conversation"),
    ("show --system [SESSION]", "print the system prompt a run would send now"),
    ("search QUERY [--limit N]", "find sessions by the words of their messages"),
    ("prune --older-than DAYS [--dry-run]", "delete sessions not updated for DAYS days"),
    ("copy SRC DST [--overwrite]", "copy every session to another database"),
    ("fork SESSION [--at N [--restore-files]]", "copy a session, or its first N messages, into a new one"),
    ("allow --list [--all]", "list the commands allowed here without asking"),
    ("allow --remove RULE", "stop allowing one of them"),
)
_USAGE_WIDTH: Final = 27  # the forms above that are longer get their text on the next line
USAGE: Final = "\n       ".join(
    f"{PROG} {form:<{_USAGE_WIDTH}}{text}"
    if len(form) < _USAGE_WIDTH
    else f"{PROG} {form}\n       {'':{len(PROG) + 1 + _USAGE_WIDTH}}{text}"
    for form, text in _USAGE_LINES
)

DESCRIPTION: Final = """\
A coding agent with context engineering: the conversation is kept in a session database,
measured in tokens, and summarized when it outgrows the model's context window."""

EPILOG: Final = f"""\
environment:
  {ENV_MODEL}             the model when --model is not given (default {DEFAULT_MODEL})
  {ENV_OPENAI_API_KEY}, {ENV_ANTHROPIC_API_KEY}
                        API keys; without the default provider's key the offline provider
                        answers (with --provider, a missing key is an error)
  {ENV_OPENAI_BASE_URL}, {ENV_ANTHROPIC_BASE_URL}
                        API roots for compatible servers and routers; with one other than
                        the official API, no key is needed (none is then sent)
  {HOME_ENV}         folder of the default database (default ~/.harness9)
  {ENV_DB}           the database when --db is not given (a file or a postgresql:// URL)
  {ENV_YES}=1        as --yes
  {ENV_LANG}         as --lang; without either, the first of LC_ALL, LC_MESSAGES and LANG
                        that is set: Chinese for zh, zh_CN.UTF-8 …, else English
  {ENV_COMPACT_AT}   as --compact-at
  {ENV_SUMMARY_MODEL}
                        as --summary-model
  {ENV_TIMEOUT}      as --timeout
  {ENV_BASH_TIMEOUT}
                        as --bash-timeout
  {ENV_TTL_DAYS}=N
                        delete sessions not updated for N days when the agent starts

SESSION is an id or the start of one (at least 4 characters).

terminal UI: /new starts a session, /resume picks a saved one, /fork continues in a copy,
/rewind goes back to before one of your prompts, /search finds a session, /compact compacts
now, /context shows what the next request holds, /show [N] (Ctrl+O) shows a tool result whole,
/help lists the keys, /exit leaves;
Tab completes a command; Ctrl+C interrupts a turn, or leaves when none is running.

The bash tool is not a sandbox: commands run with your permissions and can reach any file you
can; the working directory is only where they start. The terminal UI asks before each command
and run mode runs none without --yes."""


UNKNOWN_COMMAND: Final = "unknown command {word!r}; to send a prompt without the UI use: {prog} run PROMPT"
# R-LANG-1: what chooses the language when --lang is not given.
LANG_HELP: Final = f"language of the messages (default: ${ENV_LANG}, else zh when the locale's language is zh, else en)"
BOTH_RESUME_AND_CONTINUE: Final = "--resume and --continue cannot be used together"
ANY_FOLDER_ALONE: Final = "--any-folder goes with -c/--continue"  # R-CLI-52
SESSION_REQUIRED: Final = "the following arguments are required: SESSION"  # R-INST-6: show without --system
_COMMAND_METAVAR: Final = "COMMAND"
_FULL_HELP: Final = "write each tool result whole after its one-line form (control characters shown as U+FFFD unless --raw)"


class _Parser(argparse.ArgumentParser):
    """A parser that reports errors as R-CLI-6 says and knows which of its options take a value.

    ``takes_value`` maps each option string (its parents' included) to whether a word after it
    is its value, so ``parse_args`` can find the command word, and tell an unknown one
    (R-CLI-1), before argparse sees it.
    """

    def __init__(self, *, parents: Sequence[_Parser] = (), **kwargs: Any) -> None:
        self.takes_value: dict[str, bool] = {}  # before super(), whose --help is added by add_argument
        self.command_names: frozenset[str] = frozenset()  # the sub-commands, set by _build
        for parent in parents:
            self.takes_value.update(parent.takes_value)
        super().__init__(parents=list(parents), **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.takes_value.update(dict.fromkeys(action.option_strings, action.nargs != 0))
        return action

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{PROG}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _command_word(argv: Sequence[str], takes_value: dict[str, bool]) -> int | None:
    """The index of the first word of ``argv`` that is neither an option nor an option's value.

    An abbreviated long option (argparse allows unique prefixes) takes a value when every
    option it abbreviates does; an ambiguous one is left for argparse to report.
    """
    index = 0
    while index < len(argv):
        word = argv[index]
        if word == "--":
            return index + 1 if index + 1 < len(argv) else None
        if not word.startswith("-") or word == "-":
            return index
        if "=" not in word:
            matches = [value for option, value in takes_value.items() if option == word] or [
                value for option, value in takes_value.items() if word.startswith("--") and option.startswith(word)
            ]
            if matches and all(matches):
                index += 1
        index += 1
    return None


def _at_least(minimum: int, wanted: str) -> Callable[[str], int]:
    """An argparse type: a decimal integer of at least ``minimum``, else one line saying ``wanted``."""

    def read(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}")
        return value

    return read


_positive = _at_least(1, "a positive integer")
_count = _at_least(0, "0 or a positive integer")


def _window(text: str) -> int:
    value = _positive(text)
    if value > MAX_CONTEXT_WINDOW:  # R-CLI-13
        raise argparse.ArgumentTypeError(f"expected at most {MAX_CONTEXT_WINDOW} tokens, got {text!r}")
    return value


def _compact_at(text: str) -> str:
    """R-CLI-15's check, so a bad value is reported as argparse reports the others; the text is
    kept (``off`` parses to None, which would read as "not given")."""
    try:
        parse_compact_at(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _timeout(text: str) -> str:
    """R-CLI-22's check of ``--timeout``, reported as argparse reports the others; the text is
    kept, so the settings read the option and the variable alike."""
    try:
        parse_timeout(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _model_name(text: str) -> str:
    """R-CLI-20's check of ``--summary-model``, reported as argparse reports the others."""
    try:
        return parse_model_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _storage() -> _Parser:
    storage = _Parser(add_help=False, argument_default=argparse.SUPPRESS)
    storage.add_argument(
        "--db",
        metavar="PATH",
        help=f"session database, a file or a postgresql:// URL (default: ${ENV_DB}, else ${HOME_ENV}/sessions.db,"
        " else ~/.harness9/sessions.db)",
    )
    storage.add_argument("--lang", choices=LANGUAGES, help=LANG_HELP)
    storage.add_argument(
        "--raw",
        action="store_true",
        help="write text as received, control characters included (not the terminal UI; by default they are"
        " shown as U+FFFD)",
    )
    return storage


def _common() -> _Parser:
    common = _Parser(add_help=False, argument_default=argparse.SUPPRESS, parents=[_storage()])
    common.add_argument("--model", metavar="NAME", help=f"model name (default: ${ENV_MODEL}, else {DEFAULT_MODEL})")
    common.add_argument(
        "--summary-model",
        type=_model_name,
        metavar="NAME",
        help=f"model of the summaries, on the same provider, base URL and key; the window stays the main"
        f" model's (default: ${ENV_SUMMARY_MODEL}, else the main model)",
    )
    common.add_argument(
        "--provider",
        choices=PROVIDERS,
        help="provider (default: anthropic for claude* names, else openai; offline when its API key is missing)",
    )
    common.add_argument(
        "--context-window", type=_window, metavar="N", help="context window in tokens (default: the model's)"
    )
    common.add_argument("--resume", metavar="SESSION", help="continue a saved session (default: a new one)")
    common.add_argument(
        "-c",
        "--continue",
        dest="continue_last",
        action="store_true",
        help="continue the most recent session of the working directory",
    )
    common.add_argument(
        "--any-folder", action="store_true", help="with -c: the most recent session of any folder"
    )
    common.add_argument("--workdir", metavar="DIR", help="working directory of the tools (default: the current one)")
    common.add_argument(
        "--max-turns",
        type=_positive,
        metavar="N",
        help=f"model calls allowed per prompt (default: {DEFAULT_MAX_TURNS})",
    )
    common.add_argument(
        "--max-retries",
        type=_count,
        metavar="N",
        help=f"retries of a model call that failed before any text, 0 for none (default: {DEFAULT_MAX_RETRIES})",
    )
    common.add_argument(
        "--compact-at",
        type=_compact_at,
        metavar="F",
        help=f"compact when a request passes this fraction of the window, 0 < F <= 1, or off to compact"
        f" only after the model refuses a request as too long (default: ${ENV_COMPACT_AT}, else 0.8)",
    )
    common.add_argument(
        "--count-tokens",
        action="store_true",
        help="count each request with the provider's token-counting endpoint (anthropic only)",
    )
    common.add_argument(
        "--timeout",
        type=_timeout,
        metavar="SECONDS",
        help=f"how long to wait for the model to connect and for each piece of its answer, 0 < SECONDS <="
        f" {MAX_TIMEOUT} (default: ${ENV_TIMEOUT}, else {LOCAL_TIMEOUT:g} with a base URL other than the"
        f" official API, for a server reading a long prompt on a CPU, else {DEFAULT_TIMEOUT:g})",
    )
    common.add_argument(
        "--bash-timeout",
        type=_timeout,
        metavar="SECONDS",
        help=f"how long a shell command may run before it is ended, 0 < SECONDS <= {MAX_TIMEOUT}"
        f" (default: ${ENV_BASH_TIMEOUT}, else {DEFAULT_BASH_TIMEOUT:g})",
    )
    common.add_argument("--yes", action="store_true", help="run shell commands and make file changes without asking")
    common.add_argument(
        "--json",
        action="store_true",
        help="run only: write each event of the run as one JSON line on standard output (notes stay on"
        " standard error)",
    )
    return common


def _add_session_commands(commands: argparse._SubParsersAction[_Parser]) -> None:
    """R-CLI-12: sessions, show, search, prune, each taking --db after its name; R-PG-10: copy; R-FORK-1: fork."""
    formatter = argparse.RawDescriptionHelpFormatter
    storage = _storage()
    sessions = commands.add_parser(
        "sessions",
        parents=[storage],
        prog=f"{PROG} sessions",
        help="list this folder's recent sessions",
        description="The sessions of the current folder that hold messages, most recently updated first;\n"
        "each line: id, last change, messages, folder, provider, title.",
        formatter_class=formatter,
    )
    sessions.add_argument("--limit", type=_positive, metavar="N", help=f"at most N (default {DEFAULT_LIMIT})")
    sessions.add_argument(
        "--any-folder", action="store_true", help="list the sessions of every folder (default: this one's)"
    )
    show = commands.add_parser(
        "show",
        parents=[storage],
        prog=f"{PROG} show",
        help="print a session's conversation",
        description="Print a session's messages as the terminal UI shows them after /resume.",
        formatter_class=formatter,
    )
    show.add_argument("target", metavar="SESSION", nargs="?", help="an id or the start of one")
    show.add_argument("--full", action="store_true", default=argparse.SUPPRESS, help=_FULL_HELP)
    show.add_argument(
        "--system",
        action="store_true",
        help="print the system prompt a run would send now from the working directory (the built-in prompt and"
        " the AGENTS.md files) instead",
    )
    search = commands.add_parser(
        "search",
        parents=[storage],
        prog=f"{PROG} search",
        help="find sessions by the words of their messages",
        description="The sessions with a message holding every word (case is ignored); when none, one line says so\n"
        "on standard error and the exit status is 1.",
        formatter_class=formatter,
    )
    search.add_argument("query", metavar="QUERY", nargs="+", help="words to find")
    search.add_argument("--limit", type=_positive, metavar="N", help=f"at most N (default {DEFAULT_LIMIT})")
    prune = commands.add_parser(
        "prune",
        parents=[storage],
        prog=f"{PROG} prune",
        help="delete old sessions",
        description="Delete the sessions not updated for DAYS days, with their tool results.",
        formatter_class=formatter,
    )
    prune.add_argument("--older-than", type=_positive, metavar="DAYS", required=True, help="age in whole days")
    prune.add_argument("--dry-run", action="store_true", help="only count what would be deleted")
    copy = commands.add_parser(
        "copy",
        prog=f"{PROG} copy",
        help="copy every session to another database",
        description="Copy every session (messages, todos, checkpoints) from SRC to DST, each an SQLite file\n"
        "or a postgresql:// URL, in one transaction. A session id DST already holds stops the copy\n"
        "before anything is written, unless --overwrite replaces those sessions.",
        formatter_class=formatter,
    )
    copy.add_argument("source", metavar="SRC", help="the database to read")
    copy.add_argument("destination", metavar="DST", help="the database to write")
    copy.add_argument("--overwrite", action="store_true", help="replace the sessions DST already holds")
    fork = commands.add_parser(
        "fork",
        parents=[storage],
        prog=f"{PROG} fork",
        help="copy a session into a new one",
        description="Make a new session holding the first N stored messages of SESSION (all of them without --at),\n"
        "its todos and, where they still fit, its checkpoint and context state; SESSION is left as it\n"
        "was. Prints the new session's id.",
        formatter_class=formatter,
    )
    fork.add_argument("target", metavar="SESSION", help="an id or the start of one")
    # R-FORK-2b: --at 0 would make a session of no message, which no listing shows
    fork.add_argument("--at", type=_positive, metavar="N", help="keep only the first N messages, N >= 1 (default: all)")
    # R-CLI-60: the files the dropped messages changed are named, and put back only when asked
    fork.add_argument(
        "--restore-files",
        action="store_true",
        help="put back the files the dropped messages changed, printing their diffs first",
    )
    fork.add_argument("--workdir", metavar="DIR", help="where those files are (default: the current directory)")
    _add_allow_command(commands)


def _add_allow_command(commands: argparse._SubParsersAction[_Parser]) -> None:
    """R-APPR-10: the allow rules of a directory, listed or removed."""
    allow = commands.add_parser(
        "allow",
        prog=f"{PROG} allow",
        help="list or remove the commands allowed without asking",
        description="The allow rules: in the terminal UI, a at a command's question keeps one, and a command\n"
        "starting with a rule's words then runs without asking, in that directory only, in the UI\n"
        f"and in run mode. They are kept in ${HOME_ENV}/allow.json (default ~/.harness9/allow.json).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        argument_default=argparse.SUPPRESS,
    )
    action = allow.add_mutually_exclusive_group(required=True)
    action.add_argument("--list", dest="allow_list", action="store_true", help="the rules of the directory")
    action.add_argument("--remove", dest="allow_remove", nargs="+", metavar="RULE", help="forget this rule")
    allow.add_argument("--all", dest="allow_all", action="store_true", help="with --list: every directory's rules")
    allow.add_argument("--workdir", metavar="DIR", help="the directory (default: the current one)")
    allow.add_argument("--lang", choices=LANGUAGES, help=LANG_HELP)


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
        description="Run one prompt without the terminal UI: the answer goes to standard output,\n"
        "tool activity and the session id to standard error. PROMPT - reads the prompt from\n"
        "standard input; with a PROMPT, piped input is added to it after a blank line. Shell\n"
        "commands run only with --yes. Ctrl+C (exit status 130) or SIGTERM (143) cancels the run.\n"
        "--json writes every event of the run as one JSON line on standard output instead.",
        help="run one prompt without the UI",
        formatter_class=formatter,
    )
    run.add_argument("prompt", metavar="PROMPT", help="what to ask, or - to read it from standard input")
    run.add_argument("--full", action="store_true", default=argparse.SUPPRESS, help=_FULL_HELP)
    _add_session_commands(commands)
    parser.command_names = frozenset(commands.choices)
    return parser


def parse_args(argv: Sequence[str]) -> dict[str, object]:
    """Parse ``argv`` (without the program name) into the options that were given.

    The prompt of ``run`` is returned as given; ``read_prompt`` completes it from standard
    input (R-CLI-11) and rejects an empty one.

    Raises:
        SystemExit: 2 after printing one error line; 0 after ``--help`` or ``--version``.
    """
    parser = _build()
    argv = list(argv)
    command = _command_word(argv, parser.takes_value)
    if command is not None and argv[command] not in parser.command_names:
        parser.parse_args(argv[: command - (argv[command - 1 : command] == ["--"])])  # their errors come first
        parser.error(UNKNOWN_COMMAND.format(word=argv[command], prog=PROG))
    options = vars(parser.parse_args(argv))
    if options.get("resume") is not None and options.get("continue_last"):
        parser.error(BOTH_RESUME_AND_CONTINUE)  # R-CLI-10
    if options.get("any_folder") and options.get("command") != "sessions" and not options.get("continue_last"):
        parser.error(ANY_FOLDER_ALONE)  # R-CLI-52
    if options.get("command") == "show" and options.get("target") is None and not options.get("system"):
        parser.error(SESSION_REQUIRED)  # R-INST-6: SESSION is optional only with --system
    return {name: value for name, value in options.items() if value is not None}
