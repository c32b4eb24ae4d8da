"""What a session keeps of the files its tool calls changed, so a rewind can undo them (SPEC R-UNDO-1 … R-UNDO-4).

The stored history is a copy-on-rewind log (R-FORK), but files are not: a rewind that leaves
the files the dropped turns edited still edited would have the model start again on a folder it
no longer knows. So every change ``edit_file`` and ``write_file`` make is recorded with the
session, keyed by the tool call that made it: the path, whether the file existed, what it held
and what was written. Which changes a rewind to position ``at`` undoes follows from the stored
messages alone (``undo_selection``): those of the calls made by the messages it drops, newest
first. Storage checks the types only; the bound of ``UNDO_MAX_BYTES`` is the recorder's
(``FileChangeRecord.of``), and restoring is the tools' job.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

from ...schema import Message, SchemaError

__all__ = [
    "UNDO_MAX_BYTES",
    "ChangeRecorder",
    "FileChangeLog",
    "FileChangeRecord",
    "check_file_change",
    "undo_selection",
]

UNDO_MAX_BYTES: Final = 1_048_576  # R-UNDO-1b: a side larger than this is not kept

ChangeRecorder = Callable[[str, "bytes | None", bytes], None]
"""Told of each change a tool call made, once written: the path relative to the working
directory, what the file held (None: it did not exist) and what it holds now (R-UNDO-2a)."""


@dataclass(frozen=True, slots=True)
class FileChangeRecord:
    """One change of a file by a tool call (R-UNDO-1a).

    ``path`` is relative to the working directory, ``/`` between its parts (R-TOOL-12b).
    ``before`` is None when the file did not exist or the change was not kept; ``after`` is None
    exactly when it was not kept (a side over ``UNDO_MAX_BYTES``, R-UNDO-1b).
    """

    tool_call_id: str
    path: str
    existed: bool
    before: bytes | None
    after: bytes | None

    @property
    def kept(self) -> bool:
        """Whether the change's contents were kept, so it can be undone (R-UNDO-1b)."""
        return self.after is not None

    @classmethod
    def of(cls, tool_call_id: str, path: str, before: bytes | None, after: bytes) -> FileChangeRecord:
        """The record of a change from ``before`` (None: no file) to ``after``, its contents
        dropped when either is larger than ``UNDO_MAX_BYTES`` (R-UNDO-1b)."""
        kept = len(after) <= UNDO_MAX_BYTES and (before is None or len(before) <= UNDO_MAX_BYTES)
        return cls(tool_call_id, path, before is not None, before if kept else None, after if kept else None)


def check_file_change(change: object) -> FileChangeRecord:
    """``change`` when its members have R-UNDO-1a's types and agree, else ``SchemaError``, nothing saved."""
    if not isinstance(change, FileChangeRecord):
        raise SchemaError("change", f"expected a FileChangeRecord, got {type(change).__name__}")
    for name in ("tool_call_id", "path"):
        value = getattr(change, name)
        if not isinstance(value, str) or not value:
            raise SchemaError(f"change.{name}", "expected a non-empty string")
    if not isinstance(change.existed, bool):
        raise SchemaError("change.existed", f"expected a boolean, got {type(change.existed).__name__}")
    for name in ("before", "after"):
        value = getattr(change, name)
        if value is not None and not isinstance(value, bytes):
            raise SchemaError(f"change.{name}", f"expected bytes or None, got {type(value).__name__}")
    if change.kept and change.existed != (change.before is not None):
        raise SchemaError("change.before", "a kept change has a before exactly when the file existed")
    if not change.kept and change.before is not None:
        raise SchemaError("change.before", "a change not kept has no before")
    return change


def _call_ids(messages: Iterable[Message]) -> set[str]:
    return {call.id for message in messages for call in message.tool_calls}


def undo_selection(messages: Sequence[Message], at: int, records: Sequence[FileChangeRecord]) -> list[FileChangeRecord]:
    """The records a rewind to ``at`` undoes, newest first (R-UNDO-3a).

    ``records`` are the session's, oldest first. A record is undone when its call is made by a
    message at position ``at`` or later and by none before it: an id that also occurs in what is
    kept is left alone, so a change the kept conversation still describes is never undone.
    """
    dropped = _call_ids(messages[at:]) - _call_ids(messages[:at])
    return [record for record in reversed(records) if record.tool_call_id in dropped]


@runtime_checkable
class FileChangeLog(Protocol):
    """A session that keeps the file changes of its tool calls (R-UNDO-2a): both databases' and MemorySession."""

    def add_file_change(self, change: FileChangeRecord) -> None:
        """Record one change in one atomic step, leaving updated_at alone (R-UNDO-2a)."""
        ...

    def file_changes(self) -> list[FileChangeRecord]:
        """Every recorded change of the session, oldest first (R-UNDO-2b)."""
        ...

    def file_changes_from(self, at: int) -> list[FileChangeRecord]:
        """The changes a rewind to ``at`` undoes, newest first (R-UNDO-3a)."""
        ...
