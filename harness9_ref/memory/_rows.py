"""Stored rows as values: messages, todos and checkpoints, the same for every backend.

SPEC R-DB-5, R-DB-6, R-SES-7, R-CKP-8, R-PG-4.

Both backends hand these functions what a row holds as Python values, text that was not valid
UTF-8 arriving with lone surrogates (``surrogateescape``), so that a row SQLite or PostgreSQL
cannot decode is reported as the same CorruptRow, naming it, whichever holds it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ..planning import TodoItem
from ..schema import Message, SchemaError
from ._checkpoint import Checkpoint
from ._session import CorruptRow
from ._tool_calls_column import ColumnDecodeError, decode_tool_calls

__all__ = ["decode_checkpoint_row", "decode_message_row", "decode_todo_rows"]

_SQLITE_TYPES: Final = {int: "an integer", float: "a real", str: "text", bytes: "a blob"}  # for CorruptRow messages


def decode_message_row(row_id: int, role: object, content: object, tool_calls: object, tool_call_id: object) -> Message:
    """One ``messages`` row as a Message (R-DB-5, R-DB-6); CorruptRow names the row otherwise."""
    try:
        if not isinstance(content, str) or not isinstance(role, str):
            raise SchemaError("content", "is not text")
        if tool_calls is not None and not isinstance(tool_calls, str):
            raise SchemaError("tool_calls", "is not text")
        if tool_call_id is not None and not isinstance(tool_call_id, str):
            raise SchemaError("tool_call_id", "is not text")
        return Message(role, content, decode_tool_calls(tool_calls), tool_call_id or "")
    except (SchemaError, ColumnDecodeError) as exc:
        raise CorruptRow(f"messages row {row_id} cannot be decoded: {exc}") from None


def decode_todo_rows(session_id: str, rows: Iterable[tuple[object, object, object]]) -> list[TodoItem]:
    """The ``todos`` rows ``(id, content, status)`` in order as items (R-SES-7); CorruptRow names the session."""
    try:
        return [TodoItem(item_id, content, status) for item_id, content, status in rows]  # type: ignore[arg-type]
    except (ValueError, TypeError) as exc:
        raise CorruptRow(f"todos of session {session_id} cannot be decoded: {exc}") from None


def decode_checkpoint_row(session_id: str, covered: object, anchor: object, summary: object) -> Checkpoint:
    """A ``checkpoints`` row as a Checkpoint (R-CKP-8); CorruptRow names the session otherwise.

    SQLite's INTEGER affinity keeps text such as 'abc' and reals such as 2.5 as they are, and
    TEXT affinity keeps blobs: those are what another program may have left there.
    """
    if isinstance(covered, int) and isinstance(anchor, str) and isinstance(summary, str):
        try:
            return Checkpoint(covered, anchor, summary)
        except SchemaError as exc:  # text that is not UTF-8 reads back with lone surrogates
            why = str(exc)
    else:
        wanted = (("covered", covered, int), ("anchor", anchor, str), ("summary", summary, str))
        why = ", ".join(
            f"{name} is {_SQLITE_TYPES.get(type(value), 'NULL')}"
            for name, value, kind in wanted
            if not isinstance(value, kind)
        )
    raise CorruptRow(f"the checkpoint of session {session_id} cannot be read: {why}")
