"""The session sub-commands: ``sessions``, ``show``, ``search``, ``prune`` (SPEC R-CLI-12),
``show --system`` (R-INST-6), ``copy SRC DST [--overwrite]`` (R-PG-9, R-PG-10) and ``fork SESSION [--at N]``
(R-FORK-1, R-FORK-2); and ``allow`` (R-APPR-10), the allow rules.

They work on the database only: no provider, no tools, no API key. Their output goes to
standard output, one line per item, so it can be read by people and by ``grep``/``cut`` alike;
every line passes through the pane's ``clean_line`` (R-SAFE-1), so a stored escape sequence
cannot drive the terminal, unless ``--raw`` asks for the text as stored (R-SAFE-2).

``copy``'s SRC and DST are each an SQLite file or a ``postgresql://`` URL, as ``--db`` takes them.
The copy is one transaction on DST, whole or absent (``copy_sessions``); a session id DST
already holds refuses it unless ``--overwrite``. SRC must exist (reading it must never create a
file), and DST's folder too, as for ``--db`` (R-CLI-13).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

from ..memory.context import format_token_count
from ..memory.storage import (
    POSTGRES_SCHEMES,
    CorruptRow,
    FileChangeLog,
    Manager,
    SessionDatabaseError,
    copy_sessions,
    session_folder,
    url_scheme,
)
from ..text import (
    STRINGS,
    TableSaid,
    clean_line,
    counted,
    folder_shown,
    history_lines,
    learned_window_line,
    origin_line,
    provider_shown,
    result_lines,
    strings_for,
    terminal_safe,
)
from ..tools import (
    AllowRules,
    plan_restores,
    restore,
    restore_lines,
    restored_line,
    rule_text,
    rule_words,
    rules_directory,
)
from ._output import Filter, line_filter, stream_filter
from ._parser import DEFAULT_LIMIT
from ._run_prompt import silence
from ._settings import CliError, Settings, expand_home
from ._wiring import SECONDS_PER_DAY, build_instructions, check_db_file, check_workdir, open_manager

if TYPE_CHECKING:
    from ..memory.storage import PruneResult

__all__ = [
    "ALLOW_FILE_UNUSABLE",
    "FORK_UNWRITABLE",
    "NO_INDEX_NOTICE",
    "NO_MATCH_LINE",
    "NO_SUCH_RULE",
    "PRUNED_LINE",
    "WOULD_PRUNE_LINE",
    "format_when",
    "prune_line",
    "run_command",
]

TIME_FORMAT: Final = "%Y-%m-%d %H:%M"  # R-CLI-12: local time
# R-CLI-12's rows, with the word of STRINGS' message_word or messages_word (R-LANG-2, R-CLI-51).
SESSION_ROW: Final = "{id}  {when}  {count} {messages}  {folder}  {provider}  {title}"  # R-CLI-12, R-CLI-54: sessions
SEARCH_ROW: Final = "{id}  {when}  {snippet}"  # R-CLI-12: search
# The English texts of R-CLI-12's lines; the program writes them in its language (R-LANG-2).
PRUNED_LINE: Final = STRINGS["en"]["cli_pruned"]  # R-CLI-12, R-PRUNE-2
WOULD_PRUNE_LINE: Final = STRINGS["en"]["cli_would_prune"]  # R-CLI-12: --dry-run
NO_INDEX_NOTICE: Final = STRINGS["en"]["cli_no_index"]  # R-SRCH-3: said once, on standard error
EXIT_NO_MATCH: Final = 1  # R-CLI-12: search found nothing
NO_MATCH_LINE: Final = STRINGS["en"]["cli_no_match"]  # R-CLI-12: on standard error


def format_when(timestamp: int) -> str:
    """A stored Unix time as ``YYYY-MM-DD HH:MM`` in local time (R-CLI-12)."""
    return time.strftime(TIME_FORMAT, time.localtime(timestamp))


def prune_line(result: PruneResult, *, dry_run: bool = False, lang: str = "en") -> str:
    """R-CLI-12's report of a prune in ``lang``; the size is R-FMT's form of the bytes followed by ``B``."""
    texts = strings_for(lang)
    sessions, messages = counted(result.sessions, "sessions", lang), counted(result.messages, "messages", lang)
    if dry_run:
        return texts["cli_would_prune"].format(sessions=sessions, messages=messages)
    return texts["cli_pruned"].format(
        sessions=sessions,
        messages=messages,
        size=format_token_count(result.bytes_reclaimed) + "B",
    )


def _row(clean: Filter, template: str, **fields: object) -> str:
    return clean(template.format(**fields)).rstrip()  # no trailing blanks after an empty title


def _sessions(settings: Settings, manager: Manager, limit: int, clean: Filter, out: TextIO, err: TextIO) -> int:
    """R-CLI-12, R-CLI-54: the sessions of the working directory, of every folder with
    ``--any-folder``; when the folder has none but others do, one line on standard error says
    how to list those."""
    lang = settings.lang
    texts = strings_for(lang)
    here = None if settings.any_folder else session_folder(settings.workdir)
    summaries = manager.recent_sessions(limit=limit, workdir=here)
    for summary in summaries:
        out.write(
            _row(
                clean,
                SESSION_ROW,
                id=summary.id,
                when=format_when(summary.updated_at),
                count=summary.message_count,
                messages=texts["message_word" if summary.message_count == 1 else "messages_word"],  # R-CLI-51
                folder=folder_shown(summary.workdir, lang),
                provider=provider_shown(summary.provider, lang),
                title=summary.title,
            )
            + "\n"
        )
    if not summaries and here is not None and manager.recent_sessions(limit=1):
        err.write(terminal_safe(texts["cli_sessions_elsewhere"].format(folder=folder_shown(here, lang))) + "\n")
        err.flush()
    return 0


def _show(manager: Manager, target: str, lang: str, clean: Filter, out: TextIO, *, full: bool = False) -> int:
    """R-CLI-12a: the stored messages as the pane shows them; with ``--full`` each tool result
    whole after its line (R-CLI-40)."""
    session_id = manager.resolve_session_id(target)
    session = manager.open_session(session_id)
    for line in history_lines(session.get_messages(0), lang):
        out.write(clean(line.text) + "\n")
        for text in result_lines(line.result) if full and line.result is not None else ():
            out.write(clean(text) + "\n")
    try:
        state = session.get_context_state()
    except CorruptRow:  # the engine ignores such a row too (R-CKP-13)
        state = None
    if state is not None and state.window > 0:  # R-WIN-7: the window the server revealed
        out.write(clean(learned_window_line(state, lang)) + "\n")
    folder, provider = manager.session_origin(session_id)
    if folder or provider:  # R-CLI-55: a session of a file from before format 5 has neither
        out.write(clean(origin_line(folder, provider, lang)) + "\n")
    return 0


def _show_system(settings: Settings, out: TextIO, err: TextIO) -> int:
    """``show --system [SESSION]`` (R-INST-6): the system prompt a run would send now, built as
    the agent builds it (R-INST-4); the warnings on standard error as ``run`` writes them.

    A SESSION is resolved first, so an unknown one prints nothing; the prompt is the same for
    every session (it is never stored, R-ENG-3), and without SESSION no database is opened.
    """
    if settings.target is not None:
        with open_manager(settings, read_only=True) as manager:
            manager.open_session(manager.resolve_session_id(settings.target))

    warning = strings_for(settings.lang)["cli_warning"]

    def warn(line: str) -> None:
        err.write(terminal_safe(warning.format(message=line)) + "\n")  # R-SAFE-2: always safe
        err.flush()

    prompt = build_instructions(settings, warn)()
    out.write(stream_filter(settings.raw)(prompt) + "\n")
    out.flush()
    return 0


def _search(settings: Settings, manager: Manager, limit: int, clean: Filter, out: TextIO, err: TextIO) -> int:
    texts = strings_for(settings.lang)
    query = settings.query or ""
    if not manager.search_indexed:  # R-SRCH-3, R-PG-5: said once, for the database's kind of index
        err.write(texts["cli_no_index" if settings.db_url is None else "cli_no_index_pg"] + "\n")
        err.flush()
    hits = manager.search(query, limit=limit)
    for hit in hits:
        out.write(_row(clean, SEARCH_ROW, id=hit.id, when=format_when(hit.updated_at), snippet=hit.snippet) + "\n")
    if hits:
        return 0
    err.write(terminal_safe(texts["cli_no_match"].format(query=query)) + "\n")  # R-SAFE-2: always safe
    err.flush()
    return EXIT_NO_MATCH


def _prune(manager: Manager, days: int, dry_run: bool, lang: str, clean: Filter, out: TextIO) -> int:
    result = manager.prune(days * SECONDS_PER_DAY, dry_run=dry_run)
    out.write(clean(prune_line(result, dry_run=dry_run, lang=lang)) + "\n")
    return 0


def run_command(settings: Settings, out: TextIO, err: TextIO) -> int:
    """Run the sub-command of ``settings`` and return its exit status (R-CLI-12).

    Errors (an unknown or ambiguous SESSION, a blank query, a database that cannot be opened)
    propagate to ``main``, which reports them as one line with exit status 1 (R-CLI-6).
    """
    if settings.command == "allow":
        return run_allow(settings, out, err)  # R-APPR-10: no database
    try:
        return _dispatch(settings, out, err)
    except BrokenPipeError:  # ``harness9-ref show … | head``: the reader has all it wanted
        silence(out)
        return 0


def _dispatch(settings: Settings, out: TextIO, err: TextIO) -> int:
    if settings.command == "show" and settings.system:
        return _show_system(settings, out, err)
    limit: int = settings.limit if settings.limit is not None else DEFAULT_LIMIT
    clean = line_filter(settings.raw)  # R-SAFE-2
    with open_manager(settings, read_only=settings.command != "prune") as manager:  # R-CLI-12
        if settings.command == "show" and settings.target is not None:
            status = _show(manager, settings.target, settings.lang, clean, out, full=settings.full)
        elif settings.command == "search" and settings.query is not None:
            status = _search(settings, manager, limit, clean, out, err)
        elif settings.command == "prune" and settings.older_than_days is not None:
            status = _prune(manager, settings.older_than_days, settings.dry_run, settings.lang, clean, out)
        else:
            status = _sessions(settings, manager, limit, clean, out, err)
    out.flush()
    return status


COPIED_LINE: Final = STRINGS["en"]["cli_copied"]  # R-PG-10, in English (R-LANG-2)


def _location(text: str, name: str, cwd: str, *, must_exist: bool) -> str:
    """The URL, or the absolute path, that ``text`` names (R-CLI-13's rules for ``--db``)."""
    scheme = url_scheme(text)
    if scheme in POSTGRES_SCHEMES:
        return text
    if scheme is not None:
        raise CliError(TableSaid("err_db_scheme", source=f"copy {name}", scheme=scheme))
    path = Path(cwd, expand_home(text))
    if must_exist and not path.is_file():
        raise CliError(TableSaid("err_copy_missing", name=name, path=path))
    if not path.parent.is_dir():
        raise CliError(TableSaid("err_db_folder", source=f"copy {name}", path=path, folder=path.parent))
    check_db_file(path, f"copy {name} {path}", writing=True)  # R-CLI-24, R-CLI-25: both are opened for writing
    return str(path)


def run_copy(settings: Settings, out: TextIO) -> int:
    """Copy every session of SRC into DST and print what was copied (R-PG-10).

    Raises:
        CliError: SRC or DST is not a usable location, or they are the same one.
        SessionError: a database failed, DST holds one of the ids (without ``--overwrite``), or
            a stored value cannot be copied; nothing is copied.
    """
    cwd = os.getcwd()
    source = _location(settings.source or "", "SRC", cwd, must_exist=True)
    destination = _location(settings.destination or "", "DST", cwd, must_exist=False)
    if source == destination:
        raise CliError(TableSaid("err_copy_same"))
    with Manager(source) as src, Manager(destination) as dst:
        result = copy_sessions(src, dst, overwrite=settings.overwrite)
    lang = settings.lang
    line = strings_for(lang)["cli_copied"].format(
        sessions=counted(result.sessions, "sessions", lang), messages=counted(result.messages, "messages", lang)
    )
    out.write(line + "\n")
    out.flush()
    return 0


FORK_UNWRITABLE: Final = STRINGS["en"]["err_fork_unwritable"]  # R-FORK-2, in English (R-LANG-2)


def run_fork(settings: Settings, out: TextIO, err: TextIO) -> int:
    """Fork SESSION into a new session and print the new id, one line (R-FORK-1); with ``--at``,
    name the files the dropped messages changed on ``err``, or put them back with
    ``--restore-files`` (R-CLI-60).

    SESSION is resolved on the database opened read-only first, so an unknown or ambiguous one
    (or a missing database file) is refused before anything could be created; the fork itself
    is one transaction (R-MGR-11), so a refused ``--at`` or a database that cannot be written
    leaves nothing behind (R-FORK-2).

    Raises:
        SessionError: SESSION is unknown or ambiguous, ``--at`` is past its end or just before a
            result, or the database cannot be written; nothing is created.
    """
    with open_manager(settings, read_only=True) as reader:
        session_id = reader.resolve_session_id(settings.target or "")
    if settings.db_url is None and not os.access(settings.db_path, os.W_OK):
        # Refused before SQLite is asked: it would leave -wal and -shm files beside a read-only file.
        raise SessionDatabaseError(TableSaid("err_fork_unwritable", message=f"{settings.db_path} is read-only"))
    try:
        with open_manager(settings) as manager:
            fork = manager.fork_session(session_id, settings.fork_at)
            source, at = manager.open_session(session_id), settings.fork_at
            changes = source.file_changes_from(at) if at is not None and isinstance(source, FileChangeLog) else []
    except SessionDatabaseError as exc:  # a read-only file or file system (R-DB-12), a full disk
        raise SessionDatabaseError(TableSaid("err_fork_unwritable", message=exc)) from exc
    out.write(fork.session_id + "\n")
    out.flush()
    if not changes:
        return 0
    texts = strings_for(settings.lang)
    clean = (lambda line: line) if settings.raw else clean_line
    if not settings.restore_files:  # R-CLI-60a
        paths = sorted({change.path for change in changes})
        err.write(clean(texts["undo_hint"].format(n=len(paths), paths=", ".join(paths))) + "\n")
        err.flush()
        return 0
    check_workdir(settings)
    restores = plan_restores(settings.workdir, changes)  # R-CLI-60b
    if not restores:  # every file already as it was: nothing to undo, nothing said
        return 0
    lines = [texts["undo_header"].format(n=len(restores))]
    lines += [line.text for line in restore_lines(restores, settings.lang)]
    failed = sum(bool(item.problem) for item in restores)
    for item in restores:
        if not item.problem:
            outcome = restore(item)
            failed += outcome is not None
            lines.append(restored_line(item, outcome, settings.lang))
    err.write("".join(clean(line) + "\n" for line in lines))
    err.flush()
    return 1 if failed else 0


NO_SUCH_RULE: Final = STRINGS["en"]["err_no_such_rule"]  # R-APPR-10, in English (R-LANG-2)
ALLOW_FILE_UNUSABLE: Final = STRINGS["en"]["err_allow_unusable"]  # R-APPR-9's AllowFileError, in English
RULE_INDENT: Final = "  "  # R-APPR-10: a rule under its directory with --all


def run_allow(settings: Settings, out: TextIO, err: TextIO) -> int:
    """``allow --list [--all]`` or ``allow --remove RULE…`` on the working directory (R-APPR-10).

    Nothing is created: a missing allow file lists no rule, and one is written only when a rule
    goes. Every line is made terminal-safe (R-SAFE-1): a rule's words come from the model.

    Raises:
        AllowFileError: the allow file is unusable (R-APPR-9); it is left as it is.
        CliError: the working directory is not a directory, or ``--remove`` names no rule of it.
    """
    assert settings.allow_file is not None
    check_workdir(settings)
    rules = AllowRules(settings.allow_file)
    directory = rules_directory(settings.workdir)
    texts = strings_for(settings.lang)
    if settings.allow_remove is not None:
        typed = " ".join(settings.allow_remove)
        words = rule_words(typed)  # R-APPR-10: a last unquoted * is the wildcard
        if words is None or not rules.remove(directory, words):
            shown = rule_text(words) if words is not None else typed
            raise CliError(TableSaid("err_no_such_rule", rule=shown, workdir=directory))
        out.write(terminal_safe(texts["allow_removed"].format(rule=rule_text(words), workdir=directory)) + "\n")
        out.flush()
        return 0
    kept = rules.load()
    lines = (
        [line for where in sorted(kept) if kept[where] for line in (where, *(RULE_INDENT + rule_text(r) for r in kept[where]))]
        if settings.allow_all
        else [rule_text(rule) for rule in kept.get(directory, [])]
    )
    if not lines:
        none = texts["allow_none_all"] if settings.allow_all else texts["allow_none"].format(workdir=directory)
        err.write(terminal_safe(none) + "\n")
        err.flush()
        return 0
    for line in lines:
        out.write(terminal_safe(line) + "\n")
    out.flush()
    return 0
