"""Assemble an OpenAI Chat Completions stream (SPEC R-PRV-17, R-PRV-19, R-USE-3).

Chunks look like ``data: {"choices":[{"index":0,"delta":{…}}],"usage":null}``. Only choice 0 is
used. Text pieces (``content`` and ``refusal``) become text chunks at once; tool calls arrive as
fragments keyed by their ``index`` and are put together at the end. The usage comes from the
last chunk with a non-null ``usage``. ``data: [DONE]`` ends the stream; it is not JSON.

A legacy ``function_call`` delta or a tool call of a type other than ``function`` is refused
as a stream error, as R-PRV-13 refuses them in a whole body, so that ``generate`` and
``generate_stream`` never disagree about the same reply (R-PRV-19).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from ...schema import ROLE_ASSISTANT, Message, StreamChunk, ToolCall, Usage
from ...schema.strict_json import describe
from .._classify import error_from_object
from .._parsing import EventAssembler
from .._shape import ShapeError, expect_object, expect_str, loads, optional_int, optional_list, optional_object, optional_str
from .._sse import SSEEvent
from .._streaming import stream_chunks
from ._request import PROVIDER, TOOL_TYPE_FUNCTION
from ._response import LEGACY_FUNCTION_CALL, parse_error, read_usage

__all__ = ["SSE_DONE", "StreamAssembler", "parse_stream"]

SSE_DONE: Final = "[DONE]"  # R-PRV-17: the data of the terminal event
USED_CHOICE: Final = 0  # R-PRV-17: the only choice assembled
TEXT_FIELDS: Final = ("content", "refusal")  # R-PRV-17: delta members appended to the text, in this order


@dataclass(slots=True)
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _ChoicePaths(NamedTuple):
    """The paths that name the members of choice ``i`` in an error message."""

    choice: str
    choice_index: str
    delta: str
    texts: tuple[tuple[str, str], ...]  # (member, path) for each of TEXT_FIELDS
    tool_calls: str


@functools.cache
def _choice_paths(i: int) -> _ChoicePaths:
    """Built once per choice position rather than once per event: formatting them for every
    event of a stream cost more than reading the event's members."""
    choice = f"choices[{i}]"
    delta = f"{choice}.delta"
    texts = tuple((name, f"{delta}.{name}") for name in TEXT_FIELDS)
    return _ChoicePaths(choice, f"{choice}.index", delta, texts, f"{delta}.tool_calls")


class StreamAssembler(EventAssembler):
    """Turn the SSE events of one OpenAI stream into text chunks and the final message (R-PRV-17).

    Call ``feed`` for each event in order, then ``finish``; ``done`` is True once
    ``data: [DONE]`` has arrived.
    """

    provider = PROVIDER
    terminal = f"data: {SSE_DONE}"

    def __init__(self) -> None:
        super().__init__()
        self._calls: dict[int, _Call] = {}
        self._usage: Usage | None = None

    def _event(self, event: SSEEvent) -> list[StreamChunk]:
        if event.data == SSE_DONE:
            self._done = True
            return []
        chunk = expect_object(loads(event.data), "data")
        if chunk.get("error") is not None:
            raise error_from_object(PROVIDER, chunk)
        # A stream has one event per token, so the common members are looked at before the
        # type checks, which run only on what is present.
        usage = chunk.get("usage")
        if usage is not None:
            self._usage = read_usage(usage)
        out: list[StreamChunk] = []
        for i, item in enumerate(optional_list(chunk.get("choices"), "choices") or ()):
            paths = _choice_paths(i)
            choice = expect_object(item, paths.choice)
            if (optional_int(choice.get("index"), paths.choice_index) or 0) == USED_CHOICE:
                self._delta(optional_object(choice.get("delta"), paths.delta) or {}, paths, out)
        return out

    def _result(self) -> tuple[Message, Usage | None]:
        """The assembled message (calls ordered by index) and usage."""
        calls = tuple(ToolCall(c.id, c.name, "".join(c.arguments)) for _, c in sorted(self._calls.items()))
        return Message(ROLE_ASSISTANT, self.text(), calls), self._usage

    def _delta(self, delta: Mapping[str, Any], paths: _ChoicePaths, out: list[StreamChunk]) -> None:
        if delta.get(LEGACY_FUNCTION_CALL) is not None:  # as R-PRV-13 refuses it in a whole body
            raise ShapeError(f"{paths.delta}.{LEGACY_FUNCTION_CALL}", "the legacy function_call format is not supported")
        for name, path in paths.texts:
            piece = delta.get(name)
            if piece is not None and expect_str(piece, path):
                out.append(self._keep_text(piece))
        fragments = delta.get("tool_calls")
        if fragments is None:
            return
        for position, item in enumerate(optional_list(fragments, paths.tool_calls) or ()):
            where = f"{paths.tool_calls}[{position}]"
            self._fragment(expect_object(item, where), position, where)

    def _fragment(self, fragment: Mapping[str, Any], position: int, path: str) -> None:
        kind = fragment.get("type")
        if kind is not None and kind != TOOL_TYPE_FUNCTION:  # only the first fragment has a type
            problem = f"expected 'function', got {describe(kind)}; this tool-call format is not supported"
            raise ShapeError(f"{path}.type", problem)
        index = optional_int(fragment.get("index"), f"{path}.index")
        call = self._calls.setdefault(position if index is None else index, _Call())
        function = optional_object(fragment.get("function"), f"{path}.function") or {}
        call.id = call.id or optional_str(fragment.get("id"), f"{path}.id") or ""
        call.name = call.name or optional_str(function.get("name"), f"{path}.function.name") or ""
        piece = optional_str(function.get("arguments"), f"{path}.function.arguments")
        if piece:
            self._keep_arguments(call.arguments, piece)


def parse_stream(status: int, headers: Sequence[tuple[str, str]], chunks: Iterable[bytes]) -> list[StreamChunk]:
    """All stream chunks of one recorded exchange: the text chunks, then one ``done`` or ``error``.

    Pure: ``chunks`` are the body's bytes in the pieces they arrived in (R-PRV-16, R-PRV-19).
    An HTTP error status gives just the error chunk of ``parse_error``.
    """
    return list(stream_chunks(parse_error, StreamAssembler, status, headers, chunks))


