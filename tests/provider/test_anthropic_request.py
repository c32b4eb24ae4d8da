"""Building Anthropic requests (harness9_ref/provider/anthropic/_request.py; SPEC R-PRV-8 … R-PRV-12)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from harness9_ref.provider import (
    DEFAULT_ANTHROPIC_BASE_URL,
    HttpRequest,
    RequestBuildError,
    anthropic,
    get_model_limits,
)
from harness9_ref.schema import Message, ToolCall, ToolDefinition

KEY = "sk-ant-test-0123456789"
MODEL = "claude-sonnet-4-20250514"


def build(messages: list[Message], tools: Sequence[ToolDefinition] = (), *, stream: bool = False, **kw: Any) -> HttpRequest:
    kw.setdefault("model", MODEL)
    return anthropic.build_request(kw.pop("model"), messages, tools, stream=stream, api_key=KEY, **kw)


def body(request: HttpRequest) -> Any:
    return json.loads(request.body.decode("utf-8"))


def turns(messages: list[Message]) -> Any:
    return body(build(messages))["messages"]


def text(t: str) -> dict[str, str]:
    return {"type": "text", "text": t}


def result(tool_use_id: str, content: str | None = None) -> dict[str, str]:
    block = {"type": "tool_result", "tool_use_id": tool_use_id}
    if content is not None:
        block["content"] = content
    return block


def test_a_plain_request_goes_to_v1_messages_with_the_api_key_header() -> None:
    request = build([Message("user", "hi")])
    assert request.method == "POST"
    assert request.url == "https://api.anthropic.com/v1/messages"
    assert DEFAULT_ANTHROPIC_BASE_URL == "https://api.anthropic.com"
    assert request.headers == (
        ("x-api-key", KEY),
        ("anthropic-version", "2023-06-01"),
        ("Content-Type", "application/json"),
        ("Accept", "application/json"),
    )
    assert request.body == (
        b'{"model":"claude-sonnet-4-20250514","max_tokens":64000,'
        b'"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}'
    )


def test_a_stream_adds_stream_true_and_accepts_event_streams() -> None:
    request = build([Message("user", "hi")], stream=True)
    assert request.header("Accept") == "text/event-stream"
    assert body(request)["stream"] is True
    assert request.body.endswith(b',"stream":true}')


def test_the_base_url_loses_its_trailing_slash() -> None:
    assert build([Message("user", "hi")], base_url="http://127.0.0.1:9/").url == "http://127.0.0.1:9/v1/messages"


@pytest.mark.parametrize(
    ("model", "max_tokens"),
    [
        ("claude-sonnet-4-20250514", 64_000),
        ("claude-opus-4-1", 32_000),
        ("claude-3-5-haiku-latest", 8192),
        ("claude-3-haiku-20240307", 4096),
        ("anthropic/claude-3-7-sonnet", 64_000),
        ("some-unknown-model", 8192),
    ],
)
def test_max_tokens_is_the_models_output_limit_from_the_registry(model: str, max_tokens: int) -> None:
    sent = body(build([Message("user", "x")], model=model))
    assert sent["max_tokens"] == max_tokens == get_model_limits(model).output_tokens
    assert sent["model"] == model.removeprefix("anthropic/")  # R-PRV-27: the official endpoint's name


def test_system_messages_go_to_the_top_level_system_text() -> None:
    messages = [
        Message("system", "Rule one."),
        Message("user", "hi"),
        Message("system", "   \n\t"),
        Message("system", ""),
        Message("system", "Rule two.\n"),
    ]
    sent = body(build(messages))
    assert sent["system"] == "Rule one.\n\nRule two.\n"
    assert sent["messages"] == [{"role": "user", "content": [text("hi")]}]
    assert list(sent) == ["model", "max_tokens", "system", "messages"]


def test_no_system_member_when_no_system_message_has_text() -> None:
    assert "system" not in body(build([Message("system", " "), Message("user", "hi")]))


def test_a_tool_loop_becomes_alternating_turns_with_tool_results_first() -> None:
    messages = [
        Message("system", "sys"),
        Message("user", "Read a and b"),
        Message(
            "assistant",
            "Reading.",
            (ToolCall("toolu_1", "read_file", '{"path":"a"}'), ToolCall("toolu_2", "read_file", "")),
        ),
        Message("user", "alpha", tool_call_id="toolu_1"),
        Message("user", "Also, hurry."),
        Message("user", "", tool_call_id="toolu_2"),
        Message("assistant", "Done."),
    ]
    assert turns(messages) == [
        {"role": "user", "content": [text("Read a and b")]},
        {
            "role": "assistant",
            "content": [
                text("Reading."),
                {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}},
                {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {}},
            ],
        },
        {"role": "user", "content": [result("toolu_1", "alpha"), result("toolu_2"), text("Also, hurry.")]},
        {"role": "assistant", "content": [text("Done.")]},
    ]


def test_consecutive_assistant_messages_merge_in_order() -> None:
    messages = [
        Message("user", "go"),
        Message("assistant", "one", (ToolCall("a", "bash", "{}"),)),
        Message("assistant", "two"),
    ]
    assert turns(messages)[1] == {
        "role": "assistant",
        "content": [text("one"), {"type": "tool_use", "id": "a", "name": "bash", "input": {}}, text("two")],
    }


def test_messages_without_blocks_are_skipped_before_merging() -> None:
    messages = [Message("user", "a"), Message("assistant", "  "), Message("system", "s"), Message("user", "b")]
    assert turns(messages) == [{"role": "user", "content": [text("a"), text("b")]}]


def test_text_is_sent_unchanged_when_it_has_a_visible_character() -> None:
    assert turns([Message("user", "  padded \n")]) == [{"role": "user", "content": [text("  padded \n")]}]


def test_a_result_belongs_to_the_user_side_whatever_its_role() -> None:
    messages = [
        Message("user", "go"),
        Message("assistant", "", (ToolCall("a", "bash", "{}"),)),
        Message("assistant", "out", tool_call_id="a"),
    ]
    assert turns(messages)[2] == {"role": "user", "content": [result("a", "out")]}


def test_an_assistant_message_first_is_sent_as_is() -> None:
    assert turns([Message("assistant", "hello")]) == [{"role": "assistant", "content": [text("hello")]}]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("", {}),
        ("{}", {}),
        ('{"command": "ls -la", "n": [1, 2.5, null, true]}', {"command": "ls -la", "n": [1, 2.5, None, True]}),
        ('  {"a": {"b": "c"}}\n', {"a": {"b": "c"}}),
        ('{"a": 1, "a": 2}', {"a": 2}),
        ("not json", {"_raw": "not json"}),
        ('{"path": "a', {"_raw": '{"path": "a'}),
        ("[1, 2]", {"_raw": "[1, 2]"}),
        ('"a string"', {"_raw": '"a string"'}),
        ("null", {"_raw": "null"}),
        ("42", {"_raw": "42"}),
        ('{"a": NaN}', {"_raw": '{"a": NaN}'}),
        ('{"a": Infinity}', {"_raw": '{"a": Infinity}'}),
        ('{"a": 1e400}', {"_raw": '{"a": 1e400}'}),
        ('{"a": 1} {"b": 2}', {"_raw": '{"a": 1} {"b": 2}'}),
        ("{'a': 1}", {"_raw": "{'a': 1}"}),
        (" ", {"_raw": " "}),
    ],
)
def test_tool_use_input_is_the_arguments_object_or_raw_text(arguments: str, expected: dict[str, Any]) -> None:
    msgs = [Message("user", "go"), Message("assistant", "", (ToolCall("t", "bash", arguments),))]
    assert turns(msgs)[1]["content"][0]["input"] == expected
    assert anthropic.tool_input(arguments) == expected


def test_an_escaped_lone_surrogate_in_arguments_is_sent_back_as_the_same_escape() -> None:
    msgs = [Message("user", "go"), Message("assistant", "", (ToolCall("t", "bash", '{"s": "\\ud800x"}'),))]
    request = build(msgs)
    assert b'"input":{"s":"\\ud800x"}' in request.body
    request.body.decode("utf-8")  # still valid UTF-8


def test_tools_map_to_name_description_and_input_schema() -> None:
    tools = [
        ToolDefinition("bash", "Run.", {"type": "object", "properties": {"command": {"type": "string"}}}),
        ToolDefinition("ping", "Ping."),
    ]
    assert body(build([Message("user", "x")], tools))["tools"] == [
        {
            "name": "bash",
            "description": "Run.",
            "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
        {"name": "ping", "description": "Ping.", "input_schema": {"type": "object", "properties": {}}},
    ]


def test_content_is_always_a_list_of_blocks() -> None:
    for turn in turns([Message("user", "a"), Message("assistant", "b")]):
        assert isinstance(turn["content"], list)


@pytest.mark.parametrize(
    "messages",
    [
        [],
        [Message("system", "only a system prompt")],
        [Message("system", "s"), Message("user", "  "), Message("assistant", "")],
    ],
)
def test_a_history_that_leaves_no_turn_cannot_be_sent(messages: list[Message]) -> None:
    with pytest.raises(RequestBuildError, match="nothing to send") as info:
        build(messages)
    assert info.value.provider == "anthropic"


@pytest.mark.parametrize("role", ["user", "system"])
def test_a_user_or_system_message_with_tool_calls_cannot_be_sent(role: str) -> None:
    with pytest.raises(RequestBuildError, match=r"messages\[1\]"):
        build([Message("user", "x"), Message(role, "y", (ToolCall("c", "bash", "{}"),))])


def test_the_api_key_is_hidden_in_the_request_repr() -> None:
    assert KEY not in repr(build([Message("user", "x")]))
