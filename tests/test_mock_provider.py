"""The design's mock provider (harness9_ref/testing.py; SPEC R-PRV-23, R-USE-6, R-PRV-19)."""

from __future__ import annotations

import pytest

from harness9_ref.memory.context import SummarizationCompactor
from harness9_ref.provider import LLMProvider, ProviderError, ScriptExhausted
from harness9_ref.schema import CHUNK_DONE, CHUNK_ERROR, CHUNK_TEXT, Message, StreamChunk, ToolCall, ToolDefinition
from harness9_ref.testing import MockProvider

REPLIES = [Message("assistant", "first"), Message("assistant", "", (ToolCall("c", "bash", '{"command":"ls"}'),))]
ASK = [Message("user", "hi")]


def test_replies_come_back_in_order_without_usage() -> None:
    provider = MockProvider(REPLIES)
    assert provider.generate(ASK, []) == (REPLIES[0], None)
    assert provider.generate(ASK, []) == (REPLIES[1], None)
    assert provider.remaining == 0


def test_an_exhausted_script_raises_a_provider_error_coded_script_exhausted() -> None:
    provider = MockProvider([])
    with pytest.raises(ProviderError) as info:
        provider.generate(ASK, [])
    assert isinstance(info.value, ScriptExhausted)
    assert info.value.code == "script_exhausted"
    assert info.value.provider == "mock"
    assert "exhausted" in str(info.value)


def test_a_stream_is_one_text_chunk_then_done_without_usage() -> None:
    provider = MockProvider(REPLIES)
    assert list(provider.generate_stream(ASK, [])) == [
        StreamChunk(CHUNK_TEXT, delta="first"),
        StreamChunk(CHUNK_DONE, message=REPLIES[0]),
    ]
    assert list(provider.generate_stream(ASK, [])) == [StreamChunk(CHUNK_DONE, message=REPLIES[1])]


def test_an_exhausted_stream_ends_in_an_error_chunk_instead_of_raising() -> None:
    chunks = list(MockProvider([]).generate_stream(ASK, []))
    assert len(chunks) == 1 and chunks[0].type == CHUNK_ERROR
    assert chunks[0].error.startswith("script_exhausted: mock: the script is exhausted")


def test_requests_are_recorded() -> None:
    tools = [ToolDefinition("bash", "Run.")]
    provider = MockProvider(REPLIES)
    provider.generate(ASK, tools)
    assert provider.requests == [(tuple(ASK), tuple(tools))]


def test_it_is_an_llm_provider_and_a_summarizer() -> None:
    provider = MockProvider([Message("assistant", "**Goal:** summary")])
    assert isinstance(provider, LLMProvider)
    compactor = SummarizationCompactor(provider, max_tokens=1, min_tail_messages=1)
    history = [Message("system", "s"), Message("user", "a" * 40), Message("assistant", "b" * 40), Message("user", "c")]
    compacted = compactor.compact(history)
    assert compacted[1].content.endswith("**Goal:** summary")
    assert compactor.failures == []
