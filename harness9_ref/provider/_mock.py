"""A scripted provider without network access (SPEC R-PRV-23, R-USE-6)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Final, Generic, NamedTuple, TypeVar

from ..schema import CHUNK_DONE, CHUNK_TEXT, Message, StreamChunk, ToolDefinition, Usage
from ._errors import ScriptExhausted, error_chunk

__all__ = ["MOCK_PROVIDER", "MockProvider", "ScriptCursor", "ScriptRequest"]  # gets re-exported

MOCK_PROVIDER: Final = "mock"  # the ``provider`` attribute of its errors
T = TypeVar("T")


class ScriptRequest(NamedTuple):
    """What a scripted provider was asked: the messages and tools of one call, as given."""

    messages: tuple[Message, ...]
    tools: tuple[ToolDefinition, ...]


class ScriptCursor(Generic[T]):
    """The steps of a script, taken one per call under a lock, with every request recorded.

    Shared by MockProvider and ``harness9_ref.testing.ScriptedProvider``.
    """

    def __init__(self, steps: Sequence[T], provider: str) -> None:
        self._steps = tuple(steps)
        self._next = 0
        self._lock = threading.Lock()
        self._provider = provider
        self.requests: list[ScriptRequest] = []

    def __repr__(self) -> str:
        return f"{len(self._steps)} steps, {self._next} used"

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._steps) - self._next

    def take(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> T:
        """Record the request and return the next step.

        Raises:
            ScriptExhausted: every step has been used (code ``script_exhausted``).
        """
        with self._lock:
            self.requests.append(ScriptRequest(tuple(messages), tuple(tools)))
            if self._next >= len(self._steps):
                raise ScriptExhausted(
                    f"{self._provider}: the script is exhausted: all {len(self._steps)} steps were used "
                    f"and call {len(self.requests)} asked for another",
                    provider=self._provider,
                )
            step = self._steps[self._next]
            self._next += 1
        return step


class MockProvider:
    """Return scripted replies in order, with no usage (R-PRV-23).

    Every request is recorded in ``requests`` (messages and tools, as tuples) so a test can
    check what was asked. Safe to call from several threads.

    Args:
        replies: the assistant messages to return, one per call.
    """

    def __init__(self, replies: Sequence[Message]) -> None:
        self._script: ScriptCursor[Message] = ScriptCursor(replies, MOCK_PROVIDER)
        self.requests = self._script.requests

    def __repr__(self) -> str:
        return f"MockProvider({self._script!r})"

    @property
    def remaining(self) -> int:
        """How many scripted replies are left."""
        return self._script.remaining

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message, Usage | None]:
        """The next scripted reply and no usage.

        Raises:
            ScriptExhausted: every reply has been used (code ``script_exhausted``).
        """
        return self._script.take(messages, available_tools), None

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
