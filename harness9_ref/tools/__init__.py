"""The agent's tools on a working directory: ``read_file``, ``bash``, ``edit_file``, ``write_file`` (SPEC R-TOOL).

``Registry(workdir)`` offers them to the model and runs them; every failure comes back as an
observation starting with ``error: ``, never as an exception. ``bash`` is not a sandbox
(R-TOOL-8): a command can read and change anything the user can. The registry also ends the
commands it started, on ``interrupt()`` and ``close()`` (R-INT), and asks an approval callback
before each command and each change of a file, which it shows as a unified diff (R-APPR).
"""

from ._approval import (
    APPROVAL_REQUIRED,
    CHANGE_APPROVAL_REQUIRED,
    CHANGE_DECLINED,
    DECLINED,
    Answer,
    Approve,
    FileChange,
    Refusal,
    require_yes,
    subject,
)
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
from ._edit import (
    AMBIGUOUS,
    CHANGED_WHILE_ASKING,
    EDIT_FILE_TOOL,
    EDITED,
    EMPTY_OLD_TEXT,
    NO_CHANGE,
    NOT_FOUND,
    NOT_TEXT,
    WRITE_FAILED,
    WRITE_FILE_TOOL,
    WROTE_NEW,
    WROTE_REPLACED,
    unified_diff,
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
    is_text,
    size_text,
)
from ._registry import TOOL_FAILED, UNKNOWN_TOOL, Registry

__all__ = (
    "AMBIGUOUS",
    "APPROVAL_REQUIRED",
    "BASH_TOOL",
    "BINARY_FILE",
    "BINARY_SNIFF_BYTES",
    "CHANGED_WHILE_ASKING",
    "CHANGE_APPROVAL_REQUIRED",
    "CHANGE_DECLINED",
    "DECLINED",
    "DEFAULT_BASH_TIMEOUT",
    "DEFAULT_OUTPUT_CAP",
    "EDITED",
    "EDIT_FILE_TOOL",
    "EMPTY_OLD_TEXT",
    "ESCAPES_WORKDIR",
    "EXIT_STATUS_NOTE",
    "INTERRUPTED_NOTE",
    "INTERRUPT_GRACE_SECONDS",
    "INVALID_ARGUMENTS",
    "IS_A_DIRECTORY",
    "NOT_A_REGULAR_FILE",
    "NOT_FOUND",
    "NOT_TEXT",
    "NO_CHANGE",
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
    "WRITE_FAILED",
    "WRITE_FILE_TOOL",
    "WROTE_NEW",
    "WROTE_REPLACED",
    "Answer",
    "Approve",
    "ArgumentsError",
    "FileChange",
    "Refusal",
    "Registry",
    "is_text",
    "parse_object",
    "require_yes",
    "required_string",
    "size_text",
    "subject",
    "unified_diff",
)
