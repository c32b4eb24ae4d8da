"""Assembling OpenAI streams (harness9_ref/provider/openai/_stream.py; SPEC R-PRV-16, R-PRV-17,
R-PRV-19, R-PRV-20, R-USE-3)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness9_ref.provider import ProviderStreamError, SSEEvent, StreamCutOff, openai
from harness9_ref.schema import CHUNK_DONE, CHUNK_ERROR, Message, StreamChunk, ToolCall, Usage
from tests.provider.helpers import assert_same_parse, final, openai_stream, sse_data, texts

HEAD = {"id": "chatcmpl-C1", "object": "chat.completion.chunk", "created": 1751900000, "model": "gpt-4o-mini"}


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    """One streamed chunk as sent since late 2024: with ``"usage": null`` and an obfuscation key."""
    choice = {"index": 0, "delta": delta if delta is not None else {}, "logprobs": None, "finish_reason": finish}
    return {**HEAD, "system_fingerprint": "fp_1", "choices": [choice], "usage": None, "obfuscation": "k3Jx", **extra}


def opens(index: int, call_id: str, name: str) -> dict[str, Any]:
    """The first fragment of a call: id, type, name and empty arguments."""
    fragment = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    return chunk({"tool_calls": [fragment]})


def continues(index: int, arguments: str) -> dict[str, Any]:
    """A later fragment: only the index and a piece of the arguments."""
    return chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]})


def message_of(chunks: list[StreamChunk]) -> Message:
    message = final(chunks).message
    assert message is not None, chunks
    return message


USAGE = {
    "prompt_tokens": 1200,
    "completion_tokens": 17,
    "total_tokens": 1217,
    "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
}
USAGE_CHUNK = {**HEAD, "choices": [], "usage": USAGE, "obfuscation": "p"}

TEXT_BODY = sse_data(
    chunk({"role": "assistant", "content": "", "refusal": None}),
    chunk({"content": "Hel"}),
    chunk({"content": "lo, 世界"}),
    chunk({}, "stop"),
    USAGE_CHUNK,
    "[DONE]",
)


def test_a_text_stream_yields_each_piece_then_done_with_usage() -> None:
    chunks = assert_same_parse(TEXT_BODY, openai_stream)
    assert texts(chunks) == ["Hel", "lo, 世界"]
    usage = Usage(1200, 17, cache_read_tokens=1024)
    assert final(chunks) == StreamChunk(CHUNK_DONE, message=Message("assistant", "Hello, 世界"), usage=usage)


def test_interleaved_parallel_calls_split_inside_tokens_assemble_by_index() -> None:
    body = sse_data(
        chunk({"role": "assistant", "content": None}),
        opens(0, "call_A", "read_file"),
        continues(0, '{"lo'),
        opens(1, "call_B", "bash"),
        continues(0, "catio"),
        continues(1, '{"command":"l'),
        continues(0, 'n": "中"}'),
        continues(1, 's"}'),
        chunk({}, "tool_calls"),
        USAGE_CHUNK,
        "[DONE]",
    )
    chunks = assert_same_parse(body, openai_stream)
    assert texts(chunks) == []
    assert message_of(chunks) == Message(
        "assistant",
        "",
        (ToolCall("call_A", "read_file", '{"location": "中"}'), ToolCall("call_B", "bash", '{"command":"ls"}')),
    )


def test_calls_are_ordered_by_index_not_by_arrival() -> None:
    body = sse_data(opens(1, "second", "g"), opens(0, "first", "f"), "[DONE]")
    assert [c.id for c in message_of(openai_stream([body])).tool_calls] == ["first", "second"]


def test_id_and_name_are_the_first_non_empty_values_of_an_index() -> None:
    body = sse_data(
        chunk({"tool_calls": [{"index": 0, "id": "", "function": {"name": "", "arguments": "{"}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "}"}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "call_2", "function": {"name": "g", "arguments": None}}]}),
        "[DONE]",
    )
    assert message_of(openai_stream([body])).tool_calls == (ToolCall("call_1", "f", "{}"),)


def test_a_fragment_without_an_index_is_keyed_by_its_position() -> None:
    fragments = [{"id": "a", "function": {"name": "f", "arguments": "1"}}, {"id": "b", "function": {"name": "g"}}]
    body = sse_data(chunk({"tool_calls": fragments}), "[DONE]")
    assert message_of(openai_stream([body])).tool_calls == (ToolCall("a", "f", "1"), ToolCall("b", "g", ""))


def test_text_and_a_call_in_one_stream() -> None:
    body = sse_data(chunk({"content": "Let me check."}), opens(0, "c", "bash"), chunk({}, "tool_calls"), "[DONE]")
    chunks = assert_same_parse(body, openai_stream)
    expected = Message("assistant", "Let me check.", (ToolCall("c", "bash"),))
    assert final(chunks) == StreamChunk(CHUNK_DONE, message=expected)


def test_an_azure_filter_results_chunk_first_adds_nothing() -> None:
    filters = {"hate": {"filtered": False, "severity": "safe"}}
    azure_first = {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": filters}],
    }
    body = sse_data(azure_first, chunk({"content": "ok"}, content_filter_results={}), chunk({}, "stop"), "[DONE]")
    chunks = assert_same_parse(body, openai_stream)
    assert texts(chunks) == ["ok"]
    assert final(chunks).usage is None


def test_an_older_stream_without_usage_keys_has_no_usage() -> None:
    body = sse_data({**HEAD, "choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": None}]}, "[DONE]")
    assert final(openai_stream([body])) == StreamChunk(CHUNK_DONE, message=Message("assistant", "x"))


def test_the_last_non_null_usage_wins() -> None:
    early = {**USAGE_CHUNK, "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
    body = sse_data(chunk({"content": "x"}), early, USAGE_CHUNK, chunk({}), "[DONE]")
    assert final(openai_stream([body])).usage == Usage(1200, 17, cache_read_tokens=1024)


def test_refusal_pieces_are_text_in_arrival_order() -> None:
    body = sse_data(
        chunk({"content": None, "refusal": ""}), chunk({"refusal": "I can't"}), chunk({"refusal": " help."}), "[DONE]"
    )
    chunks = openai_stream([body])
    assert texts(chunks) == ["I can't", " help."]
    assert final(chunks).message == Message("assistant", "I can't help.")


def test_only_choice_zero_is_used() -> None:
    two = {**HEAD, "choices": [{"index": 1, "delta": {"content": "other"}}, {"delta": {"content": "mine"}}]}
    other_call = {"index": 1, "delta": {"tool_calls": [{"index": 0, "id": "x", "function": {"name": "f"}}]}}
    body = sse_data(two, {**HEAD, "choices": [other_call]}, "[DONE]")
    assert final(openai_stream([body])).message == Message("assistant", "mine")


def test_data_after_done_is_ignored() -> None:
    body = TEXT_BODY + sse_data(chunk({"content": "late"}), "not json at all")
    assert assert_same_parse(body, openai_stream) == assert_same_parse(TEXT_BODY, openai_stream)


def test_a_comment_keepalive_between_chunks_is_ignored() -> None:
    body = b": OPENROUTER PROCESSING\n\n" + TEXT_BODY
    assert final(assert_same_parse(body, openai_stream)).message == Message("assistant", "Hello, 世界")


def test_a_stream_without_done_is_cut_off() -> None:
    body = TEXT_BODY[: TEXT_BODY.index(b"data: [DONE]")]
    chunks = assert_same_parse(body, openai_stream)
    assert texts(chunks) == ["Hel", "lo, 世界"]
    assert final(chunks).type == CHUNK_ERROR
    assert final(chunks).error == "stream_cut_off: openai: the stream ended after 5 events without data: [DONE]"


def test_an_empty_body_is_cut_off() -> None:
    assert final(openai_stream([b""])).error.startswith("stream_cut_off: ")


def test_a_payload_that_is_not_json_is_a_stream_error_naming_the_event() -> None:
    body = sse_data(chunk({"content": "a"}), "{not json", "[DONE]")
    chunks = openai_stream([body])
    assert texts(chunks) == ["a"]
    assert final(chunks).error.startswith("malformed_stream: openai stream event 2: data is not JSON")


@pytest.mark.parametrize(
    ("payload", "named"),
    [
        ({"choices": "x"}, "choices"),
        ({"choices": [{"delta": {"content": 5}}]}, "choices[0].delta.content"),
        ({"choices": [{"delta": {"tool_calls": [{"index": "0"}]}}]}, "index"),
        ({"choices": [], "usage": {"prompt_tokens": "1"}}, "usage.prompt_tokens"),
        (
            {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c", "type": "custom", "custom": {}}]}}]},
            "choices[0].delta.tool_calls[0].type: expected 'function', got 'custom'",
        ),
        ({"choices": [{"delta": {"function_call": {"name": "f", "arguments": ""}}}]}, "delta.function_call"),
        ([1, 2], "data"),
    ],
)
def test_members_of_the_wrong_type_are_stream_errors(payload: Any, named: str) -> None:
    assembler = openai.StreamAssembler()
    with pytest.raises(ProviderStreamError) as info:
        assembler.feed(SSEEvent("", json.dumps(payload)))
    assert type(info.value) is ProviderStreamError
    assert "openai stream event 1: " in str(info.value) and named in str(info.value)


def test_an_error_payload_mid_stream_is_classified() -> None:
    error = {"message": "The server had an error", "type": "server_error", "param": None, "code": None}
    chunks = openai_stream([sse_data(chunk({"content": "a"}), {"error": error})])
    assert texts(chunks) == ["a"]
    assert final(chunks).error == "server_error: openai: stream server_error: The server had an error"


def test_an_error_status_gives_only_the_error_chunk() -> None:
    body = (
        b'{\n  "error": {\n    "message": "Incorrect API key provided: sk-abc***xyz.",\n'
        b'    "type": "invalid_request_error",\n    "param": null,\n    "code": "invalid_api_key"\n  }\n}\n'
    )
    chunks = openai.parse_stream(401, [("x-request-id", "req_7")], [body[:10], body[10:]])
    message = "openai: HTTP 401 invalid_request_error: Incorrect API key provided: sk-abc***xyz."
    assert chunks == [StreamChunk(CHUNK_ERROR, error=f"authentication: {message}")]


def test_the_assembler_reports_done_and_finish_raises_before_it() -> None:
    assembler = openai.StreamAssembler()
    assert assembler.feed(SSEEvent("", '{"choices":[{"delta":{"content":"x"}}]}')) == [StreamChunk("text", delta="x")]
    assert not assembler.done
    with pytest.raises(StreamCutOff):
        assembler.finish()
    assert assembler.feed(SSEEvent("", "[DONE]")) == []
    assert assembler.done
    assert assembler.finish() == (Message("assistant", "x"), None)


def test_null_function_call_and_tool_calls_members_are_not_calls() -> None:
    first = chunk({"role": "assistant", "content": None, "function_call": None, "tool_calls": None})
    body = sse_data(first, chunk({"content": "x"}), "[DONE]")
    assert final(openai_stream([body])) == StreamChunk(CHUNK_DONE, message=Message("assistant", "x"))
