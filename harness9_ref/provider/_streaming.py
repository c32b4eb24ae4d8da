"""From response bytes to stream chunks, for either wire format (SPEC R-PRV-16, R-PRV-19).

``assemble_stream`` is the one loop both providers use: an HTTP error status becomes the typed
error of the wire format's ``parse_error``; otherwise the body goes through ``SSEDecoder`` and
the wire format's ``StreamAssembler``. It yields the text chunks as they are assembled and then
the ``done`` chunk, raising the typed error. ``stream_chunks`` turns that error into the one
final ``error`` chunk and never raises a provider error (R-PRV-19). It does
no I/O itself: the chunks may come from a socket (the providers) or from a list (the
conformance op ``provider_parse``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

from ..schema import CHUNK_DONE, Message, StreamChunk, Usage
from ._errors import ProviderError, error_chunk
from ._sse import SSEDecoder, SSEEvent

__all__ = ["Assembler", "ErrorParser", "assemble_stream", "is_success", "stream_chunks"]

ErrorParser = Callable[[int, Sequence[tuple[str, str]], bytes], ProviderError]


class Assembler(Protocol):
    """What ``stream_chunks`` needs of a wire format's StreamAssembler."""

    @property
    def done(self) -> bool:
        """True once the terminal event has arrived; later events are ignored."""
        ...

    def feed(self, event: SSEEvent) -> list[StreamChunk]: ...

    def finish(self) -> tuple[Message, Usage | None]: ...


def is_success(status: int) -> bool:
    """A 2xx status: the body is a response, not an error (R-ERR-3)."""
    return 200 <= status <= 299


def assemble_stream(
    parse_error: ErrorParser,
    new_assembler: Callable[[], Assembler],
    status: int,
    headers: Sequence[tuple[str, str]],
    chunks: Iterable[bytes],
) -> Iterator[StreamChunk]:
    """Yield a response's text chunks, then its ``done`` chunk; raise the typed error instead.

    Reading stops at the terminal event: what follows it is ignored, so a server that keeps
    the connection open after ``[DONE]`` does not hold the caller.

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
        raise parse_error(status, headers, b"".join(chunks))
    decoder = SSEDecoder()
    assembler = new_assembler()
    for raw in chunks:
        for event in decoder.feed(raw):
            yield from assembler.feed(event)
        if assembler.done:
            break
    else:
        for event in decoder.close():
            yield from assembler.feed(event)
    message, usage = assembler.finish()
    yield StreamChunk(CHUNK_DONE, message=message, usage=usage)


def stream_chunks(
    parse_error: ErrorParser,
    new_assembler: Callable[[], Assembler],
    status: int,
    headers: Sequence[tuple[str, str]],
    chunks: Iterable[bytes],
) -> Iterator[StreamChunk]:
    """``assemble_stream`` with its error turned into a final ``error`` chunk (R-PRV-19).

    Never raises a provider error; one raised while reading ``chunks`` (a read timeout) also
    ends in an ``error`` chunk.
    """
    try:
        yield from assemble_stream(parse_error, new_assembler, status, headers, chunks)
    except ProviderError as exc:
        yield error_chunk(exc)
