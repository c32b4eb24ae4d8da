"""Long runs of the suite that start early (``tests/conftest.py``) and go on beside the other tests.

Three parts of the suite are mostly waiting on other processes: the seeded-bug catalogue (one
adapter process per mutant, ``conformance/_mutants.py`` in its "targeted" scope), every case
through the reference adapter (one process, and cases that wait on timeouts by design) and
the seeded bugs of pending requirements (a child pytest process per bug, ``tests/pending_bugs.py``).
Each runs in a process of its own from the end of collection, or from the start in a run of
the whole suite (``tests/conftest.py``), and the tests that assert their verdicts
(``tests/test_seeded_bugs.py``, ``tests/test_conformance.py``,
``tests/conformance/test_pending_mutants.py``) wait for its results. A process and not a thread:
judging what the adapters answer is Python work that would otherwise hold this process's
interpreter lock against the tests in the foreground. A run that selects none of those tests
starts nothing; a run that ends early skips the mutants not yet started.

Each run's process is started with the environment as it is then: tests running alongside may
change ``os.environ`` (``PATH``, ``HOME``), which must not reach an adapter started later.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing.synchronize import Event
from typing import Any, Final

import pytest

from conformance import DEFAULT_ADAPTER_COMMAND, PROJECT_ROOT, Adapter, Case, Verdict, load_cases, run_case
from conformance._mutants import MutantResult, run_mutants
from tests import pending_bugs

__all__ = ["CATALOGUE", "MUTANTS_DIR", "PENDING", "REFERENCE", "RUNS", "result", "start", "stop", "suite_cases"]

MUTANTS_DIR: Final = PROJECT_ROOT / "conformance" / "mutants"
# The fixture through which a test asks for each run's results; conftest.py starts the runs
# that the selected tests ask for.
CATALOGUE: Final = "catalogue"
REFERENCE: Final = "reference_verdicts"
PENDING: Final = "pending_verdicts"
RUNS: Final = (CATALOGUE, REFERENCE, PENDING)


@functools.cache
def suite_cases() -> tuple[Case, ...]:
    """Every case of the suite, read once per process (half a second a read): collection and the
    background runs all need them, and nothing changes a ``Case``."""
    return tuple(load_cases())


_Run = tuple[ProcessPoolExecutor, "Future[Any]", Event]
_RUNS: Final = pytest.StashKey[dict[str, _Run]]()


def _catalogue(cancel: threading.Event) -> dict[str, MutantResult]:
    workers = max(1, (os.cpu_count() or 1) - 1)  # one core for the tests in the foreground
    judged = run_mutants(PROJECT_ROOT, MUTANTS_DIR, suite_cases(), workers=workers, scope="targeted", cancel=cancel)
    return {result.id: result for result in judged}


def _reference(cancel: threading.Event) -> dict[str, Verdict]:
    verdicts: dict[str, Verdict] = {}
    with Adapter(DEFAULT_ADAPTER_COMMAND, cwd=PROJECT_ROOT) as adapter:
        for case in suite_cases():
            if cancel.is_set():
                break
            verdicts[case.id] = run_case(adapter, case)
    return verdicts


def _work(name: str) -> Callable[[threading.Event], Any]:
    """The run ``name``."""
    if name == CATALOGUE:
        return _catalogue
    if name == REFERENCE:
        return _reference
    if name == PENDING:
        return pending_bugs.judge
    raise LookupError(f"no background run named {name!r}")


_cancelled: Event | None = None  # in a run's process: set by stop() in the pytest process


def _listen(cancel: Event) -> None:
    """Set up a run's process: keep the event through which stop() cancels the run."""
    global _cancelled
    _cancelled = cancel


def _run(name: str) -> Any:
    """In a run's process: the run ``name``, told to stop early when the pytest process says so."""
    cancel = threading.Event()
    stopped = _cancelled

    def relay() -> None:
        if stopped is not None and stopped.wait():
            cancel.set()

    threading.Thread(target=relay, daemon=True).start()
    return _work(name)(cancel)


def start(config: pytest.Config, name: str) -> None:
    """Start the run ``name`` (one of ``RUNS``) in a process of its own, unless it has started already.

    The process is spawned, not forked: this one has threads, and a fresh interpreter takes the
    environment as it is now.
    """
    _work(name)  # an unknown name fails here, not in the process
    runs = config.stash.setdefault(_RUNS, {})
    if name not in runs:
        context = multiprocessing.get_context("spawn")
        cancel = context.Event()
        executor = ProcessPoolExecutor(1, mp_context=context, initializer=_listen, initargs=(cancel,))
        runs[name] = (executor, executor.submit(_run, name), cancel)


def result(config: pytest.Config, name: str) -> Any:
    """The run's results, waiting for it (and starting it if need be)."""
    start(config, name)
    return config.stash[_RUNS][name][1].result()


def stop(config: pytest.Config) -> None:
    """Skip what has not started and wait for the rest, so no adapter outlives the session."""
    for executor, _, cancel in config.stash.get(_RUNS, {}).values():
        cancel.set()
        executor.shutdown(wait=True)
