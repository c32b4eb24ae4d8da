"""Todo items (harness9_ref/planning/_todo.py; SPEC R-SES-7, R-MSG-8)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from harness9_ref.planning import TODO_STATUSES, TodoItem, todos_from_list
from harness9_ref.schema import SchemaError


def test_the_statuses_are_exactly_the_specified_three() -> None:
    assert TODO_STATUSES == ("pending", "in_progress", "completed")


@pytest.mark.parametrize("status", ["pending", "in_progress", "completed"])
def test_a_todo_with_a_known_status_round_trips_through_its_json_form(status: str) -> None:
    item = TodoItem("t-1", "Run the tests 😀", status)
    assert item.to_dict() == {"id": "t-1", "content": "Run the tests 😀", "status": status}
    assert list(item.to_dict()) == ["id", "content", "status"]
    assert TodoItem.from_dict(item.to_dict()) == item


@pytest.mark.parametrize("status", ["done", "Pending", "in-progress", "", " pending", "cancelled"])
def test_any_other_status_is_a_schema_error_at_the_status(status: str) -> None:
    with pytest.raises(SchemaError) as built:
        TodoItem("1", "x", status)
    assert (built.value.path, built.value.code) == ("todo.status", "schema_error")
    assert repr(status) in str(built.value)
    with pytest.raises(SchemaError) as read:
        TodoItem.from_dict({"id": "1", "content": "x", "status": status})
    assert read.value.path == "todo.status"


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ([], "todo"),
        ({"content": "x", "status": "pending"}, "todo.id"),
        ({"id": "1", "status": "pending"}, "todo.content"),
        ({"id": "1", "content": "x"}, "todo.status"),
        ({"id": 1, "content": "x", "status": "pending"}, "todo.id"),
        ({"id": "1", "content": None, "status": "pending"}, "todo.content"),
        ({"id": "1", "content": "x", "status": True}, "todo.status"),
        ({"id": "1", "content": "x", "status": "pending", "priority": "high"}, "todo.priority"),
        ({"id": "\ud800", "content": "x", "status": "pending"}, "todo.id"),
    ],
    ids=[
        "not an object",
        "missing id",
        "missing content",
        "missing status",
        "id a number",
        "content null",
        "status a boolean",
        "unknown key",
        "lone surrogate",
    ],
)
def test_a_malformed_todo_object_names_the_first_fault(data: Any, path: str) -> None:
    with pytest.raises(SchemaError) as excinfo:
        TodoItem.from_dict(data)
    assert excinfo.value.path == path


def test_a_list_of_todos_keeps_order_and_duplicates() -> None:
    items = [
        {"id": "1", "content": "a", "status": "completed"},
        {"id": "1", "content": "a", "status": "completed"},
        {"id": "0", "content": "", "status": "pending"},
    ]
    assert todos_from_list(items) == [
        TodoItem("1", "a", "completed"),
        TodoItem("1", "a", "completed"),
        TodoItem("0", "", "pending"),
    ]
    assert todos_from_list([]) == []


def test_a_bad_item_in_a_list_is_named_by_its_index() -> None:
    items = [{"id": "1", "content": "a", "status": "pending"}, {"id": "2", "content": "b", "status": "done"}]
    with pytest.raises(SchemaError) as excinfo:
        todos_from_list(items)
    assert excinfo.value.path == "todos[1].status"
    assert str(excinfo.value).startswith("todos[1].status: ")


@pytest.mark.parametrize("value", [None, {"id": "1"}, "[]"])
def test_todos_that_are_not_an_array_are_a_schema_error(value: object) -> None:
    with pytest.raises(SchemaError) as excinfo:
        todos_from_list(value)
    assert excinfo.value.path == "todos"


def test_a_todo_is_an_immutable_value() -> None:
    item = TodoItem("1", "x", "pending")
    assert item == TodoItem("1", "x", "pending")
    assert hash(item) == hash(TodoItem("1", "x", "pending"))
    assert item != TodoItem("1", "x", "completed")
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.status = "completed"  # type: ignore[misc]
