"""Long repeated text in case files, written compactly and expanded by the runner (R-CASE-1).

A case that needs a 600,000-character string says so instead of holding it: anywhere in its
``input`` or ``expect``, the object ``{"$text": [part, …]}`` stands for the concatenation of its
parts, each a string or ``{"repeat": STRING, "times": N}`` (STRING written N times). The runner
expands every such object when it loads the case, so an adapter only ever receives, and is only
ever compared against, plain strings. An object with a ``"$text"`` member is always this
notation: one that does not follow it is an error in the case file, never data.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["LONGEST_LITERAL_RUN", "LONGEST_PART", "MARKER", "expand", "literal_runs"]

MARKER: Final = "$text"
# Lint asks for the notation past this many copies of one character written out in a case file.
LONGEST_LITERAL_RUN: Final = 4096
# Every run of one character as a single match: "(.)\1{N,}" would rescan a shorter run from each
# of its characters (quadratic in the run), while this pattern consumes a run once.
_RUN: Final = re.compile(r"(.)\1+", re.DOTALL)
# The longest part a repeat may make: a typo in ``times`` must be a broken case, not a runner
# out of memory.
LONGEST_PART: Final = 2**24


def _part(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, dict) or set(value) != {"repeat", "times"}:
        raise ValueError(f"{where}: a part is a string or {{\"repeat\": STRING, \"times\": N}}")
    unit, times = value["repeat"], value["times"]
    if not isinstance(unit, str) or not unit:
        raise ValueError(f"{where}/repeat: expected a non-empty string")
    if not isinstance(times, int) or isinstance(times, bool) or times < 1:
        raise ValueError(f"{where}/times: expected an integer of at least 1")
    if len(unit) * times > LONGEST_PART:
        raise ValueError(f"{where}/times: the part would be longer than {LONGEST_PART} characters")
    return unit * times


def _text(value: Any, where: str) -> str:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where}: expected a non-empty array of parts")
    return "".join(_part(part, f"{where}/{index}") for index, part in enumerate(value))


def expand(value: Any, where: str = "") -> Any:
    """``value`` with every ``$text`` object replaced by the string it stands for.

    Args:
        value: a decoded JSON value (a case's ``input`` or ``expect``).
        where: the JSON pointer of ``value`` in its file, for error messages.

    Raises:
        ValueError: a ``$text`` object does not follow the notation; the message starts with
            the JSON pointer of the offending member.
    """
    if isinstance(value, dict):
        if MARKER in value:
            if len(value) != 1:
                raise ValueError(f"{where}: a {MARKER} object has no other members")
            return _text(value[MARKER], f"{where}/{MARKER}")
        return {key: expand(item, f"{where}/{key}") for key, item in value.items()}
    if isinstance(value, list):
        return [expand(item, f"{where}/{index}") for index, item in enumerate(value)]
    return value


def literal_runs(text: str) -> list[str]:
    """One line per run in ``text`` (a case file's source) of more than ``LONGEST_LITERAL_RUN``
    copies of one character, which the notation writes in a few bytes.
    """
    return [
        f"{len(match.group(0))} copies of {match.group(1)!r} written out: "
        f"use {{\"{MARKER}\": [{{\"repeat\": …, \"times\": …}}]}} (R-CASE-1)"
        for match in _RUN.finditer(text)
        if len(match.group(0)) > LONGEST_LITERAL_RUN
    ]
