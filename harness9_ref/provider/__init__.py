"""LLM providers and the model registry (SPEC section "Model limits"; providers arrive later)."""

from ._limits import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_OUTPUT_TOKENS,
    MODEL_REGISTRY,
    ModelLimits,
    get_model_limits,
    normalize_model_name,
)

__all__ = (
    "DEFAULT_CONTEXT_TOKENS",
    "DEFAULT_OUTPUT_TOKENS",
    "MODEL_REGISTRY",
    "ModelLimits",
    "get_model_limits",
    "normalize_model_name",
)
