"""The Compactor seam and the rules every compactor shares (SPEC R-CMP-1 … R-CMP-5)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol, runtime_checkable

from ..schema import ROLE_SYSTEM, Message

__all__ = ["BUDGET_PERCENT", "Compactor", "budget_for_context_window", "is_compactable"]

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
