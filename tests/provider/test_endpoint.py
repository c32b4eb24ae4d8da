"""The official endpoint, the request model and the server a base URL names, as tables (SPEC R-PRV-27, R-TUI-26)."""

from __future__ import annotations

import pytest

from harness9_ref.provider import (
    DEFAULT_ANTHROPIC_BASE_URL,
    DEFAULT_OPENAI_BASE_URL,
    AnthropicProvider,
    OpenAIProvider,
    is_official_endpoint,
    request_model,
    server_name,
)


@pytest.mark.parametrize(
    ("provider", "base_url", "official"),
    [
        ("openai", "https://api.openai.com/v1", True),
        ("openai", "https://api.openai.com/v1/", True),  # R-PRV-3's one trailing slash
        ("openai", "HTTPS://API.OpenAI.com/v1/", True),  # scheme and host ignore ASCII case
        ("openai", "https://api.openai.com/v1//", False),  # one slash stays: another path
        ("openai", "https://api.openai.com/V1", False),  # the path compares exactly
        ("openai", "https://api.openai.com:443/v1", False),  # a port written out is another spelling
        ("openai", "https://api.openai.com", False),
        ("openai", "http://api.openai.com/v1", False),
        ("openai", "https://api.openai.com.evil.test/v1", False),
        ("openai", "https://openrouter.ai/api/v1", False),
        ("openai", "http://127.0.0.1:8080/v1", False),
        ("openai", "https://api.anthropic.com", False),  # the other vendor's endpoint
        ("anthropic", "https://api.anthropic.com", True),
        ("anthropic", "https://api.anthropic.com/", True),
        ("anthropic", "https://API.ANTHROPIC.COM", True),
        ("anthropic", "https://api.anthropic.com/v1", False),
        ("anthropic", "https://api.openai.com/v1", False),
        ("anthropic", "http://127.0.0.1:9000", False),
        ("offline", "https://api.openai.com/v1", False),  # no official endpoint
        ("openai", "https://api.openaİ.com/v1", False),  # a non-ASCII host is never it
    ],
)
def test_the_official_endpoint_is_the_default_base_url_however_spelled(
    provider: str, base_url: str, official: bool
) -> None:
    assert is_official_endpoint(provider, base_url) is official


@pytest.mark.parametrize(
    ("provider", "model", "base_url", "sent"),
    [
        ("openai", "openai/gpt-4o-mini", DEFAULT_OPENAI_BASE_URL, "gpt-4o-mini"),
        ("openai", "OpenAI/gpt-4o-mini", DEFAULT_OPENAI_BASE_URL, "gpt-4o-mini"),  # ASCII case ignored
        ("openai", "openai/openai/x", DEFAULT_OPENAI_BASE_URL, "openai/x"),  # removed once
        ("openai", "gpt-4o-mini", DEFAULT_OPENAI_BASE_URL, "gpt-4o-mini"),
        ("openai", "anthropic/claude-sonnet-4", DEFAULT_OPENAI_BASE_URL, "anthropic/claude-sonnet-4"),
        ("openai", "openai", DEFAULT_OPENAI_BASE_URL, "openai"),  # no prefix without its slash
        ("openai", "openai/", DEFAULT_OPENAI_BASE_URL, ""),
        ("openai", "openaix/gpt", DEFAULT_OPENAI_BASE_URL, "openaix/gpt"),
        ("openai", "openai/gpt-4o-mini", "https://openrouter.ai/api/v1", "openai/gpt-4o-mini"),
        ("openai", "openai/gpt-4o-mini", "http://127.0.0.1:8080/v1", "openai/gpt-4o-mini"),
        ("anthropic", "anthropic/claude-sonnet-4-20250514", DEFAULT_ANTHROPIC_BASE_URL, "claude-sonnet-4-20250514"),
        ("anthropic", "openai/gpt-4o", DEFAULT_ANTHROPIC_BASE_URL, "openai/gpt-4o"),
        ("anthropic", "anthropic/claude-3-7", "http://127.0.0.1:9000", "anthropic/claude-3-7"),
        ("offline", "offline/x", DEFAULT_OPENAI_BASE_URL, "offline/x"),
    ],
)
def test_the_request_model_drops_the_providers_own_prefix_on_its_official_endpoint_only(
    provider: str, model: str, base_url: str, sent: str
) -> None:
    assert request_model(provider, model, base_url) == sent


def test_providers_say_which_model_their_requests_carry() -> None:
    assert OpenAIProvider("openai/gpt-4o-mini", "k").request_model == "gpt-4o-mini"
    assert OpenAIProvider("openai/gpt-4o-mini", "k", "https://openrouter.ai/api/v1").request_model == "openai/gpt-4o-mini"
    assert AnthropicProvider("anthropic/claude-3-7", "k").request_model == "claude-3-7"


@pytest.mark.parametrize(
    ("base_url", "server"),
    [
        ("http://127.0.0.1:8080/v1", "127.0.0.1:8080"),  # llama-server
        ("http://localhost:11434/v1/", "localhost:11434"),  # Ollama
        ("https://openrouter.ai/api/v1", "openrouter.ai"),
        ("http://[::1]:8000/v1", "[::1]:8000"),
        ("https://user:secret@proxy.example/v1", "proxy.example"),  # the password is never shown
        ("https://a:b@c@Proxy.Example:8443?x=@y", "Proxy.Example:8443"),  # the last @ of the authority; case kept
        ("http://host#frag@x", "host"),
        ("http://host/path@x", "host"),  # an @ in the path is not the authority's
        ("no-scheme", ""),
        ("http://", ""),
    ],
)
def test_the_server_is_the_authority_without_user_information(base_url: str, server: str) -> None:
    """R-TUI-26."""
    assert server_name(base_url) == server
