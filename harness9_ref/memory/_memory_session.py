"""MemorySession: a Session kept in memory, for tests and throw-away runs (SPEC R-SES-9, R-CKP-2 … R-CKP-4)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from ..planning import TodoItem
from ..schema import Message
from ._checkpoint import Checkpoint
from ._session import check_checkpoint, check_limit, check_session_id, check_start, new_session_id

__all__ = ["MemorySession"]


class MemorySession:
    """The semantics of SQLiteSession without a database; every operation holds one lock.

    Messages, todos and checkpoints are immutable values, so handing out new lists shares
    nothing mutable. The checkpoint rules of R-CKP-3 are applied under the same lock as the
    change that triggers them, so no reader sees a checkpoint outlive the messages it covers.
    """

    def __init__(self, session_id: str | None = None) -> None:
        self._id = new_session_id() if session_id is None else check_session_id(session_id)
        self._lock = threading.Lock()
        self._messages: list[Message] = []
        self._todos: list[TodoItem] = []
        self._checkpoint: Checkpoint | None = None

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
        """Remove the newest message, and the checkpoint when it no longer fits (R-SES-5, R-CKP-3)."""
        with self._lock:
            if not self._messages:
                return None
            message = self._messages.pop()
            if self._checkpoint is not None and self._checkpoint.covered > len(self._messages):
                self._checkpoint = None
            return message

    def clear(self) -> None:
        """Remove every message and the checkpoint (R-SES-6, R-CKP-3)."""
        with self._lock:
            self._messages.clear()
            self._checkpoint = None

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
