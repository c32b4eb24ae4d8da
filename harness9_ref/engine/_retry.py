"""When and after how long the engine calls the provider again (SPEC R-ENG-18 … R-ENG-22).

A provider never retries by itself (R-PRV-22); the engine does, for a call that failed before
any text reached the consumer with a failure that is likely to pass (R-ENG-19). The delay is the
provider's ``retry-after`` hint, capped, or an exponential backoff with jitter (R-ENG-20), the
same numbers the official SDKs use. The wait is ``threading.Event.wait`` on the run's cancel
flag, so ``cancel()`` ends it at once and nothing spins (R-ENG-21).

``RetryPolicy`` holds the number of retries and two seams: ``random`` draws the jitter and
``wait`` waits, so a test or a conformance case fixes the one and skips the other.
"""

from __future__ import annotations

import random as _random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "BACKOFF_BASE_SECONDS",
    "BACKOFF_MAX_SECONDS",
    "JITTER_SHARE",
    "RETRYABLE_CODES",
    "RETRYABLE_STATUSES",
    "RETRY_AFTER_MAX_SECONDS",
    "RetryHints",
    "RetryPolicy",
    "retry_delay",
    "should_retry",
]

# R-ENG-19: the provider error codes (R-ERR-1) of a failure that may pass on its own.
RETRYABLE_CODES: Final = frozenset({"rate_limit", "overloaded", "server_error", "timeout", "connection_error"})
# R-ENG-19: request timeout and conflict, which R-ERR-3 classifies as invalid_request.
RETRYABLE_STATUSES: Final = frozenset({408, 409})
NEVER_RETRIED: Final = "context_length_exceeded"  # R-ENG-19: compaction's, never a retry's
BACKOFF_BASE_SECONDS: Final = 0.5  # R-ENG-20
BACKOFF_MAX_SECONDS: Final = 8.0  # R-ENG-20
JITTER_SHARE: Final = 0.25  # R-ENG-20: the backoff is cut by up to this share
RETRY_AFTER_MAX_SECONDS: Final = 60.0  # R-ENG-20


def _wait_for_cancel(cancelled: threading.Event, seconds: float) -> None:
    """Block until ``seconds`` pass or the run is cancelled, without spinning (R-ENG-21)."""
    cancelled.wait(seconds)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often the engine retries a failed provider call and how it waits (R-ENG-18).

    Args:
        max_retries: retries after the first attempt; 0 turns retrying off.
        random: the jitter's draw in [0, 1) (R-ENG-20); ``lambda: 0.0`` gives the plain backoff.
        wait: ``wait(cancelled, seconds)`` blocks until the seconds pass or ``cancelled`` is
            set; the default waits on the event, a test passes one that returns at once.

    Raises:
        ValueError: ``max_retries`` is negative.
    """

    max_retries: int = 0
    random: Callable[[], float] = field(default=_random.random, compare=False)
    wait: Callable[[threading.Event, float], None] = field(default=_wait_for_cancel, compare=False)

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {self.max_retries}")


@dataclass(frozen=True, slots=True)
class RetryHints:
    """What a failed call says about retrying it: its code and R-ERR-2's hints (None when unknown)."""

    code: str
    status: int | None = None
    retry_after: float | None = None
    should_retry: bool | None = None


def should_retry(hints: RetryHints, after_text: bool) -> bool:
    """True when a failed call may be retried (R-ENG-19), first rule that applies wins."""
    if after_text or hints.code == NEVER_RETRIED:
        return False
    if hints.should_retry is not None:
        return hints.should_retry
    return hints.code in RETRYABLE_CODES or hints.status in RETRYABLE_STATUSES


def retry_delay(retry: int, retry_after: float | None, draw: Callable[[], float]) -> float:
    """The seconds to wait before retry number ``retry`` (1 for the first) (R-ENG-20).

    ``retry_after`` when the provider sent one, at most RETRY_AFTER_MAX_SECONDS; else
    ``min(BASE × 2^(retry-1), MAX) × (1 − JITTER_SHARE × draw())``.
    """
    if retry_after is not None:
        return min(max(retry_after, 0.0), RETRY_AFTER_MAX_SECONDS)
    backoff: float = min(BACKOFF_BASE_SECONDS * 2.0 ** min(retry - 1, 64), BACKOFF_MAX_SECONDS)
    return backoff * (1 - JITTER_SHARE * draw())
