"""Canonical JSON text of a value (SPEC R-TOK-4).

The bytes are those Go's ``encoding/json`` writes for the same value, so that every port
counts the same tokens for a tool schema: keys sorted by code point, no white space,
non-ASCII as raw UTF-8, HTML-sensitive characters escaped, numbers as ECMAScript prints them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Final

__all__ = ["canonical_json"]

# Characters that are escaped inside strings, and how (R-TOK-4). Other control characters
# become \u00XX with lower-case hex, as Go writes them.
_STRING_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_NEEDS_ESCAPE: Final = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029]')
# ECMAScript writes numbers in plain notation while the decimal point lies in this window
# (positions relative to the first digit), and in exponent notation outside it.
_PLAIN_MAX_EXPONENT: Final = 21
_PLAIN_MIN_EXPONENT: Final = -6


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return _STRING_ESCAPES.get(ch) or f"\\u{ord(ch):04x}"


def _string(s: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, s) + '"'


def _number(x: float) -> str:
    """Format a float as ECMAScript's Number::toString does (shortest round-trip digits).

    Integral values come out without a fraction (1.0 -> "1"), as Go's encoding/json writes them.
    """
    if not math.isfinite(x):
        raise ValueError(f"{x!r} has no JSON representation")
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    sign, digit_tuple, exponent = Decimal(repr(x)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    k = len(digits)
    n = exponent + len(digit_tuple)  # position of the decimal point relative to the digits
    prefix = "-" if sign else ""
    if k <= n <= _PLAIN_MAX_EXPONENT:
        return prefix + digits + "0" * (n - k)
    if 0 < n <= _PLAIN_MAX_EXPONENT:
        return prefix + digits[:n] + "." + digits[n:]
    if _PLAIN_MIN_EXPONENT < n <= 0:
        return prefix + "0." + "0" * (-n) + digits
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{prefix}{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


def canonical_json(value: object) -> str:
    """Return the canonical JSON text of a JSON value (dict, list, str, int, float, bool, None).

    Raises:
        ValueError: for a value JSON cannot represent (NaN, infinities, other types).
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        items = sorted(value.items(), key=lambda kv: str(kv[0]))
        return "{" + ",".join(_string(str(k)) + ":" + canonical_json(v) for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    raise ValueError(f"{type(value).__name__} has no JSON representation")
