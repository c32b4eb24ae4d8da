"""Judging the seeded bugs of pending requirements, each in a child pytest process.

A requirement listed in conformance/pending.txt has no conformance case (the adapter protocol
cannot observe it: the recording proxy and replay server are tools of the suite, a PostgreSQL
server is given to the runner only on request, a killed writer or a restarted server is not a
step of a case), so its seeded bugs live in conformance/mutants/pytest/: the catalogue's edit
format, with ``tests`` naming the pytest tests that must fail instead of ``kills``.

Run as ``python -m tests.pending_bugs`` (a step of CI; ``--only ID …`` judges just those bugs,
while one is being written): the project is copied once; the named
tests must pass, none skipped, on the unmutated copy (the baseline), and each bug is applied to
it in turn, its tests run in a child pytest process, and the file restored. The exit status is
0 when every bug was caught, 1 otherwise. The children's PostgreSQL tests share one server,
started here (or the one ``HARNESS9_TEST_POSTGRES_URL`` names) and handed on in that variable,
so no child pays for initdb; without PostgreSQL binaries or psycopg, the bugs judged by
tests/postgres/ are skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any, Final

from conformance.mutation._mutant_copy import Edit, apply, copy_project
from conformance.porting._backends import POSTGRES_ENV
from conformance.runner._cases import PROJECT_ROOT
from tests.postgres.server import PgServer, find_bindir

__all__ = ["MUTANTS", "PendingVerdicts", "judge", "main", "needs_postgres"]

MUTANTS_DIR: Final = PROJECT_ROOT / "conformance" / "mutants" / "pytest"
MUTANTS: Final = {p.stem: json.loads(p.read_text("utf-8")) for p in sorted(MUTANTS_DIR.glob("*.json"))}
HIDDEN: Final = ("PYTHONSAFEPATH", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", POSTGRES_ENV)
# The listed tests use no property-based testing; its plugin would double each child's start.
# A child runs a handful of tests: in one process, not on workers of its own (pyproject's -n auto).
CHILD_OPTIONS: Final = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-n", "0", "-q", "-rf")
POSTGRES_TESTS: Final = "tests/postgres/"


def needs_postgres(mutant: dict[str, Any]) -> bool:
    return any(test.startswith(POSTGRES_TESTS) for test in mutant["tests"])


@dataclass
class PendingVerdicts:
    """What the judging saw: the baseline's output, and each judged bug's child pytest run."""

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
    return subprocess.run(command, check=False, cwd=copy, env=env, capture_output=True, text=True, timeout=300)


def _server() -> PgServer | None:
    """A private server when this machine has the binaries and psycopg, else None."""
    bindir = find_bindir()
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return None
    return None if bindir is None else PgServer(bindir)


def judge(only: frozenset[str] | None = None) -> PendingVerdicts:
    """Copy the project, run the baseline, then each bug's tests (those named in ``only``, or all)."""
    chosen = {n: m for n, m in MUTANTS.items() if only is None or n in only}
    given = os.environ.get(POSTGRES_ENV)
    server = None if given or not any(map(needs_postgres, chosen.values())) else _server()
    folder = Path(tempfile.mkdtemp(prefix="h9-pending-"))
    try:
        if server is not None:
            server.start()
        postgres = given or (server.url if server is not None else None)
        verdicts = PendingVerdicts(postgres is not None, frozenset(chosen))
        runnable = {n: m for n, m in chosen.items() if postgres is not None or not needs_postgres(m)}
        copy = folder / "project"
        copy_project(PROJECT_ROOT, copy)
        shutil.copytree(PROJECT_ROOT / "tests", copy / "tests", ignore=shutil.ignore_patterns("__pycache__"))
        for name in ("pyproject.toml", "setup.py", "SPEC.md", "README.md", "LICENSE"):  # what a build reads too
            shutil.copy(PROJECT_ROOT / name, copy)
        # The cases, which copy_project leaves out: the installed-layout tests build and run them; the
        # tests of profiles and the matrix run the real suite and starters.
        for data in ("cases", "adapters"):
            shutil.copytree(PROJECT_ROOT / "conformance" / data, copy / "conformance" / data)
        listed = sorted({t for m in runnable.values() for t in m["tests"]})
        verdicts.baseline = _pytest(copy, listed, postgres)
        if verdicts.baseline.returncode != 0:
            return verdicts
        for name, mutant in runnable.items():
            original = (copy / mutant["file"]).read_text(encoding="utf-8")
            apply([Edit(mutant["file"], mutant["find"], mutant["replace"])], copy)
            try:
                verdicts.runs[name] = _pytest(copy, mutant["tests"], postgres)
            finally:
                (copy / mutant["file"]).write_text(original, encoding="utf-8")
        return verdicts
    finally:
        if server is not None:
            server.remove()
        shutil.rmtree(folder, ignore_errors=True)


def problems(verdicts: PendingVerdicts) -> list[str]:
    """What is wrong: a baseline that fails or skips, a bug a listed test does not catch."""
    run = verdicts.baseline
    assert run is not None
    if run.returncode != 0:
        return [f"the listed tests fail without any bug:\n{run.stdout}"]
    if re.search(r"\d+ skipped", run.stdout):
        return [f"a listed test skips, so it cannot fail:\n{run.stdout}"]
    found = []
    for name, result in verdicts.runs.items():
        surviving = [test for test in MUTANTS[name]["tests"] if f"FAILED {test}" not in result.stdout]
        if result.returncode != 1 or surviving:
            found.append(f"{name} survives:\n{result.stdout}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.pending_bugs", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="ID", help="judge just these bugs")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.only or ()) - MUTANTS.keys())
    if unknown:
        parser.error(f"no seeded bug named {', '.join(unknown)}")
    verdicts = judge(frozenset(args.only) if args.only else None)
    found = problems(verdicts)
    for problem in found:
        print(problem)
    left = not verdicts.postgres and any(needs_postgres(MUTANTS[n]) for n in verdicts.chosen)
    unjudged = ", those of tests/postgres/ not judged: no PostgreSQL server binaries or psycopg" if left else ""
    print(f"{len(verdicts.runs)} of {len(verdicts.chosen)} seeded bugs judged, {len(found)} problems{unjudged}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
