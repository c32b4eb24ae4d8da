"""The ``edit_file`` and ``write_file`` tools (SPEC R-TOOL-10 … R-TOOL-13, R-APPR-4).

A change is made in two halves with the user's approval between them: ``plan_edit`` and
``plan_write`` check everything that can be checked without writing and return a ``Plan`` (the
bytes the file holds, the bytes it will hold, the diff shown for approval) or the observation
that says why not; ``apply`` writes an approved plan, after making sure the file still holds
what the diff was made from (the user may have edited it while the question waited) and that
its path still leads to the same folders and file (R-TOOL-14): the path is resolved once, when
the change is checked, and written by walking it again from the working directory without
following any link (``_walk``), each folder and the file compared by device and inode with what
the check saw. A folder swapped for a link, or for another folder, while the user reads the diff
cannot send the write elsewhere.

Edits work on bytes, not on decoded text: the UTF-8 bytes of ``old_text`` are found in the
file's bytes and only they are replaced, so a file with an invalid byte somewhere after its
first block (text by R-TOOL-9's test) keeps that byte. Files are written in place, not replaced
by a new file, so an existing file keeps its mode and owner; a file with more than one hard link
is not changed at all (R-TOOL-15), since writing it would change it under its other names too,
which may lie outside the working directory.
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from .._harness9_error import os_reason
from ..schema import ToolDefinition, replace_lone_surrogates
from ._read_file import (
    BINARY_SNIFF_BYTES,
    IS_A_DIRECTORY,
    NO_SUCH_FILE,
    NOT_A_REGULAR_FILE,
    OPEN_FLAGS,
    READ_FAILED,
    is_text,
    locate,
)
from ._walk import Identity, LinkOnPath, Replaced, Where, identity, open_at, open_file, open_folder

__all__ = [
    "AMBIGUOUS",
    "CHANGED_WHILE_ASKING",
    "EDITED",
    "EDIT_FILE_TOOL",
    "EMPTY_OLD_TEXT",
    "HARD_LINKED",
    "LINK_ON_PATH",
    "NOT_FOUND",
    "NOT_TEXT",
    "NO_CHANGE",
    "PATH_REPLACED",
    "WRITE_FAILED",
    "WRITE_FILE_TOOL",
    "WROTE_NEW",
    "WROTE_REPLACED",
    "unified_diff",
]

_PATH_PROPERTY: Final = {"type": "string", "description": "Path of the file, relative to the working directory."}

# R-TOOL-1: the definitions, exactly as SPEC section 9.1 prints them.
EDIT_FILE_TOOL: Final = ToolDefinition(
    "edit_file",
    "Replace one exact, unique occurrence of old_text in a text file inside the working directory by new_text.",
    {
        "type": "object",
        "properties": {
            "path": _PATH_PROPERTY,
            "old_text": {
                "type": "string",
                "description": "The exact text to replace; it must occur exactly once in the file.",
            },
            "new_text": {"type": "string", "description": "The text to put in its place."},
        },
        "required": ["path", "old_text", "new_text"],
    },
)
WRITE_FILE_TOOL: Final = ToolDefinition(
    "write_file",
    "Create or replace a text file inside the working directory with the given content.",
    {
        "type": "object",
        "properties": {
            "path": _PATH_PROPERTY,
            "content": {"type": "string", "description": "The whole new content of the file."},
        },
        "required": ["path", "content"],
    },
)

EMPTY_OLD_TEXT: Final = "error: old_text is empty; give the exact text to replace"  # R-TOOL-10
NO_CHANGE: Final = "error: new_text is the same as old_text; nothing to change"  # R-TOOL-10
NOT_TEXT: Final = "error: not a text file, not changed: {path}"  # R-TOOL-10, R-TOOL-11
NOT_FOUND: Final = "error: old_text not found in {path}"  # R-TOOL-10
AMBIGUOUS: Final = (  # R-TOOL-10
    "error: old_text occurs {n} times in {path}; include more of the text around it to make it unique"
)
EDITED: Final = "edited {path}: +{added} -{removed} lines"  # R-TOOL-13
WROTE_NEW: Final = "wrote {path}: {lines}, {bytes} (new file)"  # R-TOOL-13
WROTE_REPLACED: Final = "wrote {path}: {lines}, {bytes} (replaced: +{added} -{removed} lines)"  # R-TOOL-13
WRITE_FAILED: Final = "error: cannot write {path}: {reason}"  # R-TOOL-11, R-TOOL-7
CHANGED_WHILE_ASKING: Final = (  # R-APPR-4
    "error: {path} changed while the change waited for approval; nothing was written, read it again"
)
LINK_ON_PATH: Final = "error: {part} is now a symbolic link; nothing was written to {path}"  # R-TOOL-14
PATH_REPLACED: Final = (  # R-TOOL-14
    "error: {part} was replaced while the change waited for approval; nothing was written, read {path} again"
)
HARD_LINKED: Final = (  # R-TOOL-15
    "error: {path} has {n} hard links; writing it would change it under its other names too, so it is not changed"
)
NO_NEWLINE: Final = "\\ No newline at end of file\n"  # R-TOOL-12, as diff and git write it
NEW_FILE_HEADER: Final = "/dev/null"  # R-TOOL-12: the "from" name of a new file

_CREATE_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_REWRITE_FLAGS: Final = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Plan:
    """A checked change, waiting for approval: ``before`` is None for a new file."""

    tool: str
    path: str  # as the call gave it (R-TOOL-13)
    where: Where  # resolved, inside the working directory
    before: bytes | None
    after: bytes
    diff: str
    # R-TOOL-14: the working directory's, each folder's and the file's, None for a missing one
    identities: tuple[Identity | None, ...]

    def counts(self) -> tuple[int, int]:
        """Lines added and removed: the diff's ``+`` and ``-`` lines, headers excluded (R-TOOL-13)."""
        lines = self.diff.split("\n")[2:]
        return sum(line.startswith("+") for line in lines), sum(line.startswith("-") for line in lines)

    def result(self) -> str:
        """The one-line observation of the change once made (R-TOOL-13)."""
        added, removed = self.counts()
        if self.tool == EDIT_FILE_TOOL.name:
            return EDITED.format(path=self.path, added=added, removed=removed)
        lines = self.after.count(b"\n") + (1 if self.after and not self.after.endswith(b"\n") else 0)
        size = {"lines": _count(lines, "line"), "bytes": _count(len(self.after), "byte")}
        if self.before is None:
            return WROTE_NEW.format(path=self.path, **size)
        return WROTE_REPLACED.format(path=self.path, added=added, removed=removed, **size)


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def _lines(data: bytes) -> list[str]:
    """The text's lines, split after each ``\\n`` only, each keeping it (R-TOOL-12)."""
    text = data.decode("utf-8", "replace")
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def unified_diff(before: bytes | None, after: bytes, rel: str, *, removed: bool = False) -> str:
    """R-TOOL-12's diff of a change to the file ``rel`` (relative, ``/``-separated); ``removed``:
    the file goes, so its "to" name is ``/dev/null`` (R-UNDO-4b)."""
    old_name = NEW_FILE_HEADER if before is None else f"a/{rel}"
    new_name = NEW_FILE_HEADER if removed else f"b/{rel}"
    out = []
    for line in difflib.unified_diff(_lines(before or b""), _lines(after), old_name, new_name, n=3):
        out.append(line if line.endswith("\n") else line + "\n" + NO_NEWLINE)
    return "".join(out)


def _read(where: Where, path: str) -> tuple[bytes | None, tuple[Identity | None, ...]] | str:
    """The file's bytes (None when it does not exist) and the identities on its path, or the
    observation refusing it."""
    try:
        fd, folders = open_file(where, OPEN_FLAGS)
    except IsADirectoryError:
        return IS_A_DIRECTORY.format(path=path)
    except LinkOnPath as exc:
        return LINK_ON_PATH.format(part=exc.part, path=path)
    except OSError as exc:
        return READ_FAILED.format(path=path, reason=os_reason(exc))
    if fd is None:
        return None, (*folders, None)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            return IS_A_DIRECTORY.format(path=path)
        if not stat.S_ISREG(info.st_mode):
            return NOT_A_REGULAR_FILE.format(path=path)
        if info.st_nlink > 1:
            return HARD_LINKED.format(path=path, n=info.st_nlink)
        data = _read_all(fd)
    except OSError as exc:
        return READ_FAILED.format(path=path, reason=os_reason(exc))
    finally:
        os.close(fd)
    if not is_text(data[:BINARY_SNIFF_BYTES]):
        return NOT_TEXT.format(path=path)
    return data, (*folders, identity(info))


def _read_all(fd: int) -> bytes:
    parts = []
    while part := os.read(fd, 1 << 20):
        parts.append(part)
    return b"".join(parts)


def _encoded(text: str) -> bytes:
    return replace_lone_surrogates(text).encode("utf-8")


def _occurrences(data: bytes, needle: bytes) -> int:
    """How many starting positions ``needle`` occurs at, overlapping ones included (R-TOOL-10)."""
    count, start = 0, data.find(needle)
    while start >= 0:
        count += 1
        start = data.find(needle, start + 1)
    return count


def plan_edit(workdir: str, path: str, old_text: str, new_text: str) -> Plan | str:
    """The checked edit of R-TOOL-10, or the observation naming why it cannot be made."""
    old, new = _encoded(old_text), _encoded(new_text)
    if not old:
        return EMPTY_OLD_TEXT
    if old == new:
        return NO_CHANGE
    where = locate(workdir, path)
    if isinstance(where, str):
        return where
    read = _read(where, path)
    if isinstance(read, str):
        return read
    before, identities = read
    if before is None:
        return NO_SUCH_FILE.format(path=path)
    n = _occurrences(before, old)
    if n == 0:
        return NOT_FOUND.format(path=path)
    if n > 1:
        return AMBIGUOUS.format(n=n, path=path)
    after = before.replace(old, new, 1)
    return Plan(EDIT_FILE_TOOL.name, path, where, before, after, unified_diff(before, after, where.rel), identities)


def plan_write(workdir: str, path: str, content: str) -> Plan | str:
    """The checked write of R-TOOL-11, or the observation naming why it cannot be made."""
    where = locate(workdir, path)
    if isinstance(where, str):
        return where
    read = _read(where, path)  # under a file: missing now, the write says why
    if isinstance(read, str):
        return read
    before, identities = read
    after = _encoded(content)
    return Plan(WRITE_FILE_TOOL.name, path, where, before, after, unified_diff(before, after, where.rel), identities)


def apply(plan: Plan, written: Callable[[Plan], None] | None = None) -> str:
    """Write an approved plan and return its observation (R-TOOL-13, R-TOOL-14, R-APPR-4).

    ``written`` is called with the plan once the file holds ``plan.after`` (R-UNDO-2a: the
    change is recorded only when it was made).

    The path is walked again from the working directory without following links, each folder
    compared with the one the check saw and missing ones made (R-TOOL-11); the file is then
    opened once, compared (its identity, its links, its bytes) and written through that one
    descriptor, so nothing can come between the last check and the write. Whatever differs
    leaves everything as it was; an operating-system failure is ``WRITE_FAILED``.
    """
    try:
        folder, _ = open_folder(plan.where, plan.identities[:-1], make=True)
        assert folder is not None  # made when missing
        try:
            refused = _write_in(folder, plan)
        finally:
            os.close(folder)
    except LinkOnPath as exc:
        return LINK_ON_PATH.format(part=exc.part, path=plan.path)
    except Replaced as exc:
        return PATH_REPLACED.format(part=exc.part, path=plan.path)
    except OSError as exc:
        return WRITE_FAILED.format(path=plan.path, reason=os_reason(exc))
    if refused is not None:
        return refused
    if written is not None:
        written(plan)
    return plan.result()


def _write_in(folder: int, plan: Plan) -> str | None:
    """Write the plan's file in its folder, open as ``folder``, unless it changed since the check;
    None when written, else the observation saying why not."""
    name = plan.where.parts[-1]
    if plan.before is None:
        try:
            fd = os.open(name, _CREATE_FLAGS, 0o666, dir_fd=folder)
        except FileExistsError:  # a file, or a link, now exists where none did
            return CHANGED_WHILE_ASKING.format(path=plan.path)
    else:
        try:
            fd = open_at(name, _REWRITE_FLAGS, folder, plan.where.rel)
        except FileNotFoundError:
            return CHANGED_WHILE_ASKING.format(path=plan.path)
    try:
        if plan.before is not None:
            info = os.fstat(fd)
            if identity(info) != plan.identities[-1]:
                raise Replaced(plan.where.rel)
            if info.st_nlink > 1:
                return HARD_LINKED.format(path=plan.path, n=info.st_nlink)
            if _read_all(fd) != plan.before:
                return CHANGED_WHILE_ASKING.format(path=plan.path)
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
        view = memoryview(plan.after)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return None
