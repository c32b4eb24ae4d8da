"""What the command line and the environment ask for, resolved without side effects
(SPEC R-CLI-2 … R-CLI-5, R-CLI-13 … R-CLI-15, R-CLI-20 … R-CLI-22, R-LANG-1).

``resolve_settings`` takes the parsed options, an environment mapping and the current directory
and returns ``Settings``; it opens nothing, so its rules (an option overrides the environment,
which overrides the default; an empty variable counts as unset; R-CLI-4's provider choice;
R-CLI-13's refusals; R-LANG-1's language from the locale) are tested as a table. The checks that need the file system (a missing
folder of ``--db``) are in ``_wiring``.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import ClassVar, Final, Literal, NamedTuple
from urllib.parse import urlsplit

from .._harness9_error import Harness9Error
from ..engine import DEFAULT_COMPACT_AT, DEFAULT_MAX_TURNS
from ..memory.storage import DEFAULT_DB_NAME, POSTGRES_SCHEMES, home_folder, url_scheme
from ..provider import DEFAULT_TIMEOUT, is_official_endpoint, server_name
from ..text import STRINGS, TableSaid
from ..tools import ALLOW_FILE, DEFAULT_BASH_TIMEOUT

__all__ = [
    "COMPACT_AT_OFF",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MODEL",
    "ENV_ANTHROPIC_API_KEY",
    "ENV_ANTHROPIC_BASE_URL",
    "ENV_BASH_TIMEOUT",
    "ENV_COMPACT_AT",
    "ENV_DB",
    "ENV_LANG",
    "ENV_MODEL",
    "ENV_OPENAI_API_KEY",
    "ENV_OPENAI_BASE_URL",
    "ENV_SUMMARY_MODEL",
    "ENV_TIMEOUT",
    "ENV_TTL_DAYS",
    "ENV_YES",
    "LANGUAGES",
    "LOCAL_TIMEOUT",
    "MAX_TIMEOUT",
    "OFFLINE_NOTICE",
    "PROG",
    "PROVIDERS",
    "CliError",
    "ProviderChoice",
    "ProviderName",
    "Settings",
    "UsageError",
    "choose_provider",
    "keyless_notice",
    "locale_language",
    "offline_notice",
    "parse_compact_at",
    "parse_model_name",
    "parse_timeout",
    "provider_for_model",
    "resolve_settings",
]

PROG: Final = "harness9-ref"  # R-CLI-1: the command's name, and the prefix of its messages
DEFAULT_MODEL: Final = "openai/gpt-4o-mini"  # R-CLI-3
ENV_MODEL: Final = "LLM_MODEL"
ENV_OPENAI_API_KEY: Final = "OPENAI_API_KEY"
ENV_ANTHROPIC_API_KEY: Final = "ANTHROPIC_API_KEY"
ENV_OPENAI_BASE_URL: Final = "OPENAI_BASE_URL"
ENV_ANTHROPIC_BASE_URL: Final = "ANTHROPIC_BASE_URL"
ENV_DB: Final = "HARNESS9_DB"  # R-CLI-13: the database when --db is not given
ENV_YES: Final = "HARNESS9_YES"  # R-CLI-14: "1" means --yes
ENV_LANG: Final = "HARNESS9_LANG"  # R-CLI-14, R-TUI-17
ENV_TTL_DAYS: Final = "HARNESS9_SESSION_TTL_DAYS"  # R-PRUNE-2
ENV_COMPACT_AT: Final = "HARNESS9_COMPACT_AT"  # R-CLI-15: the trigger when --compact-at is not given
ENV_SUMMARY_MODEL: Final = "HARNESS9_SUMMARY_MODEL"  # R-CLI-20: the summarizer's model when --summary-model is not given
ENV_TIMEOUT: Final = "HARNESS9_TIMEOUT"  # R-CLI-22: the providers' timeout when --timeout is not given
ENV_BASH_TIMEOUT: Final = "HARNESS9_BASH_TIMEOUT"  # R-CLI-41: the bash tool's limit when --bash-timeout is not given
LOCAL_TIMEOUT: Final = 600.0  # R-CLI-22: seconds, on a base URL other than the official endpoint
MAX_TIMEOUT: Final = 86400  # R-CLI-22: a day; more is no longer told from a read that never ends
DEFAULT_MAX_RETRIES: Final = 2  # R-ENG-22: the agent retries a failed model call twice, as the official SDKs

ProviderName = Literal["openai", "anthropic", "offline"]
PROVIDERS: Final = ("openai", "anthropic", "offline")  # R-CLI-2: the choices of --provider
LANGUAGES: Final = ("zh", "en")  # R-CLI-14, R-TUI-17
LOCALE_VARIABLES: Final = ("LC_ALL", "LC_MESSAGES", "LANG")  # R-LANG-1: POSIX's order
LOCALE_CHINESE: Final = "zh"  # R-LANG-1: the language part of a Chinese locale
LOCALE_OTHER: Final = "en"  # R-LANG-1: every other locale, and none
_LOCALE_LANGUAGE: Final = re.compile(r"[^_.@]*")  # R-LANG-1: the text before the first _, . or @
Command = Literal["tui", "run", "sessions", "show", "search", "prune", "copy", "fork", "allow"]
_COMMANDS: Final[tuple[Command, ...]] = ("tui", "run", "sessions", "show", "search", "prune", "copy", "fork", "allow")

# R-CLI-4, R-CLI-13: printed to standard error when the default provider's key is not set
# (the English text; ``offline_notice`` gives it in a language, R-LANG-2).
OFFLINE_NOTICE: Final = STRINGS["en"]["cli_offline"]

# R-CLI-3, R-CLI-4: the key and base-URL variables of each network provider.
_PROVIDER_ENV: Final[Mapping[str, tuple[str, str]]] = {
    "openai": (ENV_OPENAI_API_KEY, ENV_OPENAI_BASE_URL),
    "anthropic": (ENV_ANTHROPIC_API_KEY, ENV_ANTHROPIC_BASE_URL),
}
_ANTHROPIC_MODEL_PREFIX: Final = "claude"

COMPACT_AT_OFF: Final = "off"  # no compaction before a call, only overflow recovery (R-LONG-7)
_DECIMAL: Final = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")  # ASCII digits, at most one point
# R-CLI-15: what the parser says of a bad --compact-at (English, R-LANG-4): the variable's
# message (R-LANG-3) without its source.
COMPACT_AT_EXPECTED: Final = STRINGS["en"]["err_compact_at"].removeprefix("{source}: ")
# R-CLI-20: what the parser says of a bad --summary-model (English, R-LANG-4): the variable's
# message (R-LANG-3) without its source.
MODEL_NAME_EXPECTED: Final = STRINGS["en"]["err_model_name"].removeprefix("{source}: ")
# R-CLI-22: what the parser says of a bad --timeout (English, R-LANG-4): the variable's message without its source.
TIMEOUT_EXPECTED: Final = STRINGS["en"]["err_timeout"].removeprefix("{source}: ")
# R-CLI-20: what a model name cannot hold: C0 controls, DEL and C1 controls (R-SUM-12's white space is str.isspace).
_MODEL_NAME_CONTROLS: Final = re.compile("[\x00-\x1f\x7f-\x9f]")


class CliError(Harness9Error):
    """A problem with what the user asked for, reported as one line with exit status 1 (R-CLI-6)."""

    code: ClassVar[str] = "invalid_argument"


class UsageError(Harness9Error):
    """A usage error found after parsing (R-CLI-6, R-CLI-10, R-CLI-11, R-CLI-15): one line, exit status 2."""

    code: ClassVar[str] = "usage_error"


def parse_compact_at(text: str) -> Fraction | None:
    """R-CLI-15: ``off`` is None; a decimal number in (0, 1] is that fraction, exactly.

    Only ASCII digits with at most one decimal point are numbers: no sign, exponent, fraction
    bar, white space, ``nan`` or ``inf``, so that one text means one trigger in every port.

    Raises:
        ValueError: anything else, with the message ``COMPACT_AT_EXPECTED``.
    """
    if text == COMPACT_AT_OFF:
        return None
    if _DECIMAL.fullmatch(text) is not None:
        value = Fraction(text)
        if 0 < value <= 1:
            return value
    raise ValueError(COMPACT_AT_EXPECTED.format(value=repr(text)))


def parse_timeout(text: str) -> float:
    """R-CLI-22: a decimal number of seconds in (0, MAX_TIMEOUT], written as R-CLI-15's numbers are.

    Raises:
        ValueError: anything else, with the message ``TIMEOUT_EXPECTED``.
    """
    if _DECIMAL.fullmatch(text) is not None:
        value = Fraction(text)
        if 0 < value <= MAX_TIMEOUT:
            return float(value)
    raise ValueError(TIMEOUT_EXPECTED.format(value=repr(text)))


def parse_model_name(text: str) -> str:
    """R-CLI-20: ``text`` when it can name a model: not empty, no white space (R-SUM-12), no control character.

    A name with a space or a line end is a slip of the shell, never a model any provider serves,
    so it fails now in one line rather than as a provider's refusal on the first summary.

    Raises:
        ValueError: anything else, with the message ``MODEL_NAME_EXPECTED``.
    """
    if not text or any(c.isspace() for c in text) or _MODEL_NAME_CONTROLS.search(text) is not None:
        raise ValueError(MODEL_NAME_EXPECTED.format(value=repr(text)))
    return text


class ProviderChoice(NamedTuple):
    """R-CLI-4's choice: ``missing_key`` names the provider's unset key, when ``fell_back`` (the
    offline provider answers) or when the provider is used without a key (R-CLI-21)."""

    provider: ProviderName
    fell_back: bool
    api_key: str
    base_url: str | None
    missing_key: str = ""


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the program needs to start, resolved (R-CLI-2 … R-CLI-5, R-CLI-10 … R-CLI-14).

    ``provider`` is the provider actually used; ``fell_back`` is True when the default one had
    no API key and the offline provider replaces it (R-CLI-4), ``missing_key`` naming that key;
    ``missing_key`` without ``fell_back`` is a network provider used without a key (R-CLI-21).
    ``db_path`` is always a path (R-MGR-1's default when no option or variable names one);
    ``db_source`` is ``--db`` or ``HARNESS9_DB`` when one of them named it, so a missing folder
    can be reported under that name (R-CLI-13). ``db_url`` is the ``postgresql://`` URL when one
    was given (R-PG-1); ``db_path`` then only places the tool results. ``context_window`` None
    means the model's. ``summary_model`` is the summarizer's model, None for the main one
    (R-CLI-20). ``compact_at`` is the trigger's fraction of the window, None for off;
    ``count_tokens`` asks the provider to count each request (R-CLI-15). ``raw`` turns off the
    line modes' cleaning of control characters (R-SAFE-2). ``timeout`` is the providers' (R-CLI-22).
    """

    command: Command
    prompt: str | None
    model: str
    provider: ProviderName
    fell_back: bool
    api_key: str
    base_url: str | None
    db_path: Path
    context_window: int | None
    resume: str | None
    workdir: str
    max_turns: int
    max_retries: int = 0
    missing_key: str = ""
    db_source: str | None = None
    db_url: str | None = None
    continue_last: bool = False
    any_folder: bool = False  # -c / sessions --any-folder: every folder's sessions (R-CLI-52, R-CLI-54)
    yes: bool = False
    lang: str = LOCALE_OTHER  # R-LANG-1: what no option, variable or locale names
    ttl_days: int | None = None
    target: str | None = None  # show SESSION, fork SESSION
    fork_at: int | None = None  # fork --at N (R-FORK-1); None: every message
    restore_files: bool = False  # fork --restore-files (R-CLI-60)
    query: str | None = None  # search QUERY…
    limit: int | None = None  # sessions / search --limit
    older_than_days: int | None = None  # prune --older-than
    dry_run: bool = False
    source: str | None = None  # copy SRC
    destination: str | None = None  # copy DST
    overwrite: bool = False  # copy --overwrite
    compact_at: Fraction | None = DEFAULT_COMPACT_AT  # R-CLI-15
    summary_model: str | None = None  # R-CLI-20
    count_tokens: bool = False  # R-CLI-15
    timeout: float = DEFAULT_TIMEOUT  # R-CLI-22: seconds for connecting and for each read
    raw: bool = False  # R-SAFE-2: text written as received, control characters included
    full: bool = False  # R-CLI-40: run and show write each tool result whole
    bash_timeout: float = DEFAULT_BASH_TIMEOUT  # R-CLI-41: seconds before a command is ended
    json: bool = False  # R-CLI-16: run writes its events as JSON lines
    home: Path | None = None  # R-INST-1: the folder of the user's AGENTS.md (R-MGR-1's, whatever --db says)
    system: bool = False  # R-INST-6: show --system
    allow_file: Path | None = None  # R-APPR-9: <home>/allow.json
    allow_list: bool = False  # R-APPR-10: allow --list
    allow_all: bool = False  # R-APPR-10: allow --list --all
    allow_remove: tuple[str, ...] | None = None  # R-APPR-10: allow --remove RULE…

    @property
    def notice(self) -> str | None:
        """R-CLI-4's offline notice when it is due, naming only the default provider's key, or
        R-CLI-21's when a provider is used without a key, naming the key and the server."""
        if self.fell_back:
            return offline_notice(self.missing_key, self.lang)
        if self.missing_key and self.base_url is not None:
            return keyless_notice(self.missing_key, self.base_url, self.lang)
        return None


def offline_notice(key: str, lang: str = LOCALE_OTHER) -> str:
    """The offline notice naming ``key`` in ``lang`` (R-CLI-4, R-CLI-13, R-LANG-2)."""
    return STRINGS[lang]["cli_offline"].format(key=key)


def keyless_notice(key: str, base_url: str, lang: str = LOCALE_OTHER) -> str:
    """R-CLI-21's notice: ``key`` is not set, and the requests go to ``base_url``'s server without one."""
    return STRINGS[lang]["cli_keyless"].format(key=key, server=server_name(base_url))


def _env(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "")  # R-CLI-3: an empty variable counts as unset


def provider_for_model(model: str) -> Literal["openai", "anthropic"]:
    """R-CLI-4 without ``--provider``: ``anthropic`` for a bare ``claude…`` name, else ``openai``.

    A routed name such as ``anthropic/claude-sonnet-4`` goes through an OpenAI-compatible router.
    """
    if "/" not in model and model.lower().startswith(_ANTHROPIC_MODEL_PREFIX):
        return "anthropic"
    return "openai"


def check_base_url(provider: str, url: str) -> None:
    """R-CLI-13: a base URL must be ``http://`` or ``https://`` with a host, so a typo fails now
    with its name rather than at the first request with a transport error."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:  # an invalid port or bracketed host
        host = None
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not host:
        raise CliError(TableSaid("err_base_url", provider=provider, url=repr(url)))


def choose_provider(model: str, requested: str | None, env: Mapping[str, str]) -> ProviderChoice:
    """The provider to use (R-CLI-4, R-CLI-13).

    Args:
        model: the resolved model name.
        requested: the value of ``--provider``, or None.
        env: the environment.

    Returns:
        The choice: ``fell_back`` is True when the default network provider's key is not set
        and its base URL is the official endpoint, so the offline provider is used and its
        notice must be printed; with any other base URL and no key, the provider itself, with
        an empty key and ``missing_key`` set (R-CLI-21: a local server needs none). ``base_url``
        is None for the provider's default.

    Raises:
        CliError: ``--provider openai`` or ``anthropic`` was given and its key is not set for its
            official endpoint (a user who names a provider wants it, not a silent offline
            answer), or the base URL of the chosen provider is not an http(s) URL with a host.
    """
    name = requested if requested is not None else provider_for_model(model)
    if name == "offline":
        return ProviderChoice("offline", False, "", None)
    if name not in _PROVIDER_ENV:
        raise CliError(f"unknown provider {name!r}; choose one of {', '.join(PROVIDERS)}")
    key_var, url_var = _PROVIDER_ENV[name]
    api_key = _env(env, key_var)
    base_url = _env(env, url_var) or None
    if base_url is not None:
        check_base_url(name, base_url)
    if not api_key and (base_url is None or is_official_endpoint(name, base_url)):
        if requested is not None:
            raise CliError(TableSaid("err_provider_needs_key", provider=name, key=key_var))
        return ProviderChoice("offline", True, "", None, key_var)
    chosen: ProviderName = "anthropic" if name == "anthropic" else "openai"
    return ProviderChoice(chosen, False, api_key, base_url, "" if api_key else key_var)


def expand_home(text: str) -> str:
    """A leading ``~`` or ``~/`` means the home folder (R-CLI-13); ``~user`` too, as the shell does."""
    return os.path.expanduser(text)


def _default_db(env: Mapping[str, str], cwd: str) -> Path:
    """R-MGR-1's default file: ``$HARNESS9_HOME/sessions.db``, else ``~/.harness9/sessions.db``."""
    return home_folder(env, cwd) / DEFAULT_DB_NAME


def _allow_remove(options: Mapping[str, object]) -> tuple[str, ...] | None:
    """R-APPR-10: the words of ``allow --remove``; ``--all`` goes only with ``--list``."""
    if options.get("allow_all") and not options.get("allow_list"):
        raise UsageError(TableSaid("err_all_needs_list"))
    words = options.get("allow_remove")
    if words is None:
        return None
    return tuple(str(word) for word in words) if isinstance(words, (list, tuple)) else (str(words),)


def resolve_db(
    options: Mapping[str, object], env: Mapping[str, str], cwd: str
) -> tuple[Path, str | None, str | None]:
    """The database: the file, the name it came from (``--db``, ``HARNESS9_DB`` or None for
    R-MGR-1's default) and the PostgreSQL URL when one was given (R-CLI-13, R-PG-1).

    With a URL the file is R-MGR-1's default one, whose folder holds ``tool-results``.

    Raises:
        CliError: the text names a URL of another scheme (R-CLI-13): a folder named ``xyz:``
            must not appear. Only the scheme is echoed, never a password the URL may hold.
    """
    given = options.get("db")
    source: str | None = "--db" if given is not None else None
    text = str(given) if given is not None else _env(env, ENV_DB)
    if given is None and text:
        source = ENV_DB
    if source is None:
        return _default_db(env, cwd), None, None
    scheme = url_scheme(text)
    if scheme in POSTGRES_SCHEMES:
        return _default_db(env, cwd), source, text
    if scheme is not None:
        raise CliError(TableSaid("err_db_scheme", source=source, scheme=scheme))
    return Path(cwd, expand_home(text)), source, None


def locale_language(env: Mapping[str, str]) -> str:
    """R-LANG-1's language of the locale: the first of LC_ALL, LC_MESSAGES and LANG that is set
    and not empty decides, ``zh`` when its language part is exactly ``zh``, else ``en`` (``C``,
    ``POSIX`` and no locale at all included)."""
    value = next((env[name] for name in LOCALE_VARIABLES if env.get(name)), "")
    match = _LOCALE_LANGUAGE.match(value)
    return LOCALE_CHINESE if match is not None and match.group() == LOCALE_CHINESE else LOCALE_OTHER


def language(options: Mapping[str, object], env: Mapping[str, str]) -> str:
    """R-LANG-1: ``--lang``, else HARNESS9_LANG, else the locale's.

    Raises:
        CliError: HARNESS9_LANG is neither ``zh`` nor ``en`` (worded in the locale's language).
    """
    lang = options.get("lang")
    if lang is not None:
        return str(lang)
    value = _env(env, ENV_LANG)
    if not value:
        return locale_language(env)
    if value not in LANGUAGES:
        raise CliError(TableSaid("err_lang_env", value=repr(value)))
    return value


def reporting_language(options: Mapping[str, object], env: Mapping[str, str]) -> str:
    """The language to report a failure in, whatever failed: R-LANG-1's, the locale's when
    HARNESS9_LANG itself is invalid."""
    try:
        return language(options, env)
    except CliError:
        return locale_language(env)


def _ttl_days(env: Mapping[str, str]) -> int | None:
    value = _env(env, ENV_TTL_DAYS)
    if not value:
        return None
    days = int(value) if value.isascii() and value.isdigit() else 0
    if days < 1:
        raise CliError(TableSaid("err_ttl_env", value=repr(value)))
    return days


def _compact_at(options: Mapping[str, object], env: Mapping[str, str]) -> Fraction | None:
    """R-CLI-15: ``--compact-at``, else HARNESS9_COMPACT_AT, else the default.

    Raises:
        UsageError: the value holds anything but ``off`` or a number in (0, 1].
    """
    given = options.get("compact_at")
    source, text = ("--compact-at", str(given)) if given is not None else (ENV_COMPACT_AT, _env(env, ENV_COMPACT_AT))
    if given is None and not text:
        return DEFAULT_COMPACT_AT
    try:
        return parse_compact_at(text)
    except ValueError:
        raise UsageError(TableSaid("err_compact_at", source=source, value=repr(text))) from None


def _summary_model(options: Mapping[str, object], env: Mapping[str, str]) -> str | None:
    """R-CLI-20: ``--summary-model``, else HARNESS9_SUMMARY_MODEL, else None (the main model summarises).

    Raises:
        UsageError: the name is empty (the option only: an empty variable is unset, R-CLI-3) or
            holds white space or a control character.
    """
    given = options.get("summary_model")
    source, text = ("--summary-model", str(given)) if given is not None else (ENV_SUMMARY_MODEL, _env(env, ENV_SUMMARY_MODEL))
    if given is None and not text:
        return None
    try:
        return parse_model_name(text)
    except ValueError:
        raise UsageError(TableSaid("err_model_name", source=source, value=repr(text))) from None


def _timeout(options: Mapping[str, object], env: Mapping[str, str], choice: ProviderChoice) -> float:
    """R-CLI-22: ``--timeout``, else HARNESS9_TIMEOUT, else LOCAL_TIMEOUT for a base URL other
    than the official endpoint (a CPU reads a long prompt before it answers) and DEFAULT_TIMEOUT on it.

    Raises:
        UsageError: the value is not a number of seconds in (0, MAX_TIMEOUT].
    """
    given = options.get("timeout")
    source, text = ("--timeout", str(given)) if given is not None else (ENV_TIMEOUT, _env(env, ENV_TIMEOUT))
    if given is None and not text:
        local = choice.base_url is not None and not is_official_endpoint(choice.provider, choice.base_url)
        return LOCAL_TIMEOUT if local else DEFAULT_TIMEOUT
    try:
        return parse_timeout(text)
    except ValueError:
        raise UsageError(TableSaid("err_timeout", source=source, value=repr(text))) from None


def _bash_timeout(options: Mapping[str, object], env: Mapping[str, str]) -> float:
    """R-CLI-41: ``--bash-timeout``, else HARNESS9_BASH_TIMEOUT, else R-TOOL-6's 60 seconds;
    written and bounded as R-CLI-22's SECONDS.

    Raises:
        UsageError: the value is not a number of seconds in (0, MAX_TIMEOUT].
    """
    given = options.get("bash_timeout")
    source = "--bash-timeout" if given is not None else ENV_BASH_TIMEOUT
    text = str(given) if given is not None else _env(env, ENV_BASH_TIMEOUT)
    if given is None and not text:
        return DEFAULT_BASH_TIMEOUT
    try:
        return parse_timeout(text)
    except ValueError:
        raise UsageError(TableSaid("err_timeout", source=source, value=repr(text))) from None


def _count_tokens(options: Mapping[str, object], provider: ProviderName) -> bool:
    """R-CLI-15: ``--count-tokens`` with a provider that has no counting endpoint is a usage error."""
    if not options.get("count_tokens"):
        return False
    if provider != "anthropic":
        raise UsageError(TableSaid("err_count_tokens", provider=provider))
    return True


def _raw(options: Mapping[str, object], command: Command) -> bool:
    """R-SAFE-2: ``--raw`` is for the line modes; the terminal UI, which draws every text through
    R-SAFE-1's mapping, refuses it."""
    if not options.get("raw"):
        return False
    if command == "tui":
        raise UsageError(TableSaid("err_raw_tui"))
    return True


def _json(options: Mapping[str, object], command: Command) -> bool:
    """R-CLI-16: ``--json`` is for ``run`` alone."""
    if not options.get("json"):
        return False
    if command != "run":
        raise UsageError(TableSaid("err_json_run"))
    return True


def argument_text(text: str) -> str:
    """A text argument (a prompt, a search query) as standard input's text would be (R-CLI-26).

    Python decodes the command line by the file-system encoding with ``surrogateescape``, so a
    byte that is not valid there (``$'\\xff'`` under UTF-8) arrives as a lone surrogate, which
    no message may hold (R-MSG-6). The bytes are taken back and decoded again with each invalid
    sequence replaced by U+FFFD, as R-CLI-11 reads standard input. Paths are left as they are:
    they name files by their bytes.
    """
    return os.fsencode(text).decode(sys.getfilesystemencoding(), errors="replace")


def _query(words: object) -> str | None:
    """R-CLI-12: the words of ``search`` joined by one space."""
    if words is None:
        return None
    if isinstance(words, (list, tuple)):
        return argument_text(" ".join(str(word) for word in words))
    return argument_text(str(words))


def _int_or_none(value: object) -> int | None:
    return None if value is None else int(str(value))


def resolve_settings(options: Mapping[str, object], env: Mapping[str, str], cwd: str) -> Settings:
    """Combine the parsed options, the environment and the defaults (R-CLI-2, R-CLI-3, R-CLI-14).

    Args:
        options: the options given, by name (``model``, ``provider``, ``db``,
            ``context_window``, ``resume``, ``continue_last``, ``yes``, ``lang``, ``workdir``,
            ``max_turns``, ``command``, ``prompt``, and the sub-commands' ``target``,
            ``query``, ``limit``, ``older_than``, ``dry_run``, and copy's ``source``,
            ``destination``, ``overwrite``, R-CLI-15's ``compact_at`` (its text) and
            ``count_tokens``, R-SAFE-2's ``raw``, R-CLI-16's ``json``, R-INST-6's ``system``,
            R-CLI-20's ``summary_model`` and R-CLI-22's ``timeout`` (its text)); a missing name
            was not given.
        env: the environment.
        cwd: the current directory, the default working directory.

    Raises:
        CliError: R-CLI-13's refusals, and invalid values of HARNESS9_LANG or
            HARNESS9_SESSION_TTL_DAYS. The provider and the TTL are checked only for the
            terminal UI and ``run``: listing or searching sessions needs no key.
        UsageError: an invalid HARNESS9_COMPACT_AT, ``--count-tokens`` with a provider
            other than anthropic (R-CLI-15), or an invalid ``--summary-model`` or
            HARNESS9_SUMMARY_MODEL (R-CLI-20) or ``--timeout`` or HARNESS9_TIMEOUT (R-CLI-22),
            checked only for the terminal UI and ``run``;
            ``--raw`` for the terminal UI (R-SAFE-2); ``--json`` for anything but ``run`` (R-CLI-16).
    """

    def opt(name: str) -> object:
        return options.get(name)

    command_name = opt("command") or "tui"
    command: Command = next((c for c in _COMMANDS if c == command_name), "tui")
    agent = command in ("tui", "run")
    model = str(opt("model") or _env(env, ENV_MODEL) or DEFAULT_MODEL)
    requested = opt("provider")
    choice = (
        choose_provider(model, None if requested is None else str(requested), env)
        if agent
        else ProviderChoice("offline", False, "", None)
    )
    db_path, db_source, db_url = resolve_db(options, env, cwd)
    workdir = opt("workdir")
    resume = opt("resume")
    prompt = opt("prompt")
    query = opt("query")
    return Settings(
        command=command,
        prompt=None if prompt is None else str(prompt),
        model=model,
        provider=choice.provider,
        fell_back=choice.fell_back,
        api_key=choice.api_key,
        base_url=choice.base_url,
        db_path=db_path,
        context_window=_int_or_none(opt("context_window")),
        resume=None if resume is None else str(resume),
        workdir=os.path.abspath(os.path.join(cwd, expand_home(str(workdir)) if workdir is not None else ".")),
        max_turns=_int_or_none(opt("max_turns")) or DEFAULT_MAX_TURNS,
        max_retries=DEFAULT_MAX_RETRIES if opt("max_retries") is None else int(str(opt("max_retries"))),
        missing_key=choice.missing_key,
        db_source=db_source,
        db_url=db_url,
        continue_last=bool(opt("continue_last")),
        any_folder=bool(opt("any_folder")),
        yes=bool(opt("yes")) or _env(env, ENV_YES) == "1",
        lang=language(options, env),
        ttl_days=_ttl_days(env) if agent else None,
        target=None if opt("target") is None else str(opt("target")),
        query=_query(query),
        limit=_int_or_none(opt("limit")),
        older_than_days=_int_or_none(opt("older_than")),
        dry_run=bool(opt("dry_run")),
        source=None if opt("source") is None else str(opt("source")),
        destination=None if opt("destination") is None else str(opt("destination")),
        overwrite=bool(opt("overwrite")),
        fork_at=_int_or_none(opt("at")),
        restore_files=bool(opt("restore_files")),
        compact_at=_compact_at(options, env) if agent else DEFAULT_COMPACT_AT,
        count_tokens=_count_tokens(options, choice.provider) if agent else False,
        summary_model=_summary_model(options, env) if agent else None,
        timeout=_timeout(options, env, choice) if agent else DEFAULT_TIMEOUT,
        raw=_raw(options, command),
        full=bool(opt("full")),
        bash_timeout=_bash_timeout(options, env) if agent else DEFAULT_BASH_TIMEOUT,
        json=_json(options, command),
        home=home_folder(env, cwd),
        system=bool(opt("system")),
        allow_file=home_folder(env, cwd) / ALLOW_FILE,
        allow_list=bool(opt("allow_list")),
        allow_all=bool(opt("allow_all")),
        allow_remove=_allow_remove(options) if command == "allow" else None,
    )
