"""How a request is compared with recorded ones, and how a refusal reads to the provider's client.

Shared by the replay server (``conformance.traffic._replay``) and the recording proxy
(``conformance.traffic._proxy``): which provider a request is for, the body members left out of a
comparison (SPEC R-REC-4), the distance that finds the closest recorded request, and the error
body in the provider's own shape (SPEC R-REC-5).
"""

from __future__ import annotations

import difflib
import json
import urllib.parse
from collections.abc import Iterable, Sequence
from typing import Any

from ..runner._compare import first_difference

__all__ = ["distance", "error_body", "provider_of", "without_members"]


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

    Two different strings count as less than 1 the more they have in common.
    """
    if isinstance(a, dict) and isinstance(b, dict):
        return sum(distance(a[k], b[k]) if k in a and k in b else 1 for k in a.keys() | b.keys())
    if isinstance(a, list) and isinstance(b, list):
        return abs(len(a) - len(b)) + sum(distance(x, y) for x, y in zip(a, b))
    if isinstance(a, str) and isinstance(b, str):
        return 1 - difflib.SequenceMatcher(None, a, b).ratio()
    return 0 if first_difference(a, b) is None else 1
