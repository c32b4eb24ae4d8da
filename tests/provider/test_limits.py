"""The model context-window registry (harness9_ref/provider/_limits.py; SPEC R-LIM-1 … R-LIM-5)."""

from __future__ import annotations

import pytest

from harness9_ref.provider import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_OUTPUT_TOKENS,
    MODEL_REGISTRY,
    ModelLimits,
    get_model_limits,
    normalize_model_name,
)

UNKNOWN = ModelLimits(256_000, 8192)


# Every row of R-LIM-4's table, by its representative models.
@pytest.mark.parametrize(
    ("model", "context_tokens"),
    [
        ("claude-opus-4", 200_000),
        ("claude-sonnet-4", 200_000),
        ("claude-haiku-4", 200_000),
        ("claude-3-5-sonnet", 200_000),
        ("claude-3-opus", 200_000),
        ("gpt-4o", 128_000),
        ("gpt-4o-mini", 128_000),
        ("gpt-4.5-preview", 128_000),
        ("o3", 200_000),
        ("o4-mini", 200_000),
        ("gemini-2.0-flash", 1_048_576),
        ("deepseek-chat", 64_000),
        ("deepseek-r1", 64_000),
        ("qwen-plus", 131_072),
        ("qwen-max", 131_072),
    ],
)
def test_every_model_of_the_seed_table_has_its_context_window(model: str, context_tokens: int) -> None:
    assert get_model_limits(model).context_tokens == context_tokens


def test_unknown_models_get_the_conservative_default() -> None:
    assert (DEFAULT_CONTEXT_TOKENS, DEFAULT_OUTPUT_TOKENS) == (256_000, 8192)
    assert get_model_limits("llama-3-70b") == UNKNOWN
    assert get_model_limits("") == UNKNOWN


@pytest.mark.parametrize(
    ("model", "same_as"),
    [
        ("openai/gpt-4o", "gpt-4o"),
        ("openrouter/anthropic/claude-sonnet-4", "claude-sonnet-4"),
        ("a/b/c/deepseek-chat", "deepseek"),
        ("models/gemini-2.0-flash", "gemini-2"),
        ("GPT-4o", "gpt-4o"),
        ("OpenAI/GPT-4O-MINI", "gpt-4o-mini"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-sonnet-4@20250514", "claude-sonnet-4"),
        ("deepseek:latest", "deepseek"),
        ("gemini-2.0-flash-001", "gemini-2"),
        ("qwen.max", "qwen"),
    ],
)
def test_prefixes_case_dates_and_separators_find_the_family(model: str, same_as: str) -> None:
    assert get_model_limits(model) == get_model_limits(same_as) != UNKNOWN


@pytest.mark.parametrize(
    "model", ["gpt-4oz", "o3x", "o10", "deepseekv3", "qwen2", "qwen2.5-72b", "claude-3opus", "openai/", "gpt-4o/"]
)
def test_a_family_key_followed_by_anything_but_a_separator_does_not_match(model: str) -> None:
    assert get_model_limits(model) == UNKNOWN


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("claude-3-5-sonnet-20241022", "claude-3-5"),
        ("claude-3-7-sonnet", "claude-3-7"),
        ("claude-3-7-sonnet-latest", "claude-3-7"),
        ("claude-3-opus-20240229", "claude-3"),
        ("gemini-2.5-pro", "gemini-2.5"),
    ],
)
def test_the_longest_matching_key_wins(model: str, key: str) -> None:
    assert get_model_limits(model) == {k: limits for k, limits, _ in MODEL_REGISTRY}[key]


def test_normalize_strips_up_to_the_last_slash_and_lower_cases() -> None:
    assert normalize_model_name("OpenRouter/Anthropic/Claude-Sonnet-4") == "claude-sonnet-4"
    assert normalize_model_name("gpt-4o") == "gpt-4o"


def test_every_registry_row_is_a_unique_lower_case_key_with_positive_limits_and_an_https_source() -> None:
    keys = [key for key, _, _ in MODEL_REGISTRY]
    assert len(keys) == len(set(keys))
    for key, limits, source in MODEL_REGISTRY:
        assert key == normalize_model_name(key), key
        assert limits.context_tokens > 0 and limits.output_tokens > 0, key
        assert source.startswith("https://"), key


def test_the_registry_covers_every_family_key_of_d4() -> None:
    registry = {key: limits.context_tokens for key, limits, _ in MODEL_REGISTRY}
    assert registry.items() >= {
        "claude-opus-4": 200_000,
        "claude-sonnet-4": 200_000,
        "claude-haiku-4": 200_000,
        "claude-3": 200_000,
        "gpt-4o": 128_000,
        "gpt-4.5": 128_000,
        "o3": 200_000,
        "o4-mini": 200_000,
        "gemini-2": 1_048_576,
        "deepseek": 64_000,
        "qwen": 131_072,
    }.items()
