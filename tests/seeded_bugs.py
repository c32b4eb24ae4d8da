"""The seeded-bug catalogue, judged in the background while the rest of the suite runs.

Judging a mutant is mostly waiting for its adapter process, so the catalogue starts as soon as
collection ends (``tests/conftest.py``) and its processes use the cores the serial tests leave
idle; ``tests/test_seeded_bugs.py`` collects the verdicts. It runs in the "targeted" scope of
``conformance/_mutants.py``, with one core left to the other tests. A run that selects none of
the catalogue's tests never starts it; a run that ends early skips the mutants not yet started.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Final

import pytest

from conformance import PROJECT_ROOT, load_cases
from conformance._mutants import MutantResult, run_mutants

__all__ = ["MUTANTS_DIR", "results", "start", "stop"]

MUTANTS_DIR: Final = PROJECT_ROOT / "conformance" / "mutants"

_Run = tuple[ThreadPoolExecutor, "Future[dict[str, MutantResult]]", threading.Event]
_RUN: Final = pytest.StashKey[_Run]()


def _judge(cancel: threading.Event) -> dict[str, MutantResult]:
    workers = max(1, (os.cpu_count() or 1) - 1)
    judged = run_mutants(
        PROJECT_ROOT, MUTANTS_DIR, load_cases(), workers=workers, scope="targeted", cancel=cancel
    )
    return {result.id: result for result in judged}


def start(config: pytest.Config) -> None:
    """Start judging the catalogue in a background thread, unless it has started already."""
    if _RUN not in config.stash:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="seeded-bugs")
        cancel = threading.Event()
        config.stash[_RUN] = (executor, executor.submit(_judge, cancel), cancel)


def results(config: pytest.Config) -> dict[str, MutantResult]:
    """Every mutant's verdict by id, waiting for the background run (started here if need be)."""
    start(config)
    return config.stash[_RUN][1].result()


def stop(config: pytest.Config) -> None:
    """Skip the mutants not yet started and wait for the others' adapters to be closed."""
    run = config.stash.get(_RUN, None)
    if run is not None:
        executor, _, cancel = run
        cancel.set()
        executor.shutdown(wait=True)
