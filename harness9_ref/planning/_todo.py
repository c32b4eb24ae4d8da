"""Todo items (SPEC R-SES-7): what the agent plans to do, saved with its session, and how a plan is shown (R-RCL-7, R-RCL-8)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..schema import SchemaError, check_keys, check_str

__all__ = [
    "PLAN_HEADER",
    "PLAN_ITEM",
    "TODO_STATUSES",
    "TodoItem",
    "plan_block",
    "plan_lines",
    "todos_from_list",
]

TODO_STATUSES: Final = ("pending", "in_progress", "completed")  # R-SES-7
# R-RCL-7, R-RCL-8: how a plan is shown to the model, in the todo tool's answer and a summary message.
PLAN_HEADER: Final = "Current plan (todo list; keep it up to date with the todo tool):"
PLAN_ITEM: Final = "- [{status}] {content}"


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


def plan_lines(todos: Sequence[TodoItem]) -> str:
    """One line per item (R-RCL-7, R-RCL-8); a line break inside a content becomes a space."""
    return "\n".join(
        PLAN_ITEM.format(status=item.status, content=item.content.replace("\r", " ").replace("\n", " ")) for item in todos
    )


def plan_block(todos: Sequence[TodoItem]) -> str:
    """The plan as a summary message carries it (R-RCL-8, R-LONG-14): ``PLAN_HEADER`` and one line per item; "" for none."""
    return PLAN_HEADER + "\n" + plan_lines(todos) if todos else ""
