"""The Session seam and its long-session state, session ids, the session errors, and MemorySession, which keeps both.

SPEC R-SES-1 … R-SES-3, R-SES-9, R-CKP-2 … R-CKP-4, R-CKP-9 … R-CKP-11, R-MGR-9, R-FIND-1. The database-backed
sessions (SQLite, PostgreSQL) live with their backends; MemorySession keeps their semantics
without a database, for tests and throw-away runs.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, ClassVar, Final, Protocol, runtime_checkable

from ..._harness9_error import Harness9Error, Said
from ...planning import TodoItem
from ...schema import Message, SchemaError
from ._checkpoint import Checkpoint
from ._context_state import COUNT_FIELDS, ContextState
from ._file_changes import FileChangeRecord, check_file_change, undo_selection

__all__ = [
    "SESSION_ID_PATTERN",
    "AmbiguousSessionId",
    "Clock",
    "CorruptRow",
    "ForeignDatabase",
    "InvalidArgument",
    "InvalidSessionId",
    "LongSessionState",
    "MemorySession",
    "Session",
    "SessionClosed",
    "SessionDatabaseError",
    "SessionError",
    "SessionInfo",
    "SessionNotFound",
    "StatefulSession",
    "UnsupportedSchema",
    "is_session_id",
    "new_session_id",
]

# R-SES-2: a lower-case UUID version 4, hyphenated.
SESSION_ID_PATTERN: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")

Clock = Callable[[], float]
"""Returns the current Unix time in seconds; sessions store it in whole seconds (R-DB-4)."""


class SessionError(Harness9Error):
    """Base of every session error (R-MGR-9); ``code`` is the conformance error code."""

    code: ClassVar[str] = "session_error"


class SessionNotFound(SessionError):
    """No session has this id (never created, or deleted)."""

    code: ClassVar[str] = "session_not_found"


class AmbiguousSessionId(SessionError):
    """A prefix that starts several session ids (R-FIND-1); ``candidates`` lists up to 10, most recent first."""

    code: ClassVar[str] = "ambiguous_session_id"

    def __init__(self, message: str | Said, candidates: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.candidates = candidates


class SessionClosed(SessionError):
    """The Manager that owns this session was closed."""

    code: ClassVar[str] = "session_closed"


class CorruptRow(SessionError):
    """A stored row cannot be decoded; nothing was changed and nothing is skipped (R-DB-6)."""

    code: ClassVar[str] = "corrupt_row"


class UnsupportedSchema(SessionError):
    """The database was written by a newer or foreign format version (R-DB-2)."""

    code: ClassVar[str] = "unsupported_schema"


class ForeignDatabase(UnsupportedSchema):
    """An SQLite file that holds tables of its own and none of ours (R-DB-2); it keeps the code of its parent.

    A class of its own so that the command line can name the option the path came from (R-CLI-13).
    """


class SessionDatabaseError(SessionError):
    """SQLite failed: not a database, locked past the busy timeout, disk full, unwritable path."""

    code: ClassVar[str] = "database_error"


class InvalidArgument(SessionError, ValueError):
    """An argument out of range, such as a negative limit (R-SES-3); also a ValueError, as it always was."""

    code: ClassVar[str] = "invalid_argument"


class InvalidSessionId(SessionError, ValueError):
    """A string that is not a well-formed session id (R-SES-2), refused before any I/O (R-MGR-6); also a ValueError."""

    code: ClassVar[str] = "invalid_session_id"


def new_session_id() -> str:
    """A fresh session id from the operating system's secure random source (R-SES-2)."""
    return str(uuid.uuid4())


def is_session_id(value: object) -> bool:
    return isinstance(value, str) and SESSION_ID_PATTERN.fullmatch(value) is not None


def check_session_id(value: object) -> str:
    if not is_session_id(value):
        raise InvalidSessionId(f"{value!r} is not a session id (a lower-case UUID v4)")
    assert isinstance(value, str)
    return value


def check_count(name: str, value: object) -> int:
    """A ``limit`` or ``offset``: an integer of 0 or more; a boolean, a fractional number or
    text is the caller's InvalidArgument too (R-MGR-9), never a crash."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidArgument(f"{name} must be an integer, 0 or more, got {value!r}")
    return value


def check_origin(name: str, value: object) -> str:
    """A session's ``workdir`` or ``provider`` (R-FIND-4): text of Unicode scalar values without
    U+0000, which both backends' text columns hold exactly; anything else is InvalidArgument."""
    if not isinstance(value, str) or "\x00" in value or not _encodable(value):
        raise InvalidArgument(f"{name} must be text of Unicode scalar values without U+0000, got {value!r}")
    return value


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


def check_limit(limit: int) -> int:
    return check_count("limit", limit)


def check_start(start: int) -> int:
    """A position for ``get_messages_from``: 0 or more (R-CKP-4)."""
    if start < 0:
        raise InvalidArgument(f"start must be 0 or positive, got {start}")
    return start


# SQLite stores integers in 64 bits; both backends refuse what SQLiteSession could not store, so
# that MemorySession keeps the same semantics (R-SES-9).
# The integers a store holds (SQLite's INTEGER, PostgreSQL's BIGINT): a larger limit, offset or
# start means "all" or "none" and is clamped to this range before it reaches SQL.
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1


def check_checkpoint(checkpoint: object) -> Checkpoint:
    """The checkpoint to store, its types checked again (R-CKP-2).

    ``Checkpoint`` checks its types when it is made, but a frozen dataclass can still be
    altered behind its back, and storage must never hold a value the other backend or another
    implementation could not read back (R-CKP-8). Only types are checked, never whether the
    checkpoint matches the messages: that is the engine's job (R-CKP-5).

    Raises:
        SchemaError: not a Checkpoint, or a member of the wrong type or out of SQLite's range.
    """
    if not isinstance(checkpoint, Checkpoint):
        raise SchemaError("checkpoint", f"expected a Checkpoint, got {type(checkpoint).__name__}")
    checked = Checkpoint(checkpoint.covered, checkpoint.anchor, checkpoint.summary)
    if not INT64_MIN <= checked.covered <= INT64_MAX:
        raise SchemaError("checkpoint.covered", "is outside the 64-bit range SQLite stores")
    return checked


def check_context_state(state: object) -> ContextState:
    """The context state to store, checked again as ``check_checkpoint`` checks a checkpoint (R-CKP-10).

    Raises:
        SchemaError: not a ContextState, a member that fails R-CKP-10, or an integer outside
            the 64-bit range SQLite stores.
    """
    if not isinstance(state, ContextState):
        raise SchemaError("context_state", f"expected a ContextState, got {type(state).__name__}")
    checked = replace(state)  # made anew, so its own checks run again
    for name in COUNT_FIELDS:
        if getattr(checked, name) > INT64_MAX:
            raise SchemaError(f"context_state.{name}", "is outside the 64-bit range SQLite stores")
    return checked


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One row of ``Manager.list_sessions()`` (R-MGR-5); times are Unix seconds."""

    id: str
    created_at: int
    updated_at: int
    message_count: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # flat fields, in declaration order


class Session(Protocol):
    """One conversation's stored messages (R-SES-1): what every store of sessions provides.

    The engine loads history from it at the start of a run and appends the new messages at the
    end; the system prompt is never stored (R-ENG-3). What long-session mode keeps beside the
    messages is another interface, ``LongSessionState``, that a store may provide too.
    """

    @property
    def session_id(self) -> str: ...

    def get_messages(self, limit: int = 0) -> list[Message]:
        """All messages (limit 0) or the newest ``limit``, oldest first (R-SES-3)."""
        ...

    def add_messages(self, msgs: Sequence[Message]) -> None:
        """Append ``msgs`` atomically, all or nothing (R-SES-4)."""
        ...

    def pop_message(self) -> Message | None:
        """Remove and return the newest message, or None when there is none (R-SES-5).

        Long-session state that no longer fits the messages left goes with it (R-CKP-3, R-CKP-11).
        """
        ...

    def clear(self) -> None:
        """Remove every message, and any checkpoint and context state; the session and its todos stay.

        R-SES-6, R-CKP-3, R-CKP-11.
        """
        ...


@runtime_checkable
class LongSessionState(Protocol):
    """What long-session mode keeps with a conversation beside its messages (R-SES-7, R-CKP-2, R-CKP-4, R-CKP-9).

    The plan, the checkpoint and the context state are caches of one conversation that a later
    run takes up (R-LONG-2, R-LONG-14, R-LONG-16); a store that keeps only messages leaves this
    out, and the engine's long-session path asks for it (``StatefulSession``).
    """

    def get_todos(self) -> list[TodoItem]:
        """The saved todo list, in order; empty when none was saved (R-SES-7)."""
        ...

    def save_todos(self, items: Sequence[TodoItem]) -> None:
        """Replace the todo list atomically (R-SES-7)."""
        ...

    def get_messages_from(self, start: int) -> list[Message]:
        """The messages from position ``start`` on (0 is the first), oldest first (R-CKP-4).

        Lets the engine load only what a checkpoint does not cover (R-LONG-2).
        """
        ...

    def get_checkpoint(self) -> Checkpoint | None:
        """The session's checkpoint, or None when it has none (R-CKP-2, R-CKP-8)."""
        ...

    def save_checkpoint(self, cp: Checkpoint) -> None:
        """Replace the session's checkpoint atomically, leaving updated_at alone (R-CKP-2)."""
        ...

    def get_context_state(self) -> ContextState | None:
        """The session's context state, or None when it has none (R-CKP-9, R-CKP-13)."""
        ...

    def save_context_state(self, state: ContextState) -> None:
        """Replace the session's context state atomically, leaving updated_at alone (R-CKP-9, R-CKP-10)."""
        ...


class StatefulSession(Session, LongSessionState, Protocol):
    """A session that keeps its long-session state too: MemorySession and both databases' sessions."""


class MemorySession:
    """The semantics of SQLiteSession without a database, both seams (``StatefulSession``); every operation holds one lock.

    Messages, todos, checkpoints and context states are immutable values, so handing out new
    lists shares nothing mutable. The rules of R-CKP-3 and R-CKP-11 are applied under the same
    lock as the change that triggers them, so no reader sees a checkpoint or a context state
    outlive the messages it describes.
    """

    def __init__(self, session_id: str | None = None) -> None:
        self._id = new_session_id() if session_id is None else check_session_id(session_id)
        self._lock = threading.Lock()
        self._messages: list[Message] = []
        self._todos: list[TodoItem] = []
        self._checkpoint: Checkpoint | None = None
        self._context_state: ContextState | None = None
        self._file_changes: list[FileChangeRecord] = []

    @property
    def session_id(self) -> str:
        return self._id

    def get_messages(self, limit: int = 0) -> list[Message]:
        check_limit(limit)
        with self._lock:
            return list(self._messages[-limit:] if limit else self._messages)

    def get_messages_from(self, start: int) -> list[Message]:
        """Messages from position ``start`` on (R-CKP-4); negative raises InvalidArgument."""
        check_start(start)
        with self._lock:
            return self._messages[start:]

    def add_messages(self, msgs: Sequence[Message]) -> None:
        batch = list(msgs)
        with self._lock:
            self._messages.extend(batch)

    def pop_message(self) -> Message | None:
        """Remove the newest message, and the checkpoint or context state that no longer fits (R-SES-5, R-CKP-3, R-CKP-11)."""
        with self._lock:
            if not self._messages:
                return None
            message = self._messages.pop()
            left = len(self._messages)
            if self._checkpoint is not None and self._checkpoint.covered > left:
                self._checkpoint = None
            if self._context_state is not None and self._context_state.cleared_below > left:
                self._context_state = None
            return message

    def clear(self) -> None:
        """Remove every message, the checkpoint, the context state and the file changes (R-SES-6, R-CKP-3, R-UNDO-2b)."""
        with self._lock:
            self._messages.clear()
            self._checkpoint = None
            self._context_state = None
            self._file_changes.clear()

    def get_todos(self) -> list[TodoItem]:
        with self._lock:
            return list(self._todos)

    def save_todos(self, items: Sequence[TodoItem]) -> None:
        batch = list(items)
        with self._lock:
            self._todos = batch

    def get_checkpoint(self) -> Checkpoint | None:
        """The checkpoint, or None (R-CKP-2)."""
        with self._lock:
            return self._checkpoint

    def save_checkpoint(self, cp: Checkpoint) -> None:
        """Replace the checkpoint (R-CKP-2); SchemaError and nothing saved for wrong types."""
        checked = check_checkpoint(cp)
        with self._lock:
            self._checkpoint = checked

    def get_context_state(self) -> ContextState | None:
        """The context state, or None (R-CKP-9)."""
        with self._lock:
            return self._context_state

    def save_context_state(self, state: ContextState) -> None:
        """Replace the context state (R-CKP-9); SchemaError and nothing saved for a bad value (R-CKP-10)."""
        checked = check_context_state(state)
        with self._lock:
            self._context_state = checked

    def add_file_change(self, change: FileChangeRecord) -> None:
        """Record one change of a file (R-UNDO-2a); SchemaError and nothing saved for a bad value."""
        checked = check_file_change(change)
        with self._lock:
            self._file_changes.append(checked)

    def file_changes(self) -> list[FileChangeRecord]:
        """Every recorded change, oldest first (R-UNDO-2b)."""
        with self._lock:
            return list(self._file_changes)

    def file_changes_from(self, at: int) -> list[FileChangeRecord]:
        """The changes a rewind to ``at`` undoes, newest first (R-UNDO-3a)."""
        check_start(at)
        with self._lock:
            return undo_selection(self._messages, at, self._file_changes)
