"""Todo items (SPEC R-SES-7): what the agent plans to do, saved with its session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from ..schema import SchemaError, check_keys, check_str

__all__ = ["TODO_STATUSES", "TodoItem", "todos_from_list"]

TODO_STATUSES: Final = ("pending", "in_progress", "completed")  # R-SES-7


def _check_status(status: str, path: str) -> str:
    if status not in TODO_STATUSES:
        raise SchemaError(path, f"expected one of {', '.join(TODO_STATUSES)}, got {status!r}")
    return status


@dataclass(frozen=True, slots=True)
class TodoItem:
    """One planned step; ``status`` is one of TODO_STATUSES."""

    id: str
    content: str
    status: str

    def __post_init__(self) -> None:
        check_str(self.id, "todo.id")
        check_str(self.content, "todo.content")
        _check_status(check_str(self.status, "todo.status"), "todo.status")

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "content": self.content, "status": self.status}

    @classmethod
    def from_dict(cls, data: object, path: str = "todo") -> TodoItem:
        d = check_keys(data, path, ("id", "content", "status"), ())
        status = _check_status(check_str(d["status"], f"{path}.status"), f"{path}.status")
        return cls(check_str(d["id"], f"{path}.id"), check_str(d["content"], f"{path}.content"), status)


def todos_from_list(items: object, path: str = "todos") -> list[TodoItem]:
    """Parse a JSON array of todo items, naming the index of the first bad one."""
    if not isinstance(items, list):
        raise SchemaError(path, "expected an array")
    return [TodoItem.from_dict(item, f"{path}[{i}]") for i, item in enumerate(items)]
