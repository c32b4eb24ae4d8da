"""The ``messages.tool_calls`` column: JSON text in and out (SPEC R-DB-6; seed 5, D6).

Arguments that are valid JSON are embedded as the JSON value itself, byte for byte, so files
stay compatible with the Go original (which stores them as a raw JSON value). Anything else
(empty, invalid, padded with white space) is stored as a JSON string with
``"arguments_raw": true``. Reading takes the exact source text of an embedded value, so the
model's bytes come back unchanged either way.
"""

from __future__ import annotations

import json
from typing import Any, Final, Sequence

from ..schema import ToolCall, canonical_json

__all__ = ["ColumnDecodeError", "decode_tool_calls", "encode_tool_calls", "is_json_text"]

_JSON_WHITESPACE: Final = " \t\n\r"  # RFC 8259 "ws"
_RAW_FLAG: Final = "arguments_raw"
_EMPTY_FORMS: Final = ("", "null", "[]")  # R-DB-5: each reads as "no calls"
_DECODER: Final = json.JSONDecoder(parse_constant=lambda name: _reject(name))


class ColumnDecodeError(ValueError):
    """The column text does not have the shape R-DB-6 allows; the caller names the row."""


def _reject(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def is_json_text(text: str) -> bool:
    """True when ``text`` is one RFC 8259 JSON value with no white space around it."""
    if not text or text[0] in _JSON_WHITESPACE or text[-1] in _JSON_WHITESPACE:
        return False
    try:
        _DECODER.decode(text)
    except (ValueError, RecursionError):  # too deep to check: kept losslessly as a raw string
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


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _JSON_WHITESPACE:
        i += 1
    return i


def _expect(text: str, i: int, char: str) -> int:
    if i >= len(text) or text[i] != char:
        found = repr(text[i]) if i < len(text) else "the end"
        raise ColumnDecodeError(f"expected {char!r} at offset {i}, found {found}")
    return i + 1


def _value(text: str, i: int) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, i)
    except ValueError as exc:
        raise ColumnDecodeError(f"invalid JSON at offset {i}: {exc}") from None
    except RecursionError:
        raise ColumnDecodeError(f"JSON nested too deeply at offset {i}") from None


def _call_members(text: str, i: int) -> tuple[dict[str, tuple[Any, str]], int]:
    """Parse one object at ``i``: each member's decoded value and exact source text."""
    members: dict[str, tuple[Any, str]] = {}
    i = _skip_ws(text, _expect(text, i, "{"))
    if text.startswith("}", i):
        return members, i + 1
    while True:
        key, i = _value(text, i)
        if not isinstance(key, str):
            raise ColumnDecodeError(f"object key at offset {i} is not a string")
        i = _skip_ws(text, _expect(text, _skip_ws(text, i), ":"))
        start = i
        value, i = _value(text, i)
        members[key] = (value, text[start:i])  # a repeated key keeps its last value, as JSON does
        i = _skip_ws(text, i)
        if text.startswith("}", i):
            return members, i + 1
        i = _skip_ws(text, _expect(text, i, ","))


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
        ColumnDecodeError: the text is not an array of call objects.
    """
    if text is None or text in _EMPTY_FORMS:
        return ()
    i = _skip_ws(text, _expect(text, _skip_ws(text, 0), "["))
    calls: list[ToolCall] = []
    if not text.startswith("]", i):
        while True:
            members, i = _call_members(text, i)
            calls.append(_to_call(members, len(calls)))
            i = _skip_ws(text, i)
            if text.startswith("]", i):
                break
            i = _skip_ws(text, _expect(text, i, ","))
    if _skip_ws(text, i + 1) != len(text):
        raise ColumnDecodeError(f"unexpected text after the array at offset {i + 1}")
    return tuple(calls)
