"""The session sub-commands: ``sessions``, ``show``, ``search``, ``prune`` (SPEC R-CLI-12).

They work on the database only: no provider, no tools, no API key. Their output goes to
standard output, one line per item, so it can be read by people and by ``grep``/``cut`` alike;
every text taken from a session passes through the pane's ``clean_line``, so a stored escape
sequence cannot drive the terminal.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final, TextIO

from ..memory import format_token_count
from ..text import clean_line, history_lines
from ._parser import DEFAULT_LIMIT
from ._run import silence
from ._settings import PROG, Settings
from ._wiring import open_manager

if TYPE_CHECKING:
    from ..memory import Manager, PruneResult

__all__ = [
    "NO_INDEX_NOTICE",
    "PRUNED_LINE",
    "SECONDS_PER_DAY",
    "SESSION_ROW",
    "TIME_FORMAT",
    "WOULD_PRUNE_LINE",
    "format_when",
    "prune_line",
    "run_command",
]

TIME_FORMAT: Final = "%Y-%m-%d %H:%M"  # R-CLI-12: local time
SESSION_ROW: Final = "{id}  {when}  {count} messages  {title}"  # R-CLI-12: sessions
SEARCH_ROW: Final = "{id}  {when}  {snippet}"  # R-CLI-12: search
PRUNED_LINE: Final = "pruned {sessions} sessions, {messages} messages, {size} reclaimed"  # R-CLI-12, R-PRUNE-2
WOULD_PRUNE_LINE: Final = "would prune {sessions} sessions, {messages} messages"  # R-CLI-12: --dry-run
NO_INDEX_NOTICE: Final = (  # R-SRCH-3: said once, on standard error
    f"{PROG}: no usable full-text index (no FTS5 trigram tokenizer in this SQLite, or a foreign index); searching by scan"
)
SECONDS_PER_DAY: Final = 86400  # R-PRUNE-2, R-CLI-12: DAYS in prune's seconds
EXIT_NO_MATCH: Final = 1  # R-CLI-12: search found nothing


def format_when(timestamp: int) -> str:
    """A stored Unix time as ``YYYY-MM-DD HH:MM`` in local time (R-CLI-12)."""
    return time.strftime(TIME_FORMAT, time.localtime(timestamp))


def prune_line(result: PruneResult, *, dry_run: bool = False) -> str:
    """R-CLI-12's report of a prune; the size is R-FMT's form of the bytes followed by ``B``."""
    if dry_run:
        return WOULD_PRUNE_LINE.format(sessions=result.sessions, messages=result.messages)
    return PRUNED_LINE.format(
        sessions=result.sessions,
        messages=result.messages,
        size=format_token_count(result.bytes_reclaimed) + "B",
    )


def _row(template: str, **fields: object) -> str:
    return clean_line(template.format(**fields)).rstrip()  # no trailing blanks after an empty title


def _sessions(manager: Manager, limit: int, out: TextIO) -> int:
    for summary in manager.recent_sessions(limit=limit):
        out.write(
            _row(
                SESSION_ROW,
                id=summary.id,
                when=format_when(summary.updated_at),
                count=summary.message_count,
                title=summary.title,
            )
            + "\n"
        )
    return 0


def _show(manager: Manager, target: str, lang: str, out: TextIO) -> int:
    session = manager.open_session(manager.resolve_session_id(target))
    for line in history_lines(session.get_messages(0), lang):
        out.write(clean_line(line.text) + "\n")
    return 0


def _search(manager: Manager, query: str, limit: int, out: TextIO, err: TextIO) -> int:
    if not manager.search_indexed:
        err.write(NO_INDEX_NOTICE + "\n")
        err.flush()
    hits = manager.search(query, limit=limit)
    for hit in hits:
        out.write(_row(SEARCH_ROW, id=hit.id, when=format_when(hit.updated_at), snippet=hit.snippet) + "\n")
    return 0 if hits else EXIT_NO_MATCH


def _prune(manager: Manager, days: int, dry_run: bool, out: TextIO) -> int:
    result = manager.prune(days * SECONDS_PER_DAY, dry_run=dry_run)
    out.write(prune_line(result, dry_run=dry_run) + "\n")
    return 0


def run_command(settings: Settings, out: TextIO, err: TextIO) -> int:
    """Run the sub-command of ``settings`` and return its exit status (R-CLI-12).

    Errors (an unknown or ambiguous SESSION, a blank query, a database that cannot be opened)
    propagate to ``main``, which reports them as one line with exit status 1 (R-CLI-6).
    """
    try:
        return _dispatch(settings, out, err)
    except BrokenPipeError:  # ``harness9-ref show … | head``: the reader has all it wanted
        silence(out)
        return 0


def _dispatch(settings: Settings, out: TextIO, err: TextIO) -> int:
    limit: int = settings.limit if settings.limit is not None else DEFAULT_LIMIT
    with open_manager(settings) as manager:
        if settings.command == "show" and settings.target is not None:
            status = _show(manager, settings.target, settings.lang, out)
        elif settings.command == "search" and settings.query is not None:
            status = _search(manager, settings.query, limit, out, err)
        elif settings.command == "prune" and settings.older_than_days is not None:
            status = _prune(manager, settings.older_than_days, settings.dry_run, out)
        else:
            status = _sessions(manager, limit, out)
    out.flush()
    return status
