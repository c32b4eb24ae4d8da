"""SlidingWindowCompactor: keep the newest messages by count (SPEC R-SW-1 … R-SW-5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..schema import Message
from ._compactor import is_compactable
from ._repair import repair_orphaned_tool_pairs

__all__ = ["DEFAULT_MAX_MESSAGES", "MIN_MAX_MESSAGES", "SlidingWindowCompactor"]

DEFAULT_MAX_MESSAGES: Final = 100  # R-SW-1: used when max_messages <= 0, system prompt included
MIN_MAX_MESSAGES: Final = 2  # R-SW-1: the system prompt plus at least one message


@dataclass(frozen=True, slots=True)
class SlidingWindowCompactor:
    """Keep the system prompt and the newest ``max_messages - 1`` messages, then repair pairs."""

    max_messages: int = DEFAULT_MAX_MESSAGES

    @property
    def effective_max_messages(self) -> int:
        if self.max_messages <= 0:
            return DEFAULT_MAX_MESSAGES
        return max(self.max_messages, MIN_MAX_MESSAGES)

    def compact(self, msgs: Sequence[Message]) -> list[Message]:
        """Return the window of R-SW-2; the input is returned unchanged (as a new list) when it fits."""
        limit = self.effective_max_messages
        if not is_compactable(msgs) or len(msgs) <= limit:
            return list(msgs)
        start = len(msgs) - limit + 1
        # Boundary fix A: never start the window inside a run of tool results.
        while start > 1 and msgs[start].tool_call_id != "":
            start -= 1
        return repair_orphaned_tool_pairs([msgs[0], *msgs[start:]])
