"""Judging the seeded bugs of pending requirements, each in a child pytest process.

A requirement listed in conformance/pending.txt has no conformance case (the adapter protocol
cannot observe it: the recording proxy and replay server are tools of the suite, a PostgreSQL
server is given to the runner only on request, a killed writer or a restarted server is not a
step of a case), so its seeded bugs live in conformance/mutants/pytest/: the catalogue's edit
format, with ``tests`` naming the pytest tests that must fail instead of ``kills``.

The project is copied once; the named tests must pass on the unmutated copy (the baseline), and
each bug is applied to it in turn, its tests run in a child pytest process, and the file
restored. The children are forked from a fork server (``conformance/_forkserver.py``) that has
imported pytest and what the tests import from outside the project, so each imports only the
project itself, from the copy as it is at that moment: from the bytecode the baseline wrote,
except the file a bug changed. The children's PostgreSQL tests share one server, started here
(or the one ``HARNESS9_TEST_POSTGRES_URL`` names) and handed on in that variable, so no child
pays for initdb. The whole judging is mostly waiting on child processes, so ``tests/background.py`` runs
it beside the other tests; ``tests/conformance/test_pending_mutants.py`` asserts its verdicts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any, Final

from conformance._backends import POSTGRES_ENV
from conformance._cases import PROJECT_ROOT
from conformance._forkserver import ForkServer, fork_server
from conformance._mutant_copy import Edit, apply, copy_project
from tests.forks import pytest_modules
from tests.postgres.server import PgServer, find_bindir

__all__ = ["MUTANTS", "PendingVerdicts", "judge", "needs_postgres"]

MUTANTS_DIR: Final = PROJECT_ROOT / "conformance" / "mutants" / "pytest"
MUTANTS: Final = {p.stem: json.loads(p.read_text("utf-8")) for p in sorted(MUTANTS_DIR.glob("*.json"))}
HIDDEN: Final = ("PYTHONSAFEPATH", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", POSTGRES_ENV)
# The listed tests use no property-based testing; its plugin would double each child's start.
CHILD_OPTIONS: Final = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-q", "-rf")
POSTGRES_TESTS: Final = "tests/postgres/"


def needs_postgres(mutant: dict[str, Any]) -> bool:
    return any(test.startswith(POSTGRES_TESTS) for test in mutant["tests"])


@dataclass
class PendingVerdicts:
    """What the judging saw: the baseline's output, and each judged bug's child pytest run."""

    postgres: bool
    baseline: CompletedProcess[str] | None = None
    runs: dict[str, CompletedProcess[str]] = field(default_factory=dict)


def _environment(copy: Path, postgres: str | None, *, bytecode: bool = False) -> dict[str, str]:
    """The children's environment; only the baseline (``bytecode``) writes compiled modules,
    for the unmutated files, so that no bug's module is ever compiled to disk."""
    env = {k: v for k, v in os.environ.items() if k not in HIDDEN}
    env["PYTHONPATH"] = str(copy)
    if not bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    if postgres is not None:
        env[POSTGRES_ENV] = postgres
    return env


def _preload(tests: list[str]) -> list[str]:
    """What the fork server imports first: pytest and its plugins, the conftest and the listed
    tests' modules.

    The project's own modules are forgotten again; what they import from elsewhere stays.
    """
    modules = {test.split("::")[0].removesuffix(".py").replace("/", ".") for test in tests}
    return [*pytest_modules(), "tests.conftest", *sorted(modules)]


def _pytest(
    copy: Path, tests: list[str], postgres: str | None, server: ForkServer | None, *, bytecode: bool = False
) -> CompletedProcess[str]:
    """The listed tests in a child pytest, forked from ``server`` when there is one."""
    command = [sys.executable, "-m", "pytest", *CHILD_OPTIONS, *tests]
    env = _environment(copy, postgres, bytecode=bytecode)
    if server is not None:
        done = server.run(command, copy, env, timeout=300)
        out, err = (stream.decode("utf-8", "replace") for stream in (done.stdout, done.stderr))
        return CompletedProcess(done.args, done.returncode, out, err)
    return subprocess.run(command, check=False, cwd=copy, env=env, capture_output=True, text=True, timeout=300)


def _server() -> PgServer | None:
    """A private server when this machine has the binaries and psycopg, else None."""
    bindir = find_bindir()
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return None
    return None if bindir is None else PgServer(bindir)


def judge(cancel: threading.Event) -> PendingVerdicts:
    """Copy the project, run the baseline, then each bug's tests (skipping the rest once cancelled)."""
    given = os.environ.get(POSTGRES_ENV)
    server = None if given or not any(map(needs_postgres, MUTANTS.values())) else _server()
    folder = Path(tempfile.mkdtemp(prefix="h9-pending-"))
    try:
        if server is not None:
            server.start()
        postgres = given or (server.url if server is not None else None)
        verdicts = PendingVerdicts(postgres is not None)
        runnable = {n: m for n, m in MUTANTS.items() if postgres is not None or not needs_postgres(m)}
        copy = folder / "project"
        copy_project(PROJECT_ROOT, copy)
        shutil.copytree(PROJECT_ROOT / "tests", copy / "tests", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(PROJECT_ROOT / "pyproject.toml", copy)
        listed = sorted({t for m in runnable.values() for t in m["tests"]})
        with fork_server(copy, _environment(copy, postgres), _preload(listed)) as forks:
            verdicts.baseline = _pytest(copy, listed, postgres, forks, bytecode=True)
            if verdicts.baseline.returncode != 0:
                return verdicts
            for name, mutant in runnable.items():
                if cancel.is_set():
                    break
                original = (copy / mutant["file"]).read_text(encoding="utf-8")
                apply([Edit(mutant["file"], mutant["find"], mutant["replace"])], copy)
                try:
                    verdicts.runs[name] = _pytest(copy, mutant["tests"], postgres, forks)
                finally:
                    (copy / mutant["file"]).write_text(original, encoding="utf-8")
        return verdicts
    finally:
        if server is not None:
            server.remove()
        shutil.rmtree(folder, ignore_errors=True)
