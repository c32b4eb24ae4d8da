"""The Compactor seam, the rules every compactor shares, and the two compactors that only truncate.

SPEC R-CMP-1 … R-CMP-5 (the seam), R-SW-1 … R-SW-5 (``SlidingWindowCompactor``: the newest
messages by count), R-TB-1 … R-TB-7 (``TokenBudgetCompactor``: the longest newest suffix that
fits a token budget). The summarising compactor, which asks a model, is ``_summarize``.

For the token budget the seed estimates the whole history, then binary-searches the tail length, estimating each
candidate. The estimate of ``[system] + msgs[n-k:]`` is floor((bytes(system) + bytes of the
suffix) / 4), which only grows with k, so one pass of suffix byte sums answers the whole-history
check and every candidate in O(1), and the search returns exactly what the seed's does (R-TB-7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Final, Protocol, runtime_checkable

from ...schema import ROLE_SYSTEM, Message
from ._repair import repair_orphaned_tool_pairs
from ._tokens import bytes_to_tokens, message_bytes

__all__ = [
    "BUDGET_PERCENT",
    "DEFAULT_MAX_MESSAGES",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MIN_TAIL_MESSAGES",
    "Compactor",
    "SlidingWindowCompactor",
    "TokenBudgetCompactor",
    "budget_for_context_window",
    "new_token_budget_compactor",
]

BUDGET_PERCENT: Final = 80  # R-CMP-4: compaction budget is 80% of the context window


@runtime_checkable
class Compactor(Protocol):
    """Trims a history before it is sent to the model.

    Implementations return a new list and never mutate ``msgs`` or its messages; the engine
    keeps the full history and only sends the compacted view.
    """

    def compact(self, msgs: Sequence[Message]) -> list[Message]: ...


def is_compactable(msgs: Sequence[Message]) -> bool:
    """R-CMP-1: a compactor only touches a history that starts with a system message."""
    return bool(msgs) and msgs[0].role == ROLE_SYSTEM


def budget_for_context_window(context_window: int) -> int:
    """R-CMP-4: ``context_window * BUDGET_PERCENT // 100``, in integers."""
    return context_window * BUDGET_PERCENT // 100


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


DEFAULT_MAX_TOKENS: Final = 160_000  # R-TB-1: used when max_tokens <= 0 (80% of 200K)
DEFAULT_MIN_TAIL_MESSAGES: Final = 6  # R-TB-1: the default tail


def effective_max_tokens(max_tokens: int) -> int:
    return max_tokens if max_tokens > 0 else DEFAULT_MAX_TOKENS


def effective_min_tail(min_tail_messages: int) -> int:
    return min_tail_messages if min_tail_messages > 0 else DEFAULT_MIN_TAIL_MESSAGES


@dataclass(frozen=True, slots=True)
class TokenBudgetCompactor:
    """Truncate the oldest messages until the estimate fits ``max_tokens``, keeping the newest."""

    max_tokens: int
    min_tail_messages: int = DEFAULT_MIN_TAIL_MESSAGES

    def compact(self, msgs: Sequence[Message]) -> list[Message]:
        """Apply R-TB-2 … R-TB-7, one step each."""
        max_tokens = effective_max_tokens(self.max_tokens)
        min_tail = effective_min_tail(self.min_tail_messages)
        if not is_compactable(msgs):
            return list(msgs)
        non_system = len(msgs) - 1
        if non_system <= min_tail:
            return list(msgs)
        # suffix[k] = bytes of the newest k messages; with the system prompt's bytes it gives the
        # estimate of every candidate, the whole history (k = non_system) included.
        system_bytes = message_bytes(msgs[0])
        suffix = [0, *accumulate(message_bytes(m) for m in reversed(msgs[1:]))]
        if bytes_to_tokens(system_bytes + suffix[non_system]) <= max_tokens:
            return list(msgs)
        tail_len = _longest_fitting_tail(system_bytes, suffix, min_tail, non_system - 1, max_tokens)
        return repair_orphaned_tool_pairs([msgs[0], *msgs[len(msgs) - tail_len :]])


def _longest_fitting_tail(system_bytes: int, suffix: Sequence[int], lo: int, hi: int, max_tokens: int) -> int:
    """Largest k in [lo, hi] whose candidate estimate fits ``max_tokens``, else lo (R-TB-4, R-TB-5)."""
    best = lo
    while lo <= hi:
        mid = (lo + hi) // 2
        if bytes_to_tokens(system_bytes + suffix[mid]) <= max_tokens:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


def new_token_budget_compactor(context_window: int) -> TokenBudgetCompactor:
    """The seed's NewTokenBudgetCompactor: 80% of the window, a tail of 6 (R-CMP-4, R-TB-1)."""
    return TokenBudgetCompactor(budget_for_context_window(context_window), DEFAULT_MIN_TAIL_MESSAGES)
