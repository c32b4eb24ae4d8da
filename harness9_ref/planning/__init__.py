"""Planning state kept with a session: the todo list (SPEC R-SES-7)."""

from ._todo import TODO_STATUSES, TodoItem, todos_from_list

__all__ = ("TODO_STATUSES", "TodoItem", "todos_from_list")
