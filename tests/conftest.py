"""Fixtures shared by every test directory, and the start of the runs that go on in the background.

The seeded-bug catalogue, the reference adapter's run of every case and the judging of the
pending requirements' seeded bugs (``tests/background.py``) start when collection ends if any
selected test asks for their results (when the run is configured, if it runs the whole suite),
so that they run beside the other tests instead of after them; so do the wait-bound test
modules, in a second pytest process (``tests/side_run.py``).
"""

from __future__ import annotations

import compileall
import gc
import os
import subprocess
import sys
from collections.abc import Generator
from pathlib import Path

import pytest
from hypothesis import settings

from conformance import PROJECT_ROOT
from tests import background, side_run
from tests.fakes import Clock


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where a test's session database goes; nothing is created there yet."""
    return tmp_path / "sessions.db"


@pytest.fixture
def clock() -> Clock:
    """A clock reading ``tests.fakes.START`` until the test moves it."""
    return Clock()


# Property tests have no deadline: on a loaded machine (this run keeps both cores busy) an example
# can take longer than hypothesis's 200 ms once and not the next time, which it reports as flaky.
settings.register_profile("loaded-machine", deadline=None)
settings.load_profile("loaded-machine")


def pytest_configure(config: pytest.Config) -> None:
    gc.disable()  # until collection ends (pytest_collection_finish)
    _keep_bytecode()
    side_run.configure(config)
    if side_run.whole_suite(config):  # every test is selected, those waiting for the runs too
        _head_start(config)
        for name in background.RUNS:
            background.start(config, name)


def _head_start(config: pytest.Config) -> None:
    """Build the caches of a fresh checkout in an untraced process beside this one (``tests/head_start.py``)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.head_start"], cwd=config.rootpath,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )

    def end() -> None:  # long done in a whole run; one interrupted early need not wait for it
        process.kill()
        process.wait()

    config.add_cleanup(end)


def _keep_bytecode() -> None:
    """Let this run and its child processes keep compiled modules, as Python does by default.

    The run starts hundreds of Python processes (the command line, adapters, servers, child
    pytest runs) that import the project and the tests from this folder. Where
    ``PYTHONDONTWRITEBYTECODE`` is set, each would compile (and pytest rewrite) every module it
    imports again: about a fifth of a clean checkout's run. The project's packages are compiled
    once here, the tests by pytest as it collects them; mutants' adapters still keep none
    (``conformance/_mutants.py``).
    """
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for package in ("harness9_ref", "conformance"):
        compileall.compile_dir(PROJECT_ROOT / package, quiet=1)


def _waits(item: pytest.Item) -> bool:
    return any(name in background.RUNS for name in getattr(item, "fixturenames", ()))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the background runs asked for (those of a whole-suite run have started already);
    the tests that wait for them go last.

    The second process's tests (``tests/side_run.py``) are reported after those, so this process
    runs everything it can while the background runs and the second process work.
    """
    _settle_heap()
    if session.config.option.collectonly:
        return
    wanted = {name for item in session.items for name in getattr(item, "fixturenames", ())}
    for name in background.RUNS:
        if name in wanted:
            background.start(session.config, name)
    session.items.sort(key=lambda item: (side_run.handed_over(session.config, item), _waits(item)))


def _settle_heap() -> None:
    """Collect once, then leave what collection built out of every later garbage collection.

    The collected tests, their parameters and the cases live until the run ends, yet each full
    collection walks them all again: with the cyclic collector on, collecting the suite triggers
    a dozen full collections over a growing heap, and the tests then trigger dozens more, several
    seconds of one core in each pytest process. So it is off while collecting, and what survives
    one collection at the end is frozen (``gc.freeze``), as the fork server does after its imports.
    """
    gc.enable()
    gc.collect()
    gc.freeze()


@pytest.hookimpl(hookwrapper=True, trylast=True)  # innermost: before pytest-cov reports
def pytest_runtestloop(session: pytest.Session) -> Generator[None, None, None]:
    """Freeze the heap the tests leave before coverage parses every source file for its report,
    which would otherwise run full collections over it (seconds at the end of the run)."""
    yield
    gc.freeze()


def pytest_sessionfinish(session: pytest.Session) -> None:
    background.stop(session.config)
