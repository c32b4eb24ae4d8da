"""LLM providers and the model registry (SPEC sections "Model limits", "Providers", "Usage" and
"Provider errors": R-LIM, R-PRV, R-USE, R-ERR).

The wire formats live, free of I/O, in the namespaces ``harness9_ref.provider.openai`` and
``harness9_ref.provider.anthropic``; ``OpenAIProvider`` and ``AnthropicProvider`` add the HTTP
exchange. The scripted providers for tests are in ``harness9_ref.testing``. The offline provider, which answers from the
conversation without a network (R-CLI-9), is ``harness9_ref.offline.OfflineProvider``: it needs
memory and tools, which this layer does not import.
"""

from . import anthropic, openai
from ._base import (
    DEFAULT_TIMEOUT,
    HttpProvider,
    LLMProvider,
    ReservesOutput,
    TokenCounter,
    WireFormat,
    reserved_output_tokens_of,
)
from ._bounds import (
    BODY_MAX_BYTES,
    DEADLINE_FACTOR,
    ERROR_BODY_MAX_BYTES,
    EVENT_MAX_CHARS,
    LINE_MAX_CHARS,
    REPLY_CUT_NOTE,
    REPLY_MAX_CHARS,
    deadline_for,
)
from ._classify import ANTHROPIC_OVERFLOW_PHRASES, ERROR_EXCERPT_CHARS, OPENAI_OVERFLOW_PHRASES
from ._endpoint import OFFICIAL_BASE_URLS, is_official_endpoint, request_model, server_name
from ._errors import (
    AuthenticationError,
    ContextLengthExceeded,
    InvalidRequestError,
    MalformedResponse,
    ModelNotFound,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderStreamError,
    ProviderTimeout,
    RateLimitError,
    RequestBuildError,
    ScriptExhausted,
    ServerError,
    StreamCutOff,
    error_chunk,
    redact,
)
from ._http import HttpRequest
from ._limits import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_OUTPUT_TOKENS,
    MODEL_REGISTRY,
    ModelLimits,
    get_model_limits,
    normalize_model_name,
)
from ._providers import DEFAULT_ANTHROPIC_BASE_URL, DEFAULT_OPENAI_BASE_URL, AnthropicProvider, OpenAIProvider
from ._sse import SSEDecoder, SSEEvent, SSELimitExceeded
from ._streaming import assemble_stream
from ._window import (
    OLLAMA_DEFAULT_CONTEXT,
    PROBE_TIMEOUT,
    WINDOW_MAX,
    WINDOW_MIN,
    Probe,
    ask_window,
    overflow_window,
    plausible_window,
    probe_requests,
    window_from_answer,
)

__all__ = (
    "ANTHROPIC_OVERFLOW_PHRASES",
    "BODY_MAX_BYTES",
    "DEADLINE_FACTOR",
    "DEFAULT_ANTHROPIC_BASE_URL",
    "DEFAULT_CONTEXT_TOKENS",
    "DEFAULT_OPENAI_BASE_URL",
    "DEFAULT_OUTPUT_TOKENS",
    "DEFAULT_TIMEOUT",
    "ERROR_BODY_MAX_BYTES",
    "ERROR_EXCERPT_CHARS",
    "EVENT_MAX_CHARS",
    "LINE_MAX_CHARS",
    "MODEL_REGISTRY",
    "OFFICIAL_BASE_URLS",
    "OLLAMA_DEFAULT_CONTEXT",
    "OPENAI_OVERFLOW_PHRASES",
    "PROBE_TIMEOUT",
    "REPLY_CUT_NOTE",
    "REPLY_MAX_CHARS",
    "WINDOW_MAX",
    "WINDOW_MIN",
    "AnthropicProvider",
    "AuthenticationError",
    "ContextLengthExceeded",
    "HttpProvider",
    "HttpRequest",
    "InvalidRequestError",
    "LLMProvider",
    "MalformedResponse",
    "ModelLimits",
    "ModelNotFound",
    "OpenAIProvider",
    "OverloadedError",
    "Probe",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderStreamError",
    "ProviderTimeout",
    "RateLimitError",
    "RequestBuildError",
    "ReservesOutput",
    "SSEDecoder",
    "SSEEvent",
    "SSELimitExceeded",
    "ScriptExhausted",
    "ServerError",
    "StreamCutOff",
    "TokenCounter",
    "WireFormat",
    "anthropic",
    "ask_window",
    "assemble_stream",
    "deadline_for",
    "error_chunk",
    "get_model_limits",
    "is_official_endpoint",
    "normalize_model_name",
    "openai",
    "overflow_window",
    "plausible_window",
    "probe_requests",
    "redact",
    "request_model",
    "reserved_output_tokens_of",
    "server_name",
    "window_from_answer",
)
