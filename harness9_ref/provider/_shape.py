"""Reading the JSON of a provider response (SPEC R-PRV-11, R-PRV-14, R-PRV-20, R-PRV-21).

- ``loads`` is ``strict_json.loads`` as every response needs it: RFC 8259 only (no ``NaN`` /
  ``Infinity``, no number that overflows a binary64), unpaired surrogates made by escapes
  replaced with U+FFFD, so every string a response yields is Unicode (R-PRV-21).
- The ``expect_*`` / ``optional_*`` readers check one value's JSON type and raise ``ShapeError``
  naming its path; the parsing boundary of ``_parsing`` turns that into ``MalformedResponse`` or
  ``ProviderStreamError``. Unknown members are never looked at (R-PRV-20).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

from .._harness9_error import Harness9Error
from ..schema.strict_json import describe
from ..schema.strict_json import loads as strict_loads

__all__ = [
    "ShapeError",
    "decode_body",
    "expect_object",
    "expect_str",
    "loads",
    "optional_int",
    "optional_list",
    "optional_object",
    "optional_str",
]

_BOM: Final = "\ufeff"


class ShapeError(Harness9Error, ValueError):
    """A response value has the wrong type or place; ``path`` says where, e.g. ``choices[0].message``.

    A problem that belongs to no single value (a stream event out of order) has the path ``""``.
    The parsers turn it into ``MalformedResponse``, whose code it shares (R-PRV-21).
    """

    code: ClassVar[str] = "malformed_response"

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path = path
        self.problem = problem

    def within(self, context: str) -> ShapeError:
        """The same problem with ``context`` (an event type) before its path."""
        return ShapeError(f"{context}: {self.path}", self.problem) if self.path else self


def decode_body(body: bytes) -> str:
    """A response body as text: UTF-8, invalid bytes as U+FFFD, a leading byte-order mark dropped."""
    text = body.decode("utf-8", errors="replace")
    return text[1:] if text.startswith(_BOM) else text


# Parse a response's JSON text (R-PRV-21); raises JSONError when it is not RFC 8259 JSON, has a
# number that overflows binary64, or nests too deeply. A partial, not a function: a stream calls
# it once per event, and a Python frame fewer is measurable there.
loads: Final[Callable[[str], Any]] = functools.partial(strict_loads, replace_surrogates=True)


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
