"""JSON reading shared by both wire formats (SPEC R-PRV-11, R-PRV-14, R-PRV-20, R-PRV-21).

- ``loads`` parses RFC 8259 JSON only (no ``NaN`` / ``Infinity``, no number that overflows a
  binary64) and replaces an unpaired surrogate made by a ``\\uD800``-style escape with U+FFFD,
  so every string a response yields is Unicode (R-PRV-21).
- The ``expect_*`` / ``optional_*`` readers check one value's JSON type and raise ``ShapeError``
  naming its path; the wire modules turn that into ``MalformedResponse`` or ``ProviderStreamError``.
  Unknown members are never looked at (R-PRV-20).
- ``member_span`` and ``element_starts`` find where a value lies in the source text, for the
  exact source text of an Anthropic ``tool_use.input`` (R-PRV-14).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable, Final, Mapping

from ..schema._message import describe, replace_lone_surrogates

__all__ = [
    "ShapeError",
    "decode_body",
    "describe",
    "element_starts",
    "expect_object",
    "expect_str",
    "loads",
    "member_span",
    "optional_int",
    "optional_list",
    "optional_object",
    "optional_str",
    "value_start",
]

_BOM: Final = "\ufeff"
_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")  # RFC 8259 "ws"
_DECODER: Final = json.JSONDecoder()
# The standard library's string scanner (not in its type stubs): (text, index after the quote) -> (value, end).
_scanstring: Final[Callable[[str, int], tuple[str, int]]] = getattr(json.decoder, "scanstring")


class ShapeError(ValueError):
    """A JSON value has the wrong type; ``path`` says where, e.g. ``choices[0].message``."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def decode_body(body: bytes) -> str:
    """A response body as text: UTF-8, invalid bytes as U+FFFD, a leading byte-order mark dropped."""
    text = body.decode("utf-8", errors="replace")
    return text[1:] if text.startswith(_BOM) else text


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (RFC 8259)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {describe(text)} is out of range")
    return value


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return replace_lone_surrogates(value)
    if isinstance(value, dict):
        return {replace_lone_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    return value


def loads(text: str, *, replace_surrogates: bool = True) -> Any:
    """Parse one RFC 8259 JSON text.

    Args:
        text: the JSON text (white space around the value allowed, as RFC 8259 allows).
        replace_surrogates: turn unpaired surrogates from escapes into U+FFFD (R-PRV-21).

    Raises:
        ValueError: the text is not JSON, uses ``NaN``/``Infinity``, has a number that
            overflows binary64, or nests too deeply.
    """
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError("the JSON value nests too deeply") from None
    if replace_surrogates and "\\u" in text:
        value = _replace_surrogates(value)
    return value


def expect_object(value: object, path: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ShapeError(path, f"expected an object, got {describe(value)}")
    return value


def optional_object(value: object, path: str) -> Mapping[str, Any] | None:
    """An object, or None for JSON null / a missing member (pass ``obj.get(key)``)."""
    return None if value is None else expect_object(value, path)


def optional_list(value: object, path: str) -> list[Any] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise ShapeError(path, f"expected an array, got {describe(value)}")
    return value


def optional_str(value: object, path: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ShapeError(path, f"expected a string, got {describe(value)}")
    return value


def expect_str(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise ShapeError(path, f"expected a string, got {'null or nothing' if value is None else describe(value)}")
    return value


def optional_int(value: object, path: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ShapeError(path, f"expected an integer, got {describe(value)}")
    return value


# The span finders below run only on text that ``loads`` has already accepted, so they need
# not diagnose errors: they re-walk the same grammar to learn positions.


def _skip_ws(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _value_end(text: str, pos: int) -> int:
    return int(_DECODER.raw_decode(text, pos)[1])


def value_start(text: str) -> int:
    """Where the top-level value of a JSON text starts."""
    return _skip_ws(text, 0)


def member_span(text: str, start: int, key: str) -> tuple[int, int] | None:
    """The (start, end) of the value of member ``key`` of the object at ``start``.

    A key that occurs more than once gives its last value, as ``loads`` keeps it. Returns None
    when the object has no such member. ``text`` must be valid JSON and ``text[start]`` a ``{``.
    """
    pos = _skip_ws(text, start + 1)
    found: tuple[int, int] | None = None
    if text[pos] == "}":
        return None
    while True:
        name, pos = _scanstring(text, pos + 1)
        pos = _skip_ws(text, _skip_ws(text, pos) + 1)  # past the colon
        end = _value_end(text, pos)
        if name == key:
            found = (pos, end)
        pos = _skip_ws(text, end)
        if text[pos] == "}":
            return found
        pos = _skip_ws(text, pos + 1)  # past the comma


def element_starts(text: str, start: int) -> list[int]:
    """Where each element of the array at ``start`` begins (``text[start]`` must be ``[``)."""
    pos = _skip_ws(text, start + 1)
    starts: list[int] = []
    if text[pos] == "]":
        return starts
    while True:
        starts.append(pos)
        pos = _skip_ws(text, _value_end(text, pos))
        if text[pos] == "]":
            return starts
        pos = _skip_ws(text, pos + 1)
