"""Planning state kept with a session: the todo list (SPEC R-SES-7) and how a plan is shown (R-RCL-7, R-RCL-8)."""

from ._todo import PLAN_HEADER, PLAN_ITEM, TODO_STATUSES, TodoItem, plan_block, plan_lines, todos_from_list

__all__ = ("PLAN_HEADER", "PLAN_ITEM", "TODO_STATUSES", "TodoItem", "plan_block", "plan_lines", "todos_from_list")
