"""Wait-bound test modules run in a second pytest process, beside this one.

Much of the suite's time is waiting: on programs under tmux, on the command line's child
processes, on signal grace periods, on child pytest runs, on killed writers. The modules that
do mostly that (``SIDE_MODULES``) run in a second pytest process started when collection ends,
while this process runs the rest (and the background runs of ``tests/background.py``). Each of
their tests is then reported here, in its place at the end of the run, from the reports the
second process wrote: pytest's own report serialisation, so pass, fail, skip, durations and
JUnit come out as if the test had run here. Coverage is measured in both processes and
combined by pytest-cov at the end.

A run given no paths starts the second process as soon as it is configured, so that the two
collections overlap: the second process collects every side module, then waits for this one to
list the tests it hands over (none if this run selected only side tests or none) and runs only
those. A run of the whole suite (``whole_suite``, as the README's command runs it) selects every
test of every side module, so the second process does not wait for the list: it runs what it
collected at once, beside this process's collection. A run given paths starts it when its own
collection ends.

Nothing is handed over when the run selects no side test or only side tests, under ``--pdb``
or ``--collect-only``, or with ``H9_NO_SIDE_RUN=1`` in the environment.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final

import pytest

__all__ = ["SIDE_MODULES", "Side", "configure", "handed_over", "whole_suite"]

# Each of these spends its time in child processes, sleeps or other programs, little in this one,
# except the official SDKs' tests, which pay seconds for importing the SDKs; about half the
# suite's time, so that both processes end together (the rest waits on children too, but this
# process also hosts tests/background.py). In the order they run: those that mostly sleep
# first, while the background runs keep the cores busy, and those that keep a core busy
# themselves last, when this process is the only other one left.
SIDE_MODULES: Final = (
    "tests/tui/test_screen_tmux.py",  # the terminal UI under tmux
    "tests/tui/test_screen_tmux_daily.py",
    "tests/cli/test_run_cli.py",  # signals and their grace periods
    "tests/tools/test_interrupt.py",  # timeouts and signals of real commands
    "tests/cli/test_tui_cli.py",
    "tests/cli/test_cli.py",  # the command line as a child process
    "tests/cli/test_sessions_cli.py",
    "tests/cli/test_long_session_cli.py",
    "tests/conformance/test_forkserver.py",  # forked adapters, one of them hung until killed
    "tests/conformance/test_proxy.py",  # the recording proxy as a process, and its upstreams
    "tests/memory/test_session_reliability.py",  # writer processes, killed mid-batch
    "tests/postgres/test_pg_reliability.py",
    "tests/conformance/test_plugin.py",  # child pytest runs of a user's project
    "tests/conformance/test_porting.py",  # the runner against adapter processes
    "tests/conformance/test_starter_adapters.py",  # the Node and Go adapters
    "tests/provider/test_official_sdks.py",  # the official SDKs (seconds to import) against a replay server
    "tests/conformance/test_proxy_sdks.py",  # the official SDKs through the proxy
)
ITEMS_ENV: Final = "H9_SIDE_ITEMS"  # in the second process: the file listing its tests
REPORTS_ENV: Final = "H9_SIDE_REPORTS"  # in the second process: the file its reports go to
OPT_OUT_ENV: Final = "H9_NO_SIDE_RUN"
_PLUGIN: Final = "h9-side-run"


@dataclass
class Side:
    """The second process, the tests it runs and the reports read back so far."""

    process: subprocess.Popen[bytes]
    folder: Path
    nodeids: frozenset[str]
    reports: dict[str, list[dict[str, object]]] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)
    _stream: IO[str] | None = None

    def read(self) -> None:
        """Take in every complete report line written since the last call."""
        if self._stream is None:
            self._stream = (self.folder / "reports.jsonl").open(encoding="utf-8")
        while True:
            position = self._stream.tell()
            line = self._stream.readline()
            if not line.endswith("\n"):
                self._stream.seek(position)
                return
            data = json.loads(line)
            for key in ("location", "longrepr"):  # tuples, which JSON brought back as lists
                if isinstance(data.get(key), list):
                    data[key] = tuple(data[key])
            self.reports.setdefault(data["nodeid"], []).append(data)
            if data["when"] == "teardown":
                self.done.add(data["nodeid"])

    def wait_for(self, nodeid: str) -> list[dict[str, object]]:
        """The reports of ``nodeid``, once its teardown is reported or the process ended."""
        while True:
            self.read()
            if nodeid in self.done:
                return self.reports[nodeid]
            if self.process.poll() is not None:
                self.read()
                return self.reports.get(nodeid, []) if nodeid in self.done else []
            time.sleep(0.02)

    def output(self) -> str:
        return (self.folder / "output.txt").read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()


def whole_suite(config: pytest.Config) -> bool:
    """Whether this run selects every test: no paths, no selecting option, not just collecting."""
    selecting = ("keyword", "markexpr", "deselect", "ignore", "ignore_glob", "lf", "failedfirst", "stepwise",
                 "collectonly")
    return config.args_source != pytest.Config.ArgsSource.ARGS and not any(
        config.getoption(option, None) for option in selecting
    )


def _allowed(config: pytest.Config) -> bool:
    return not (os.environ.get(OPT_OUT_ENV) or config.option.usepdb or config.option.collectonly)


def _wanted(config: pytest.Config, items: list[pytest.Item], modules: Sequence[str]) -> list[pytest.Item]:
    if not _allowed(config):
        return []
    side = [item for item in items if item.nodeid.split("::")[0] in modules]
    return side if 0 < len(side) < len(items) else []


def handed_over(config: pytest.Config, item: pytest.Item) -> bool:
    """Whether ``item`` runs in the second process (once collection has finished)."""
    delegator = config.pluginmanager.get_plugin(_PLUGIN)
    side = delegator.side if isinstance(delegator, _Delegator) else None
    return side is not None and item.nodeid in side.nodeids


def configure(config: pytest.Config, modules: Sequence[str] = SIDE_MODULES) -> None:
    """Register this process's part: the second process's reporter, or the first's delegator
    (which starts the second process now if the run was given no paths)."""
    reports = os.environ.get(REPORTS_ENV)
    if reports:
        config.pluginmanager.register(_Reporter(config, Path(reports), modules), _PLUGIN)
        return
    delegator = _Delegator(modules)
    config.pluginmanager.register(delegator, _PLUGIN)
    given_paths = config.args_source == pytest.Config.ArgsSource.ARGS
    present = [module for module in modules if (config.rootpath / module).is_file()]
    if _allowed(config) and not given_paths and present:
        delegator.start(config, present, listed=not whole_suite(config))
        config.add_cleanup(delegator.end)


class _Reporter:
    """In the second process: run only the tests handed over, and write each report to the file."""

    def __init__(self, config: pytest.Config, reports: Path, modules: Sequence[str]) -> None:
        self.config = config
        self.reports = reports
        self.order = {module: n for n, module in enumerate(modules)}
        self.first = os.getppid()

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Keep the tests handed over (all, in a whole-suite run), in the modules' order (they were
        collected in another)."""
        if ITEMS_ENV in os.environ:
            listed = set(_listed(Path(os.environ[ITEMS_ENV]), self.first))
            config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in listed])
            items[:] = [item for item in items if item.nodeid in listed]
        items.sort(key=lambda item: self.order.get(item.nodeid.split("::")[0], len(self.order)))

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = self.config.hook.pytest_report_to_serializable(config=self.config, report=report)
        with self.reports.open("a", encoding="utf-8") as out:
            out.write(json.dumps(data) + "\n")


def _listed(items: Path, first: int) -> list[str]:
    """The node ids the first process (``first``) hands over, once it has written them."""
    while not items.exists():
        if os.getppid() != first:
            pytest.exit("the first pytest process ended before handing any test over", returncode=2)
        time.sleep(0.02)
    listed: list[str] = json.loads(items.read_text(encoding="utf-8"))
    return listed


class _Delegator:
    """In the first process: hand the side tests over, then report them in their place."""

    def __init__(self, modules: Sequence[str]) -> None:
        self.modules = modules
        self.side: Side | None = None
        self._started: tuple[subprocess.Popen[bytes], Path, bool] | None = None  # and whether it waits for a list

    def start(self, config: pytest.Config, modules: list[str], *, listed: bool = True) -> None:
        """Start the second process on ``modules``; it runs what ``items.json`` lists, once written,
        or, not ``listed``, everything it collects.

        It collects them in the reverse of this process's order, so that on a fresh checkout the
        two compile different test modules first instead of the same ones at once.
        """
        folder = Path(tempfile.mkdtemp(prefix="h9-side-"))
        (folder / "reports.jsonl").touch()
        coverage = ["--cov", "--cov-report=", "--cov-fail-under=0"] if config.getoption("cov_source", None) else []
        env = {**os.environ, REPORTS_ENV: str(folder / "reports.jsonl")}
        env.pop(ITEMS_ENV, None)
        if listed:
            env[ITEMS_ENV] = str(folder / "items.json")
        with (folder / "output.txt").open("wb") as output:
            process = subprocess.Popen(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *coverage, *sorted(modules, reverse=True)],
                cwd=config.rootpath, env=env, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
            )
        self._started = (process, folder, listed)

    def end(self) -> None:
        """Stop a second process started early that the run ended before handing anything."""
        if self._started is not None and self.side is None:
            process, folder, _ = self._started
            process.terminate()
            process.wait()
            shutil.rmtree(folder, ignore_errors=True)

    @pytest.hookimpl(tryfirst=True)  # before conftest.py orders the tests by where they run
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        config = session.config
        nodeids = [item.nodeid for item in _wanted(config, session.items, self.modules)]
        if self._started is None and nodeids:
            handed = {nodeid.split("::")[0] for nodeid in nodeids}
            self.start(config, [module for module in self.modules if module in handed])
        if self._started is None:
            return
        process, folder, listed = self._started
        items = folder / "items.json"
        items.with_suffix(".tmp").write_text(json.dumps(nodeids), encoding="utf-8")
        items.with_suffix(".tmp").replace(items)  # whole, or not there yet
        if nodeids:
            self.side = Side(process, folder, frozenset(nodeids))
        else:  # started early, handed nothing: it ends at once, its coverage saved before ours
            if not listed:  # ... unless it is running everything it collected
                process.terminate()
            process.wait()
            self._started = None
            shutil.rmtree(folder, ignore_errors=True)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> bool | None:
        side = self.side
        if side is None or item.nodeid not in side.nodeids:
            return None
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        found = side.wait_for(item.nodeid)
        for data in found:
            report = item.config.hook.pytest_report_from_serializable(config=item.config, data=data)
            item.ihook.pytest_runtest_logreport(report=report)
        if not found:
            message = f"the second pytest process ended without running this test; its output:\n{side.output()}"
            failed = pytest.TestReport(item.nodeid, item.location, {}, "failed", message, "call")
            item.ihook.pytest_runtest_logreport(report=failed)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        if side.done >= side.nodeids:
            side.process.wait()  # its coverage data is saved before this process combines it
        return True

    def pytest_sessionfinish(self) -> None:
        """End the second process if this run stopped early (``-x``, Ctrl+C), and clean up."""
        if self.side is None:
            return
        if self.side.process.poll() is None:
            self.side.process.terminate()
        self.side.process.wait()
        self.side.close()
        shutil.rmtree(self.side.folder, ignore_errors=True)
