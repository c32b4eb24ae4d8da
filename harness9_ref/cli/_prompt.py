"""The prompt of ``run``, completed from standard input (SPEC R-CLI-11, R-CLI-26).

``run -`` reads the whole prompt from standard input; ``run PROMPT`` with standard input a pipe
or a regular file (``git diff | harness9-ref run "review this"``, ``run "fix it" < log.txt``)
appends what it holds after a blank line. Only a FIFO or a regular file counts: a terminal
would make the program wait for input nobody meant to give, and ``/dev/null`` (or a closed
standard input) holds nothing.
"""

from __future__ import annotations

import io
import os
import stat
from typing import Final, TextIO

from ..text import TableSaid
from ._settings import CliError, UsageError, argument_text

__all__ = ["piped_input", "read_prompt"]

FROM_STDIN: Final = "-"  # run -: the prompt is standard input


def _stdin_fd(stdin: TextIO | None) -> int | None:
    """The descriptor behind ``stdin``, or None when there is none (closed, or replaced by a test runner)."""
    if stdin is None:
        return None
    try:
        return stdin.fileno()
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return None


def _read_all(stdin: TextIO) -> str:
    """Everything on standard input as UTF-8, invalid bytes replaced by U+FFFD (R-CLI-11).

    Raises:
        CliError: standard input could not be read (a directory redirected to it, say).
    """
    try:
        buffer = getattr(stdin, "buffer", None)
        if buffer is None:
            return stdin.read()
        data = buffer.read()
    except OSError as exc:
        raise CliError(str(exc)) from exc
    return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else str(data)


def piped_input(stdin: TextIO | None) -> str | None:
    """What a pipe or a regular file on standard input holds; None for anything else (R-CLI-11)."""
    fd = _stdin_fd(stdin)
    if fd is None or stdin is None:
        return None
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return None
    return _read_all(stdin)


def read_prompt(prompt: str, stdin: TextIO | None) -> str:
    """The prompt ``run`` sends (R-CLI-11).

    Raises:
        UsageError: the prompt is empty (or only white space) after reading standard input.
        CliError: standard input could not be read.
    """
    if prompt == FROM_STDIN:
        fd = _stdin_fd(stdin)
        text = _read_all(stdin) if stdin is not None and fd is not None else ""
    else:
        text = argument_text(prompt)  # R-CLI-26: bytes that are not UTF-8 as standard input's are
        extra = piped_input(stdin)
        if extra:
            text = f"{text}\n\n{extra}"
    if not text.strip():
        raise UsageError(TableSaid("err_prompt_empty"))
    return text
