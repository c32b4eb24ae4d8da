"""The provider error hierarchy (SPEC R-ERR-1, R-ERR-2, R-ERR-4, R-ERR-6).

Every failure of a provider call is one of these classes; each has a fixed ``code`` (the
conformance error code) and the hints of R-ERR-2 a caller needs to decide on a retry, since a
provider never retries by itself (R-PRV-22).

Tree (code in brackets)::

    ProviderError [provider_error]
    ├── AuthenticationError [authentication]
    ├── RateLimitError [rate_limit]
    ├── OverloadedError [overloaded]
    ├── ContextLengthExceeded [context_length_exceeded]
    ├── InvalidRequestError [invalid_request]
    │   └── ModelNotFound [model_not_found]   (R-ERR-11)
    ├── ServerError [server_error]
    ├── ProviderTimeout [timeout]
    ├── ProviderConnectionError [connection_error]
    ├── MalformedResponse [malformed_response]
    │   └── ProviderStreamError [malformed_stream]
    │       └── StreamCutOff [stream_cut_off]
    ├── RequestBuildError [request_build_error]
    └── ScriptExhausted [script_exhausted]   (MockProvider, R-PRV-23)
"""

from __future__ import annotations

from typing import ClassVar, Final

from .._harness9_error import Harness9Error
from ..schema import CHUNK_ERROR, StreamChunk

__all__ = [
    "AuthenticationError",
    "ContextLengthExceeded",
    "InvalidRequestError",
    "MalformedResponse",
    "ModelNotFound",
    "OverloadedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderStreamError",
    "ProviderTimeout",
    "RateLimitError",
    "RequestBuildError",
    "ScriptExhausted",
    "ServerError",
    "StreamCutOff",
    "error_chunk",
    "redact",
]

# R-PRV-3: what replaces the API key should a provider ever echo it into an error message.
REDACTED: Final = "[redacted]"
REDACT_MIN_CHARS: Final = 8  # R-ERR-7: a shorter key is never redacted


def redact(text: str, secret: str) -> str:
    """``text`` with every occurrence of the whole ``secret`` replaced by REDACTED (R-ERR-7).

    Only a secret of at least REDACT_MIN_CHARS characters is replaced: a shorter one cannot be
    told from ordinary text, and replacing it would mangle words (a key ``x`` would turn
    ``unexpected`` into ``une[redacted]pected``). Never a part of the secret is replaced.
    """
    if len(secret) < REDACT_MIN_CHARS:
        return text
    return text.replace(secret, REDACTED)


class ProviderError(Harness9Error):
    """A provider call failed (R-ERR-1).

    ``str(error)`` is the message. For an error the provider reported it has the form of R-ERR-4,
    ``<provider>: HTTP <status> <error type>: <provider message>``.

    Attributes:
        code: the conformance error code of the class (R-ERR-1).
        message: the human-readable message.
        provider: ``"openai"``, ``"anthropic"`` (or ``"mock"`` for MockProvider).
        status: the HTTP status, or None (no response, or an error event inside a stream).
        error_type: the provider's own error type (``"overloaded_error"``), or None.
        request_id: from the body's ``request_id`` or a ``request-id`` / ``x-request-id`` header.
        retry_after: seconds the provider asked the caller to wait, from ``retry-after``, or None.
        should_retry: the ``x-should-retry`` header as a bool, or None when absent.
        body_excerpt: the start of an error response's body (at most ERROR_EXCERPT_CHARS).
    """

    code: ClassVar[str] = "provider_error"

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status: int | None = None,
        error_type: str | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
        should_retry: bool | None = None,
        body_excerpt: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status = status
        self.error_type = error_type
        self.request_id = request_id
        self.retry_after = retry_after
        self.should_retry = should_retry
        self.body_excerpt = body_excerpt

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, provider={self.provider!r}, status={self.status!r})"

    def redact(self, secret: str) -> None:
        """Redact ``secret`` (the API key) in the message and excerpt by the rule of ``redact`` (R-PRV-3, R-ERR-7)."""
        self.message = redact(self.message, secret)
        self.args = (self.message,)
        if self.body_excerpt is not None:
            self.body_excerpt = redact(self.body_excerpt, secret)

    def chunk_text(self) -> str:
        """The ``error`` text of a stream's error chunk: ``<code>: <message>`` (R-PRV-19)."""
        return f"{self.code}: {self.message}"


class AuthenticationError(ProviderError):
    """The API key was refused or lacks permission (HTTP 401/403)."""

    code: ClassVar[str] = "authentication"


class RateLimitError(ProviderError):
    """Too many requests (HTTP 429); see ``retry_after``."""

    code: ClassVar[str] = "rate_limit"


class OverloadedError(ProviderError):
    """The provider is overloaded (HTTP 529, or an ``overloaded_error`` event in a stream)."""

    code: ClassVar[str] = "overloaded"


class ContextLengthExceeded(ProviderError):
    """The prompt does not fit the model's context window."""

    code: ClassVar[str] = "context_length_exceeded"


class InvalidRequestError(ProviderError):
    """The provider refused the request as invalid (any other 4xx)."""

    code: ClassVar[str] = "invalid_request"


class ModelNotFound(InvalidRequestError):
    """The provider does not know the model the request named (R-ERR-11): OpenAI's
    ``model_not_found``, Anthropic's ``not_found_error``.

    A class of its own so that the agent can say which model and how to choose another
    (R-CLI-19); an ``InvalidRequestError`` still, so nothing retries it.
    """

    code: ClassVar[str] = "model_not_found"


class ServerError(ProviderError):
    """The provider failed (5xx, or an error object inside a successful response)."""

    code: ClassVar[str] = "server_error"


class ProviderTimeout(ProviderError):
    """Connecting, or one read, took longer than the provider's timeout (R-ERR-5)."""

    code: ClassVar[str] = "timeout"


class ProviderConnectionError(ProviderError):
    """The connection could not be made, or broke before a response (R-ERR-5)."""

    code: ClassVar[str] = "connection_error"


class MalformedResponse(ProviderError):
    """A successful status with a body that R-PRV-13 / R-PRV-14 cannot parse."""

    code: ClassVar[str] = "malformed_response"


class ProviderStreamError(MalformedResponse):
    """A stream that violates R-PRV-17 / R-PRV-18; the message names the event number."""

    code: ClassVar[str] = "malformed_stream"


class StreamCutOff(ProviderStreamError):
    """A stream that ended before its terminal event (``[DONE]`` or ``message_stop``).

    ``events`` counts the events it delivered: a stream with none said nothing at all, which is
    how some servers answer a request they refuse (R-PRV-28).
    """

    code: ClassVar[str] = "stream_cut_off"

    def __init__(self, message: str, *, provider: str, events: int = 0) -> None:
        super().__init__(message, provider=provider)
        self.events = events


class RequestBuildError(ProviderError):
    """The history cannot be expressed in the provider's format: our mistake, found before I/O."""

    code: ClassVar[str] = "request_build_error"


class ScriptExhausted(ProviderError):
    """MockProvider was asked for more replies than its script holds (R-PRV-23)."""

    code: ClassVar[str] = "script_exhausted"


def error_chunk(error: ProviderError) -> StreamChunk:
    """The final ``error`` chunk a stream yields instead of raising ``error`` (R-PRV-19)."""
    return StreamChunk(CHUNK_ERROR, error=error.chunk_text(), failure=error)
