"""Copying every session from one database to another, SQLite or PostgreSQL either way (SPEC R-PG-9).

A copy reads the source in one snapshot and writes the destination in one transaction, so it
is whole or absent: a session id the destination already holds refuses the whole copy unless
``overwrite`` is given, and then that session is replaced, not merged. What is copied is what a
session stores (its row's times, its messages in order with their column values, the
``tool_calls`` text included, its todos and its checkpoint), so the copy reads back exactly as
the original, in either direction. Message ids are the destination's own; a checkpoint counts
messages by order (R-CKP-7), so it stays valid. A value that cannot be stored losslessly
elsewhere (text that is not UTF-8, a number that is not an integer) is CorruptRow, naming it,
and nothing is copied.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ._session import CorruptRow, SessionDatabaseError

if TYPE_CHECKING:
    from ._manager import Manager

__all__ = ["CopyResult", "copy_sessions", "record_int", "record_optional_text", "record_text", "refuse_existing"]

_LISTED = 3  # ids named in a refusal


@dataclass(frozen=True, slots=True)
class CopyResult:
    """How many sessions and messages a copy wrote (R-PG-9)."""

    sessions: int
    messages: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def record_text(value: object, where: str) -> str:
    """A text column's value to copy; CorruptRow when it is not text or not valid UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            raise CorruptRow(f"{where} cannot be copied: it holds text that is not UTF-8") from None
    raise CorruptRow(f"{where} cannot be copied: a value is not text")


def record_optional_text(value: object, where: str) -> str | None:
    """As ``record_text``, NULL allowed."""
    return None if value is None else record_text(value, where)


def record_int(value: object, where: str) -> int:
    """An integer column's value to copy; CorruptRow when it is not an integer."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise CorruptRow(f"{where} cannot be copied: a value is not an integer")


def refuse_existing(existing: list[str], name: str, overwrite: bool) -> None:
    """Raise before anything is written when the destination holds one of the ids (R-PG-9)."""
    if existing and not overwrite:
        shown = ", ".join(existing[:_LISTED]) + (", …" if len(existing) > _LISTED else "")
        raise SessionDatabaseError(
            f"{name} already holds {len(existing)} of these sessions ({shown}); nothing was copied"
            " (overwrite replaces them)"
        )


def copy_sessions(source: Manager, destination: Manager, *, overwrite: bool = False) -> CopyResult:
    """Copy every session of ``source`` into ``destination`` in one transaction (R-PG-9).

    Raises:
        SessionDatabaseError: the destination holds a session id of the source and
            ``overwrite`` is False (nothing is copied), or a database failed.
        CorruptRow: a stored value cannot be copied losslessly (nothing is copied).
    """
    records = source._store.export_sessions()
    destination._store.import_sessions(records, overwrite)
    return CopyResult(len(records), sum(len(record.messages) for record in records))
