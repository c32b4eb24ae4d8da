"""A scripted provider without network access (SPEC R-PRV-23, R-USE-6; seed 7.3 "Mock Provider")."""

from __future__ import annotations

import threading
from typing import Final, Iterator, Sequence

from ..schema import CHUNK_DONE, CHUNK_TEXT, Message, StreamChunk, ToolDefinition, Usage
from ._errors import ScriptExhausted, error_chunk

__all__ = ["MOCK_PROVIDER", "MockProvider"]  # gets re-exported

MOCK_PROVIDER: Final = "mock"  # the ``provider`` attribute of its errors


class MockProvider:
    """Return scripted replies in order, with no usage (R-PRV-23).

    Every request is recorded in ``requests`` (messages and tools, as tuples) so a test can
    check what was asked. Safe to call from several threads.

    Args:
        replies: the assistant messages to return, one per call.
    """

    def __init__(self, replies: Sequence[Message]) -> None:
        self._replies = tuple(replies)
        self._next = 0
        self._lock = threading.Lock()
        self.requests: list[tuple[tuple[Message, ...], tuple[ToolDefinition, ...]]] = []

    def __repr__(self) -> str:
        return f"MockProvider({len(self._replies)} replies, {self._next} used)"

    @property
    def remaining(self) -> int:
        """How many scripted replies are left."""
        return len(self._replies) - self._next

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message, Usage | None]:
        """The next scripted reply and no usage.

        Raises:
            ScriptExhausted: every reply has been used (code ``script_exhausted``).
        """
        with self._lock:
            self.requests.append((tuple(messages), tuple(available_tools)))
            if self._next >= len(self._replies):
                raise ScriptExhausted(
                    f"{MOCK_PROVIDER}: the script is exhausted: all {len(self._replies)} replies were used "
                    f"and call {len(self.requests)} asked for another",
                    provider=MOCK_PROVIDER,
                )
            reply = self._replies[self._next]
            self._next += 1
        return reply, None

    def generate_stream(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamChunk]:
        """One text chunk with the whole content (when non-empty), then ``done`` without usage.

        An exhausted script ends in an ``error`` chunk (R-PRV-19).
        """
        try:
            reply, _ = self.generate(messages, available_tools)
        except ScriptExhausted as exc:
            yield error_chunk(exc)
            return
        if reply.content:
            yield StreamChunk(CHUNK_TEXT, delta=reply.content)
        yield StreamChunk(CHUNK_DONE, message=reply)
