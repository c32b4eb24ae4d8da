"""Parsing OpenAI non-streaming responses (harness9_ref/provider/openai/_response.py;
SPEC R-PRV-13, R-PRV-20, R-PRV-21, R-USE-2)."""

from __future__ import annotations

import pytest

from harness9_ref.provider import ContextLengthExceeded, MalformedResponse, RateLimitError, ServerError, openai
from harness9_ref.schema import Message, ToolCall, Usage

# A real tool-calling reply: pretty-printed, content null beside two parallel calls, details objects.
PARALLEL_CALLS = b"""{
  "id": "chatcmpl-BqR9x2YvTz",
  "object": "chat.completion",
  "created": 1751900000,
  "model": "gpt-4o-mini-2024-07-18",
  "choices": [
    {
      "index": 0,
      "message": {
        "role": "assistant",
        "content": null,
        "tool_calls": [
          {
            "id": "call_a1",
            "type": "function",
            "function": {
              "name": "read_file",
              "arguments": "{\\"path\\": \\"main.go\\"}"
            }
          },
          {
            "id": "call_b2",
            "type": "function",
            "function": {
              "name": "bash",
              "arguments": "{\\"command\\":\\"ls\\"}"
            }
          }
        ],
        "refusal": null,
        "annotations": []
      },
      "logprobs": null,
      "finish_reason": "tool_calls"
    }
  ],
  "usage": {
    "prompt_tokens": 2006,
    "completion_tokens": 300,
    "total_tokens": 2306,
    "prompt_tokens_details": {
      "cached_tokens": 1920,
      "audio_tokens": 0
    },
    "completion_tokens_details": {
      "reasoning_tokens": 128,
      "audio_tokens": 0,
      "accepted_prediction_tokens": 0,
      "rejected_prediction_tokens": 0
    }
  },
  "service_tier": "default",
  "system_fingerprint": null
}
"""

# An older body: no *_details, no logprobs key, a system_fingerprint string.
OLD_TEXT_REPLY = b"""{
  "id": "chatcmpl-8abc",
  "object": "chat.completion",
  "created": 1700000000,
  "model": "gpt-4-0613",
  "system_fingerprint": "fp_44709d6fcb",
  "choices": [
    {
      "index": 0,
      "message": {
        "role": "assistant",
        "content": "Hello there, how may I assist you today?"
      },
      "finish_reason": "stop"
    }
  ],
  "usage": {
    "prompt_tokens": 9,
    "completion_tokens": 12,
    "total_tokens": 21
  }
}
"""


def parse(body: bytes, status: int = 200) -> tuple[Message, Usage | None]:
    return openai.parse_response(status, [("content-type", "application/json")], body)


def test_parallel_tool_calls_with_null_content_keep_their_argument_strings() -> None:
    message, usage = parse(PARALLEL_CALLS)
    assert message == Message(
        "assistant",
        "",
        (ToolCall("call_a1", "read_file", '{"path": "main.go"}'), ToolCall("call_b2", "bash", '{"command":"ls"}')),
    )
    # prompt_tokens already includes the cached tokens; completion includes reasoning tokens.
    assert usage == Usage(2006, 300, cache_read_tokens=1920)


def test_an_old_body_without_details_gives_usage_without_cache_tokens() -> None:
    message, usage = parse(OLD_TEXT_REPLY)
    assert message == Message("assistant", "Hello there, how may I assist you today?")
    assert usage == Usage(9, 12)
    assert usage.cache_read_tokens is None and usage.cache_write_tokens is None


def test_compact_json_parses_the_same_as_pretty_printed() -> None:
    import json

    assert parse(json.dumps(json.loads(PARALLEL_CALLS), separators=(",", ":")).encode()) == parse(PARALLEL_CALLS)


def test_a_refusal_follows_the_content() -> None:
    body = b'{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can\'t help."}}]}'
    assert parse(body) == (Message("assistant", "I can't help."), None)
    both = b'{"choices":[{"message":{"content":"A. ","refusal":"B."}}]}'
    assert parse(both)[0].content == "A. B."


def with_calls(calls: bytes) -> bytes:
    return b'{"choices":[{"message":{"content":null,"tool_calls":' + calls + b"}}]}"


def test_a_missing_arguments_is_empty_and_absent_or_null_tool_calls_mean_none() -> None:
    body = with_calls(b'[{"id":"c","type":"function","function":{"name":"f"}}]')
    assert parse(body)[0].tool_calls == (ToolCall("c", "f", ""),)
    for calls in (b"null", b"[]"):
        assert parse(with_calls(calls))[0].tool_calls == ()
    assert parse(b'{"choices":[{"message":{"content":"x"}}]}')[0].tool_calls == ()


def test_invalid_argument_text_is_kept_exactly() -> None:
    body = with_calls(b'[{"id":"c","type":"function","function":{"name":"f","arguments":"{\\"a\\": tru"}}]')
    assert parse(body)[0].tool_calls[0].arguments == '{"a": tru'


def test_the_role_is_always_assistant_and_unknown_members_are_ignored() -> None:
    body = (
        b'{"obfuscation":"zz","choices":[{"index":0,"message":{"role":"robot","content":"x","audio":null},'
        b'"extra":{"deep":[1]}}],"usage":null}'
    )
    assert parse(body) == (Message("assistant", "x"), None)


def test_usage_members_that_are_missing_or_null_count_as_zero() -> None:
    body = (
        b'{"choices":[{"message":{"content":"x"}}],'
        b'"usage":{"prompt_tokens":5,"completion_tokens":null,"prompt_tokens_details":{"cached_tokens":null}}}'
    )
    assert parse(body)[1] == Usage(5, 0)


def test_an_escaped_lone_surrogate_becomes_the_replacement_character() -> None:
    body = b'{"choices":[{"message":{"content":"a\\ud800b \\ud83d\\ude00"}}]}'
    assert parse(body)[0].content == "a\ufffdb \U0001f600"


def test_a_utf8_byte_order_mark_is_tolerated() -> None:
    assert parse(b"\xef\xbb\xbf" + OLD_TEXT_REPLY)[1] == Usage(9, 12)


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (b"<html>Bad gateway</html>", "not JSON"),
        (b"", "not JSON"),
        (b'{"choices":[]}', "choices"),
        (b'{"id":"x"}', "choices"),
        (b'{"choices":null}', "choices"),
        (b"[1]", "body"),
        (b'{"choices":[{"message":{"content":null,"function_call":{"name":"f","arguments":"{}"}}}]}', "function_call"),
        (with_calls(b'[{"id":"c","type":"custom","custom":{"name":"f","input":"x"}}]'), "'custom'"),
        (with_calls(b'[{"id":"c","function":{"name":"f","arguments":"{}"}}]'), "type"),
        (b'{"choices":[{"message":{"content":[{"type":"text","text":"x"}]}}]}', "content"),
        (with_calls(b'[{"type":"function","function":{"name":"f"}}]'), "id"),
        (with_calls(b'[{"id":"c","type":"function","function":{"name":"f","arguments":{"a":1}}}]'), "arguments"),
        (b'{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":"5"}}', "prompt_tokens"),
        (b'{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":true}}', "prompt_tokens"),
        (b'{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":NaN}}', "not JSON"),
    ],
)
def test_unparseable_bodies_raise_malformed_response_naming_what_was_found(body: bytes, named: str) -> None:
    with pytest.raises(MalformedResponse) as info:
        parse(body)
    assert type(info.value) is MalformedResponse
    assert info.value.code == "malformed_response"
    assert named in str(info.value)
    assert str(info.value).startswith("openai: ")


def test_a_null_function_call_member_is_not_the_legacy_format() -> None:
    assert parse(b'{"choices":[{"message":{"content":"x","function_call":null}}]}')[0].content == "x"


def test_an_error_status_raises_the_classified_error() -> None:
    body = (
        b'{\n    "error": {\n        "message": "Rate limit reached for gpt-4o",\n        "type": "requests",\n'
        b'        "param": null,\n        "code": "rate_limit_exceeded"\n    }\n}\n'
    )
    with pytest.raises(RateLimitError) as info:
        openai.parse_response(429, [("retry-after", "2")], body)
    assert info.value.retry_after == 2
    assert str(info.value) == "openai: HTTP 429 requests: Rate limit reached for gpt-4o"


def test_an_error_object_in_a_2xx_body_is_a_server_error_or_context_length() -> None:
    with pytest.raises(ServerError, match="openai: HTTP 200 server_error: boom"):
        parse(b'{"error":{"message":"boom","type":"server_error","code":null}}')
    with pytest.raises(ContextLengthExceeded):
        parse(b'{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}')
