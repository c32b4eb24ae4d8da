"""Putting back the files a rewind's dropped turns changed (SPEC R-UNDO-4).

The session keeps each change ``edit_file`` and ``write_file`` made (``FileChangeRecord``,
R-UNDO-1); a rewind hands over those of the calls it drops, newest first (R-UNDO-3), and this
module turns them into one ``Restore`` per file: what the file holds now, what it held before
the first dropped change, and the diff between the two, or why it is left as it is. Nothing is
written until ``restore`` is called for a file the user agreed to; the write goes through the
same walk as the tools' own (R-TOOL-14), so a restore can no more leave the working directory,
follow a link, or overwrite a file that changed since it was shown, than an edit can.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .._harness9_error import os_reason
from ..memory.context import size_text
from ..memory.storage import UNDO_MAX_BYTES, FileChangeRecord
from ..text import DEFAULT_LANG, PaneLine, diff_pane_lines, strings_for
from ._edit import CHANGED_WHILE_ASKING, LINK_ON_PATH, PATH_REPLACED, WRITE_FAILED, Plan, _read, _read_all, apply, unified_diff
from ._read_file import locate
from ._walk import LinkOnPath, Replaced, identity, open_at, open_folder

__all__ = ["CHANGED_SINCE", "NOT_KEPT", "Restore", "plan_restores", "restore", "restore_lines", "restored_line"]

NOT_KEPT: Final = "not_kept"  # R-UNDO-4a: a change whose contents were not kept (R-UNDO-1b)
CHANGED_SINCE: Final = "changed"  # R-UNDO-4a: the file no longer holds what the last dropped change wrote
REMOVE: Final = "remove"  # the plan's tool for a file the first dropped change created
_REMOVE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Restore:
    """One file of a rewind (R-UNDO-4a): ``plan`` writes the content it held before the first
    dropped change back (``plan.after``; None when the file did not exist, so it is removed), or
    ``problem`` says why it is left as it is: ``NOT_KEPT``, ``CHANGED_SINCE`` or the tools'
    observation refusing the path (R-TOOL-3, R-TOOL-14, R-TOOL-15)."""

    path: str
    plan: Plan | None = None
    problem: str = ""

    @property
    def removes(self) -> bool:
        return self.plan is not None and self.plan.tool == REMOVE

    @property
    def diff(self) -> str:
        """The diff from what the file holds now to what it will hold (R-UNDO-4b); empty for a problem."""
        return "" if self.plan is None else self.plan.diff


def plan_restores(workdir: str, changes: Sequence[FileChangeRecord]) -> list[Restore]:
    """One ``Restore`` per path of ``changes`` (newest first, as R-UNDO-3a gives them), in the
    order of the paths; a path whose file already holds what it held before (or is absent, when
    it did not exist) is left out, whatever happened to it since.

    Nothing is written: every file is read through the tools' walk (R-TOOL-14b), and the
    identities it met are what ``restore`` checks again.
    """
    groups: dict[str, list[FileChangeRecord]] = {}
    for change in changes:
        groups.setdefault(change.path, []).append(change)
    restores = []
    for path in sorted(groups):
        found = _plan(workdir, path, groups[path][0], groups[path][-1])
        if found is not None:
            restores.append(found)
    return restores


def _plan(workdir: str, path: str, newest: FileChangeRecord, oldest: FileChangeRecord) -> Restore | None:
    if not (newest.kept and oldest.kept):
        return Restore(path, problem=NOT_KEPT)
    where = locate(workdir, path)
    if isinstance(where, str):
        return Restore(path, problem=where)
    read = _read(where, path)
    if isinstance(read, str):
        return Restore(path, problem=read)
    current, identities = read
    target = oldest.before  # None: the file did not exist
    if current == target:
        return None  # already as it was: restored before, or put back by hand
    if current != newest.after:
        return Restore(path, problem=CHANGED_SINCE)
    assert current is not None  # equal to a kept change's after
    if target is None:
        diff = unified_diff(current, b"", where.rel, removed=True)
        return Restore(path, Plan(REMOVE, path, where, current, b"", diff, identities))
    diff = unified_diff(current, target, where.rel)
    return Restore(path, Plan("write_file", path, where, current, target, diff, identities))


def restore(item: Restore) -> str | None:
    """Make one agreed restore (R-UNDO-4c): None when done, else the tools' observation saying
    why nothing was written (the file changed while the question waited, a link or another
    folder on its path, an operating-system error)."""
    plan = item.plan
    assert plan is not None and not item.problem
    if plan.tool != REMOVE:
        done: list[Plan] = []
        observation = apply(plan, done.append)
        return None if done else observation
    try:
        return _remove(plan)
    except LinkOnPath as exc:
        return LINK_ON_PATH.format(part=exc.part, path=plan.path)
    except Replaced as exc:
        return PATH_REPLACED.format(part=exc.part, path=plan.path)
    except FileNotFoundError:
        return CHANGED_WHILE_ASKING.format(path=plan.path)
    except OSError as exc:
        return WRITE_FAILED.format(path=plan.path, reason=os_reason(exc))


def _remove(plan: Plan) -> str | None:
    """Remove the file a dropped change created, when it is still the one shown and holds what was shown."""
    folder, _ = open_folder(plan.where, plan.identities[:-1])
    if folder is None:
        return CHANGED_WHILE_ASKING.format(path=plan.path)
    try:
        name = plan.where.parts[-1]
        fd = open_at(name, _REMOVE_FLAGS, folder, plan.where.rel)
        try:
            if identity(os.fstat(fd)) != plan.identities[-1] or _read_all(fd) != plan.before:
                return CHANGED_WHILE_ASKING.format(path=plan.path)
        finally:
            os.close(fd)
        os.unlink(name, dir_fd=folder)
    finally:
        os.close(folder)
    return None


def restore_lines(restores: Sequence[Restore], lang: str = DEFAULT_LANG) -> list[PaneLine]:
    """What is shown before the question (R-UNDO-4b, R-TUI-50a): each file's diff, coloured as
    R-TUI-42 colours one, or the line saying why it is left as it is."""
    texts = strings_for(lang)
    lines: list[PaneLine] = []
    for item in restores:
        if item.problem == NOT_KEPT:
            limit = size_text(UNDO_MAX_BYTES)  # R-TOOL-9a's form: 1 MB
            lines.append(PaneLine(texts["undo_not_kept"].format(path=item.path, limit=limit), "error"))
        elif item.problem == CHANGED_SINCE:
            lines.append(PaneLine(texts["undo_changed"].format(path=item.path), "error"))
        elif item.problem:
            lines.append(PaneLine(texts["undo_failed"].format(path=item.path, reason=item.problem), "error"))
        else:
            lines.extend(diff_pane_lines(item.diff, lang, coloured=True))
    return lines


def restored_line(item: Restore, outcome: str | None, lang: str = DEFAULT_LANG) -> str:
    """The line of one file after a yes (R-UNDO-4c): restored, removed, or why nothing was written."""
    texts = strings_for(lang)
    if outcome is not None:
        return texts["undo_failed"].format(path=item.path, reason=outcome)
    return texts["undo_removed" if item.removes else "undo_restored"].format(path=item.path)
