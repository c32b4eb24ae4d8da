"""The OpenAI and Anthropic providers: the shared HTTP shell bound to a wire format
(SPEC R-PRV-1, R-PRV-3, R-PRV-24, R-PRV-25).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ..schema import Message, ToolDefinition
from . import anthropic, openai
from ._base import DEFAULT_TIMEOUT, HttpProvider, WireFormat

__all__ = ["DEFAULT_ANTHROPIC_BASE_URL", "DEFAULT_OPENAI_BASE_URL", "AnthropicProvider", "OpenAIProvider"]

DEFAULT_OPENAI_BASE_URL: Final = openai.DEFAULT_BASE_URL  # R-PRV-3
DEFAULT_ANTHROPIC_BASE_URL: Final = anthropic.DEFAULT_BASE_URL  # R-PRV-3

OPENAI_WIRE: Final = WireFormat(
    openai.PROVIDER,
    openai.build_request,
    openai.parse_response,
    openai.parse_error,
    openai.StreamAssembler,
    openai.reserved_output_tokens,
)
ANTHROPIC_WIRE: Final = WireFormat(
    anthropic.PROVIDER,
    anthropic.build_request,
    anthropic.parse_response,
    anthropic.parse_error,
    anthropic.StreamAssembler,
    anthropic.reserved_output_tokens,
)


class OpenAIProvider(HttpProvider):
    """OpenAI Chat Completions, or any server that speaks it (R-PRV-4 … R-PRV-7, R-PRV-13, R-PRV-17).

    It is no ``TokenCounter``: Chat Completions has no counting endpoint (R-PRV-25).

    Args:
        model: the model name, sent exactly as given (``openai/gpt-4o-mini`` for a router).
        api_key: sent as a bearer token; never shown in errors or ``repr``.
        base_url: the API root, DEFAULT_OPENAI_BASE_URL unless a compatible server is used.
        timeout: seconds for connecting and for each read.
        reply_limit: when positive, each request limits the reply to this many tokens (R-PRV-29).
        deadline: seconds one call may take in all (R-PRV-33); None: ``deadline_for(timeout)``.
    """

    __slots__ = ()

    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str = DEFAULT_OPENAI_BASE_URL,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        reply_limit: int = 0,
        deadline: float | None = None,
    ) -> None:
        super().__init__(OPENAI_WIRE, model, api_key, base_url, timeout, reply_limit, deadline)


class AnthropicProvider(HttpProvider):
    """Anthropic Messages (R-PRV-8 … R-PRV-12, R-PRV-14, R-PRV-18), and a ``TokenCounter``
    through ``/v1/messages/count_tokens`` (R-PRV-24, R-PRV-25).

    Args:
        model: the model name, sent exactly as given; its output limit is ``max_tokens``.
        api_key: sent as ``x-api-key``; never shown in errors or ``repr``.
        base_url: the API root, DEFAULT_ANTHROPIC_BASE_URL unless a proxy is used.
        timeout: seconds for connecting and for each read.
        reply_limit: when positive, ``max_tokens`` is at most this (R-PRV-29).
        deadline: seconds one call may take in all (R-PRV-33); None: ``deadline_for(timeout)``.
    """

    __slots__ = ()

    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str = DEFAULT_ANTHROPIC_BASE_URL,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        reply_limit: int = 0,
        deadline: float | None = None,
    ) -> None:
        super().__init__(ANTHROPIC_WIRE, model, api_key, base_url, timeout, reply_limit, deadline)

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
        """The input tokens of the request ``generate`` would send for this conversation (R-PRV-24).

        Raises:
            ProviderError: the typed error of R-ERR-1, classified as for ``generate`` (R-ERR-3,
                R-ERR-5); an answer without a non-negative integer ``input_tokens`` is
                ``MalformedResponse``.
        """
        return self._exchange(
            lambda: anthropic.build_count_request(
                self.model, messages, tools, api_key=self._api_key, base_url=self.base_url
            ),
            anthropic.parse_count_response,
        )
