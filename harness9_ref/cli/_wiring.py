"""Building the program from its settings, as R-CLI-5 wires it
(SPEC R-CLI-5, R-CLI-8, R-CLI-9, R-CLI-10, R-CLI-13, R-CLI-15, R-CLI-20, R-CLI-22, R-CLI-24, R-CLI-25, R-PRUNE-2,
R-INST-4, R-LANG-3).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from .._harness9_error import os_reason
from ..engine import (
    AgentEngine,
    InstructionWarning,
    LongSession,
    OwnTools,
    ProjectInstructions,
    RetryingSummarizer,
    RetryPolicy,
    SaveAsItGoes,
)
from ..memory.context import REQUEST_SHARE, SUMMARY_SHARE, new_summarization_compactor
from ..memory.storage import ForeignDatabase, Manager, session_folder
from ..offline import OfflineProvider
from ..provider import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_OUTPUT_TOKENS,
    OFFICIAL_BASE_URLS,
    AnthropicProvider,
    ModelLimits,
    OpenAIProvider,
    TokenCounter,
    ask_window,
    get_model_limits,
    is_official_endpoint,
    request_model,
    reserved_output_tokens_of,
)
from ..text import (
    TableSaid,
    folder_shown,
    instruction_warning_line,
    model_label,
    other_folder_line,
    strings_for,
    terminal_safe,
)
from ..tools import AllowRules, Registry
from ._session_lock import SESSION_LOCK_FILE, SessionLock
from ._settings import CliError, Settings

if TYPE_CHECKING:
    from ..memory.storage import PruneResult, StatefulSession
    from ..provider import LLMProvider
    from ..tools import Approve

__all__ = [
    "TOOL_RESULTS_DIR",
    "build_engine",
    "build_provider",
    "build_registry",
    "build_summarizer",
    "context_window",
    "open_manager",
    "open_session",
    "request_model_of",
    "session_lock",
    "session_provider",
]

TOOL_RESULTS_DIR: Final = "tool-results"  # R-CLI-5: <home>/tool-results, home = the database's folder
OFFLINE_CHUNK_DELAY: Final = 0.001  # seconds between the offline provider's words in the terminal UI
SECONDS_PER_DAY: Final = 86400  # R-PRUNE-2, R-CLI-12: DAYS in prune's seconds
DEFAULT_LIMITS: Final = ModelLimits(DEFAULT_CONTEXT_TOKENS, DEFAULT_OUTPUT_TOKENS)  # R-LIM-3: no key matched
# Where the window comes from (R-WIN-7); the engine adds "error" and "truncation".
WINDOW_OPTION: Final = "option"
WINDOW_REGISTRY: Final = "registry"
WINDOW_DEFAULT: Final = "default"
WINDOW_SERVER: Final = "server"


def check_workdir(settings: Settings) -> None:
    """Raises CliError when the working directory does not exist or is not a directory."""
    if not os.path.isdir(settings.workdir):
        raise CliError(TableSaid("err_workdir", path=settings.workdir))


def build_provider(
    settings: Settings, *, streaming_delay: bool = False, model: str | None = None, reply_limit: int = 0
) -> LLMProvider:
    """The provider of R-CLI-4 for ``model`` (the main one by default), with an empty key on a
    local server (R-CLI-21) and R-CLI-22's timeout; ``streaming_delay`` paces the offline
    provider's words for the UI; ``reply_limit`` limits each reply (R-PRV-29)."""
    name = settings.model if model is None else model
    if settings.provider == "openai":
        if settings.base_url:
            return OpenAIProvider(name, settings.api_key, settings.base_url, settings.timeout, reply_limit=reply_limit)
        return OpenAIProvider(name, settings.api_key, timeout=settings.timeout, reply_limit=reply_limit)
    if settings.provider == "anthropic":
        if settings.base_url:
            return AnthropicProvider(name, settings.api_key, settings.base_url, settings.timeout, reply_limit=reply_limit)
        return AnthropicProvider(name, settings.api_key, timeout=settings.timeout, reply_limit=reply_limit)
    return OfflineProvider(chunk_delay=OFFLINE_CHUNK_DELAY if streaming_delay else 0.0, reply_limit=reply_limit)


def build_summarizer(settings: Settings, provider: LLMProvider, window: int = 0) -> LLMProvider:
    """Who makes the summaries (R-CLI-20): the same provider, base URL, key and timeout, for the
    main model or, with ``--summary-model``, that one; its replies are limited to the summary
    limit of ``window`` (R-FOLD-7), so it is an instance of its own. The offline provider sends
    no model, so it summarises whatever the option says."""
    return build_provider(settings, model=settings.summary_model, reply_limit=window // SUMMARY_SHARE)


def request_model_of(settings: Settings) -> str:
    """The name the main model's requests carry (R-PRV-27): for the provider's base URL, its
    default when none is set; the offline provider sends none, and keeps the name as configured."""
    base_url = settings.base_url or OFFICIAL_BASE_URLS.get(settings.provider)
    return settings.model if base_url is None else request_model(settings.provider, settings.model, base_url)


def context_window(settings: Settings) -> tuple[int, str]:
    """The window to start with and where it comes from (R-CLI-5, R-WIN-7).

    ``--context-window`` when given; else the registry's (``default`` for a model it does not
    know, R-LIM-3), made smaller by the server's own answer when the provider is OpenAI-compatible
    at a base URL other than the official one (R-WIN-3): a local server knows its window.
    """
    if settings.context_window is not None:
        return settings.context_window, WINDOW_OPTION
    limits = get_model_limits(settings.model)
    window, source = limits.context_tokens, WINDOW_REGISTRY if limits != DEFAULT_LIMITS else WINDOW_DEFAULT
    if settings.provider == "openai" and settings.base_url and not is_official_endpoint("openai", settings.base_url):
        answer = ask_window(settings.base_url, settings.model, settings.api_key)
        if answer is not None and answer[0] < window:
            window, source = answer[0], WINDOW_SERVER
    return window, source


def _unwritable_reason(path: Path) -> str | None:
    """Why ``path`` cannot be written (the operating system's words), None when it can."""
    if os.access(path, os.W_OK):
        return None
    try:
        read_only_mount = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        read_only_mount = False
    return os.strerror(errno.EROFS if read_only_mount else errno.EACCES)


def _nearest_folder(folder: Path) -> Path:
    """``folder`` or, when it does not exist yet (the default home, R-MGR-1), its nearest existing ancestor."""
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    return folder


def check_db_file(db_path: Path, label: str, *, writing: bool) -> None:
    """Refuse a database path SQLite must not be pointed at (R-CLI-24, R-CLI-25), before it is.

    A device, FIFO, socket or folder is no database file: SQLite would open ``/dev/null`` and
    leave ``/dev/null-journal`` beside it, and block on a FIFO. A command that writes (``run``,
    the terminal UI, ``prune``) needs the file, when it exists, and its folder (SQLite's
    ``-journal``, ``-wal`` and ``-shm`` files) to be writable; asked anyway, SQLite would answer
    a read-only file system with ``unable to open database file``, and a run would call the
    model only to lose its turn. ``label`` names the path as the user gave it.

    Raises:
        CliError: the path is not a regular file, or the database cannot be written.
    """
    try:
        mode: int | None = db_path.stat().st_mode
    except OSError:  # missing (created later), or not ours to look at: SQLite says why
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise CliError(TableSaid("err_db_special", path=label))
    if not writing:
        return
    for target in (db_path, _nearest_folder(db_path.parent)) if mode is not None else (_nearest_folder(db_path.parent),):
        reason = _unwritable_reason(target)
        if reason is not None:
            raise CliError(TableSaid("err_db_unwritable", path=label, reason=reason))


def open_manager(settings: Settings, *, read_only: bool = False) -> Manager:
    """The Manager on the database of R-MGR-1, tool results in ``<home>/tool-results`` (R-CLI-5).

    ``read_only`` opens an SQLite file without writing to it (R-DB-12), for the commands that
    only read (R-CLI-12).

    Raises:
        CliError: the folder of a ``--db`` or ``HARNESS9_DB`` file does not exist (R-CLI-13).
            The Manager would create it, but a typo in a path should not leave a new folder
            tree behind; only the default home folder is created. Also: the file holds tables
            of its own and none of ours (R-DB-2), it is no regular file (R-CLI-24), or it
            cannot be written by a command that writes (R-CLI-25), each named by the option it
            came from.
    """
    db_path = settings.db_path
    if settings.db_url is not None:  # R-PG-1: tool results stay in <home>/tool-results
        return Manager(settings.db_url, db_path.parent / TOOL_RESULTS_DIR)
    if settings.db_source is not None and not db_path.parent.is_dir():
        raise CliError(TableSaid("err_db_folder", source=settings.db_source, path=db_path, folder=db_path.parent))
    label = f"{settings.db_source} {db_path}" if settings.db_source is not None else str(db_path)
    check_db_file(db_path, label, writing=not read_only)
    try:
        return Manager(db_path, db_path.parent / TOOL_RESULTS_DIR, read_only=read_only)
    except ForeignDatabase as exc:
        raise CliError(TableSaid("err_not_ours", path=label)) from exc


def prune_expired(manager: Manager, settings: Settings) -> PruneResult | None:
    """R-PRUNE-2: with HARNESS9_SESSION_TTL_DAYS, delete the expired sessions before the session
    of ``--resume`` or ``--continue`` is looked up; the result when something was deleted."""
    if settings.ttl_days is None:
        return None
    result = manager.prune(settings.ttl_days * SECONDS_PER_DAY)
    return result if result.sessions > 0 else None


def session_lock(settings: Settings) -> SessionLock:
    """The lock of the program's current session (R-CLI-27a): the file ``session-locks`` in the
    database's folder, the home folder for PostgreSQL (made when missing, as R-MGR-1 makes it).

    Raises:
        CliError: the file cannot be opened or created (the operating system's words).
    """
    path = settings.db_path.parent / SESSION_LOCK_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return SessionLock(path)
    except OSError as exc:
        raise CliError(TableSaid("err_session_lock", path=path, reason=os_reason(exc))) from exc


def session_provider(settings: Settings) -> str:
    """The provider a session records (R-FIND-4): the model label of R-TUI-25, as the status bar shows it."""
    return model_label(settings.provider, request_model_of(settings), settings.base_url)


def open_session(
    manager: Manager, settings: Settings, lock: SessionLock, say: Callable[[str], None]
) -> StatefulSession:
    """The session to work on (R-CLI-7, R-CLI-8, R-CLI-10), locked by ``lock`` (R-CLI-27).

    ``--resume TEXT`` takes an id or a unique prefix (R-FIND-1: SessionNotFound,
    AmbiguousSessionId or InvalidSessionId otherwise); ``--continue`` the most recent session
    with messages of the working directory (of any folder with ``--any-folder``, R-CLI-52), else
    a new one, of which ``say`` is told (R-CLI-28: a user who asked to go on should not take a
    fresh start for the old conversation, nor another folder's for this one's). A session of
    another folder is taken with a line saying so (R-CLI-53). A new session is a draft
    (R-FIND-2): it is stored with its first message, so starting and quitting, or a start that
    fails, leaves nothing behind.

    Raises:
        SessionInUse: another running program holds the session (R-CLI-27b).
    """
    here = session_folder(settings.workdir)
    texts = strings_for(settings.lang)
    found: str | None = None
    if settings.resume is not None:
        found = manager.resolve_session_id(settings.resume)
    elif settings.continue_last:
        recent = manager.recent_sessions(limit=1, workdir=None if settings.any_folder else here)
        if recent:
            found = recent[0].id
        elif settings.any_folder:
            say(texts["cli_continue_none"])
        else:
            say(terminal_safe(texts["cli_continue_none_here"].format(folder=folder_shown(here, settings.lang))))
    if found is None:
        session = manager.new_session(draft=True, workdir=here, provider=session_provider(settings))
    else:
        session = manager.open_session(found)
        folder = manager.session_origin(found)[0]
        if folder != here:
            say(terminal_safe(other_folder_line(folder, here, settings.lang)))
    lock.hold(session.session_id)
    return session


def build_registry(settings: Settings, approve: Approve | None) -> Registry:
    """The tools on the working directory (R-TOOL), asking ``approve`` before each command
    (R-APPR-1) that no allow rule of ``<home>/allow.json`` covers (R-APPR-7, R-APPR-9); None
    runs every command (``--yes``)."""
    if approve is None:
        return Registry(settings.workdir, bash_timeout=settings.bash_timeout)
    rules = AllowRules(settings.allow_file) if settings.allow_file is not None else None
    return Registry(settings.workdir, approve=approve, rules=rules, bash_timeout=settings.bash_timeout)


def build_instructions(settings: Settings, warn: Callable[[str], None] | None = None) -> ProjectInstructions:
    """The prompt builder of R-INST-4: the built-in prompt and the AGENTS.md files of the home
    folder and the working directory, read again at every run; each new warning goes to ``warn``
    as its line in the language of R-CLI-14 (the UI sets its own sink later)."""
    instructions = ProjectInstructions(settings.workdir, None if settings.home is None else str(settings.home))
    if warn is not None:
        lang = settings.lang

        def report(warning: InstructionWarning) -> None:
            warn(instruction_warning_line(warning, lang))

        instructions.on_warning = report
    return instructions


def build_engine(
    settings: Settings,
    provider: LLMProvider,
    session: StatefulSession,
    registry: Registry,
    prompt_builder: ProjectInstructions | None = None,
) -> AgentEngine:
    """The engine of R-CLI-5 with the long-session context part (R-LONG-1), R-CLI-15's trigger and counter, and its own tools;
    so its session keeps its long-session state too (R-SES-1).

    Its system prompt comes from ``prompt_builder`` (R-INST-4; ``build_instructions(settings)``
    when None), called at the start of every run.

    It saves as it goes (R-ENG-23): the prompt before the first call, each step once complete.

    ``build_summarizer``'s provider summarises, its calls retried as the model's are (R-ENG-27),
    with the TokenBudget fallback; each summarizer
    request is kept within half the window (the main model's, whatever model summarises,
    R-CLI-20), and runs start from the session's checkpoint. The trigger leaves
    room for the ``max_tokens`` the provider asks for (R-LONG-10); with ``--count-tokens`` the
    provider counts each request (settings allow it only for the Anthropic provider).
    """
    window, source = context_window(settings)
    counter = provider if settings.count_tokens and isinstance(provider, TokenCounter) else None
    retry = RetryPolicy(settings.max_retries)
    summarizer = build_summarizer(settings, provider, window)
    retrying = RetryingSummarizer(summarizer, retry) if retry.max_retries else None  # R-ENG-27
    compactor = new_summarization_compactor(
        summarizer if retrying is None else retrying,
        window,
        request_limit=window // REQUEST_SHARE,
        summary_limit=window // SUMMARY_SHARE,
    )
    return AgentEngine(
        provider,
        registry,
        prompt_builder=prompt_builder if prompt_builder is not None else build_instructions(settings),
        session=session,
        compactor=compactor,
        context=LongSession(
            window,
            settings.compact_at,
            reserved_output_tokens_of(provider),
            counter,
            source,
            settings.model,
            carry=True,
        ),
        saving=SaveAsItGoes(),
        own_tools=OwnTools(),
        retry=retry,
        summary_retries=retrying,
        max_turns=settings.max_turns,
    )
