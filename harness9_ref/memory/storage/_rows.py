"""Stored rows as values: messages (with their ``tool_calls`` column), todos, checkpoints and context states.

SPEC R-DB-5, R-DB-6, R-SES-7, R-CKP-8, R-CKP-13, R-PG-4. The same for every backend: both hand these
functions what a row holds as Python values, text that was not valid UTF-8 arriving with lone
surrogates (``surrogateescape``), so that a row SQLite or PostgreSQL cannot decode is reported
as the same CorruptRow, naming it, whichever holds it.

The ``messages.tool_calls`` column is JSON text in and out. Arguments that are valid JSON are
embedded as the JSON value itself, byte for byte, so files stay compatible with the Go original
(which stores them as a raw JSON value). Anything else (empty, invalid, padded with white space)
is stored as a JSON string with ``"arguments_raw": true``. Reading takes the exact source text of an embedded value, so the
model's bytes come back unchanged either way. "Valid JSON" is RFC 8259's grammar, read by
``strict_json`` with ``finite=False``: ``NaN`` is not JSON, ``1e400`` is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, Final

from ..._harness9_error import Harness9Error
from ...planning import TodoItem
from ...schema import Message, SchemaError, ToolCall, canonical_json
from ...schema.strict_json import JSONError, describe, element_spans, loads, members, value_start
from ._checkpoint import Checkpoint
from ._context_state import CONTEXT_STATE_FIELDS, FIELD_KINDS, ContextState
from ._file_changes import FileChangeRecord, check_file_change
from ._session import CorruptRow
from ._sql import STATE_COLUMN_NAMES

__all__ = [
    "ColumnDecodeError",
    "decode_checkpoint_row",
    "decode_context_state_row",
    "decode_file_change_row",
    "decode_message_row",
    "decode_todo_rows",
    "decode_tool_calls",
    "encode_tool_calls",
    "is_json_text",
]

_JSON_WHITESPACE: Final = " \t\n\r"  # RFC 8259 "ws"
_RAW_FLAG: Final = "arguments_raw"
_EMPTY_FORMS: Final = ("", "null", "[]")  # R-DB-5: each reads as "no calls"


class ColumnDecodeError(Harness9Error, ValueError):
    """The column text does not have the shape R-DB-6 allows; the caller names the row.

    A ``Harness9Error`` like every error a caller can catch, and still a ``ValueError``.
    """

    code: ClassVar[str] = "column_decode_error"


def is_json_text(text: str) -> bool:
    """True when ``text`` is one RFC 8259 JSON value with no white space around it."""
    if not text or text[0] in _JSON_WHITESPACE or text[-1] in _JSON_WHITESPACE:
        return False
    try:
        loads(text, finite=False)
    except JSONError:  # too deep to check included: kept losslessly as a raw string
        return False
    return True


def encode_tool_calls(calls: Sequence[ToolCall]) -> str | None:
    """The column text for ``calls``; None (SQL NULL) when there are none."""
    if not calls:
        return None
    parts = []
    for call in calls:
        head = '{"id":' + canonical_json(call.id) + ',"name":' + canonical_json(call.name) + ',"arguments":'
        if is_json_text(call.arguments):
            parts.append(head + call.arguments + "}")
        else:
            parts.append(head + canonical_json(call.arguments) + ',"' + _RAW_FLAG + '":true}')
    return "[" + ",".join(parts) + "]"


def _call_members(item: object, text: str, start: int, index: int) -> dict[str, tuple[Any, str]]:
    """Each member of the call object at ``text[start]``: its decoded value and exact source text."""
    if not isinstance(item, dict):
        raise ColumnDecodeError(f"call {index}: expected an object, got {describe(item)}")
    found: dict[str, tuple[Any, str]] = {}
    for name, _, value_pos, end in members(text, start):
        found[name] = (item[name], text[value_pos:end])  # a repeated key keeps its last value, as JSON does
    return found


def _to_call(members: dict[str, tuple[Any, str]], index: int) -> ToolCall:
    fields = {}
    for name in ("id", "name"):
        value = members.get(name, ("", ""))[0]
        if not isinstance(value, str):
            raise ColumnDecodeError(f"call {index}: {name} is not a string")
        fields[name] = value
    value, source = members.get("arguments", ("", ""))
    if members.get(_RAW_FLAG, (False, ""))[0] is True:
        if not isinstance(value, str):
            raise ColumnDecodeError(f"call {index}: arguments_raw is true but arguments is not a string")
        return ToolCall(fields["id"], fields["name"], value)
    return ToolCall(fields["id"], fields["name"], source)


def decode_tool_calls(text: str | None) -> tuple[ToolCall, ...]:
    """Read the column text back into tool calls (R-DB-5, R-DB-6).

    Raises:
        ColumnDecodeError: the text is not JSON, or not an array of call objects.
    """
    if text is None or text in _EMPTY_FORMS:
        return ()
    try:
        items = loads(text, finite=False)
    except JSONError as exc:
        raise ColumnDecodeError(f"invalid JSON: {exc}") from None
    if not isinstance(items, list):
        raise ColumnDecodeError(f"expected an array of calls, got {describe(items)}")
    spans = element_spans(text, value_start(text))
    return tuple(
        _to_call(_call_members(item, text, start, i), i) for i, (item, (start, _)) in enumerate(zip(items, spans))
    )


_SQLITE_TYPES: Final = {int: "an integer", float: "a real", str: "text", bytes: "a blob"}  # for CorruptRow messages
# R-CKP-13: the context_state column of each ContextState member.
_STATE_COLUMN: Final = dict(zip(CONTEXT_STATE_FIELDS, STATE_COLUMN_NAMES))


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


def decode_context_state_row(session_id: str, *values: object) -> ContextState:
    """A ``context_state`` row (its columns STATE_COLUMN_NAMES, in order) as a ContextState (R-CKP-13).

    CorruptRow names the session when an integer column holds anything else (another program's
    text, real or blob, which SQLite's INTEGER affinity keeps), a text column anything but text
    (a blob, which TEXT affinity keeps), or the values fail R-CKP-10 (a negative count, a
    ``window_source`` outside its set, text that is not UTF-8, …): what a save would refuse.
    """
    wrong = [
        f"{column} is {_SQLITE_TYPES.get(type(value), 'NULL')}"
        for column, value, kind in zip(STATE_COLUMN_NAMES, values, FIELD_KINDS)
        if not isinstance(value, kind)
    ]
    if not wrong:
        try:
            return ContextState(*values)  # type: ignore[arg-type]
        except SchemaError as exc:
            wrong = [f"{_STATE_COLUMN[exc.path.rpartition('.')[2]]} {exc.problem}"]
    raise CorruptRow(f"the context state of session {session_id} cannot be read: {', '.join(wrong)}")


def decode_file_change_row(
    session_id: str, row_id: object, call_id: object, path: object, existed: object, before: object, after: object
) -> FileChangeRecord:
    """A ``file_changes`` row as a record, or ``CorruptRow`` naming the row and session (R-UNDO-2b).

    ``call_id`` and ``path`` come as text (the dialect's), the contents as bytes (a BLOB, or
    PostgreSQL's BYTEA as a ``memoryview``); a value of any other kind is another program's.
    """
    where = f"file_changes row {row_id} of session {session_id}"

    def content(value: object) -> bytes | None:
        if value is None or isinstance(value, bytes):
            return value
        if isinstance(value, memoryview):
            return value.tobytes()
        raise CorruptRow(f"{where}: a content is not bytes")

    if not isinstance(call_id, str) or not isinstance(path, str) or existed not in (0, 1) or isinstance(existed, float):
        raise CorruptRow(f"{where}: cannot be read as a file change")
    try:
        return check_file_change(FileChangeRecord(call_id, path, bool(existed), content(before), content(after)))
    except SchemaError as exc:
        raise CorruptRow(f"{where}: {exc.problem}") from None
