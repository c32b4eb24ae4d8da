"""JSON as the suite compares it: equality, the first differing JSON pointer, compact renderings.

The rules are the suite's, not Python's: values must be exactly equal; numbers compare by value
(``1 == 1.0``) but a boolean is never a number (Python's ``True == 1`` is not JSON's); object
key order is irrelevant and list order is relevant. An expected error passes on its code alone,
because messages are for people and differ between ports.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Final

__all__ = [
    "MISSING",
    "compact_json",
    "describe_difference",
    "first_difference",
    "format_pointer",
    "json_equal",
]

# Longest rendering of one value in a failure line; longer values are cut with "…".
VALUE_LIMIT: Final = 200
# Characters kept before the first differing character when two long strings are shown.
STRING_CONTEXT: Final = 40


class _Missing:
    """The value on the side of a difference where a key or list item does not exist."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is a subclass of int
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def _escape(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def first_difference(expected: Any, got: Any, pointer: str = "") -> tuple[str, Any, Any] | None:
    """Find the first place where two JSON values differ.

    Objects are walked in the expected value's key order, then keys only ``got`` has.

    Args:
        expected: the case's value.
        got: the implementation's value.
        pointer: the RFC 6901 pointer of both values inside their documents.

    Returns:
        None when equal, else ``(pointer, expected_part, got_part)``. A missing key or list
        item is reported at its own pointer with ``MISSING`` on the side that lacks it.
    """
    kind = _kind(expected)
    if kind != _kind(got):
        return (pointer, expected, got)
    if kind == "object":
        for key, value in expected.items():
            child = f"{pointer}/{_escape(key)}"
            if key not in got:
                return (child, value, MISSING)
            found = first_difference(value, got[key], child)
            if found is not None:
                return found
        for key, value in got.items():
            if key not in expected:
                return (f"{pointer}/{_escape(key)}", MISSING, value)
        return None
    if kind == "array":
        for index, (want, have) in enumerate(zip(expected, got)):
            found = first_difference(want, have, f"{pointer}/{index}")
            if found is not None:
                return found
        index = min(len(expected), len(got))
        if len(expected) == len(got):
            return None
        want = expected[index] if index < len(expected) else MISSING
        have = got[index] if index < len(got) else MISSING
        return (f"{pointer}/{index}", want, have)
    return None if expected == got else (pointer, expected, got)


def json_equal(a: Any, b: Any) -> bool:
    """Whether two JSON values are equal under the suite's rules (see the module docstring)."""
    return first_difference(a, b) is None


def format_pointer(pointer: str) -> str:
    """Show a pointer to people: the whole document's pointer ``""`` reads as "(root)"."""
    return pointer or "(root)"


def compact_json(value: Any, limit: int = VALUE_LIMIT) -> str:
    """Render a value as one line of compact JSON, cut to ``limit`` characters.

    Lone surrogates, which JSON allows in escapes, are kept as ``\\uXXXX`` so the line can be
    printed on any terminal.
    """
    if value is MISSING:
        return "nothing"
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fits(text: str) -> bool:
    return len(compact_json(text, limit=sys.maxsize)) <= VALUE_LIMIT


def _string_window(text: str, start: int) -> str:
    shown = compact_json(text[start:], VALUE_LIMIT - 1)
    return "…" + shown if start else shown


def describe_difference(pointer: str, expected: Any, got: Any) -> str:
    """One readable line for a difference: ``<pointer>: expected <json>, got <json>``.

    Two long strings are shown from shortly before their first differing character, so the
    difference is not lost to truncation.
    """
    where = format_pointer(pointer)
    if isinstance(expected, str) and isinstance(got, str) and not (_fits(expected) and _fits(got)):
        index = next(
            (i for i, (a, b) in enumerate(zip(expected, got)) if a != b),
            min(len(expected), len(got)),
        )
        start = max(0, index - STRING_CONTEXT)
        return (
            f"{where}: expected {_string_window(expected, start)}, "
            f"got {_string_window(got, start)} (first difference at character {index})"
        )
    return f"{where}: expected {compact_json(expected)}, got {compact_json(got)}"
