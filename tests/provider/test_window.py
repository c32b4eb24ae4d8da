"""What a provider tells about the context window: Anthropic's exact count and every provider's
reply reserve (SPEC R-PRV-24, R-PRV-25, R-PRV-26; harness9_ref/provider/_base.py, _providers.py,
anthropic/_request.py, anthropic/_response.py).
"""

from __future__ import annotations

import json

import pytest

from harness9_ref.offline import OfflineProvider
from harness9_ref.provider import (
    DEFAULT_OUTPUT_TOKENS,
    AnthropicProvider,
    AuthenticationError,
    ContextLengthExceeded,
    MalformedResponse,
    OpenAIProvider,
    RateLimitError,
    RequestBuildError,
    ReservesOutput,
    TokenCounter,
    anthropic,
    get_model_limits,
    reserved_output_tokens_of,
)
from harness9_ref.schema import Message, ToolDefinition
from harness9_ref.testing import MockProvider, ScriptedProvider
from tests.provider.helpers import loopback, reply

KEY = "sk-window-test-KEY-1234"
MODEL = "claude-sonnet-4-20250514"
ASK = [Message("system", "Be brief."), Message("user", "hi")]
TOOLS = [ToolDefinition("read_file", "Read a file", {"type": "object", "properties": {}})]
JSON = [("content-type", "application/json")]


def test_the_count_request_is_the_message_request_without_max_tokens_and_stream() -> None:
    message = anthropic.build_request(MODEL, ASK, TOOLS, stream=True, api_key=KEY, base_url="http://h/")
    count = anthropic.build_count_request(MODEL, ASK, TOOLS, api_key=KEY, base_url="http://h/")
    assert count.method == "POST"
    assert count.url == "http://h/v1/messages/count_tokens"
    sent = json.loads(message.body)
    del sent["max_tokens"], sent["stream"]
    assert json.loads(count.body) == sent
    headers = {name.lower(): value for name, value in count.headers}
    assert headers["accept"] == "application/json"
    assert (headers["x-api-key"], headers["anthropic-version"]) == (KEY, anthropic.API_VERSION)


def test_a_history_that_cannot_be_sent_cannot_be_counted() -> None:
    with pytest.raises(RequestBuildError):
        anthropic.build_count_request(MODEL, [Message("system", "only a prompt")], [], api_key=KEY)


def test_the_count_answer_is_its_input_tokens_and_unknown_members_are_ignored() -> None:
    assert anthropic.parse_count_response(200, JSON, b'{"input_tokens": 2095, "context_management": null}') == 2095
    assert anthropic.parse_count_response(200, JSON, b'{"input_tokens": 0}') == 0


@pytest.mark.parametrize(
    "body",
    [b"{}", b'{"input_tokens": null}', b'{"input_tokens": 31.0}', b'{"input_tokens": true}', b'{"input_tokens": -1}',
     b'{"input_tokens": "31"}', b"[31]", b"input_tokens=31"],
)
def test_a_malformed_count_answer_is_malformed_response(body: bytes) -> None:
    with pytest.raises(MalformedResponse):
        anthropic.parse_count_response(200, JSON, body)


def test_a_refused_count_is_classified_as_any_anthropic_error() -> None:
    body = json.dumps({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}).encode()
    with pytest.raises(RateLimitError) as caught:
        anthropic.parse_count_response(429, [*JSON, ("retry-after", "3")], body)
    assert caught.value.retry_after == 3.0
    too_long = json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 3 > 2"}})
    with pytest.raises(ContextLengthExceeded):
        anthropic.parse_count_response(200, JSON, too_long.encode())


def test_anthropic_provider_counts_over_http_and_redacts_the_key() -> None:
    with loopback(reply(200, b'{"input_tokens": 31}', JSON)) as server:
        provider = AnthropicProvider(MODEL, KEY, base_url=server.url)
        assert provider.count_tokens(ASK, TOOLS) == 31
    sent = server.received[0]
    assert (sent.path, sent.header("x-api-key")) == ("/v1/messages/count_tokens", KEY)
    assert "max_tokens" not in json.loads(sent.body)
    echo = json.dumps({"type": "error", "error": {"type": "authentication_error", "message": f"bad key {KEY}"}}).encode()
    with loopback(reply(401, echo, JSON)) as server, pytest.raises(AuthenticationError) as caught:
        AnthropicProvider(MODEL, KEY, base_url=server.url).count_tokens(ASK, [])
    assert KEY not in str(caught.value) and "[redacted]" in str(caught.value)


def test_only_the_anthropic_provider_is_a_token_counter() -> None:
    assert isinstance(AnthropicProvider(MODEL, KEY), TokenCounter)
    assert not isinstance(OpenAIProvider("gpt-4o-mini", KEY), TokenCounter)
    assert not isinstance(MockProvider([]), TokenCounter)


def test_the_reserve_is_the_max_tokens_each_provider_sends() -> None:
    claude = AnthropicProvider(MODEL, KEY)
    assert claude.reserved_output_tokens == get_model_limits(MODEL).output_tokens == 64000
    assert json.loads(anthropic.build_request(MODEL, ASK, [], stream=False, api_key=KEY).body)["max_tokens"] == 64000
    assert AnthropicProvider("my-proxy/unknown-model", KEY).reserved_output_tokens == DEFAULT_OUTPUT_TOKENS
    assert OpenAIProvider("gpt-4o-mini", KEY).reserved_output_tokens == 0


def test_every_provider_declares_a_reserve_and_the_helper_defaults_to_zero() -> None:
    http = (AnthropicProvider(MODEL, KEY), OpenAIProvider("m", KEY))
    for provider in (*http, OfflineProvider(), MockProvider([]), ScriptedProvider([])):
        assert isinstance(provider, ReservesOutput)
    assert reserved_output_tokens_of(MockProvider([])) == 0 and reserved_output_tokens_of(OfflineProvider()) == 0
    assert reserved_output_tokens_of(ScriptedProvider([], reserved_output_tokens=4096)) == 4096
    assert reserved_output_tokens_of(AnthropicProvider(MODEL, KEY)) == 64000
    assert reserved_output_tokens_of(object()) == 0
