"""The model context-window registry (SPEC R-LIM-1 … R-LIM-5).

Lookup strips a routing prefix ("openai/gpt-4o" -> "gpt-4o"), lower-cases, and takes the longest
family key that equals the name or is followed in it by one of SEPARATORS, so dated and
variant names ("gpt-4o-2024-08-06", "claude-sonnet-4@20250514") find their family.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = [
    "DEFAULT_CONTEXT_TOKENS",
    "DEFAULT_OUTPUT_TOKENS",
    "MODEL_REGISTRY",
    "ModelLimits",
    "get_model_limits",
    "normalize_model_name",
]


@dataclass(frozen=True, slots=True)
class ModelLimits:
    """A model's input context window and maximum output, in tokens."""

    context_tokens: int
    output_tokens: int


DEFAULT_CONTEXT_TOKENS: Final = 256_000  # R-LIM-3: an unknown model gets a conservative 256K
DEFAULT_OUTPUT_TOKENS: Final = 8192  # R-LIM-3
SEPARATORS: Final = "-.:@"  # R-LIM-2: what may follow a family key inside a model name

_ANTHROPIC: Final = "https://docs.anthropic.com/en/docs/about-claude/models/overview"
_OPENAI: Final = "https://platform.openai.com/docs/models/"
_GEMINI: Final = "https://ai.google.dev/gemini-api/docs/models"
_DEEPSEEK: Final = "https://api-docs.deepseek.com/quick_start/pricing"
_QWEN: Final = "https://www.alibabacloud.com/help/en/model-studio/models"

# R-LIM-4: (family key, limits, vendor source). Every row of R-LIM-4's table is here.
MODEL_REGISTRY: Final[tuple[tuple[str, ModelLimits, str], ...]] = (
    ("claude-opus-4", ModelLimits(200_000, 32_000), _ANTHROPIC),
    ("claude-sonnet-4", ModelLimits(200_000, 64_000), _ANTHROPIC),
    ("claude-haiku-4", ModelLimits(200_000, 64_000), _ANTHROPIC),
    ("claude-3", ModelLimits(200_000, 4096), _ANTHROPIC),
    ("claude-3-5", ModelLimits(200_000, 8192), _ANTHROPIC),
    ("claude-3-7", ModelLimits(200_000, 64_000), _ANTHROPIC),
    ("gpt-4o", ModelLimits(128_000, 16_384), _OPENAI + "gpt-4o"),
    ("gpt-4o-mini", ModelLimits(128_000, 16_384), _OPENAI + "gpt-4o-mini"),
    ("gpt-4.5", ModelLimits(128_000, 16_384), _OPENAI + "gpt-4.5-preview"),
    ("gpt-4.1", ModelLimits(1_047_576, 32_768), _OPENAI + "gpt-4.1"),
    ("gpt-4-turbo", ModelLimits(128_000, 4096), _OPENAI + "gpt-4-turbo"),
    ("o1", ModelLimits(200_000, 100_000), _OPENAI + "o1"),
    ("o3", ModelLimits(200_000, 100_000), _OPENAI + "o3"),
    ("o4-mini", ModelLimits(200_000, 100_000), _OPENAI + "o4-mini"),
    ("gemini-2", ModelLimits(1_048_576, 8192), _GEMINI),
    ("gemini-2.5", ModelLimits(1_048_576, 65_536), _GEMINI),
    ("deepseek", ModelLimits(64_000, 8192), _DEEPSEEK),
    ("qwen", ModelLimits(131_072, 8192), _QWEN),
)


def normalize_model_name(name: str) -> str:
    """R-LIM-1: drop everything up to the last "/" and lower-case."""
    return name.rpartition("/")[2].lower()


def _matches(name: str, key: str) -> bool:
    return name == key or (name.startswith(key) and len(name) > len(key) and name[len(key)] in SEPARATORS)


def get_model_limits(name: str) -> ModelLimits:
    """Return the limits of the model called ``name`` (R-LIM-1 … R-LIM-3).

    Unknown names get ModelLimits(DEFAULT_CONTEXT_TOKENS, DEFAULT_OUTPUT_TOKENS); this never fails.
    """
    model = normalize_model_name(name)
    best: tuple[str, ModelLimits] | None = None
    for key, limits, _source in MODEL_REGISTRY:
        if _matches(model, key) and (best is None or len(key) > len(best[0])):
            best = (key, limits)
    return best[1] if best else ModelLimits(DEFAULT_CONTEXT_TOKENS, DEFAULT_OUTPUT_TOKENS)
