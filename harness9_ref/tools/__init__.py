"""The agent's tools: ``read_file`` and ``bash`` on a working directory (SPEC section "Tools": R-TOOL).

``Registry(workdir)`` offers both to the model and runs them; every failure comes back as an
observation starting with ``error: ``, never as an exception. ``bash`` is not a sandbox
(R-TOOL-8): a command can read and change anything the user can. The registry also ends the
commands it started, on ``interrupt()`` and ``close()`` (R-INT), and asks an approval callback
before each command (R-APPR).
"""

from ._approval import APPROVAL_REQUIRED, DECLINED, Answer, Approve, Refusal, require_yes
from ._arguments import INVALID_ARGUMENTS, ArgumentsError, parse_object, required_string
from ._bash import (
    BASH_TOOL,
    DEFAULT_BASH_TIMEOUT,
    EXIT_STATUS_NOTE,
    INTERRUPTED_NOTE,
    NO_OUTPUT,
    SIGNAL_NOTE,
    START_FAILED,
    TIMEOUT_NOTE,
)
from ._output import DEFAULT_OUTPUT_CAP, TRUNCATED_NOTE
from ._process import INTERRUPT_GRACE_SECONDS
from ._read_file import (
    BINARY_FILE,
    BINARY_SNIFF_BYTES,
    ESCAPES_WORKDIR,
    IS_A_DIRECTORY,
    NO_SUCH_FILE,
    NOT_A_REGULAR_FILE,
    READ_FAILED,
    READ_FILE_TOOL,
    size_text,
)
from ._registry import TOOL_FAILED, UNKNOWN_TOOL, Registry

__all__ = (
    "APPROVAL_REQUIRED",
    "BASH_TOOL",
    "BINARY_FILE",
    "BINARY_SNIFF_BYTES",
    "DECLINED",
    "DEFAULT_BASH_TIMEOUT",
    "DEFAULT_OUTPUT_CAP",
    "ESCAPES_WORKDIR",
    "EXIT_STATUS_NOTE",
    "INTERRUPTED_NOTE",
    "INTERRUPT_GRACE_SECONDS",
    "INVALID_ARGUMENTS",
    "IS_A_DIRECTORY",
    "NOT_A_REGULAR_FILE",
    "NO_OUTPUT",
    "NO_SUCH_FILE",
    "READ_FAILED",
    "READ_FILE_TOOL",
    "SIGNAL_NOTE",
    "START_FAILED",
    "TIMEOUT_NOTE",
    "TOOL_FAILED",
    "TRUNCATED_NOTE",
    "UNKNOWN_TOOL",
    "Answer",
    "Approve",
    "ArgumentsError",
    "Refusal",
    "Registry",
    "parse_object",
    "require_yes",
    "required_string",
    "size_text",
)
