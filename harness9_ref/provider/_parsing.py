"""The parsing boundary: where JSON and shape errors become provider errors (SPEC R-PRV-13, R-PRV-14, R-PRV-17, R-PRV-18).

The wire modules read a response with the ``_shape`` readers, which raise ``ShapeError`` (and
``strict_json.JSONError`` for text that is not JSON); they never build a ``MalformedResponse``
themselves. The two entry points below are the only places that translate, in the manner of
h11, which converts its protocol errors in one place:

- ``parse_body`` for a whole response body gives ``MalformedResponse``;
- ``EventAssembler.feed`` for one stream event gives ``ProviderStreamError`` naming the event
  number (counting from 1), and ``finish`` the ``StreamCutOff`` of a stream without its
  terminal event.

An assembler also counts what it holds (``held``: the characters of text and tool-call
arguments), so that the stream loop can cut a reply that grows beyond its bound (R-PRV-31).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

from ..schema import CHUNK_TEXT, Message, StreamChunk, Usage
from ..schema.strict_json import JSONError
from ._bounds import ERROR_BODY_MAX_BYTES
from ._provider_error import MalformedResponse, ProviderError, ProviderStreamError, StreamCutOff
from ._shape import ShapeError, decode_body, loads
from ._sse import SSEEvent
from ._streaming import is_success

__all__ = ["BodyReader", "EventAssembler", "parse_body"]

DATA_EXCERPT_CHARS = 80  # characters of an event's data quoted when it is not JSON

Parsed = TypeVar("Parsed")
BodyReader = Callable[[Any, str, int, Sequence[tuple[str, str]]], Parsed]
"""Reads a parsed 2xx body (value, source text, status, headers); raises ShapeError or a ProviderError."""


def parse_body(
    provider: str,
    parse_error: Callable[[int, Sequence[tuple[str, str]], bytes], ProviderError],
    read: BodyReader[Parsed],
    status: int,
    headers: Sequence[tuple[str, str]],
    body: bytes,
) -> Parsed:
    """What ``read`` makes of a non-streaming response (a message and usage, or a token count),
    or the typed error (R-ERR-3) of an error body's first ``ERROR_BODY_MAX_BYTES`` (R-PRV-32),
    so that a body handed over whole is judged as one read over HTTP.

    Raises:
        ProviderError: ``parse_error``'s error for an error status, or what ``read`` raises.
        MalformedResponse: a body that is not JSON, or one ``read`` found of the wrong shape.
    """
    if not is_success(status):
        raise parse_error(status, headers, body[:ERROR_BODY_MAX_BYTES])
    text = decode_body(body)
    try:
        return read(loads(text), text, status, headers)
    except JSONError as exc:
        raise MalformedResponse(f"{provider}: the response body is not JSON: {exc}", provider=provider, status=status) from None
    except ShapeError as exc:
        raise MalformedResponse(f"{provider}: malformed response: {exc}", provider=provider, status=status) from None


class EventAssembler(ABC):
    """The part of a wire format's StreamAssembler that both formats share.

    A subclass sets ``provider`` and ``terminal`` (the name of the event that ends the stream),
    implements ``_event`` and sets ``_done`` when the terminal event arrives. Call ``feed`` for
    each event in order, then ``finish``.
    """

    provider: ClassVar[str]
    terminal: ClassVar[str]

    def __init__(self) -> None:
        self._done = False
        self._events = 0
        self._text: list[str] = []  # the text pieces in arrival order
        self._held = 0  # characters of text and tool-call arguments held (R-PRV-31)

    @property
    def done(self) -> bool:
        """True once the terminal event has arrived; events after it are ignored."""
        return self._done

    @property
    def held(self) -> int:
        """The characters of text and tool-call arguments taken so far (R-PRV-31)."""
        return self._held

    def text(self) -> str:
        """The text taken so far: the concatenation of the text chunks' deltas."""
        return "".join(self._text)

    def _keep_text(self, piece: str) -> StreamChunk:
        """Take a non-empty text piece and return its text chunk."""
        self._text.append(piece)
        self._held += len(piece)
        return StreamChunk(CHUNK_TEXT, delta=piece)

    def _keep_arguments(self, parts: list[str], piece: str) -> None:
        """Take a piece of a tool call's arguments into ``parts``."""
        parts.append(piece)
        self._held += len(piece)

    def feed(self, event: SSEEvent) -> list[StreamChunk]:
        """Take one event and return the text chunks it carries.

        Raises:
            ProviderStreamError: the data is not JSON, or has the wrong shape; the message names
                the event number (counting from 1).
            ProviderError: an error event (classified by R-ERR-3).
        """
        if self._done:
            return []
        self._events += 1
        try:
            return self._event(event)
        except JSONError as exc:
            problem = f"data is not JSON ({exc}): {event.data[:DATA_EXCERPT_CHARS]!r}"
        except ShapeError as exc:
            problem = str(exc)
        raise ProviderStreamError(f"{self.provider} stream event {self._events}: {problem}", provider=self.provider)

    def finish(self) -> tuple[Message, Usage | None]:
        """The assembled message and usage.

        Raises:
            StreamCutOff: the stream ended before its terminal event.
        """
        if not self._done:
            raise StreamCutOff(
                f"{self.provider}: the stream ended after {self._events} events without {self.terminal}",
                provider=self.provider,
                events=self._events,
            )
        return self._result()

    @abstractmethod
    def _event(self, event: SSEEvent) -> list[StreamChunk]:
        """The text chunks of one event; raises ShapeError or JSONError for a malformed one."""

    @abstractmethod
    def _result(self) -> tuple[Message, Usage | None]:
        """The assembled message and usage, once the terminal event has arrived."""
