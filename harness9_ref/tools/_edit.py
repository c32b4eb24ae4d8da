"""The ``edit_file`` and ``write_file`` tools (SPEC R-TOOL-10 … R-TOOL-13, R-APPR-4).

A change is made in two halves with the user's approval between them: ``plan_edit`` and
``plan_write`` check everything that can be checked without writing and return a ``Plan`` (the
bytes the file holds, the bytes it will hold, the diff shown for approval) or the observation
that says why not; ``apply`` writes an approved plan, after making sure the file still holds
what the diff was made from (the user may have edited it while the question waited).

Edits work on bytes, not on decoded text: the UTF-8 bytes of ``old_text`` are found in the
file's bytes and only they are replaced, so a file with an invalid byte somewhere after its
first block (text by R-TOOL-9's test) keeps that byte. Files are written in place, not replaced
by a new file, so an existing file keeps its mode, owner and hard links.
"""

from __future__ import annotations

import difflib
import errno
import os
import stat
from dataclasses import dataclass
from typing import Final

from ..schema import ToolDefinition, replace_lone_surrogates
from ._read_file import (
    BINARY_SNIFF_BYTES,
    IS_A_DIRECTORY,
    NO_SUCH_FILE,
    NOT_A_REGULAR_FILE,
    OPEN_FLAGS,
    READ_FAILED,
    confine,
    is_text,
)

__all__ = [
    "AMBIGUOUS",
    "CHANGED_WHILE_ASKING",
    "EDITED",
    "EDIT_FILE_TOOL",
    "EMPTY_OLD_TEXT",
    "NOT_FOUND",
    "NOT_TEXT",
    "NO_CHANGE",
    "WRITE_FAILED",
    "WRITE_FILE_TOOL",
    "WROTE_NEW",
    "WROTE_REPLACED",
    "Plan",
    "apply",
    "plan_edit",
    "plan_write",
    "unified_diff",
]

_PATH_PROPERTY: Final = {"type": "string", "description": "Path of the file, relative to the working directory."}

# R-TOOL-1: the definitions, exactly as SPEC section 20 prints them.
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
NO_NEWLINE: Final = "\\ No newline at end of file\n"  # R-TOOL-12, as diff and git write it
NEW_FILE_HEADER: Final = "/dev/null"  # R-TOOL-12: the "from" name of a new file

_WRITE_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Plan:
    """A checked change, waiting for approval: ``before`` is None for a new file."""

    tool: str
    path: str  # as the call gave it (R-TOOL-13)
    target: str  # resolved, inside the working directory
    before: bytes | None
    after: bytes
    diff: str

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


def unified_diff(before: bytes | None, after: bytes, rel: str) -> str:
    """R-TOOL-12's diff of a change to the file ``rel`` (relative, ``/``-separated)."""
    old_name = NEW_FILE_HEADER if before is None else f"a/{rel}"
    out = []
    for line in difflib.unified_diff(_lines(before or b""), _lines(after), old_name, f"b/{rel}", n=3):
        out.append(line if line.endswith("\n") else line + "\n" + NO_NEWLINE)
    return "".join(out)


def _resolve(workdir: str, path: str) -> tuple[str, str] | str:
    """The resolved target and its path relative to the working directory, or R-TOOL-3's refusal."""
    confined = confine(workdir, path)
    if isinstance(confined, str):
        return confined
    root, target = confined
    return target, os.path.relpath(target, root).replace(os.sep, "/")


def _read(target: str, path: str) -> bytes | str | None:
    """The file's bytes, None when it does not exist, or the observation refusing it."""
    try:
        fd = os.open(target, OPEN_FLAGS)
    except (FileNotFoundError, NotADirectoryError):  # "a.txt/b" with a.txt a file is missing too
        return None
    except IsADirectoryError:
        return IS_A_DIRECTORY.format(path=path)
    except OSError as exc:
        return READ_FAILED.format(path=path, reason=exc.strerror or str(exc))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            return IS_A_DIRECTORY.format(path=path)
        if not stat.S_ISREG(info.st_mode):
            return NOT_A_REGULAR_FILE.format(path=path)
        parts = []
        while part := os.read(fd, 1 << 20):
            parts.append(part)
    except OSError as exc:
        return READ_FAILED.format(path=path, reason=exc.strerror or str(exc))
    finally:
        os.close(fd)
    data = b"".join(parts)
    if not is_text(data[:BINARY_SNIFF_BYTES]):
        return NOT_TEXT.format(path=path)
    return data


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
    resolved = _resolve(workdir, path)
    if isinstance(resolved, str):
        return resolved
    target, rel = resolved
    before = _read(target, path)
    if isinstance(before, str):
        return before
    if before is None:
        return NO_SUCH_FILE.format(path=path)
    n = _occurrences(before, old)
    if n == 0:
        return NOT_FOUND.format(path=path)
    if n > 1:
        return AMBIGUOUS.format(n=n, path=path)
    after = before.replace(old, new, 1)
    return Plan(EDIT_FILE_TOOL.name, path, target, before, after, unified_diff(before, after, rel))


def plan_write(workdir: str, path: str, content: str) -> Plan | str:
    """The checked write of R-TOOL-11, or the observation naming why it cannot be made."""
    resolved = _resolve(workdir, path)
    if isinstance(resolved, str):
        return resolved
    target, rel = resolved
    before = _read(target, path)  # under a file: missing now, the write says why
    if isinstance(before, str):
        return before
    after = _encoded(content)
    return Plan(WRITE_FILE_TOOL.name, path, target, before, after, unified_diff(before, after, rel))


def apply(plan: Plan) -> str:
    """Write an approved plan and return its observation (R-TOOL-13, R-APPR-4).

    The file is read again first: when it no longer holds what the diff was made from, nothing
    is written. Missing parent folders are made (R-TOOL-11); an operating-system failure is
    ``WRITE_FAILED``.
    """
    now = _read(plan.target, plan.path)
    if now != plan.before:
        return CHANGED_WHILE_ASKING.format(path=plan.path)
    try:
        try:
            os.makedirs(os.path.dirname(plan.target), exist_ok=True)
        except FileExistsError:  # a parent is a file: say so, not that it exists
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)) from None
        fd = os.open(plan.target, _WRITE_FLAGS, 0o666)
        try:
            view = memoryview(plan.after)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
    except OSError as exc:
        return WRITE_FAILED.format(path=plan.path, reason=exc.strerror or str(exc))
    return plan.result()
