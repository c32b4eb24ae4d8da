"""The ``read_file`` tool (SPEC R-TOOL-1, R-TOOL-3, R-TOOL-4, R-TOOL-7, R-TOOL-9, R-TOOL-16).

Confinement: the path is resolved with every symbolic link followed (``os.path.realpath``) and
must be the working directory's own resolved path or lie below it. The file is then opened
component by component from the working directory without following any link (``_walk``,
R-TOOL-16), so no folder on the way swapped for a link in between can lead the read out of it.
This keeps the model's reads where the user put it; it is no sandbox: ``bash`` can read any file
the user can (R-TOOL-8).

A file that is not text (a NUL byte or invalid UTF-8 in its first block) is described in one line
instead of being sent: its bytes decoded would be thousands of U+FFFD and control characters,
tokens that tell the model nothing (R-TOOL-9).
"""

from __future__ import annotations

import os
import stat
from typing import Final

from .._harness9_error import os_reason
from ..memory.context import size_text
from ..schema import ToolDefinition
from ._output import capped_text
from ._walk import Where, open_file

__all__ = [
    "BINARY_FILE",
    "BINARY_SNIFF_BYTES",
    "ESCAPES_WORKDIR",
    "IS_A_DIRECTORY",
    "NOT_A_REGULAR_FILE",
    "NO_SUCH_FILE",
    "READ_FAILED",
    "READ_FILE_TOOL",
    "is_text",
]

# R-TOOL-1: the definition, exactly as SPEC section 9.1 prints it.
READ_FILE_TOOL: Final = ToolDefinition(
    "read_file",
    "Read a text file inside the working directory and return its contents.",
    {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path of the file, relative to the working directory."}
        },
        "required": ["path"],
    },
)

ESCAPES_WORKDIR: Final = "error: path escapes the working directory: {path}"  # R-TOOL-3
NO_SUCH_FILE: Final = "error: no such file: {path}"  # R-TOOL-3
IS_A_DIRECTORY: Final = "error: is a directory: {path}"  # R-TOOL-3
# R-TOOL-7: a FIFO, socket or device would block or never end; it is refused, unread.
NOT_A_REGULAR_FILE: Final = "error: not a regular file: {path}"
READ_FAILED: Final = "error: cannot read {path}: {reason}"  # R-TOOL-7
BINARY_FILE: Final = "binary file, {size}, not read"  # R-TOOL-9: a tool result, not an error
BINARY_SNIFF_BYTES: Final = 8192  # R-TOOL-9: the first block, the only bytes judged
_CUT_SHORT: Final = "unexpected end of data"  # the decoder's reason for a sequence the end of its input splits

OPEN_FLAGS: Final = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)
_READ_SIZE: Final = 1 << 20


def confine(workdir: str, path: str) -> tuple[str, str] | str:
    """The working directory and ``path``'s target, both resolved, or the observation refusing it (R-TOOL-3).

    Every tool that touches a file is confined the same way: symbolic links followed, then the
    target must lie within the resolved working directory.
    """
    try:
        root = os.path.realpath(workdir)
        target = os.path.realpath(os.path.join(workdir, path))
    except (OSError, ValueError) as exc:  # e.g. an embedded NUL byte
        return READ_FAILED.format(path=path, reason=exc)
    if not within(root, target):
        return ESCAPES_WORKDIR.format(path=path)
    return root, target


def locate(workdir: str, path: str) -> Where | str:
    """``path`` confined (R-TOOL-3) as a ``Where``: its resolved components below the resolved
    working directory, or the observation refusing it."""
    confined = confine(workdir, path)
    if isinstance(confined, str):
        return confined
    root, target = confined
    rel = os.path.relpath(target, root)
    return Where(root, () if rel == os.curdir else tuple(rel.split(os.sep)))


def within(root: str, target: str) -> bool:
    """Whether ``target`` is ``root`` or lies below it (both resolved, R-TOOL-3)."""
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def _read_head(fd: int, cap: int, size: int) -> tuple[bytes, int]:
    """The first ``cap + 1`` bytes at most, and the file's total size in bytes."""
    parts: list[bytes] = []
    got = 0
    while got <= cap:
        part = os.read(fd, min(cap + 1 - got, _READ_SIZE))
        if not part:
            break
        parts.append(part)
        got += len(part)
    head = b"".join(parts)
    if got <= cap:
        return head, got
    total = max(size, got)
    if size < got:  # the size fstat gave was wrong (a growing file, a pseudo-file): count the rest
        while part := os.read(fd, _READ_SIZE):
            total += len(part)
    return head, total


def is_text(block: bytes) -> bool:
    """Whether a file whose first block is ``block`` is text (R-TOOL-9): no NUL byte, and valid
    UTF-8 but for a character the block's end may split (the valid beginning of one)."""
    if b"\0" in block:
        return False
    try:
        block.decode("utf-8")
    except UnicodeDecodeError as exc:  # the first invalid sequence: text only if it is the split end
        return exc.end == len(block) and exc.reason == _CUT_SHORT
    return True


def read_file(workdir: str, path: str, cap: int) -> str:
    """The observation of ``read_file`` for ``path`` (R-TOOL-3, R-TOOL-4).

    Args:
        workdir: the working directory (absolute).
        path: the path the model gave, relative to ``workdir`` or absolute.
        cap: the most bytes shown (R-TOOL-4).

    Returns:
        The file's text, capped, or an observation starting with ``error: ``. Never raises an
        ``OSError`` or ``ValueError``.
    """
    where = locate(workdir, path)
    if isinstance(where, str):
        return where
    try:
        fd, _ = open_file(where, OPEN_FLAGS)
    except IsADirectoryError:
        return IS_A_DIRECTORY.format(path=path)
    except OSError as exc:
        return READ_FAILED.format(path=path, reason=os_reason(exc))
    except ValueError as exc:
        return READ_FAILED.format(path=path, reason=exc)
    if fd is None:
        return NO_SUCH_FILE.format(path=path)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            return IS_A_DIRECTORY.format(path=path)
        if not stat.S_ISREG(info.st_mode):
            return NOT_A_REGULAR_FILE.format(path=path)
        head, total = _read_head(fd, max(cap, BINARY_SNIFF_BYTES), info.st_size)
    except OSError as exc:
        return READ_FAILED.format(path=path, reason=os_reason(exc))
    finally:
        os.close(fd)
    if not is_text(head[:BINARY_SNIFF_BYTES]):
        return BINARY_FILE.format(size=size_text(total))
    return capped_text(head, total, cap)
