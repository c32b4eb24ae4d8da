"""TokenBudgetCompactor: keep the longest newest suffix that fits a token budget
(SPEC R-TB-1 … R-TB-7).

The seed estimates the whole history, then binary-searches the tail length, estimating each
candidate. The estimate of ``[system] + msgs[n-k:]`` is floor((bytes(system) + bytes of the
suffix) / 4), which only grows with k, so one pass of suffix byte sums answers the whole-history
check and every candidate in O(1), and the search returns exactly what the seed's does (R-TB-7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Final

from ..schema import Message
from ._compactor import budget_for_context_window, is_compactable
from ._repair import repair_orphaned_tool_pairs
from ._tokens import bytes_to_tokens, message_bytes

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MIN_TAIL_MESSAGES",
    "TokenBudgetCompactor",
    "effective_max_tokens",
    "effective_min_tail",
    "new_token_budget_compactor",
]

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
