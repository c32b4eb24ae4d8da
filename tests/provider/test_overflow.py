"""Context-window overflows in every wording the common servers use (SPEC R-ERR-8, R-ERR-9,
R-ERR-10; harness9_ref/provider/_classify.py).

Each recorded refusal must become ``ContextLengthExceeded`` (the engine's overflow recovery keys
on its code), and an ordinary 400 that merely speaks of a length must not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.traffic._record import load_exchange
from harness9_ref.provider import (
    ANTHROPIC_OVERFLOW_PHRASES,
    OPENAI_OVERFLOW_PHRASES,
    ContextLengthExceeded,
    InvalidRequestError,
    ModelNotFound,
    ProviderError,
    RateLimitError,
    anthropic,
    openai,
)
from harness9_ref.provider._classify import BODY_RULES
from harness9_ref.schema import CHUNK_ERROR
from tests.provider.helpers import assert_same_parse, final, sse_data

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "providers"
JSON = [("content-type", "application/json")]

OVERFLOW_FIXTURES = [
    "openai/error-vllm-legacy-body",
    "openai/error-vllm-context-length",
    "openai/error-llama-cpp-context-size",
    "openai/error-litellm-context-window",
    "openai/error-openrouter-context-length",
    "openai/error-ollama-context-length",
    "anthropic/error-input-plus-max-tokens",
]


def _raised(provider: str, status: int, body: object) -> ProviderError:
    wire = openai if provider == "openai" else anthropic
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    with pytest.raises(ProviderError) as caught:
        wire.parse_response(status, JSON, raw)
    return caught.value


@pytest.mark.parametrize("name", OVERFLOW_FIXTURES)
def test_every_recorded_overflow_is_context_length_exceeded(name: str) -> None:
    exchange = load_exchange(FIXTURES / name)
    wire = openai if exchange.provider == "openai" else anthropic
    with pytest.raises(ContextLengthExceeded) as caught:
        wire.parse_response(exchange.status, exchange.headers, exchange.body)
    assert str(caught.value) == exchange.expect["error"]["message"]


def test_an_ordinary_400_about_a_maximum_length_stays_invalid_request() -> None:
    exchange = load_exchange(FIXTURES / "openai/error-string-above-max-length")
    with pytest.raises(InvalidRequestError) as caught:
        openai.parse_response(exchange.status, exchange.headers, exchange.body)
    assert not isinstance(caught.value, ContextLengthExceeded)


def test_the_phrases_are_lower_case_lines_and_openai_relays_anthropic_words() -> None:
    openai_phrases = OPENAI_OVERFLOW_PHRASES.splitlines()
    assert all(p == p.lower() and p.isascii() for p in openai_phrases)
    assert openai_phrases[-2:] == ANTHROPIC_OVERFLOW_PHRASES.splitlines()


def test_phrases_match_ignoring_case_whatever_the_code_and_status() -> None:
    shouted = {"error": {"message": "MAXIMUM CONTEXT LENGTH exceeded", "type": None, "code": "400"}}
    assert isinstance(_raised("openai", 400, shouted), ContextLengthExceeded)
    # body rules come before the status rules: the words win over 429
    assert isinstance(_raised("openai", 429, shouted), ContextLengthExceeded)
    ordinary = {"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}
    assert isinstance(_raised("openai", 429, ordinary), RateLimitError)


def test_the_llama_cpp_type_alone_is_an_overflow() -> None:
    words = "input (9412 tokens) is larger than the max context size"
    body = {"error": {"code": 400, "message": words, "type": "exceed_context_size_error"}}
    error = _raised("openai", 400, body)
    assert isinstance(error, ContextLengthExceeded)
    assert str(error).startswith("openai: HTTP 400 exceed_context_size_error: ")


def test_openai_rules_do_not_apply_to_anthropic_bodies_and_the_reverse() -> None:
    words_only = {"type": "error", "error": {"type": "api_error", "message": "maximum context length"}}
    assert not isinstance(_raised("anthropic", 500, words_only), ContextLengthExceeded)
    shouted = "Input length and `max_tokens` EXCEED CONTEXT LIMIT: 1 + 2 > 2"
    refused = {"type": "error", "error": {"type": "invalid_request_error", "message": shouted}}
    assert isinstance(_raised("anthropic", 400, refused), ContextLengthExceeded)
    not_a_request_error = {"type": "error", "error": {"type": "overloaded_error", "message": "exceed context limit"}}
    assert not isinstance(_raised("anthropic", 529, not_a_request_error), ContextLengthExceeded)


def test_rules_are_ordered_first_match_wins() -> None:
    openai_rules = [r for r in BODY_RULES if r.provider == "openai"]
    assert [(r.field, r.error) for r in openai_rules] == [
        ("code", ContextLengthExceeded),
        ("type", ContextLengthExceeded),
        (None, ContextLengthExceeded),
        ("code", ModelNotFound),  # R-ERR-11, after the overflow rules of R-ERR-9
    ]


def test_the_legacy_vllm_body_is_its_own_error_object_for_openai_only() -> None:
    words = "This model's maximum context length is 4096 tokens."
    legacy = {"object": "error", "message": words, "type": "BadRequestError", "param": None, "code": 400}
    error = _raised("openai", 400, legacy)
    assert isinstance(error, ContextLengthExceeded)
    assert (str(error), error.error_type) == (
        "openai: HTTP 400 BadRequestError: This model's maximum context length is 4096 tokens.",
        "BadRequestError",
    )
    without_object = {k: v for k, v in legacy.items() if k != "object"}
    plain = _raised("openai", 400, without_object)
    assert type(plain) is InvalidRequestError and plain.error_type is None
    assert type(_raised("anthropic", 400, legacy)) is InvalidRequestError


def test_an_overflow_inside_an_openai_stream_ends_in_its_error_chunk() -> None:
    words = "This model's maximum context length is 4096 tokens."
    payload = {"error": {"object": "error", "message": words, "type": "BadRequestError", "param": None, "code": 400}}
    chunks = assert_same_parse(sse_data(payload, "[DONE]"), lambda c: openai.parse_stream(200, [], c))
    last = final(chunks)
    assert last.type == CHUNK_ERROR
    assert last.error == f"context_length_exceeded: openai: stream BadRequestError: {words}"


def test_an_overflow_inside_an_anthropic_stream_ends_in_its_error_chunk() -> None:
    words = "input length and `max_tokens` exceed context limit: 1 + 2 > 2"
    event = {"type": "error", "error": {"type": "invalid_request_error", "message": words}}
    chunks = anthropic.parse_stream(200, [], [sse_data(event)])
    assert final(chunks).error.startswith("context_length_exceeded: anthropic: stream invalid_request_error: ")
