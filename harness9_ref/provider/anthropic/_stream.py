"""Assemble an Anthropic Messages stream (SPEC R-PRV-18, R-PRV-19, R-USE-5).

Events arrive as ``message_start``, then per content block ``content_block_start``,
``content_block_delta``s and ``content_block_stop``, then ``message_delta`` and ``message_stop``;
``ping`` may come anywhere and ``error`` may arrive inside an HTTP 200 stream. Each event type
has a handler in ``_HANDLERS``; unknown types are ignored. Usage is tracked per field: a later
value replaces an earlier one, since they are running totals (R-USE-5).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ...schema import ROLE_ASSISTANT, Message, StreamChunk, ToolCall, Usage
from .._classify import error_from_object
from .._parsing import EventAssembler
from .._shape import ShapeError, expect_object, loads, optional_int, optional_object, optional_str
from .._sse import SSEEvent
from .._streaming import stream_chunks
from ._request import BLOCK_TEXT, BLOCK_TOOL_USE, PROVIDER
from ._response import parse_error, read_usage_fields, usage_from_fields

__all__ = ["EVENT_TYPES", "StreamAssembler", "parse_stream"]

EMPTY_ARGUMENTS: Final = "{}"  # R-PRV-18: the arguments of a tool_use block that streamed no partial_json
DELTA_TEXT: Final = "text_delta"  # R-PRV-18
DELTA_INPUT_JSON: Final = "input_json_delta"  # R-PRV-18; other delta types do nothing


@dataclass(slots=True)
class _Block:
    type: str
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    stopped: bool = False


class StreamAssembler(EventAssembler):
    """Turn the SSE events of one Anthropic stream into text chunks and the final message (R-PRV-18).

    Call ``feed`` for each event in order, then ``finish``; ``done`` is True once
    ``message_stop`` has arrived. The event type is the data's ``type`` member, or the SSE
    ``event`` field when that is missing; a delta or stop for a block index never started is a
    stream error naming the index.
    """

    provider = PROVIDER
    terminal = "message_stop"

    def __init__(self) -> None:
        super().__init__()
        self._blocks: dict[int, _Block] = {}
        self._usage: dict[str, int] = {}
        self._has_usage = False

    def _event(self, event: SSEEvent) -> list[StreamChunk]:
        payload = expect_object(loads(event.data), "data")
        kind = optional_str(payload.get("type"), "data.type") or event.event
        handler = _HANDLERS.get(kind)
        if handler is None:
            return []  # unknown event types are ignored (R-PRV-18)
        try:
            return handler(self, payload)
        except ShapeError as exc:
            raise exc.within(kind) from None

    def _result(self) -> tuple[Message, Usage | None]:
        """The assembled message (calls ordered by block index) and usage."""
        calls = tuple(
            ToolCall(b.id, b.name, "".join(b.arguments) or EMPTY_ARGUMENTS)
            for _, b in sorted(self._blocks.items())
            if b.type == BLOCK_TOOL_USE
        )
        usage = usage_from_fields(self._usage) if self._has_usage else None
        return Message(ROLE_ASSISTANT, self.text(), calls), usage

    def _append_text(self, piece: str) -> list[StreamChunk]:
        if not piece:
            return []
        return [self._keep_text(piece)]

    def _record_usage(self, usage: object, path: str) -> None:
        found = optional_object(usage, path)
        if found is not None:
            self._has_usage = True
            self._usage.update(read_usage_fields(found, path))

    def _index(self, payload: Mapping[str, Any], kind: str) -> int:
        index = optional_int(payload.get("index"), "index")
        if index is None:
            raise ShapeError("index", f"{kind} needs a block index")
        return index

    def _started(self, payload: Mapping[str, Any], kind: str) -> _Block:
        index = self._index(payload, kind)
        block = self._blocks.get(index)
        if block is None:
            raise ShapeError("", f"{kind} for index {index} before content_block_start")
        if block.stopped:
            raise ShapeError("", f"{kind} for index {index} after its content_block_stop")
        return block

    def _on_message_start(self, payload: Mapping[str, Any]) -> list[StreamChunk]:
        message = optional_object(payload.get("message"), "message") or {}
        self._record_usage(message.get("usage"), "message.usage")
        return []

    def _on_block_start(self, payload: Mapping[str, Any]) -> list[StreamChunk]:
        index = self._index(payload, "content_block_start")
        if index in self._blocks:
            raise ShapeError("", f"content_block_start for index {index}, which was already started")
        start = expect_object(payload.get("content_block"), "content_block")
        kind = optional_str(start.get("type"), "content_block.type") or ""
        block = self._blocks[index] = _Block(kind)
        if kind == BLOCK_TOOL_USE:
            block.id = optional_str(start.get("id"), "content_block.id") or ""
            block.name = optional_str(start.get("name"), "content_block.name") or ""
        elif kind == BLOCK_TEXT:
            return self._append_text(optional_str(start.get("text"), "content_block.text") or "")
        return []

    def _on_block_delta(self, payload: Mapping[str, Any]) -> list[StreamChunk]:
        block = self._started(payload, "content_block_delta")
        delta = expect_object(payload.get("delta"), "delta")
        kind = delta.get("type")
        if kind == DELTA_TEXT:
            return self._append_text(optional_str(delta.get("text"), "delta.text") or "")
        if kind == DELTA_INPUT_JSON and block.type == BLOCK_TOOL_USE:
            self._keep_arguments(block.arguments, optional_str(delta.get("partial_json"), "delta.partial_json") or "")
        return []  # thinking_delta, signature_delta, citations_delta, server-tool input, …

    def _on_block_stop(self, payload: Mapping[str, Any]) -> list[StreamChunk]:
        self._started(payload, "content_block_stop").stopped = True
        return []

    def _on_message_delta(self, payload: Mapping[str, Any]) -> list[StreamChunk]:
        self._record_usage(payload.get("usage"), "usage")
        return []

    def _on_message_stop(self, payload: Mapping[str, Any]) -> list[StreamChunk]:
        self._done = True
        return []

    def _on_ping(self, payload: Mapping[str, Any]) -> list[StreamChunk]:
        return []

    def _on_error(self, payload: Mapping[str, Any]) -> list[StreamChunk]:
        raise error_from_object(PROVIDER, payload)


# R-PRV-18: event type -> handler. Types not listed here are ignored.
_HANDLERS: Final[Mapping[str, Callable[[StreamAssembler, Mapping[str, Any]], list[StreamChunk]]]] = {
    "message_start": StreamAssembler._on_message_start,
    "content_block_start": StreamAssembler._on_block_start,
    "content_block_delta": StreamAssembler._on_block_delta,
    "content_block_stop": StreamAssembler._on_block_stop,
    "message_delta": StreamAssembler._on_message_delta,
    "message_stop": StreamAssembler._on_message_stop,
    "ping": StreamAssembler._on_ping,
    "error": StreamAssembler._on_error,
}
EVENT_TYPES: Final = tuple(_HANDLERS)


def parse_stream(status: int, headers: Sequence[tuple[str, str]], chunks: Iterable[bytes]) -> list[StreamChunk]:
    """All stream chunks of one recorded exchange: the text chunks, then one ``done`` or ``error``.

    Pure: ``chunks`` are the body's bytes in the pieces they arrived in (R-PRV-16, R-PRV-19).
    An HTTP error status gives just the error chunk of ``parse_error``.
    """
    return list(stream_chunks(parse_error, StreamAssembler, status, headers, chunks))
