"""Reading a tool call's raw arguments (SPEC R-TOOL-2, R-MSG-3)."""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["InvalidArguments", "INVALID_ARGUMENTS", "string_member"]

INVALID_ARGUMENTS: Final = "error: invalid arguments for {name}: {detail}"  # R-TOOL-2

_JSON_KIND: Final = {type(None): "null", bool: "a boolean", int: "a number", float: "a number",
                     str: "a string", list: "an array", dict: "an object"}


class InvalidArguments(Exception):
    """The arguments are not an object with the required members; ``str`` is the detail."""


def _parse_object(arguments: str) -> dict[str, Any]:
    if arguments == "":  # R-TOOL-2: the empty string counts as {}
        return {}
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):  # JSONDecodeError, oversized integers, deep nesting
        raise InvalidArguments("not valid JSON") from None
    if not isinstance(value, dict):
        raise InvalidArguments(f"expected a JSON object, got {_JSON_KIND.get(type(value), 'a value')}")
    return value


def string_member(arguments: str, member: str) -> str:
    """The required string ``member`` of the JSON object ``arguments``; other members are ignored.

    Raises:
        InvalidArguments: ``arguments`` is not a JSON object, lacks ``member``, or its value is
            not a string.
    """
    obj = _parse_object(arguments)
    if member not in obj:
        raise InvalidArguments(f'missing required member "{member}"')
    value = obj[member]
    if not isinstance(value, str):
        raise InvalidArguments(f'member "{member}" must be a string, got {_JSON_KIND.get(type(value), "a value")}')
    return value
