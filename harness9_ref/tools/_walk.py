"""Opening a file of the working directory one component at a time, never following a link
(SPEC R-TOOL-14, R-TOOL-16).

A path resolved once and opened later by its name is opened through whatever its folders are
*then*: a folder swapped for a symbolic link in between (by a checkout, a build tool, any
process) sends the open elsewhere, outside the working directory too. So the resolved path is
never handed to the kernel whole: the working directory is opened, and each component below it
is opened relative to its folder's descriptor with ``O_NOFOLLOW`` (``O_DIRECTORY`` for folders),
so no link is ever followed, wherever it appears. A walk records each component's identity
(device and inode): the tools compare the identities seen when a change was shown with those
met when it is written, so a folder or file replaced in between, even by one with the same
bytes, is noticed (R-TOOL-14).

The working directory's own path is trusted: it is where the user started the program.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .._harness9_error import Harness9Error

__all__ = ["DIR_FLAGS", "Identity", "LinkOnPath", "Replaced", "Where", "identity", "open_at", "open_file", "open_folder"]

DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

Identity = tuple[int, int]
"""A file's device and inode: what stays the same while its bytes change, and changes when the
name is given to another file (R-TOOL-14)."""


@dataclass(frozen=True)
class Where:
    """A path below the working directory: ``root`` resolved, ``parts`` the resolved path's
    components below it (none for the working directory itself)."""

    root: str
    parts: tuple[str, ...]

    @property
    def rel(self) -> str:
        """The path relative to the working directory, ``/`` between its parts (R-TOOL-12)."""
        return self.part(len(self.parts))

    def part(self, count: int) -> str:
        """The first ``count`` components, as ``rel`` writes them; ``.`` for the working directory."""
        return "/".join(self.parts[:count]) or "."


class LinkOnPath(OSError):
    """A component of the path is a symbolic link (R-TOOL-14); ``part`` names it as ``Where.part`` does.

    An ``OSError`` of errno ``ELOOP``, as ``O_NOFOLLOW`` reports a link, so that a reader that
    only says why it could not read gives the system's reason."""

    def __init__(self, part: str) -> None:
        super().__init__(errno.ELOOP, os.strerror(errno.ELOOP))
        self.part = part


class Replaced(Harness9Error):
    """A component is not the file or folder it was when the change was shown (R-TOOL-14)."""

    def __init__(self, part: str) -> None:
        super().__init__(part)
        self.part = part


def identity(info: os.stat_result) -> Identity:
    """The identity of the file ``info`` describes (from ``fstat``, so of the file open, not of a name)."""
    return info.st_dev, info.st_ino


def open_at(name: str, flags: int, folder: int, part: str) -> int:
    """``name`` opened in ``folder`` with ``flags`` (which hold ``O_NOFOLLOW``); a link there is
    ``LinkOnPath``, whatever error the system chose for it (``ELOOP``, ``ENOTDIR``, ``EMLINK``)."""
    try:
        return os.open(name, flags, dir_fd=folder)
    except FileNotFoundError:
        raise
    except OSError:
        try:
            linked = stat.S_ISLNK(os.lstat(name, dir_fd=folder).st_mode)
        except OSError:
            linked = False
        if linked:
            raise LinkOnPath(part) from None
        raise


def open_folder(
    where: Where, expected: Sequence[Identity | None] | None = None, *, make: bool = False
) -> tuple[int | None, list[Identity | None]]:
    """The descriptor of the folder holding ``where``'s last component, and the identities met.

    The identities are the working directory's and each folder's on the way (one per component
    of ``where`` but the last), ``None`` for one that is missing or not a folder, and then for
    all below it, the descriptor being None. With ``expected`` (the identities of an earlier
    walk), each component must be the one it was, else ``Replaced``; with ``make`` too, a folder
    missing then and now is made (R-TOOL-11) and the walk goes on in it. A link anywhere is
    ``LinkOnPath``. The caller closes the descriptor.

    Raises:
        LinkOnPath, Replaced, OSError: nothing is left open.
    """
    try:
        fd = os.open(where.root, DIR_FLAGS)
    except OSError:
        if os.path.islink(where.root):
            raise LinkOnPath(where.part(0)) from None
        raise
    seen: list[Identity | None] = []
    try:
        _check(fd, 0, where, expected, seen)
        for count, name in enumerate(where.parts[:-1], start=1):
            try:
                child = open_at(name, DIR_FLAGS, fd, where.part(count))
            except (FileNotFoundError, NotADirectoryError) as exc:
                if expected is not None and expected[count] is not None:
                    raise Replaced(where.part(count)) from None
                if not make:
                    os.close(fd)
                    return None, seen + [None] * (len(where.parts) - count)
                if isinstance(exc, NotADirectoryError):  # a file where a folder must be made
                    raise
                os.mkdir(name, 0o777, dir_fd=fd)
                child = open_at(name, DIR_FLAGS, fd, where.part(count))
                os.close(fd)
                fd = child
                seen.append(None)  # missing when the change was shown, made now
                continue
            os.close(fd)
            fd = child
            _check(fd, count, where, expected, seen)
    except BaseException:
        os.close(fd)
        raise
    return fd, seen


def _check(fd: int, count: int, where: Where, expected: Sequence[Identity | None] | None, seen: list[Identity | None]) -> None:
    """Record the identity of the folder open as ``fd``; ``Replaced`` when it is not the one expected."""
    found = identity(os.fstat(fd))
    if expected is not None and expected[count] != found:
        raise Replaced(where.part(count))
    seen.append(found)


def open_file(where: Where, flags: int) -> tuple[int | None, list[Identity | None]]:
    """``where``'s file opened with ``flags`` (which hold ``O_NOFOLLOW``) through ``open_folder``,
    None when it or a folder on its way is missing (a folder that is a file too: ``a.txt/b``
    with ``a.txt`` a file), and the folders' identities. The caller closes the descriptor.

    Raises:
        IsADirectoryError: ``where`` is the working directory itself.
        LinkOnPath, OSError: nothing is left open.
    """
    if not where.parts:
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    folder, seen = open_folder(where)
    if folder is None:
        return None, seen
    try:
        return open_at(where.parts[-1], flags, folder, where.rel), seen
    except FileNotFoundError:
        return None, seen
    finally:
        os.close(folder)
