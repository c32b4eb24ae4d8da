"""MemorySession: a Session kept in memory, for tests and throw-away runs (SPEC R-SES-9; seed 3)."""

from __future__ import annotations

import threading
from typing import Sequence

from ..planning import TodoItem
from ..schema import Message
from ._session import check_limit, check_session_id, new_session_id

__all__ = ["MemorySession"]


class MemorySession:
    """The semantics of SQLiteSession without a database; every operation holds one lock.

    Messages and todos are immutable values, so handing out new lists shares nothing mutable.
    """

    def __init__(self, session_id: str | None = None) -> None:
        self._id = new_session_id() if session_id is None else check_session_id(session_id)
        self._lock = threading.Lock()
        self._messages: list[Message] = []
        self._todos: list[TodoItem] = []

    @property
    def session_id(self) -> str:
        return self._id

    def get_messages(self, limit: int = 0) -> list[Message]:
        check_limit(limit)
        with self._lock:
            return list(self._messages[-limit:] if limit else self._messages)

    def add_messages(self, msgs: Sequence[Message]) -> None:
        batch = list(msgs)
        with self._lock:
            self._messages.extend(batch)

    def pop_message(self) -> Message | None:
        with self._lock:
            return self._messages.pop() if self._messages else None

    def clear(self) -> None:
        with self._lock:
            self._messages.clear()

    def get_todos(self) -> list[TodoItem]:
        with self._lock:
            return list(self._todos)

    def save_todos(self, items: Sequence[TodoItem]) -> None:
        batch = list(items)
        with self._lock:
            self._todos = batch
