"""Building OpenAI requests (harness9_ref/provider/openai/_request.py; SPEC R-PRV-3 … R-PRV-7)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from harness9_ref.provider import DEFAULT_OPENAI_BASE_URL, HttpRequest, RequestBuildError, openai
from harness9_ref.schema import Message, ToolCall, ToolDefinition

KEY = "sk-test-0123456789"
READ_FILE = ToolDefinition(
    "read_file",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def build(messages: list[Message], tools: Sequence[ToolDefinition] = (), *, stream: bool = False, **kw: Any) -> HttpRequest:
    return openai.build_request("gpt-4o-mini", messages, tools, stream=stream, api_key=KEY, **kw)


def body(request: HttpRequest) -> Any:
    return json.loads(request.body.decode("utf-8"))


def test_a_plain_request_goes_to_chat_completions_with_bearer_auth() -> None:
    request = build([Message("user", "hi")])
    assert request.method == "POST"
    assert request.url == "https://api.openai.com/v1/chat/completions"
    assert DEFAULT_OPENAI_BASE_URL == "https://api.openai.com/v1"
    assert request.headers == (
        ("Authorization", f"Bearer {KEY}"),
        ("Content-Type", "application/json"),
        ("Accept", "application/json"),
    )
    assert request.body == b'{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}'


def test_a_stream_asks_for_usage_in_the_last_chunk_and_accepts_event_streams() -> None:
    request = build([Message("user", "hi")], stream=True)
    assert request.header("accept") == "text/event-stream"
    assert request.body == (
        b'{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],'
        b'"stream":true,"stream_options":{"include_usage":true}}'
    )


@pytest.mark.parametrize(
    ("base_url", "url"),
    [
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/chat/completions"),
        ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1/chat/completions"),
        ("https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1/chat/completions"),
    ],
)
def test_the_base_url_loses_its_trailing_slash(base_url: str, url: str) -> None:
    assert build([Message("user", "hi")], base_url=base_url).url == url


def test_the_model_name_is_sent_as_configured_to_a_router_and_without_openai_prefix_to_openai() -> None:
    """R-PRV-27: the official endpoint gets OpenAI's own name, any other base URL the name as given."""
    official = openai.build_request("openai/GPT-4o-Mini", [Message("user", "x")], [], stream=False, api_key=KEY)
    routed = openai.build_request(
        "openai/GPT-4o-Mini", [Message("user", "x")], [], stream=False, api_key=KEY, base_url="https://openrouter.ai/api/v1"
    )
    assert (body(official)["model"], body(routed)["model"]) == ("GPT-4o-Mini", "openai/GPT-4o-Mini")


def test_a_tool_loop_maps_one_to_one_in_order() -> None:
    messages = [
        Message("system", "You are a coding agent."),
        Message("user", "Read a.txt and b.txt"),
        Message(
            "assistant",
            "",
            (ToolCall("call_1", "read_file", '{"path": "a.txt"}'), ToolCall("call_2", "read_file", '{"path":"b.txt"}')),
        ),
        Message("user", "alpha", tool_call_id="call_1"),
        Message("user", "", tool_call_id="call_2"),
        Message("assistant", "Both read."),
    ]
    assert body(build(messages, [READ_FILE])) == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are a coding agent."},
            {"role": "user", "content": "Read a.txt and b.txt"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path":"b.txt"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "alpha"},
            {"role": "tool", "tool_call_id": "call_2", "content": ""},
            {"role": "assistant", "content": "Both read."},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read a file.",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
                },
            }
        ],
    }


def test_an_assistant_message_with_text_and_calls_keeps_its_text() -> None:
    msg = Message("assistant", "Let me look.", (ToolCall("c", "bash", "{}"),))
    assert body(build([msg]))["messages"][0]["content"] == "Let me look."


def test_an_assistant_message_without_calls_keeps_empty_content_as_a_string() -> None:
    assert body(build([Message("assistant", "")]))["messages"] == [{"role": "assistant", "content": ""}]


@pytest.mark.parametrize("arguments", ["", "not json", '{"path": "a', "[1, 2]", '{"a":1} trailing', "NaN"])
def test_arguments_are_sent_verbatim_as_a_string_even_when_not_valid_json(arguments: str) -> None:
    msg = Message("assistant", "", (ToolCall("c", "bash", arguments),))
    assert body(build([msg]))["messages"][0]["tool_calls"][0]["function"]["arguments"] == arguments


def test_a_result_is_a_tool_message_whatever_its_role() -> None:
    messages = [Message("assistant", "r", tool_call_id="c1"), Message("system", "s", tool_call_id="c2")]
    assert body(build(messages))["messages"] == [
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
        {"role": "tool", "tool_call_id": "c2", "content": "s"},
    ]


def test_a_tool_without_a_schema_has_no_parameters() -> None:
    assert body(build([Message("user", "x")], [ToolDefinition("ping", "Ping.")]))["tools"] == [
        {"type": "function", "function": {"name": "ping", "description": "Ping."}}
    ]


def test_non_ascii_text_is_sent_as_utf8() -> None:
    request = build([Message("user", "中文 😀 <&>")])
    assert "中文 😀 <&>".encode() in request.body
    assert body(request)["messages"][0]["content"] == "中文 😀 <&>"


def test_no_other_body_members_are_sent() -> None:
    assert set(body(build([Message("user", "x")], [READ_FILE], stream=True))) == {
        "model",
        "messages",
        "tools",
        "stream",
        "stream_options",
    }


@pytest.mark.parametrize("role", ["user", "system"])
def test_a_user_or_system_message_with_tool_calls_cannot_be_sent(role: str) -> None:
    bad = Message(role, "x", (ToolCall("c", "bash", "{}"),))
    with pytest.raises(RequestBuildError) as info:
        build([Message("user", "first"), bad])
    assert info.value.code == "request_build_error"
    assert info.value.provider == "openai"
    assert info.value.status is None
    assert "messages[1]" in str(info.value) and role in str(info.value)


def test_the_api_key_is_hidden_in_the_request_repr() -> None:
    assert KEY not in repr(build([Message("user", "x")]))
