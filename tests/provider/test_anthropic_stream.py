"""Assembling Anthropic streams (harness9_ref/provider/anthropic/_stream.py; SPEC R-PRV-16,
R-PRV-18, R-PRV-19, R-PRV-20, R-USE-5)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness9_ref.provider import OverloadedError, ProviderStreamError, SSEEvent, StreamCutOff, anthropic
from harness9_ref.schema import CHUNK_DONE, CHUNK_ERROR, Message, StreamChunk, ToolCall, Usage
from tests.provider.helpers import anthropic_stream, assert_same_parse, event_stream, final, texts

# As recorded: data padded with spaces before the final brace, ping with a space, pings
# between blocks, a tool without arguments streaming only "".
TOOL_STREAM = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"id":"msg_014p7gG3wDgGV9EUtLvnow3U","type":"message",'
    b'"role":"assistant","model":"claude-sonnet-4-20250514","content":[],"stop_reason":null,"stop_sequence":null,'
    b'"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2,'
    b'"service_tier":"standard"}}             }\n\n'
    b"event: content_block_start\n"
    b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}        }\n\n'
    b"event: ping\n"
    b'data: {"type": "ping"}\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Okay, let"}  }\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\'s check."}         }\n\n'
    b"event: content_block_stop\n"
    b'data: {"type":"content_block_stop","index":0              }\n\n'
    b"event: content_block_start\n"
    b'data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use",'
    b'"id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}     }\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}       }\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",'
    b'"partial_json":"{\\"location\\":"}     }\n\n'
    b"event: ping\n"
    b'data: {"type": "ping"}\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",'
    b'"partial_json":" \\"San Fra"}   }\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",'
    b'"partial_json":"ncisco, CA\\"}"}              }\n\n'
    b"event: content_block_stop\n"
    b'data: {"type":"content_block_stop","index":1          }\n\n'
    b"event: content_block_start\n"
    b'data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_02",'
    b'"name":"list_dir","input":{}}}\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}\n\n'
    b"event: content_block_stop\n"
    b'data: {"type":"content_block_stop","index":2}\n\n'
    b"event: message_delta\n"
    b'data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},'
    b'"usage":{"output_tokens":89}            }\n\n'
    b"event: message_stop\n"
    b'data: {"type":"message_stop"       }\n\n'
)


def message_start(usage: dict[str, Any] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    if usage is not None:
        message["usage"] = usage
    return {"type": "message_start", "message": message}


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def block_delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(usage: dict[str, Any] | None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}}
    if usage is not None:
        event["usage"] = usage
    return event


def text_block(index: int, *pieces: str) -> list[dict[str, Any]]:
    return [
        block_start(index, {"type": "text", "text": ""}),
        *(block_delta(index, {"type": "text_delta", "text": p}) for p in pieces),
        block_stop(index),
    ]


def tool_block(index: int, name: str, *partial_json: str) -> list[dict[str, Any]]:
    return [
        block_start(index, {"type": "tool_use", "id": f"toolu_{name}", "name": name, "input": {}}),
        *(block_delta(index, {"type": "input_json_delta", "partial_json": p}) for p in partial_json),
        block_stop(index),
    ]


STOP = {"type": "message_stop"}


def test_a_recorded_tool_stream_with_padding_and_pings_assembles() -> None:
    chunks = assert_same_parse(TOOL_STREAM, anthropic_stream)
    assert texts(chunks) == ["Okay, let", "'s check."]
    assert final(chunks) == StreamChunk(
        CHUNK_DONE,
        message=Message(
            "assistant",
            "Okay, let's check.",
            (
                ToolCall("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", '{"location": "San Francisco, CA"}'),
                ToolCall("toolu_02", "list_dir", "{}"),
            ),
        ),
        # message_delta's output_tokens replaces message_start's 2; it is never added.
        usage=Usage(472, 89, cache_read_tokens=0, cache_write_tokens=0),
    )


def test_message_delta_replaces_each_usage_field_it_carries() -> None:
    start = {"input_tokens": 4, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1163, "output_tokens": 3}
    last = {
        "input_tokens": 9,
        "cache_read_input_tokens": 1200,
        "cache_creation_input_tokens": None,  # null: keeps the earlier 0
        "output_tokens": 55,
        "server_tool_use": {"web_search_requests": 1},
    }
    body = event_stream(
        message_start(start), *text_block(0, "hi"), message_delta({"output_tokens": 40}), message_delta(last), STOP
    )
    usage = final(assert_same_parse(body, anthropic_stream)).usage
    assert usage == Usage(9 + 0 + 1200, 55, cache_read_tokens=1200, cache_write_tokens=0)


def test_usage_only_from_message_delta_and_none_without_any() -> None:
    only_delta = event_stream(message_start(None), *text_block(0, "x"), message_delta({"output_tokens": 5}), STOP)
    assert final(anthropic_stream([only_delta])).usage == Usage(0, 5)
    none = event_stream(message_start(None), *text_block(0, "x"), message_delta(None), STOP)
    assert final(anthropic_stream([none])).usage is None


def test_thinking_with_signature_and_redacted_thinking_add_no_text() -> None:
    body = event_stream(
        message_start({"input_tokens": 10, "output_tokens": 1}),
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        block_delta(0, {"type": "thinking_delta", "thinking": "Let me think"}),
        block_delta(0, {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}),
        block_stop(0),
        block_start(1, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}),
        block_stop(1),
        *text_block(2, "The answer."),
        message_delta({"output_tokens": 30}),
        STOP,
    )
    chunks = assert_same_parse(body, anthropic_stream)
    assert texts(chunks) == ["The answer."]
    assert final(chunks).message == Message("assistant", "The answer.")


def test_a_text_block_starting_with_text_yields_it() -> None:
    body = event_stream(
        message_start(None),
        block_start(0, {"type": "text", "text": "Hi"}),
        block_delta(0, {"type": "text_delta", "text": ""}),
        block_delta(0, {"type": "text_delta", "text": " there"}),
        block_stop(0),
        STOP,
    )
    chunks = anthropic_stream([body])
    assert texts(chunks) == ["Hi", " there"]
    assert final(chunks).message == Message("assistant", "Hi there")


def test_a_tool_without_arguments_gets_an_empty_object_and_partial_json_is_joined_exactly() -> None:
    body = event_stream(
        message_start(None),
        *tool_block(0, "now", ""),
        *tool_block(1, "none"),
        *tool_block(2, "f", "", ' {"a" :', "1}"),
        STOP,
    )
    message = final(assert_same_parse(body, anthropic_stream)).message
    assert message is not None
    assert [c.arguments for c in message.tool_calls] == ["{}", "{}", ' {"a" :1}']


def test_server_tool_input_is_not_a_tool_call() -> None:
    body = event_stream(
        message_start(None),
        block_start(0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
        block_delta(0, {"type": "input_json_delta", "partial_json": '{"query": "x"}'}),
        block_stop(0),
        *text_block(1, "Found."),
        STOP,
    )
    assert final(anthropic_stream([body])).message == Message("assistant", "Found.")


def test_calls_are_ordered_by_block_index() -> None:
    body = event_stream(message_start(None), *tool_block(3, "later"), *tool_block(1, "earlier"), STOP)
    message = final(anthropic_stream([body])).message
    assert message is not None and [c.name for c in message.tool_calls] == ["earlier", "later"]


def test_the_event_field_names_the_type_when_the_data_has_none() -> None:
    body = (
        b'event: content_block_start\ndata: {"index":0,"content_block":{"type":"text","text":"a"}}\n\n'
        b"event: message_stop\ndata: {}\n\n"
    )
    assert final(anthropic_stream([body])).message == Message("assistant", "a")


def test_unknown_events_and_events_after_message_stop_are_ignored() -> None:
    body = event_stream(message_start(None), {"type": "future_event"}, *text_block(0, "x"), STOP, *text_block(1, "y"))
    body += b"event: content_block_delta\ndata: not json\n\n"
    chunks = assert_same_parse(body, anthropic_stream)
    assert final(chunks).message == Message("assistant", "x")


def test_the_assembler_fed_directly_ignores_what_follows_message_stop() -> None:
    # assemble_stream stops reading at the terminal event; the public StreamAssembler keeps the
    # same promise for a caller that feeds it events itself (R-PRV-18).
    assembler = anthropic.StreamAssembler()
    for data in (message_start(None), *text_block(0, "x"), STOP):
        assembler.feed(SSEEvent(data["type"], json.dumps(data)))
    late = [*text_block(1, "late"), {"type": "error", "error": {"type": "overloaded_error", "message": "x"}}]
    assert [assembler.feed(SSEEvent(data["type"], json.dumps(data))) for data in late] == [[]] * len(late)
    assert assembler.finish()[0] == Message("assistant", "x")


def test_an_error_event_mid_stream_is_overloaded() -> None:
    body = event_stream(message_start(None), *text_block(0, "partial")) + (
        b'event: error\ndata: {"type": "error", "error": {"details": null, "type": "overloaded_error", '
        b'"message": "Overloaded"}, "request_id": "req_011CS"}\n\n'
    )
    chunks = assert_same_parse(body, anthropic_stream)
    assert texts(chunks) == ["partial"]
    assert final(chunks) == StreamChunk(CHUNK_ERROR, error="overloaded: anthropic: stream overloaded_error: Overloaded")


def test_an_error_event_raises_from_the_assembler_with_its_hints() -> None:
    data = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}'
    with pytest.raises(OverloadedError) as info:
        anthropic.StreamAssembler().feed(SSEEvent("error", data))
    assert (info.value.status, info.value.request_id, info.value.error_type) == (None, "req_1", "overloaded_error")


def test_an_error_event_of_unknown_type_is_a_server_error() -> None:
    body = event_stream(message_start(None), {"type": "error", "error": {"type": "mystery_error", "message": "?"}})
    assert final(anthropic_stream([body])).error == "server_error: anthropic: stream mystery_error: ?"


def test_a_delta_before_its_block_start_names_the_event_number_and_index() -> None:
    body = event_stream(message_start(None), {"type": "ping"}, block_delta(2, {"type": "text_delta", "text": "x"}))
    assert final(anthropic_stream([body])).error == (
        "malformed_stream: anthropic stream event 3: content_block_delta for index 2 before content_block_start"
    )


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        ([block_stop(0)], "event 1: content_block_stop for index 0 before content_block_start"),
        (
            [*text_block(0), block_delta(0, {"type": "text_delta", "text": "x"})],
            "event 3: content_block_delta for index 0 after its content_block_stop",
        ),
        ([*text_block(0), *text_block(0)], "event 3: content_block_start for index 0, which was already started"),
        ([{"type": "content_block_start", "content_block": {"type": "text"}}], "event 1: content_block_start: index"),
        ([block_start(0, {"type": "text", "text": 5})], "content_block.text"),
        ([{"type": "message_start", "message": {"usage": {"input_tokens": "9"}}}], "message.usage.input_tokens"),
        ([{"type": 7}], "data.type"),
    ],
)
def test_stream_violations_raise_provider_stream_error(events: list[dict[str, Any]], expected: str) -> None:
    assembler = anthropic.StreamAssembler()
    with pytest.raises(ProviderStreamError) as info:
        for event in events:
            assembler.feed(SSEEvent(str(event.get("type")), json.dumps(event)))
    assert type(info.value) is ProviderStreamError
    assert expected in str(info.value)


def test_data_that_is_not_json_is_a_stream_error() -> None:
    chunks = anthropic_stream([b"event: message_start\ndata: {oops\n\n"])
    assert final(chunks).error.startswith("malformed_stream: anthropic stream event 1: data is not JSON")


def test_a_stream_without_message_stop_is_cut_off() -> None:
    body = TOOL_STREAM[: TOOL_STREAM.index(b"event: message_stop")]
    chunks = assert_same_parse(body, anthropic_stream)
    assert texts(chunks) == ["Okay, let", "'s check."]
    assert final(chunks).error == "stream_cut_off: anthropic: the stream ended after 17 events without message_stop"
    with pytest.raises(StreamCutOff):
        anthropic.StreamAssembler().finish()


def test_an_error_status_for_a_stream_request_gives_the_classified_error_chunk() -> None:
    words = "prompt is too long: 215000 tokens > 200000 maximum"
    body = json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": words}}).encode()
    assert anthropic.parse_stream(400, [], [body]) == [
        StreamChunk(CHUNK_ERROR, error=f"context_length_exceeded: anthropic: HTTP 400 invalid_request_error: {words}")
    ]
