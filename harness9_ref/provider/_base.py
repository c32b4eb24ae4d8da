"""The provider protocols and the one HTTP provider shell both vendors share (SPEC R-PRV-1,
R-PRV-2, R-PRV-3, R-PRV-19, R-PRV-22, R-PRV-25, R-PRV-26, R-PRV-27, R-PRV-33).

``HttpProvider`` knows nothing of either API: it is given a ``WireFormat`` (the pure build,
parse and assemble functions of one vendor) and does the I/O through ``_transport``. So
``generate`` and ``generate_stream`` are written once, and the pure halves are exactly what the
conformance ops ``provider_request`` and ``provider_parse`` call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, TypeVar, runtime_checkable

from ..schema import CHUNK_DONE, CHUNK_ERROR, CHUNK_TEXT, Message, StreamChunk, ToolDefinition, Usage
from ._bounds import deadline_for
from ._endpoint import request_model
from ._http import HttpRequest
from ._provider_error import REDACTED, ProviderError, StreamCutOff, error_chunk
from ._streaming import Assembler, ErrorParser, bound_reply, stream_chunks
from ._transport import Exchange, open_stream, send

__all__ = [
    "DEFAULT_TIMEOUT",
    "HttpProvider",
    "LLMProvider",
    "ReservesOutput",
    "TokenCounter",
    "WireFormat",
    "reserved_output_tokens_of",
]

DEFAULT_TIMEOUT: Final = 120.0  # R-PRV-3: seconds for connecting and for each read


@runtime_checkable
class LLMProvider(Protocol):
    """A chat model (R-PRV-1). Every provider is also a ``Summarizer``."""

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message, Usage | None]:
        """The assistant's reply and the usage the provider reported (None when it reported none).

        Raises:
            ProviderError: the typed error of R-ERR-1.
        """
        ...

    def generate_stream(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamChunk]:
        """Text chunks as they arrive, then exactly one ``done`` or ``error`` chunk (R-PRV-19).

        Never raises a provider error: a failure ends the stream with an ``error`` chunk whose
        text is ``<code>: <message>``.
        """
        ...


@runtime_checkable
class TokenCounter(Protocol):
    """A provider that can count a request's input tokens exactly before sending it (R-PRV-25).

    Only ``AnthropicProvider`` is one: Chat Completions has no counting endpoint.
    """

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
        """The input tokens the provider would bill for this conversation and these tools.

        Raises:
            ProviderError: the typed error of R-ERR-1, as ``generate`` raises it.
        """
        ...


@runtime_checkable
class ReservesOutput(Protocol):
    """A provider that says how many tokens of the window its requests keep for the reply (R-PRV-26)."""

    @property
    def reserved_output_tokens(self) -> int:
        """The ``max_tokens`` each request sends, or 0 when it sends none."""
        ...


def silent_stream(chunk: StreamChunk) -> bool:
    """Whether ``chunk`` ends a success stream that delivered no event at all (R-PRV-28)."""
    return chunk.type == CHUNK_ERROR and isinstance(chunk.failure, StreamCutOff) and chunk.failure.events == 0


def reserved_output_tokens_of(provider: object) -> int:
    """``provider.reserved_output_tokens``, or 0 for a provider that does not declare it (R-PRV-26)."""
    return provider.reserved_output_tokens if isinstance(provider, ReservesOutput) else 0


class RequestBuilder(Protocol):
    def __call__(
        self,
        model: str,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        *,
        stream: bool,
        api_key: str,
        base_url: str,
        reply_limit: int,
    ) -> HttpRequest: ...


ResponseParser = Callable[[int, Sequence[tuple[str, str]], bytes], tuple[Message, Usage | None]]
Answer = TypeVar("Answer")


@dataclass(frozen=True, slots=True)
class WireFormat:
    """The pure functions of one vendor's API (R-PRV-2)."""

    name: str
    build_request: RequestBuilder
    parse_response: ResponseParser
    parse_error: ErrorParser
    new_assembler: Callable[[], Assembler]
    reserved_output_tokens: Callable[[str], int]


class HttpProvider:
    """An LLM provider over HTTP, for any ``WireFormat`` (R-PRV-1, R-PRV-3).

    The API key is kept private, left out of ``repr``, and replaced by ``[redacted]`` in any
    error message that should ever quote it (R-PRV-3); an empty key sends none (R-PRV-4,
    R-PRV-8). Nothing is retried (R-PRV-22). ``interrupt()`` ends the streamed exchanges in
    progress from any thread (R-PRV-3); the whole-body ones (a summary, a count) finish. Every
    exchange ends by ``deadline`` seconds (R-PRV-33; None: ``deadline_for(timeout)``).
    """

    __slots__ = (
        "_api_key",
        "_exchanges",
        "_lock",
        "_wire",
        "base_url",
        "deadline",
        "model",
        "reply_limit",
        "timeout",
    )

    def __init__(
        self,
        wire: WireFormat,
        model: str,
        api_key: str,
        base_url: str,
        timeout: float,
        reply_limit: int = 0,
        deadline: float | None = None,
    ) -> None:
        self._wire = wire
        self.model = model
        self._api_key = api_key
        self.base_url = base_url
        self.timeout = timeout
        self.deadline = deadline_for(timeout) if deadline is None else deadline  # R-PRV-33
        self.reply_limit = reply_limit  # R-PRV-29: 0 sends the wire format's own limit, if any
        self._lock = threading.Lock()
        self._exchanges: set[Exchange] = set()  # the streamed exchanges in progress

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, api_key={REDACTED!r}, "
            f"base_url={self.base_url!r}, timeout={self.timeout!r})"
        )

    def _request(self, messages: Sequence[Message], tools: Sequence[ToolDefinition], stream: bool) -> HttpRequest:
        return self._wire.build_request(
            self.model,
            messages,
            tools,
            stream=stream,
            api_key=self._api_key,
            base_url=self.base_url,
            reply_limit=self.reply_limit,
        )

    @property
    def request_model(self) -> str:
        """The ``model`` member its requests carry: R-PRV-27's request model for its base URL."""
        return request_model(self._wire.name, self.model, self.base_url)

    @property
    def reserved_output_tokens(self) -> int:
        """The ``max_tokens`` each request sends for this model, 0 when none is sent (R-PRV-26)."""
        return self._wire.reserved_output_tokens(self.model)

    def _exchange(
        self,
        build: Callable[[], HttpRequest],
        parse: Callable[[int, Sequence[tuple[str, str]], bytes], Answer],
    ) -> Answer:
        """One non-streaming exchange: build, send, parse; any provider error with the key redacted."""
        try:
            status, headers, body = send(
                build(), timeout=self.timeout, provider=self._wire.name, deadline=self.deadline
            )
            return parse(status, headers, body)
        except ProviderError as exc:
            exc.redact(self._api_key)
            raise

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message, Usage | None]:
        """Send one non-streaming request and return the reply and its usage (R-PRV-1); a reply
        beyond its bound is cut as a stream is (R-PRV-31).

        Raises:
            ProviderError: the typed error of R-ERR-1 (R-ERR-3, R-ERR-5).
        """
        return bound_reply(
            *self._exchange(lambda: self._request(messages, available_tools, stream=False), self._wire.parse_response)
        )

    def generate_stream(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamChunk]:
        """Stream one request: text chunks as they arrive, then one ``done`` or ``error`` chunk.

        Never raises a provider error (R-PRV-19): a request that cannot be built, a timeout, a
        failed connection, an HTTP error status and a malformed or cut stream all end in an
        ``error`` chunk. Closing the iterator early closes the connection.
        """
        exchange = Exchange()
        with self._lock:
            self._exchanges.add(exchange)
        try:
            try:
                request = self._request(messages, available_tools, stream=True)
                status, headers, chunks = open_stream(
                    request, timeout=self.timeout, provider=self._wire.name, exchange=exchange, deadline=self.deadline
                )
            except ProviderError as exc:
                exc.redact(self._api_key)
                yield error_chunk(exc)
                return
            try:
                for chunk in stream_chunks(self._wire.parse_error, self._wire.new_assembler, status, headers, chunks):
                    if silent_stream(chunk):
                        break
                    yield self._redacted(chunk)
                else:
                    return
            finally:
                chunks.close()
        finally:
            with self._lock:
                self._exchanges.discard(exchange)
        yield from self._unstreamed(messages, available_tools)

    def _unstreamed(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> Iterator[StreamChunk]:
        """A stream that said nothing asked again once without streaming (R-PRV-28).

        Some servers answer a streamed request they refuse (one over their context window)
        with a success status and an empty body; the same request unstreamed gets their real
        error, which the engine can act on (R-LONG-7) and the user can read.
        """
        try:
            message, usage = self.generate(messages, tools)
        except ProviderError as exc:
            yield error_chunk(exc)
            return
        if message.content:
            yield StreamChunk(CHUNK_TEXT, delta=message.content)
        yield StreamChunk(CHUNK_DONE, message=message, usage=usage)

    def interrupt(self) -> None:
        """End every streamed exchange of this provider in progress at once (R-PRV-3).

        Each such stream ends with the ``error`` chunk of a ``ProviderConnectionError`` saying it
        was interrupted, whether it waited for the response's head or for the next piece; an
        exchange started later is not affected. ``generate`` and ``count_tokens`` are left to
        finish: a summary cut short would count as failed and fall back (R-SUM-10). Safe from
        any thread; the engine's ``cancel()`` calls it.
        """
        with self._lock:
            exchanges = list(self._exchanges)
        for exchange in exchanges:
            exchange.interrupt()

    def _redacted(self, chunk: StreamChunk) -> StreamChunk:
        """The chunk with the key redacted from its error (R-ERR-7); every error chunk of a stream carries its error."""
        if chunk.type != CHUNK_ERROR or not isinstance(chunk.failure, ProviderError):
            return chunk
        chunk.failure.redact(self._api_key)
        return error_chunk(chunk.failure)
