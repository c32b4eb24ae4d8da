"""Reading a tool call's raw arguments, and the observations of a call no tool answers (SPEC R-TOOL-2, R-TOOL-7, R-MSG-3).

They are the contract of every tool, the engine's own (``recall``, ``todo``) and the product's
alike, so they live with the schema rather than with the tools of a working directory.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from .._harness9_error import Harness9Error
from .strict_json import JSONError, json_kind, loads

__all__ = ["INVALID_ARGUMENTS", "TOOL_FAILED", "UNKNOWN_TOOL", "ArgumentsError", "parse_object", "required_string"]

INVALID_ARGUMENTS: Final = "error: invalid arguments for {name}: {detail}"  # R-TOOL-2
UNKNOWN_TOOL: Final = 'error: unknown tool "{name}"'  # R-TOOL-2
TOOL_FAILED: Final = "error: {message}"  # R-TOOL-7: any failure not named by a more specific text


class ArgumentsError(Harness9Error):
    """The arguments are not an object with the required members; ``str`` is the detail.

    The registry turns it into the observation of R-TOOL-2, so it never reaches a caller.
    """

    code: ClassVar[str] = "invalid_arguments"


def parse_object(arguments: str) -> dict[str, Any]:
    """The JSON object ``arguments``; ``""`` counts as ``{}`` (R-TOOL-2).

    Raises:
        ArgumentsError: not JSON, or JSON that is not an object; ``str`` is R-TOOL-2's detail.
    """
    if arguments == "":  # R-TOOL-2: the empty string counts as {}
        return {}
    try:
        value = loads(arguments, finite=False)  # RFC 8259: 1e400 is JSON, NaN is not
    except JSONError:
        raise ArgumentsError("not valid JSON") from None
    if not isinstance(value, dict):
        raise ArgumentsError(f"expected a JSON object, got {json_kind(value)}")
    return value


def required_string(obj: dict[str, Any], member: str) -> str:
    """The string ``member`` of the parsed object ``obj`` (R-TOOL-2).

    Raises:
        ArgumentsError: ``obj`` lacks ``member``, or its value is not a string.
    """
    if member not in obj:
        raise ArgumentsError(f'missing required member "{member}"')
    value = obj[member]
    if not isinstance(value, str):
        raise ArgumentsError(f'member "{member}" must be a string, got {json_kind(value)}')
    return value
