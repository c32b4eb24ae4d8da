"""The seeded bugs of pending requirements, each judged by the project's tests in a child pytest.

A requirement listed in conformance/pending.txt has no conformance case (the adapter protocol
cannot observe it: the recording proxy and replay server are tools of the suite, a PostgreSQL
server is given to the runner only on request, a killed writer or a restarted server is not a
step of a case), so its seeded bugs live in conformance/mutants/pytest/: the catalogue's edit
format, with ``tests`` naming the pytest tests that must fail instead of ``kills``.

``python -m conformance mutants --catalogue pytest`` (or ``all``; ``--only ID …`` picks bugs of
either catalogue) judges them: the project is copied once; the named tests must pass, none
skipped, on the unmutated copy (the baseline), and each bug is applied to it in turn, its tests
run in a child pytest process, and the file restored. The children's PostgreSQL tests share
one server, started here (or the one ``HARNESS9_TEST_POSTGRES_URL`` names) and handed on in
that variable, so no child pays for initdb; without PostgreSQL binaries or psycopg, the bugs
judged by tests/postgres/ are left unjudged and the summary says so. The tests are the
project's, not the conformance package's: without ``<root>/tests/`` nothing can be judged.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any, Final

from ..runner._backends import POSTGRES_ENV
from ._mutant_copy import Edit, apply, copy_project

__all__ = ["PYTEST_DIR", "PytestVerdicts", "judge", "load_catalogue", "missing_tests", "needs_postgres", "problems", "summary"]

PYTEST_DIR: Final = "pytest"  # the catalogue's folder inside the case-judged one
HIDDEN: Final = ("PYTHONSAFEPATH", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", POSTGRES_ENV)
# The listed tests use no property-based testing; its plugin would double each child's start.
# A child runs a handful of tests: in one process, not on workers of its own (pyproject's -n auto).
# "-m ''": the named tests run whatever their markers (the project's addopts deselect a tier).
CHILD_OPTIONS: Final = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-n", "0", "-m", "", "-q", "-rf")
POSTGRES_TESTS: Final = "tests/postgres/"
SERVER_HELPER: Final = Path("tests", "postgres", "server.py")  # the tests' private PostgreSQL server
CHILD_TIMEOUT: Final = 300  # seconds for one child pytest run


def load_catalogue(folder: Path) -> dict[str, dict[str, Any]]:
    """The bugs of ``folder/*.json`` by id (file stem); {} for a folder that does not exist."""
    return {path.stem: json.loads(path.read_text("utf-8")) for path in sorted(folder.glob("*.json"))}


def needs_postgres(mutant: Mapping[str, Any]) -> bool:
    """Whether a bug is judged by tests/postgres/, which need a PostgreSQL server."""
    return any(test.startswith(POSTGRES_TESTS) for test in mutant["tests"])


@dataclass
class PytestVerdicts:
    """What the judging saw: the baseline's output, and each judged bug's child pytest run."""

    catalogue: Mapping[str, Mapping[str, Any]]
    postgres: bool
    chosen: frozenset[str]
    baseline: CompletedProcess[str] | None = None
    runs: dict[str, CompletedProcess[str]] = field(default_factory=dict)


def _environment(copy: Path, postgres: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in HIDDEN}
    env["PYTHONPATH"] = str(copy)
    if postgres is not None:
        env[POSTGRES_ENV] = postgres
    return env


def _pytest(copy: Path, tests: list[str], postgres: str | None) -> CompletedProcess[str]:
    """The listed tests in a child pytest run in ``copy``."""
    command = [sys.executable, "-m", "pytest", *CHILD_OPTIONS, *tests]
    env = _environment(copy, postgres)
    return subprocess.run(command, check=False, cwd=copy, env=env, capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT)


@contextmanager
def _private_server(root: Path) -> Iterator[str | None]:
    """The URL of a private server, started from the tests' own helper and removed after; None
    when this machine has no PostgreSQL binaries or no psycopg.

    The helper is loaded from its file, only here: it belongs to the project's tests, not to
    the conformance package.
    """
    if importlib.util.find_spec("psycopg") is None:  # the children's tests need it; looked up, not imported
        yield None
        return
    spec = importlib.util.spec_from_file_location("h9_pytest_mutants_pg_server", root / SERVER_HELPER)
    assert spec is not None and spec.loader is not None
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    bindir = helper.find_bindir()
    if bindir is None:
        yield None
        return
    server = helper.PgServer(bindir)
    try:
        server.start()
        yield str(server.url)
    finally:
        server.remove()


@contextmanager
def _postgres_for(root: Path, chosen: Mapping[str, Mapping[str, Any]]) -> Iterator[str | None]:
    """The server the children share: the environment's, one started once when a chosen bug needs
    it, or None."""
    given = os.environ.get(POSTGRES_ENV)
    if given or not any(map(needs_postgres, chosen.values())):
        yield given
        return
    with _private_server(root) as url:
        yield url


def _copy(root: Path, copy: Path) -> None:
    """The project with its tests, and what a build and the tests of the real suite read."""
    copy_project(root, copy)
    shutil.copytree(root / "tests", copy / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "setup.py", "SPEC.md", "README.md", "LICENSE"):
        if (root / name).is_file():
            shutil.copy(root / name, copy)
    # The cases, which copy_project leaves out: the installed-layout tests build and run them; the
    # tests of profiles and the matrix run the real suite and starters.
    for data in ("cases", "adapters"):
        if (root / "conformance" / data).is_dir():
            shutil.copytree(root / "conformance" / data, copy / "conformance" / data)


def missing_tests(root: Path) -> str | None:
    """Why these bugs cannot be judged from ``root``, or None: the tests are the project's."""
    if (root / "tests").is_dir():
        return None
    return (f"the pytest-judged seeded bugs need the project's tests, and {root / 'tests'} does not exist "
            "(an installed conformance package has none): run from a checkout of the project")


def judge(root: Path, catalogue: Mapping[str, Mapping[str, Any]], only: Collection[str] | None = None) -> PytestVerdicts:
    """Copy the project, run the baseline, then each bug's tests (those named in ``only``, or all).

    Raises:
        FileNotFoundError: ``root`` has no tests/ folder (an installed conformance package).
    """
    missing = missing_tests(root)
    if missing:
        raise FileNotFoundError(missing)
    chosen = {n: m for n, m in catalogue.items() if only is None or n in only}
    with _postgres_for(root, chosen) as postgres, tempfile.TemporaryDirectory(prefix="h9-pytest-mutants-") as tmp:
        verdicts = PytestVerdicts(catalogue, postgres is not None, frozenset(chosen))
        runnable = {n: m for n, m in chosen.items() if postgres is not None or not needs_postgres(m)}
        copy = Path(tmp) / "project"
        _copy(root, copy)
        listed = sorted({t for m in runnable.values() for t in m["tests"]})
        if not listed:
            return verdicts  # a pytest given no test would run them all
        verdicts.baseline = _pytest(copy, listed, postgres)
        if verdicts.baseline.returncode != 0 or _skipped(verdicts.baseline):
            return verdicts  # no bug can be judged by tests that fail or skip unmutated
        for name, mutant in runnable.items():
            original = (copy / mutant["file"]).read_text(encoding="utf-8")
            apply([Edit(mutant["file"], mutant["find"], mutant["replace"])], copy)
            try:
                verdicts.runs[name] = _pytest(copy, mutant["tests"], postgres)
            finally:
                (copy / mutant["file"]).write_text(original, encoding="utf-8")
        return verdicts


def _skipped(run: CompletedProcess[str]) -> bool:
    return re.search(r"\d+ skipped", run.stdout) is not None


def problems(verdicts: PytestVerdicts) -> list[str]:
    """What is wrong: a baseline that fails or skips, a bug a listed test does not catch."""
    run = verdicts.baseline
    if run is None:
        return []  # no bug could be judged here; the summary says why
    if run.returncode != 0:
        return [f"the listed tests fail without any bug:\n{run.stdout}{run.stderr}"]
    if _skipped(run):
        return [f"a listed test skips, so it cannot fail:\n{run.stdout}"]
    found = []
    for name, result in verdicts.runs.items():
        surviving = [test for test in verdicts.catalogue[name]["tests"] if f"FAILED {test}" not in result.stdout]
        if result.returncode != 1 or surviving:
            found.append(f"{name} survives:\n{result.stdout}")
    return found


def summary(verdicts: PytestVerdicts, found: Collection[str]) -> str:
    """``N of M seeded bugs judged by the tests, K problems``, naming the bugs left unjudged."""
    left = not verdicts.postgres and any(needs_postgres(verdicts.catalogue[n]) for n in verdicts.chosen)
    unjudged = ", those of tests/postgres/ not judged: no PostgreSQL server binaries or psycopg" if left else ""
    return f"{len(verdicts.runs)} of {len(verdicts.chosen)} seeded bugs judged by the tests, {len(found)} problems{unjudged}"
