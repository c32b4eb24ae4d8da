"""Strict JSON reading: the one parser every reader of JSON text in the package uses.

RFC 8259 is stricter than Python's ``json`` module, which accepts ``NaN``, ``Infinity`` and
``-Infinity`` as numbers. Every caller here wants the RFC: provider bodies (R-PRV-21), tool-call
arguments (R-TOOL-2), the ``tool_calls`` column (R-DB-6) and the conformance case files. So
``loads`` refuses those constants always, and on request also numbers that overflow binary64,
repeated member names, and replaces lone surrogates made by escapes.

Errors are ``JSONError``: like ``json.JSONDecodeError`` (of which it is a subclass) it carries
``msg``, ``doc``, ``pos``, ``lineno`` and ``colno``, for every refusal, the strict ones included,
so a caller can always say where the text went wrong.

``value_start``, ``member_spans`` and ``element_spans`` find where values lie in a text that
``loads`` accepted, for readers that must keep a value's exact source text (R-PRV-14, R-DB-6).
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Final

from .._harness9_error import Harness9Error
from ._unicode import replace_lone_surrogates

__all__ = ["JSONError", "describe", "element_spans", "json_kind", "loads", "member_spans", "members", "value_start"]

_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")  # RFC 8259 "ws"
# One token a refusal can point at: a string (skipped whole, so nothing inside it matches), a
# constant, a number, or a bracket. Only used on a text the decoder read up to the refusal.
_TOKEN: Final = re.compile(
    r'"(?:[^"\\]|\\.)*"|(?P<constant>NaN|-?Infinity)|(?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)'
    r"|(?P<open>[\[{])|(?P<close>[\]}])",
    re.S,
)
_KIND: Final = {type(None): "null", bool: "a boolean", int: "a number", float: "a number",
                str: "a string", list: "an array", dict: "an object"}
_DESCRIBE_LIMIT: Final = 40  # characters of a value quoted in an error message
# int() refuses longer integer literals (Python 3.11+, and 3.10.7+); 0 means no limit.
_INT_DIGITS_LIMIT: Final[int] = getattr(sys, "get_int_max_str_digits", lambda: 0)()
_RAW_DECODER: Final = json.JSONDecoder()  # for values and member names in texts already accepted


class JSONError(Harness9Error, json.JSONDecodeError):
    """The text is not (strict) JSON; ``pos`` is the index of the fault in ``doc``.

    A ``Harness9Error`` like every error a caller can catch, and still a ``ValueError`` (through
    ``json.JSONDecodeError``) for the callers that catch that.
    """

    code: ClassVar[str] = "invalid_json"


def json_kind(value: object) -> str:
    """The JSON kind of a parsed value: ``null``, ``a boolean``, ``a number``, ``a string``, ``an array``, ``an object``."""
    return _KIND.get(type(value), "a value")


def describe(value: object) -> str:
    """A short description of a JSON value for an error message: ``5``, ``'custom'``, ``an array``."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        text = repr(value)
        return text if len(text) <= _DESCRIBE_LIMIT else text[: _DESCRIBE_LIMIT - 3] + "..."
    return _KIND.get(type(value), type(value).__name__)


class _Refused(Harness9Error):
    """Raised from a decoder hook; ``loads`` turns it into a JSONError with a position.

    The hook sees one token and not the text, so it can only say what it refused; ``loads``,
    which has the text, finds where. It never leaves ``loads``.
    """

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


def _refuse_constant(name: str) -> Any:
    raise _Refused("constant", name)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused("number", text)
    return value


def _finite_int(text: str) -> int:
    """An integer literal, refused as ``1e400`` is when its value rounds to an infinite double."""
    value = int(text)
    try:
        float(value)  # rounds to nearest, as float(text) does; too large only past the largest double
    except OverflowError:
        raise _Refused("number", text) from None
    return value


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise _Refused("key", "")
    return value


def _decoder(finite: bool, unique_keys: bool) -> json.JSONDecoder:
    """A decoder whose public hooks refuse what the options ask ``loads`` to refuse."""
    return json.JSONDecoder(
        parse_constant=_refuse_constant,
        parse_float=_finite_float if finite else None,
        parse_int=_finite_int if finite else None,
        object_pairs_hook=_unique_pairs if unique_keys else None,
    )


# One decoder per option set, built once: a stream parses one small JSON text per event (R-PRV-17).
# ``loads`` calls ``raw_decode`` itself with the white space skipped, as ``decode`` would.
_DECODERS: Final = {(finite, unique): _decoder(finite, unique) for finite in (True, False) for unique in (True, False)}


def loads(text: str, *, finite: bool = True, unique_keys: bool = False, replace_surrogates: bool = False) -> Any:
    """Parse one RFC 8259 JSON text (white space around the value allowed).

    Args:
        text: the JSON text.
        finite: refuse a number that overflows binary64 (``1e400``, or an integer of 310 digits),
            which RFC 8259's grammar allows.
        unique_keys: refuse an object in which a member name occurs twice (by default the last wins).
        replace_surrogates: turn unpaired surrogates made by escapes into U+FFFD (R-PRV-21).

    Raises:
        JSONError: the text is not JSON, uses ``NaN``/``Infinity``, breaks a refusal asked for,
            or nests too deeply to parse.
    """
    try:
        # _WHITESPACE matches the empty string, so ``match`` never returns None here.
        value, end = _DECODERS[finite, unique_keys].raw_decode(text, _WHITESPACE.match(text).end())  # type: ignore[union-attr]
        end = _WHITESPACE.match(text, end).end()  # type: ignore[union-attr]
        if end != len(text):
            raise JSONError("Extra data", text, end)
    except json.JSONDecodeError as exc:
        raise JSONError(exc.msg, exc.doc, exc.pos) from None
    except _Refused as exc:
        raise _located(text, exc) from None
    except RecursionError:
        raise JSONError("the JSON value is nested too deeply", text, _deepest(text)) from None
    except ValueError as exc:  # an integer literal longer than int() converts
        raise JSONError(str(exc), text, _first(text, _is_long_integer)) from None
    if replace_surrogates and "\\u" in text:
        value = _replace_surrogates(value)
    return value


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return replace_lone_surrogates(value)
    if isinstance(value, dict):
        return {replace_lone_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    return value


# --- Where a refusal is. The decoder accepted the text up to the refused token, so the token
# regex, which skips whole strings, finds it as the first token that matches.


def _first(text: str, wanted: Callable[[re.Match[str]], bool]) -> int:
    return next((m.start() for m in _TOKEN.finditer(text) if wanted(m)), 0)


def _is_long_integer(match: re.Match[str]) -> bool:
    number = match["number"]
    return number is not None and number.lstrip("-").isdigit() and len(number) > _INT_DIGITS_LIMIT > 0


def _is_infinite(match: re.Match[str]) -> bool:
    return match["number"] is not None and not math.isfinite(float(match["number"]))


def _deepest(text: str) -> int:
    depth = deepest = where = 0
    for match in _TOKEN.finditer(text):
        if match["open"]:
            depth += 1
            if depth > deepest:
                deepest, where = depth, match.start()
        elif match["close"]:
            depth -= 1
    return where


def _located(text: str, refused: _Refused) -> JSONError:
    if refused.kind == "constant":
        return JSONError(f"{refused.detail} is not JSON (RFC 8259)", text, _first(text, lambda m: bool(m["constant"])))
    if refused.kind == "number":
        pos = _first(text, _is_infinite)
        return JSONError(f"the number {describe(refused.detail)} is out of range", text, pos)
    key, pos = min(_repeated_keys(text, value_start(text)), key=lambda found: found[1])
    return JSONError(f"duplicate key {json.dumps(key)}", text, pos)


def _repeated_keys(text: str, start: int) -> Iterator[tuple[str, int]]:
    """Every member name that repeats an earlier one of its object, with its position."""
    if text[start] == "{":
        seen: set[str] = set()
        for key, key_pos, value_pos, _ in members(text, start):
            if key in seen:
                yield key, key_pos
            seen.add(key)
            yield from _repeated_keys(text, value_pos)
    elif text[start] == "[":
        for value_pos, _ in element_spans(text, start):
            yield from _repeated_keys(text, value_pos)


# --- Positions in a text that ``loads`` accepted. These walkers need not diagnose errors: they
# re-walk the same grammar to learn where each value lies.


def _skip_ws(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _value_end(text: str, pos: int) -> int:
    return int(_RAW_DECODER.raw_decode(text, pos)[1])


def value_start(text: str) -> int:
    """Where the top-level value of a JSON text starts."""
    return _skip_ws(text, 0)


def members(text: str, start: int) -> Iterator[tuple[str, int, int, int]]:
    """(name, name position, value start, value end) of each member of the object at ``text[start]`` (a ``{``), in order."""
    pos = _skip_ws(text, start + 1)
    if text[pos] == "}":
        return
    while True:
        key_pos = pos
        name, pos = _RAW_DECODER.raw_decode(text, pos)
        pos = _skip_ws(text, _skip_ws(text, pos) + 1)  # past the colon
        end = _value_end(text, pos)
        yield name, key_pos, pos, end
        pos = _skip_ws(text, end)
        if text[pos] == "}":
            return
        pos = _skip_ws(text, pos + 1)  # past the comma


def member_spans(text: str, start: int) -> dict[str, tuple[int, int]]:
    """The (start, end) of each member's value in the object at ``text[start]`` (a ``{``).

    A name that occurs more than once gives its last value, as ``loads`` keeps it.
    """
    return {name: (value_pos, end) for name, _, value_pos, end in members(text, start)}


def element_spans(text: str, start: int) -> list[tuple[int, int]]:
    """The (start, end) of each element of the array at ``text[start]`` (a ``[``)."""
    pos = _skip_ws(text, start + 1)
    spans: list[tuple[int, int]] = []
    if text[pos] == "]":
        return spans
    while True:
        end = _value_end(text, pos)
        spans.append((pos, end))
        pos = _skip_ws(text, end)
        if text[pos] == "]":
            return spans
        pos = _skip_ws(text, pos + 1)
