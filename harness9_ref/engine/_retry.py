"""When and after how long the engine calls the provider again (SPEC R-ENG-18 … R-ENG-22, R-ENG-27).

A provider never retries by itself (R-PRV-22); the engine does, for a call that failed before
any text reached the consumer with a failure that is likely to pass (R-ENG-19). The delay is the
provider's ``retry-after`` hint, capped, or an exponential backoff with jitter (R-ENG-20), the
same numbers the official SDKs use. The wait is ``threading.Event.wait`` on the run's cancel
flag, so ``cancel()`` ends it at once and nothing spins (R-ENG-21).

``RetryPolicy`` holds the number of retries and two seams: ``random`` draws the jitter and
``wait`` waits, so a test or a conformance case fixes the one and skips the other.
``RetryingSummarizer`` applies the same rules to a summarizer's calls (R-ENG-27); whoever builds
the compactor wraps its summarizer in one and hands the engine the same wrapper, which the engine
tells, for each run, where retries are reported and which flag cancels the wait.
"""

from __future__ import annotations

import logging
import random as _random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from ..memory.context import LimitsReply
from ._events import RetryData
from ._run_errors import INTERNAL_ERROR, LOGGER_NAME, error_text

if TYPE_CHECKING:
    from ..memory.context import Summarizer
    from ..schema import Message, ToolDefinition, Usage

__all__ = [
    "BACKOFF_BASE_SECONDS",
    "BACKOFF_MAX_SECONDS",
    "JITTER_SHARE",
    "RETRYABLE_CODES",
    "RETRYABLE_STATUSES",
    "RETRY_AFTER_MAX_SECONDS",
    "RetryHints",
    "RetryPolicy",
    "RetryingSummarizer",
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

_log = logging.getLogger(LOGGER_NAME)


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


def hints_of(failure: BaseException) -> RetryHints:
    """The code and R-ERR-2's hints of a provider's typed error; ``internal_error`` for any other exception."""
    return RetryHints(
        str(getattr(failure, "code", INTERNAL_ERROR)),
        getattr(failure, "status", None),
        getattr(failure, "retry_after", None),
        getattr(failure, "should_retry", None),
    )


def _log_retry(data: RetryData) -> None:
    _log.info(
        "retrying the summary in %.1f s: %s (attempt %d of %d)", data.delay_seconds, data.message, data.attempt, data.max_attempts
    )


class RetryingSummarizer:
    """A summarizer whose failed calls are made again as R-ENG-19 … R-ENG-21 say (R-ENG-27).

    A summarizer call streams nothing, so rule 1 of R-ENG-19 never applies. ``bind`` sets where
    each retry is reported and which flag ends a wait; a cancelled wait re-raises the failure,
    so the summary fails and falls back (R-SUM-10) as it would have without retries.
    """

    def __init__(self, summarizer: Summarizer, policy: RetryPolicy) -> None:
        self.summarizer = summarizer
        self.policy = policy
        self._cancelled = threading.Event()
        self._report: Callable[[RetryData], None] = _log_retry

    @property
    def reply_limit(self) -> int:
        """The wrapped summarizer's reply limit (R-FOLD-7); 0 when it takes none."""
        return self.summarizer.reply_limit if isinstance(self.summarizer, LimitsReply) else 0

    @reply_limit.setter
    def reply_limit(self, limit: int) -> None:
        if isinstance(self.summarizer, LimitsReply):
            self.summarizer.reply_limit = limit

    def bind(self, cancelled: threading.Event | None = None, report: Callable[[RetryData], None] | None = None) -> None:
        """Report retries to ``report`` and stop waiting once ``cancelled`` is set; None for either: log, never cancelled."""
        self._cancelled = cancelled if cancelled is not None else threading.Event()
        self._report = report if report is not None else _log_retry

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message | None, Usage | None]:
        policy = self.policy
        retry = 0
        while True:
            try:
                return self.summarizer.generate(messages, available_tools)
            except Exception as failure:
                hints = hints_of(failure)
                if retry >= policy.max_retries or not should_retry(hints, after_text=False) or self._cancelled.is_set():
                    raise
                retry += 1
                delay = retry_delay(retry, hints.retry_after, policy.random)
                self._report(RetryData(retry + 1, policy.max_retries + 1, delay, hints.code, error_text(failure)))
                policy.wait(self._cancelled, delay)
                if self._cancelled.is_set():  # R-ENG-21: a cancel ends the wait and asks no more
                    raise
