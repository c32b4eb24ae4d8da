"""Retries of a failed provider or summarizer call (SPEC R-ENG-18 … R-ENG-21, R-ENG-27, R-EVT-10)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from fractions import Fraction

import pytest

from harness9_ref.engine import (
    AgentEngine,
    EventType,
    LongSession,
    RetryData,
    RetryHints,
    RetryingSummarizer,
    RetryPolicy,
    retry_delay,
    should_retry,
)
from harness9_ref.memory.context import SummarizationCompactor, new_summarization_compactor
from harness9_ref.memory.storage import MemorySession
from harness9_ref.schema import Message
from harness9_ref.testing import Failure, ScriptedProvider, ScriptedRegistry


def _engine(policy: RetryPolicy, *steps: Failure | Message) -> tuple[AgentEngine, ScriptedProvider]:
    provider = ScriptedProvider(list(steps))
    return AgentEngine(provider, ScriptedRegistry([], {}), retry=policy), provider


def test_the_wait_of_a_retry_does_not_spin_and_ends_at_once_on_cancel() -> None:
    """R-ENG-21: a 2 s wait costs no CPU; cancel() ends it at once and the provider is not called again."""
    engine, provider = _engine(
        RetryPolicy(1), Failure("rate_limit", "slow down", retry_after=2.0), Message("assistant", "late")
    )
    timer = threading.Timer(1.0, engine.cancel)
    cpu, wall = time.process_time(), time.monotonic()
    timer.start()
    events = list(engine.run_stream("hi"))
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    assert [e.type for e in events] == [EventType.TOKEN_UPDATE, EventType.RETRY, EventType.ERROR]
    assert events[-1].to_dict()["data"]["code"] == "cancelled"
    assert len(provider.requests) == 1
    assert 0.9 < wall < 1.8 and cpu < 0.1


def test_the_default_wait_lasts_the_delay() -> None:
    engine, provider = _engine(RetryPolicy(1, random=lambda: 0.0), Failure("timeout", "slow"), Message("assistant", "ok"))
    start = time.monotonic()
    assert engine.run("hi").content == "ok"
    assert time.monotonic() - start >= 0.5 and len(provider.requests) == 2


def test_the_retry_event_is_the_json_of_r_evt_10() -> None:
    data = RetryData(2, 3, 0.5, "rate_limit", "slow down")
    assert data.to_dict() == {"attempt": 2, "max_attempts": 3, "delay_seconds": 0.5, "code": "rate_limit", "message": "slow down"}


@pytest.mark.parametrize(
    ("hints", "after_text", "expected"),
    [
        (RetryHints("server_error"), True, False),
        (RetryHints("context_length_exceeded", should_retry=True), False, False),
        (RetryHints("overloaded", should_retry=False), False, False),
        (RetryHints("invalid_request", status=409), False, True),
        (RetryHints("invalid_request", status=404), False, False),
        (RetryHints("internal_error"), False, False),
    ],
)
def test_which_failures_are_retried(hints: RetryHints, after_text: bool, expected: bool) -> None:
    assert should_retry(hints, after_text) is expected


def test_the_delays() -> None:
    assert [retry_delay(k, None, lambda: 0.0) for k in range(1, 8)] == [0.5, 1, 2, 4, 8, 8, 8]
    assert retry_delay(1, None, lambda: 0.5) == 0.4375
    assert retry_delay(2000, None, lambda: 0.0) == 8  # no overflow for a large count
    assert retry_delay(1, -3.0, lambda: 0.0) == 0 and retry_delay(1, 61.0, lambda: 0.0) == 60


def test_max_retries_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy(-1)


def _long_engine(policy: RetryPolicy, *steps: Failure | Message) -> tuple[AgentEngine, ScriptedProvider, SummarizationCompactor]:
    """Long-session mode on a session over half of a 1000-token window, so the first turn summarises."""
    provider = ScriptedProvider(list(steps))
    session = MemorySession()
    session.add_messages([Message("user" if i % 2 == 0 else "assistant", f"m{i} " + "q" * 400) for i in range(6)])
    retrying = RetryingSummarizer(provider, policy)  # R-ENG-27: its builder wraps the summarizer
    compactor = new_summarization_compactor(retrying, 1000)
    engine = AgentEngine(
        provider, ScriptedRegistry([], {}), session=session, compactor=compactor,
        context=LongSession(1000, Fraction(1, 2)), retry=policy, summary_retries=retrying,
    )
    return engine, provider, compactor


def test_a_cancel_ends_the_summarizers_wait_at_once() -> None:
    """R-ENG-27 with R-ENG-21: the summarizer asked to wait 30 s; cancel() on its retry event ends the run."""
    engine, provider, _ = _long_engine(
        RetryPolicy(2), Failure("rate_limit", "slow down", retry_after=30.0), Message("assistant", "SUMMARY")
    )
    events = []
    for event in engine.run_stream("next"):
        events.append(event)
        if event.type is EventType.RETRY:
            engine.cancel()
    # The fallback's view is over the ceiling, so it is cut further (R-FIT-1) before the cancel is seen.
    assert [e.type for e in events] == [EventType.RETRY, EventType.COMPACTION, EventType.TOKEN_UPDATE, EventType.ERROR]
    assert events[1].to_dict()["data"]["tier"] == "degraded"
    assert events[-1].to_dict()["data"]["code"] == "cancelled"
    assert len(provider.requests) == 1  # the summarizer was not asked again, nor the model


def test_the_engine_leaves_the_compactor_it_is_given_as_it_is() -> None:
    """R-ENG-27b: the builder wraps the summarizer; the engine neither looks inside the compactor nor changes it."""
    provider = ScriptedProvider([])
    compactor = new_summarization_compactor(provider, 1000)
    AgentEngine(provider, ScriptedRegistry([], {}), compactor=compactor, context=LongSession(0), retry=RetryPolicy(2))
    assert compactor.provider is provider


def test_compact_now_retries_without_events() -> None:
    policy = RetryPolicy(2, wait=lambda cancelled, seconds: None)
    engine, provider, _ = _long_engine(policy, Failure("overloaded", "busy"), Message("assistant", "SUMMARY"))
    data = engine.compact_now()
    assert data.to_dict()["tier"] == "summary"
    assert len(provider.requests) == 2


def _threads_started_by(work: Callable[[], object]) -> list[str]:
    """The names of the threads started while ``work`` runs, seen from inside each thread."""
    names: list[str] = []

    def seen(frame: object, event: str, arg: object) -> None:
        sys.setprofile(None)  # within this new thread: one record is enough
        names.append(threading.current_thread().name)

    threading.setprofile(seen)
    try:
        work()
    finally:
        threading.setprofile(None)
    return names


def test_no_helper_thread_when_no_summary_is_made() -> None:
    """R-ENG-27: with retries on, a turn with nothing to summarise runs on the run's thread alone."""
    provider, policy = ScriptedProvider([Message("assistant", "ok")]), RetryPolicy(2)
    retrying = RetryingSummarizer(provider, policy)
    engine = AgentEngine(
        provider, ScriptedRegistry([], {}), session=MemorySession(), compactor=new_summarization_compactor(retrying, 1000),
        context=LongSession(1000), retry=policy, summary_retries=retrying,
    )
    assert "harness9-compaction" not in _threads_started_by(lambda: engine.run("hi"))


def test_a_helper_thread_carries_the_summary_when_one_is_made() -> None:
    """R-ENG-27: the summary runs on a helper thread, so its retries are reported while they happen."""
    engine, provider, _ = _long_engine(RetryPolicy(2), Message("assistant", "SUMMARY"), Message("assistant", "ok"))
    assert "harness9-compaction" in _threads_started_by(lambda: engine.run("next"))
    assert len(provider.requests) == 2
