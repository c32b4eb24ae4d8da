"""Parsing Anthropic non-streaming responses (harness9_ref/provider/anthropic/_response.py;
SPEC R-PRV-14, R-PRV-20, R-PRV-21, R-USE-4)."""

from __future__ import annotations

import pytest

from harness9_ref.provider import MalformedResponse, OverloadedError, anthropic
from harness9_ref.schema import Message, ToolCall, Usage

# Compact, with thinking first, a tool_use whose input has its own spacing, a cached prompt
# (input_tokens 4 beside 1163 cache reads), a nested cache_creation object and server tool usage.
WEATHER_INPUT = '{"location": "San Francisco, CA", "unit":"celsius"}'
TOOL_USE = (
    b'{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-20250514",'
    b'"content":[{"type":"thinking","thinking":"The user wants the weather.",'
    b'"signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},'
    b'{"type":"text","text":"I\'ll check "},'
    b'{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"get_weather",'
    b'"input":' + WEATHER_INPUT.encode() + b"},"
    b'{"type":"text","text":"the weather."}],'
    b'"stop_reason":"tool_use","stop_sequence":null,'
    b'"usage":{"input_tokens":4,"cache_creation_input_tokens":0,"cache_read_input_tokens":1163,'
    b'"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},'
    b'"output_tokens":91,"service_tier":"standard","server_tool_use":{"web_search_requests":0}}}'
)

# An older body with a different key order and no cache fields.
OLD_TEXT = (
    b'{"content":[{"text":"Hi! My name is Claude.","type":"text"}],"id":"msg_013Zva2CMHLNnXjNJJKqJ2EF",'
    b'"model":"claude-3-5-sonnet-20241022","role":"assistant","stop_reason":"end_turn","stop_sequence":null,'
    b'"type":"message","usage":{"input_tokens":2095,"output_tokens":503}}'
)


def parse(body: bytes, status: int = 200) -> tuple[Message, Usage | None]:
    return anthropic.parse_response(status, [("request-id", "req_1")], body)


def test_text_blocks_concatenate_and_tool_use_keeps_the_exact_source_text_of_its_input() -> None:
    message, usage = parse(TOOL_USE)
    assert message == Message(
        "assistant",
        "I'll check the weather.",
        (ToolCall("toolu_01A09q90qw90lq917835lq9", "get_weather", WEATHER_INPUT),),
    )
    # input_tokens excludes the cache: the context holds 4 + 0 + 1163 prompt tokens.
    assert usage == Usage(1167, 91, cache_read_tokens=1163, cache_write_tokens=0)


def test_an_old_body_in_another_key_order_gives_usage_without_cache_fields() -> None:
    assert parse(OLD_TEXT) == (Message("assistant", "Hi! My name is Claude."), Usage(2095, 503))


def test_pretty_printed_input_keeps_its_newlines_and_escapes() -> None:
    body = (
        b'{\n  "type": "message",\n  "content": [\n    {\n      "type": "tool_use",\n      "id": "t1",\n'
        b'      "name": "bash",\n      "input": {\n        "command": "echo \\"hi\\" \\u00e9"\n      }\n    }\n  ]\n}\n'
    )
    source = '{\n        "command": "echo \\"hi\\" \\u00e9"\n      }'
    assert parse(body)[0].tool_calls == (ToolCall("t1", "bash", source),)


def test_parallel_tool_uses_keep_their_order_and_non_object_inputs_are_kept_as_text() -> None:
    body = (
        b'{"content":[{"type":"tool_use","id":"a","name":"f","input":{}},'
        b'{"type":"tool_use","id":"b","name":"g","input":[1, 2]},'
        b'{"type":"tool_use","id":"c","name":"h","input":"s"}]}'
    )
    calls = (ToolCall("a", "f", "{}"), ToolCall("b", "g", "[1, 2]"), ToolCall("c", "h", '"s"'))
    assert parse(body)[0].tool_calls == calls


def test_a_duplicated_input_member_gives_its_last_value() -> None:
    body = b'{"content":[{"type":"tool_use","id":"a","name":"f","input":{"x":1},"input":{"y":2}}]}'
    assert parse(body)[0].tool_calls[0].arguments == '{"y":2}'


def test_a_content_member_before_others_and_duplicated_is_read_from_the_last_one() -> None:
    body = (
        b'{"content":[{"type":"text","text":"old"}],"id":"m",'
        b'"content":[{"type":"tool_use","id":"a","name":"f","input":{"k":"v"}}]}'
    )
    assert parse(body)[0] == Message("assistant", "", (ToolCall("a", "f", '{"k":"v"}'),))


def test_thinking_redacted_thinking_server_tool_and_unknown_blocks_are_skipped() -> None:
    body = (
        b'{"content":[{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"},'
        b'{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}},'
        b'{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},'
        b'{"type":"a_future_block","payload":{}},'
        b'{"type":"text","text":"Answer.","citations":[{"type":"web_search_result_location"}]}],'
        b'"usage":{"input_tokens":10,"output_tokens":2,"server_tool_use":{"web_search_requests":1}}}'
    )
    assert parse(body) == (Message("assistant", "Answer."), Usage(10, 2))


def test_cache_writes_count_into_input_tokens() -> None:
    body = (
        b'{"content":[],"usage":{"input_tokens":3,"cache_creation_input_tokens":2048,'
        b'"cache_read_input_tokens":null,"output_tokens":7}}'
    )
    assert parse(body) == (Message("assistant", ""), Usage(2051, 7, cache_write_tokens=2048))


def test_no_usage_member_gives_no_usage() -> None:
    assert parse(b'{"content":[{"type":"text","text":"x"}]}')[1] is None


def test_an_escaped_lone_surrogate_in_text_becomes_the_replacement_character() -> None:
    assert parse(b'{"content":[{"type":"text","text":"\\udc00!"}]}')[0].content == "\ufffd!"


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (b"upstream connect error", "not JSON"),
        (b'{"content":"just a string"}', "content"),
        (b'{"id":"msg"}', "content"),
        (b'{"content":[1]}', "content[0]"),
        (b'{"content":[{"type":"text","text":5}]}', "content[0].text"),
        (b'{"content":[{"type":"tool_use","id":"a","name":"f"}]}', "content[0].input"),
        (b'{"content":[{"type":"tool_use","name":"f","input":{}}]}', "content[0].id"),
        (b'{"content":[],"usage":{"input_tokens":1.5}}', "usage.input_tokens"),
        (b'{"content":[],"usage":[]}', "usage"),
    ],
)
def test_unparseable_bodies_raise_malformed_response(body: bytes, named: str) -> None:
    with pytest.raises(MalformedResponse) as info:
        parse(body)
    assert type(info.value) is MalformedResponse
    assert named in str(info.value)
    assert info.value.provider == "anthropic"


def test_an_error_body_with_a_success_status_is_classified() -> None:
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011"}'
    with pytest.raises(OverloadedError) as info:
        parse(body)
    assert str(info.value) == "anthropic: HTTP 200 overloaded_error: Overloaded"
    assert info.value.request_id == "req_011"


def test_an_error_status_raises_the_classified_error() -> None:
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    with pytest.raises(OverloadedError) as info:
        anthropic.parse_response(529, [("request-id", "req_9"), ("x-should-retry", "true")], body)
    assert str(info.value) == "anthropic: HTTP 529 overloaded_error: Overloaded"
    assert (info.value.status, info.value.request_id, info.value.should_retry) == (529, "req_9", True)
