"""``harness9-ref copy SRC DST [--overwrite]``: every session from one database to another (SPEC R-PG-9, R-PG-10).

SRC and DST are each an SQLite file or a ``postgresql://`` URL, as ``--db`` takes them. The
copy is one transaction on DST, whole or absent (``copy_sessions``); a session id DST already
holds refuses it unless ``--overwrite``. SRC must exist (reading it must never create a file),
and DST's folder too, as for ``--db`` (R-CLI-13).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final, TextIO

from ..memory import POSTGRES_SCHEMES, Manager, copy_sessions, url_scheme
from ._settings import DB_HINT, CliError, Settings, expand_home

__all__ = ["COPIED_LINE", "run_copy"]

COPIED_LINE: Final = "copied {sessions} sessions, {messages} messages"  # R-PG-10


def _location(text: str, name: str, cwd: str, *, must_exist: bool) -> str:
    """The URL, or the absolute path, that ``text`` names (R-CLI-13's rules for ``--db``)."""
    scheme = url_scheme(text)
    if scheme in POSTGRES_SCHEMES:
        return text
    if scheme is not None:
        raise CliError(f"copy {name}: {scheme}:// URLs are not supported; {DB_HINT}")
    path = Path(cwd, expand_home(text))
    if must_exist and not path.is_file():
        raise CliError(f"copy {name} {path}: no such file")
    if not path.parent.is_dir():
        raise CliError(f"copy {name} {path}: the folder {path.parent} does not exist")
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
        raise CliError("copy: SRC and DST are the same database")
    with Manager(source) as src, Manager(destination) as dst:
        result = copy_sessions(src, dst, overwrite=settings.overwrite)
    out.write(COPIED_LINE.format(sessions=result.sessions, messages=result.messages) + "\n")
    out.flush()
    return 0
