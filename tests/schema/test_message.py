"""Message values and their JSON form (harness9_ref/schema/_message.py; SPEC R-MSG-1 … R-MSG-9)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from harness9_ref.schema import (
    Message,
    SchemaError,
    StreamChunk,
    ToolCall,
    ToolDefinition,
    Usage,
    messages_from_list,
    messages_to_list,
)
from tests.fakes import assistant, call, result, user


def test_to_dict_omits_empty_tool_calls_and_tool_call_id() -> None:
    assert Message("user", "hi").to_dict() == {"role": "user", "content": "hi"}
    assert list(Message("system", "").to_dict()) == ["role", "content"]


def test_to_dict_of_an_assistant_lists_each_call_as_id_name_arguments() -> None:
    msg = assistant("Let me look.", call("c1", "bash", '{"command":"ls"}'), call("c2", "read_file", "{}"))
    assert msg.to_dict() == {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {"id": "c1", "name": "bash", "arguments": '{"command":"ls"}'},
            {"id": "c2", "name": "read_file", "arguments": "{}"},
        ],
    }


def test_to_dict_writes_keys_in_the_order_role_content_tool_calls_tool_call_id() -> None:
    msg = Message("assistant", "x", (call("a"),), "b")
    assert list(msg.to_dict()) == ["role", "content", "tool_calls", "tool_call_id"]


def test_from_dict_accepts_tool_call_id_and_tool_calls_on_any_role() -> None:
    data = {"role": "system", "content": "", "tool_calls": [{"id": "a", "name": "b", "arguments": ""}]}
    data["tool_call_id"] = "c"
    assert Message.from_dict(data).to_dict() == data


def test_a_tool_result_is_a_user_message_with_a_tool_call_id() -> None:
    msg = result("c1", "total 0")
    assert msg.is_tool_result
    assert not user("hi").is_tool_result
    assert msg.to_dict() == {"role": "user", "content": "total 0", "tool_call_id": "c1"}


def test_arguments_are_kept_as_raw_text_even_when_not_valid_json() -> None:
    raw = '{"command": "ls",  "x": 1.50, '
    data = {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": "bash", "arguments": raw}]}
    msg = Message.from_dict(data)
    assert msg.tool_calls[0].arguments == raw
    assert msg.to_dict() == data


def test_from_dict_treats_empty_optional_fields_as_absent() -> None:
    data = {"role": "user", "content": "hi", "tool_calls": [], "tool_call_id": ""}
    assert Message.from_dict(data) == Message("user", "hi")


@pytest.mark.parametrize(
    "item",
    [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "请修复 bug 😀"},
        {"role": "user", "content": "", "tool_call_id": "call_1"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": "bash", "arguments": ""}]},
    ],
)
def test_from_dict_and_to_dict_are_inverse_on_the_canonical_form(item: dict[str, Any]) -> None:
    assert Message.from_dict(item).to_dict() == item


def test_messages_from_list_names_the_index_of_a_message_with_a_bad_role() -> None:
    items = [{"role": "user", "content": str(i)} for i in range(3)] + [{"role": "tool", "content": "x"}]
    with pytest.raises(SchemaError) as excinfo:
        messages_from_list(items)
    assert str(excinfo.value) == "messages[3].role: expected 'system', 'user' or 'assistant', got 'tool'"
    assert excinfo.value.path == "messages[3].role"


@pytest.mark.parametrize(
    ("item", "error"),
    [
        ([], "messages[0]: expected an object, got an array"),
        ("hi", "messages[0]: expected an object, got 'hi'"),
        ({"content": "x"}, "messages[0].role: is required"),
        ({"role": "user"}, "messages[0].content: is required"),
        ({"role": "user", "content": None}, "messages[0].content: expected a string, got null"),
        ({"role": "user", "content": 5}, "messages[0].content: expected a string, got 5"),
        ({"role": "user", "content": True}, "messages[0].content: expected a string, got a boolean"),
        ({"role": None, "content": "x"}, "messages[0].role: expected 'system', 'user' or 'assistant', got null"),
        ({"role": "user", "content": "x", "name": "bob"}, "messages[0].name: is not a known field"),
        ({"role": "user", "content": "x", "tool_call_id": 7}, "messages[0].tool_call_id: expected a string, got 7"),
        (
            {"role": "assistant", "content": "", "tool_calls": {}},
            "messages[0].tool_calls: expected an array, got an object",
        ),
        (
            {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": "", "arguments": ""}, {"id": "c"}]},
            "messages[0].tool_calls[1].name: is required",
        ),
        (
            {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": "b", "arguments": {}}]},
            "messages[0].tool_calls[0].arguments: expected a string, got an object",
        ),
    ],
)
def test_from_dict_reports_the_path_of_the_first_fault(item: object, error: str) -> None:
    with pytest.raises(SchemaError) as excinfo:
        messages_from_list([item])
    assert str(excinfo.value) == error


def test_messages_from_list_rejects_a_non_array() -> None:
    with pytest.raises(SchemaError, match=r"^messages: expected an array, got an object$"):
        messages_from_list({"role": "user", "content": "x"})


@pytest.mark.parametrize(
    ("item", "error"),
    [
        ({"role": "user", "content": "ab\ud800"}, "messages[0].content: lone surrogate U+D800 at index 2"),
        ({"role": "user", "content": "", "tool_call_id": "\udfff"}, "messages[0].tool_call_id: lone surrogate U+DFFF"),
        (
            {"role": "assistant", "content": "", "tool_calls": [{"id": "", "name": "", "arguments": '{"q":"\udc00"}'}]},
            "messages[0].tool_calls[0].arguments: lone surrogate U+DC00 at index 6",
        ),
    ],
)
def test_from_dict_rejects_lone_surrogates(item: dict[str, Any], error: str) -> None:
    with pytest.raises(SchemaError) as excinfo:
        messages_from_list([item])
    assert str(excinfo.value).startswith(error)


def test_constructors_reject_lone_surrogates() -> None:
    with pytest.raises(SchemaError, match=r"^message\.content: lone surrogate U\+D83D"):
        Message("user", "\ud83d")
    with pytest.raises(SchemaError, match=r"^tool_call\.id: lone surrogate"):
        ToolCall("\ud83d", "bash", "{}")


def test_non_bmp_text_and_a_surrogate_pair_decoded_from_json_are_accepted() -> None:
    msg = Message.from_dict(json.loads('{"role": "user", "content": "\\ud83d\\ude00 \U00010348 中"}'))
    assert msg.content == "😀 𐍈 中"


def test_constructor_rejects_an_unknown_role() -> None:
    with pytest.raises(SchemaError) as excinfo:
        Message("tool", "x")
    assert str(excinfo.value) == "message.role: expected 'system', 'user' or 'assistant', got 'tool'"


def test_constructor_rejects_a_tool_call_that_is_not_a_tool_call() -> None:
    with pytest.raises(SchemaError, match=r"^message\.tool_calls\[1\]: expected a ToolCall, got an object$"):
        Message("assistant", "", [call("a"), {"id": "b", "name": "bash", "arguments": ""}])  # type: ignore[arg-type]


def test_schema_error_is_a_value_error_with_a_path_and_a_code() -> None:
    error = SchemaError("messages[0].role", "is required")
    assert isinstance(error, ValueError)
    assert (error.path, error.problem, error.code) == ("messages[0].role", "is required", "schema_error")


def test_messages_compare_and_hash_by_value() -> None:
    a = assistant("x", call("c1"))
    b = Message("assistant", "x", (ToolCall("c1", "bash", '{"command":"ls"}'),))
    assert a == b and hash(a) == hash(b)
    assert a != assistant("x", call("c2"))
    assert result("c1") != user("ok")


def test_tool_calls_given_as_a_list_are_stored_as_a_tuple() -> None:
    calls = [call("a"), call("b")]
    msg = Message("assistant", "", calls)  # type: ignore[arg-type]
    calls.append(call("c"))
    assert msg.tool_calls == (call("a"), call("b"))
    assert msg == Message("assistant", "", (call("a"), call("b")))


@pytest.mark.parametrize("value", [Message("user", "x"), ToolCall("a", "b", "{}"), Usage(1, 2), StreamChunk("done")])
def test_values_are_frozen_and_slotted(value: object) -> None:
    field = dataclasses.fields(value)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, "changed")
    assert not hasattr(value, "__dict__")


def test_messages_to_list_and_messages_from_list_round_trip() -> None:
    msgs = [user("hi"), assistant("", call("c1")), result("c1", "done")]
    assert messages_from_list(messages_to_list(msgs)) == msgs


def test_tool_call_from_dict_requires_all_three_fields() -> None:
    with pytest.raises(SchemaError, match=r"^tool_call\.arguments: is required$"):
        ToolCall.from_dict({"id": "a", "name": "bash"})
    assert ToolCall.from_dict({"id": "a", "name": "bash", "arguments": ""}) == ToolCall("a", "bash", "")


def test_tool_definition_round_trips_with_an_object_or_null_schema() -> None:
    schema = {"type": "object", "properties": {"command": {"type": "string"}}}
    with_schema = {"name": "bash", "description": "Run a command", "input_schema": schema}
    without = {"name": "bash", "description": "Run a command", "input_schema": None}
    assert ToolDefinition.from_dict(with_schema).to_dict() == with_schema
    assert ToolDefinition.from_dict(without).to_dict() == without
    assert ToolDefinition.from_dict({"name": "bash", "description": ""}).input_schema is None


@pytest.mark.parametrize("schema", [[], "object", 1])
def test_tool_definition_rejects_a_schema_that_is_not_an_object(schema: object) -> None:
    with pytest.raises(SchemaError, match=r"^tool\.input_schema: expected an object or null"):
        ToolDefinition.from_dict({"name": "bash", "description": "", "input_schema": schema})
    with pytest.raises(SchemaError, match=r"^tool\.input_schema: expected an object or null"):
        ToolDefinition("bash", "", schema)  # type: ignore[arg-type]


@pytest.mark.parametrize("schema", [{"description": "\ud800"}, {"\udc00": "x"}, {"enum": ["ok", "\udfff"]}])
def test_tool_definition_rejects_lone_surrogates_inside_the_schema(schema: dict[str, Any]) -> None:
    with pytest.raises(SchemaError, match=r"^tool\.input_schema"):
        ToolDefinition.from_dict({"name": "bash", "description": "", "input_schema": schema})


def test_a_tool_definition_does_not_change_when_its_schema_dicts_do() -> None:
    source = {"type": "object", "properties": {}}
    tool = ToolDefinition("bash", "", source)
    source["type"] = "array"
    tool.to_dict()["input_schema"]["properties"] = None
    assert tool.to_dict() == {"name": "bash", "description": "", "input_schema": {"type": "object", "properties": {}}}


def test_usage_omits_absent_cache_fields() -> None:
    assert Usage(10, 2).to_dict() == {"input_tokens": 10, "output_tokens": 2}
    full = {"input_tokens": 10, "output_tokens": 2, "cache_read_tokens": 0, "cache_write_tokens": 5}
    assert Usage(10, 2, 0, 5).to_dict() == full
    assert Usage.from_dict(full) == Usage(10, 2, 0, 5)


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"input_tokens": 1}, "usage.output_tokens: is required"),
        ({"input_tokens": True, "output_tokens": 0}, "usage.input_tokens: expected an integer, got a boolean"),
        ({"input_tokens": 1.0, "output_tokens": 0}, "usage.input_tokens: expected an integer, got 1.0"),
        (
            {"input_tokens": 1, "output_tokens": 0, "cache_read_tokens": None},
            "usage.cache_read_tokens: expected an integer, got null",
        ),
    ],
)
def test_usage_from_dict_rejects_non_integers(data: dict[str, Any], error: str) -> None:
    with pytest.raises(SchemaError) as excinfo:
        Usage.from_dict(data)
    assert str(excinfo.value) == error


def test_stream_chunk_omits_empty_fields() -> None:
    assert StreamChunk("text", delta="he").to_dict() == {"type": "text", "delta": "he"}
    done = StreamChunk("done", message=user("x"), usage=Usage(3, 1))
    assert done.to_dict() == {
        "type": "done",
        "message": {"role": "user", "content": "x"},
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    assert StreamChunk("error", error="boom").to_dict() == {"type": "error", "error": "boom"}


def test_stream_chunk_rejects_an_unknown_type() -> None:
    with pytest.raises(SchemaError, match=r"^stream_chunk\.type: expected one of text, done, error, got 'delta'$"):
        StreamChunk("delta")
