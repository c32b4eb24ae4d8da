"""From response bytes to stream chunks, for either wire format (SPEC R-PRV-16, R-PRV-19,
R-PRV-30 … R-PRV-32).

``assemble_stream`` is the one loop both providers use: an HTTP error status becomes the typed
error of the wire format's ``parse_error`` (of the body's first ``ERROR_BODY_MAX_BYTES``);
otherwise the body goes through ``SSEDecoder`` and the wire format's ``StreamAssembler``. It
yields the text chunks as they are assembled and then the ``done`` chunk, raising the typed
error. A reply that grows beyond its bound is cut there and ends as a cut-off reply, and the
rest of the body is never read. ``stream_chunks`` turns that error into the one
final ``error`` chunk and never raises a provider error (R-PRV-19). It does
no I/O itself: the chunks may come from a socket (the providers) or from a list (the
conformance op ``provider_parse``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

from ..schema import CHUNK_DONE, CHUNK_TEXT, ROLE_ASSISTANT, Message, StreamChunk, Usage
from ._bounds import ERROR_BODY_MAX_BYTES, REPLY_CUT_NOTE, REPLY_MAX_CHARS
from ._provider_error import ProviderError, ProviderStreamError, error_chunk
from ._sse import SSEDecoder, SSEEvent, SSELimitExceeded

__all__ = ["assemble_stream"]

ErrorParser = Callable[[int, Sequence[tuple[str, str]], bytes], ProviderError]


class Assembler(Protocol):
    """What ``stream_chunks`` needs of a wire format's StreamAssembler."""

    @property
    def provider(self) -> str:
        """The provider's name, for the errors of R-PRV-30."""
        ...

    @property
    def done(self) -> bool:
        """True once the terminal event has arrived; later events are ignored."""
        ...

    @property
    def held(self) -> int:
        """The characters of text and tool-call arguments taken so far (R-PRV-31)."""
        ...

    def text(self) -> str:
        """The text taken so far."""
        ...

    def feed(self, event: SSEEvent) -> list[StreamChunk]: ...

    def finish(self) -> tuple[Message, Usage | None]: ...


def is_success(status: int) -> bool:
    """A 2xx status: the body is a response, not an error (R-ERR-3)."""
    return 200 <= status <= 299


def read_head(chunks: Iterable[bytes], limit: int) -> bytes:
    """The first ``limit`` bytes of ``chunks``; what follows is never read (R-PRV-32)."""
    head = bytearray()
    for raw in chunks:
        head += raw[: limit - len(head)]
        if len(head) >= limit:
            break
    return bytes(head)


def cut_reply(text: str, reply_max: int) -> Message:
    """The message of a reply cut at ``reply_max`` (R-PRV-31): its text up to the bound and the
    note, without tool calls (arguments cut short must not run)."""
    return Message(ROLE_ASSISTANT, text[:reply_max] + REPLY_CUT_NOTE.format(limit=reply_max))


def bound_reply(
    message: Message, usage: Usage | None, reply_max: int = REPLY_MAX_CHARS
) -> tuple[Message, Usage | None]:
    """A whole reply within its bound as it is, one beyond it cut as a stream is (R-PRV-31)."""
    held = len(message.content) + sum(len(call.arguments) for call in message.tool_calls)
    return (message, usage) if held <= reply_max else (cut_reply(message.content, reply_max), None)


def _events(assembler: Assembler, chunks: Iterable[bytes]) -> Iterator[SSEEvent]:
    """The body's events; a line or an event beyond its bound is a stream error after the
    events before it (R-PRV-30)."""
    decoder = SSEDecoder()
    try:
        for raw in chunks:
            yield from decoder.feed(raw)
        yield from decoder.close()
        return
    except SSELimitExceeded as exc:
        failure = exc
    yield from failure.events
    provider = assembler.provider
    raise ProviderStreamError(f"{provider}: the stream sent {failure}", provider=provider)


def assemble_stream(
    parse_error: ErrorParser,
    new_assembler: Callable[[], Assembler],
    status: int,
    headers: Sequence[tuple[str, str]],
    chunks: Iterable[bytes],
    *,
    reply_max: int = REPLY_MAX_CHARS,
) -> Iterator[StreamChunk]:
    """Yield a response's text chunks, then its ``done`` chunk; raise the typed error instead.

    Reading stops at the terminal event: what follows it is ignored, so a server that keeps
    the connection open after ``[DONE]`` does not hold the caller. Reading also stops once
    the reply holds more than ``reply_max`` characters of text and arguments (R-PRV-31): the
    text up to ``reply_max`` characters has been yielded, a text chunk with ``REPLY_CUT_NOTE``
    follows, and the ``done`` message is that text and note, without tool calls or usage.

    Args:
        parse_error: the wire format's ``parse_error``.
        new_assembler: makes the wire format's ``StreamAssembler``.
        status: the HTTP status.
        headers: the response headers (for an error status).
        chunks: the body, in the pieces it arrived in.

    Raises:
        ProviderError: the error status, error event, malformed data or cut-off (R-ERR).
    """
    if not is_success(status):
        raise parse_error(status, headers, read_head(chunks, ERROR_BODY_MAX_BYTES))
    assembler = new_assembler()
    yielded = 0  # characters of text yielded
    for event in _events(assembler, chunks):
        for chunk in assembler.feed(event):
            if yielded + len(chunk.delta) <= reply_max:
                yielded += len(chunk.delta)
                yield chunk
            elif yielded < reply_max:  # the piece that crosses the bound, cut there
                yield StreamChunk(CHUNK_TEXT, delta=chunk.delta[: reply_max - yielded])
                yielded = reply_max
        if assembler.held > reply_max:
            cut = cut_reply(assembler.text(), reply_max)
            yield StreamChunk(CHUNK_TEXT, delta=cut.content[yielded:])  # the note
            yield StreamChunk(CHUNK_DONE, message=cut, usage=None)
            return
        if assembler.done:
            break
    message, usage = assembler.finish()
    yield StreamChunk(CHUNK_DONE, message=message, usage=usage)


def stream_chunks(
    parse_error: ErrorParser,
    new_assembler: Callable[[], Assembler],
    status: int,
    headers: Sequence[tuple[str, str]],
    chunks: Iterable[bytes],
    *,
    reply_max: int = REPLY_MAX_CHARS,
) -> Iterator[StreamChunk]:
    """``assemble_stream`` with its error turned into a final ``error`` chunk (R-PRV-19).

    Never raises a provider error; one raised while reading ``chunks`` (a read timeout) also
    ends in an ``error`` chunk.
    """
    try:
        yield from assemble_stream(parse_error, new_assembler, status, headers, chunks, reply_max=reply_max)
    except ProviderError as exc:
        yield error_chunk(exc)
