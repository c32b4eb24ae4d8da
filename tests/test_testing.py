"""The scripted provider and registry (harness9_ref/testing.py; SPEC R-PRV-1, R-PRV-19, R-TOOL-1)."""

from __future__ import annotations

import pytest

from harness9_ref.engine import ToolRegistry
from harness9_ref.provider import LLMProvider, OverloadedError, ProviderError, ScriptExhausted
from harness9_ref.schema import CHUNK_DONE, CHUNK_ERROR, CHUNK_TEXT, SchemaError, StreamChunk, ToolDefinition, Usage
from harness9_ref.testing import Failure, Reply, ScriptedProvider, ScriptedRegistry, ScriptRequest, steps_from_json
from tests.fakes import assistant, call, user

ASK = [user("hi")]
TOOL = ToolDefinition("bash", "Run.", {"type": "object"})


def stream(provider: ScriptedProvider) -> list[StreamChunk]:
    return list(provider.generate_stream(ASK, [TOOL]))


def test_a_reply_streams_its_content_as_one_chunk_then_done_with_its_usage() -> None:
    provider = ScriptedProvider([Reply(assistant("Hello"), Usage(10, 2))])
    assert stream(provider) == [
        StreamChunk(CHUNK_TEXT, delta="Hello"),
        StreamChunk(CHUNK_DONE, message=assistant("Hello"), usage=Usage(10, 2)),
    ]


def test_a_reply_without_content_streams_no_text_chunk() -> None:
    message = assistant("", call("c1"))
    assert stream(ScriptedProvider([message])) == [StreamChunk(CHUNK_DONE, message=message)]


def test_explicit_chunks_stream_as_given() -> None:
    provider = ScriptedProvider([Reply(assistant("Two files."), chunks=("Two", " files", "."))])
    assert [c.delta for c in stream(provider)] == ["Two", " files", ".", ""]


def test_a_failure_streams_its_chunks_then_the_error_chunk() -> None:
    provider = ScriptedProvider([Failure("rate_limit", "openai: HTTP 429: slow down", ("par", "tial"))])
    assert stream(provider) == [
        StreamChunk(CHUNK_TEXT, delta="par"),
        StreamChunk(CHUNK_TEXT, delta="tial"),
        StreamChunk(CHUNK_ERROR, error="rate_limit: openai: HTTP 429: slow down"),
    ]


def test_an_exception_is_raised_when_the_stream_is_first_advanced() -> None:
    provider = ScriptedProvider([RuntimeError("boom")])
    chunks = provider.generate_stream(ASK, [])
    assert provider.requests == []
    with pytest.raises(RuntimeError, match="boom"):
        next(iter(chunks))
    assert len(provider.requests) == 1


def test_an_exhausted_script_ends_in_a_script_exhausted_error_chunk() -> None:
    provider = ScriptedProvider([assistant("one")])
    stream(provider)
    chunks = stream(provider)
    assert len(chunks) == 1 and chunks[0].type == CHUNK_ERROR
    assert chunks[0].error == (
        "script_exhausted: scripted: the script is exhausted: all 1 steps were used and call 2 asked for another"
    )


def test_every_request_is_recorded_with_its_messages_and_tools() -> None:
    provider = ScriptedProvider([assistant("a"), assistant("b")])
    stream(provider)
    provider.generate([user("again")], [])
    assert provider.requests == [ScriptRequest(tuple(ASK), (TOOL,)), ScriptRequest((user("again"),), ())]
    assert provider.remaining == 0


def test_generate_takes_the_same_steps() -> None:
    provider = ScriptedProvider(
        [Reply(assistant("a"), Usage(3, 4)), Failure("overloaded", "busy"), Failure("weird_code", "odd"), KeyError("k")]
    )
    assert provider.generate(ASK, []) == (assistant("a"), Usage(3, 4))
    with pytest.raises(OverloadedError, match="busy"):
        provider.generate(ASK, [])
    with pytest.raises(ProviderError) as info:
        provider.generate(ASK, [])
    assert (info.value.code, info.value.chunk_text()) == ("weird_code", "weird_code: odd")
    with pytest.raises(KeyError):
        provider.generate(ASK, [])
    with pytest.raises(ScriptExhausted):
        provider.generate(ASK, [])


def test_the_scripted_provider_is_an_llm_provider() -> None:
    assert isinstance(ScriptedProvider([]), LLMProvider)


def test_steps_are_read_from_json() -> None:
    steps = steps_from_json(
        [
            {"message": {"role": "assistant", "content": "hi"}},
            {
                "message": {"role": "assistant", "content": "ab"},
                "usage": {"input_tokens": 5, "output_tokens": 1},
                "chunks": ["a", "b"],
            },
            {"error": {"code": "timeout", "message": "slow"}, "chunks": ["x"]},
            {"raise": "boom"},
        ]
    )
    assert steps[:3] == [
        Reply(assistant("hi")),
        Reply(assistant("ab"), Usage(5, 1), ("a", "b")),
        Failure("timeout", "slow", ("x",)),
    ]
    assert isinstance(steps[3], RuntimeError) and str(steps[3]) == "boom"


@pytest.mark.parametrize(
    ("item", "error"),
    [
        ({"nothing": 1}, ValueError),
        ({"error": "overloaded"}, ValueError),
        ({"error": {"code": "x"}}, ValueError),
        ({"message": {"role": "tool", "content": ""}}, SchemaError),
        ({"message": {"role": "assistant", "content": ""}, "chunks": "ab"}, ValueError),
    ],
)
def test_bad_json_steps_are_refused(item: dict[str, object], error: type[Exception]) -> None:
    with pytest.raises(error):
        steps_from_json([item])


def test_a_registry_answers_per_tool_name_with_a_fixed_text_or_a_list_in_order() -> None:
    registry = ScriptedRegistry([TOOL], {"bash": "a.go\nb.go", "read_file": ["first", "second"]})
    assert registry.available_tools() == [TOOL]
    assert registry.execute("bash", "{}") == "a.go\nb.go"
    assert registry.execute("bash", "") == "a.go\nb.go"
    assert registry.execute("read_file", "1") == "first"
    assert registry.execute("read_file", "2") == "second"
    assert registry.execute("read_file", "3") == "error: no scripted result for call 3 to 'read_file'"
    assert registry.execute("grep", "{}") == 'error: unknown tool "grep"'
    assert registry.calls == [
        ("bash", "{}"), ("bash", ""), ("read_file", "1"), ("read_file", "2"), ("read_file", "3"), ("grep", "{}")
    ]  # fmt: skip


def test_a_registry_answers_in_call_order_whatever_the_name() -> None:
    registry = ScriptedRegistry([], ["one", ValueError("two")])
    assert registry.execute("x", "") == "one"
    with pytest.raises(ValueError, match="two"):
        registry.execute("y", "")
    assert registry.execute("z", "") == "error: no scripted result for call 3 to 'z'"


def test_a_registry_is_read_from_json_and_is_a_tool_registry() -> None:
    registry = ScriptedRegistry.from_json(
        {
            "tools": [{"name": "bash", "description": "Run.", "input_schema": {"type": "object"}}],
            "results": {"bash": "ok"},
        }
    )
    assert isinstance(registry, ToolRegistry)
    assert registry.available_tools() == [TOOL]
    assert registry.execute("bash", "{}") == "ok"
