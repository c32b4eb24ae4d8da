"""How a request is compared with recorded ones, and how a refusal reads to the provider's client.

Shared by the replay server (``conformance.traffic._replay``) and the recording proxy
(``conformance.traffic._proxy``): which provider a request is for, which header and query
parameter names carry a secret (SPEC R-REC-15), how deep a request body may nest (R-REC-16),
the body members left out of a comparison (SPEC R-REC-4), the bounded distance that finds the
closest recorded request (R-REC-17), and the error body in the provider's own shape (SPEC R-REC-5).
"""

from __future__ import annotations

import difflib
import json
import re
import urllib.parse
from collections.abc import Iterable, Sequence
from typing import Any, Final

from ..runner._compare import first_difference

__all__ = [
    "MAX_DEPTH", "REDACTED_TEXT", "DepthError", "conceal_query", "distance", "error_body",
    "parse_body", "provider_of", "says_secret", "without_members",
]

REDACTED_TEXT: Final = "<redacted>"
# A name says it carries a secret (SPEC R-REC-15). ``tokens`` is a count (``x-ratelimit-
# remaining-tokens``), not a token; ``sig`` only as a word of its own, not inside ``design``.
_SECRET_NAME: Final = re.compile(
    r"key|token(?!s)|secret|auth|password|signature|cookie|(?:^|[-_.])sig(?:$|[-_.])", re.IGNORECASE
)
# Deeper than any API body (a tool's JSON schema nests a few dozen levels), and shallow enough
# for the recursive comparison and the cassette's writer, at two frames a level, to stay far
# inside Python's recursion limit of 1000 in a handler thread (SPEC R-REC-16).
MAX_DEPTH: Final = 256
# Characters of two different strings that ``distance`` compares for likeness, and of one whole
# comparison: difflib's cost grows with the product of the lengths, so a long body would hold
# its request for minutes and a body of many strings for as long (SPEC R-REC-17).
_COMPARED: Final = 256
_LIKENESS_BUDGET: Final = 16384

class DepthError(ValueError):
    """A request body is JSON nested deeper than ``MAX_DEPTH`` (SPEC R-REC-16)."""


def says_secret(name: str) -> bool:
    """Whether a header or query parameter name says its value is a secret (SPEC R-REC-15)."""
    return _SECRET_NAME.search(name) is not None


def conceal_query(path: str) -> str:
    """``path`` with the value of every query parameter whose name says secret replaced by
    ``<redacted>`` (SPEC R-REC-15): what the proxy records and prints, and what replay compares,
    so a recorded path matches again whatever key the client sends."""
    route, mark, query = path.partition("?")
    if not mark:
        return path
    parts = []
    for part in query.split("&"):
        name, equals, _ = part.partition("=")
        secret = equals and says_secret(urllib.parse.unquote_plus(name))
        parts.append(f"{name}={REDACTED_TEXT}" if secret else part)
    return f"{route}?{'&'.join(parts)}"


def _depth(value: Any) -> int:
    """How deep arrays and objects nest in a parsed JSON value, walked without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            level += 1
            deepest = max(deepest, level)
            stack.extend((child, level) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def parse_body(body: bytes) -> Any:
    """A request body's JSON value, ``None`` when empty.

    Raises:
        DepthError: it nests deeper than ``MAX_DEPTH`` (however deep: the parser's own
            recursion limit counts as too deep).
        ValueError: it is not UTF-8 JSON.
    """
    if not body:
        return None
    try:
        value = json.loads(body.decode("utf-8"))
    except RecursionError:
        raise DepthError(f"the request body nests deeper than {MAX_DEPTH} arrays and objects") from None
    if _depth(value) > MAX_DEPTH:
        raise DepthError(f"the request body nests deeper than {MAX_DEPTH} arrays and objects")
    return value


def provider_of(path: str, headers: Iterable[tuple[str, str]] = ()) -> str:
    """``anthropic`` for a request its SDK sends (it always names ``anthropic-version``) or one
    to a Messages path, else ``openai``."""
    if any(name.lower() == "anthropic-version" for name, _ in headers):
        return "anthropic"
    route = urllib.parse.urlsplit(path).path
    return "anthropic" if route.endswith("/messages") or "/messages/" in route else "openai"


def error_body(provider: str, message: str, kind: str = "replay_mismatch") -> bytes:
    """An error body shaped like the provider's own (SPEC R-ERR-3), so its client shows the text."""
    if provider == "anthropic":
        error: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        error = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return json.dumps(error, indent=2).encode("utf-8") + b"\n"


def without_members(value: Any, fields: Sequence[str]) -> Any:
    """``value`` without the listed object members (``a.b`` reaches into ``a``); lists and
    other values are left as they are."""
    if not fields or not isinstance(value, dict):
        return value
    top = {field for field in fields if "." not in field}
    nested: dict[str, list[str]] = {}
    for field in fields:
        head, dot, rest = field.partition(".")
        if dot:
            nested.setdefault(head, []).append(rest)
    return {k: without_members(v, nested.get(k, [])) for k, v in value.items() if k not in top}


def distance(a: Any, b: Any) -> float:
    """Roughly how many members, items and values differ between two JSON values (0: equal).

    Two different strings count as less than 1 the more their first ``_COMPARED`` characters
    have in common, and more than 0 always, until ``_LIKENESS_BUDGET`` characters have been
    compared so; after that they count as 1. The cost stays linear in the values' size.
    """
    return _distance(a, b, [_LIKENESS_BUDGET])


def _distance(a: Any, b: Any, budget: list[int]) -> float:
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [*a, *(k for k in b if k not in a)]  # in order: the budget is spent alike every time
        return sum(_distance(a[k], b[k], budget) if k in a and k in b else 1 for k in keys)
    if isinstance(a, list) and isinstance(b, list):
        return abs(len(a) - len(b)) + sum(_distance(x, y, budget) for x, y in zip(a, b))
    if isinstance(a, str) and isinstance(b, str):
        if a == b:
            return 0
        a, b = a[:_COMPARED], b[:_COMPARED]
        budget[0] -= len(a) + len(b)
        if budget[0] < 0:
            return 1
        similar = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
        return max(1 - similar, 1 / _COMPARED)
    return 0 if first_difference(a, b) is None else 1
