"""Seeded bugs of pending requirements (SPEC R-REC, R-ERR-7, R-PG), each caught by the Python tests.

The catalogue in conformance/mutants/ is judged by conformance cases through an adapter. A
requirement listed in conformance/pending.txt has no case (the adapter protocol cannot observe
it: the recording proxy and replay server are tools of the suite, a PostgreSQL server is given
to the runner only on request, a killed writer or a restarted server is not a step of a case),
so its seeded bugs live in conformance/mutants/pytest/: the same edit format, with ``tests``
naming the pytest tests that must fail instead of ``kills``. The project is copied once; the
named tests must pass on the unmutated copy (the baseline), and each bug is applied to it in
turn, its tests run in a child pytest process, and the file restored.

The PostgreSQL tests of the children share one server: this module starts it (or uses the one
``HARNESS9_TEST_POSTGRES_URL`` names) and hands it on in that variable, so no child pays for
initdb. Without PostgreSQL binaries or psycopg, the bugs judged by tests/postgres/ are skipped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance._backends import POSTGRES_ENV
from conformance._cases import PROJECT_ROOT, read_id_list, spec_requirement_ids
from conformance._mutant_copy import Edit, apply, copy_project
from tests.postgres.server import PgServer, find_bindir

MUTANTS_DIR = PROJECT_ROOT / "conformance" / "mutants" / "pytest"
MUTANTS = {p.stem: json.loads(p.read_text("utf-8")) for p in sorted(MUTANTS_DIR.glob("*.json"))}
HIDDEN = ("PYTHONSAFEPATH", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", POSTGRES_ENV)
# The listed tests use no property-based testing; its plugin would double each child's start.
CHILD_OPTIONS = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-q", "-rf")
# Families whose pending requirements must each have a seeded bug here.
FAMILIES = ("R-REC-", "R-PG-")
POSTGRES_TESTS = "tests/postgres/"


def needs_postgres(mutant: dict[str, Any]) -> bool:
    return any(test.startswith(POSTGRES_TESTS) for test in mutant["tests"])


@pytest.fixture(scope="module")
def postgres() -> Iterator[str | None]:
    """One server for every child pytest process, or None when this machine cannot run one."""
    given = os.environ.get(POSTGRES_ENV)
    if given or not any(needs_postgres(mutant) for mutant in MUTANTS.values()):
        yield given
        return
    bindir = find_bindir()
    try:
        import psycopg  # noqa: F401
    except ImportError:
        bindir = None
    if bindir is None:
        yield None
        return
    server = PgServer(bindir)
    try:
        server.start()
        yield server.url
    finally:
        server.remove()


def pytest_run(copy: Path, tests: list[str], postgres: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in HIDDEN}
    env.update(PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1")
    if postgres is not None:
        env[POSTGRES_ENV] = postgres
    return subprocess.run(
        [sys.executable, "-m", "pytest", *CHILD_OPTIONS, *tests],
        check=False, cwd=copy, env=env, capture_output=True, text=True, timeout=300,
    )


def runnable(postgres: str | None) -> list[dict[str, Any]]:
    return [mutant for mutant in MUTANTS.values() if postgres is not None or not needs_postgres(mutant)]


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory, postgres: str | None) -> Iterator[Path]:
    """A copy of the project whose listed tests pass before any bug is seeded."""
    target = tmp_path_factory.mktemp("project")
    copy_project(PROJECT_ROOT, target)
    skipped = shutil.ignore_patterns("__pycache__")
    shutil.copytree(PROJECT_ROOT / "tests", target / "tests", ignore=skipped)
    shutil.copy(PROJECT_ROOT / "pyproject.toml", target)
    listed = sorted({test for mutant in runnable(postgres) for test in mutant["tests"]})
    baseline = pytest_run(target, listed, postgres)
    assert baseline.returncode == 0, f"the listed tests fail without any bug:\n{baseline.stdout}"
    assert not re.search(r"\d+ skipped", baseline.stdout), f"a listed test skips, so it cannot fail:\n{baseline.stdout}"
    yield target


def test_every_pending_requirement_of_these_families_has_a_seeded_bug() -> None:
    cited = {mutant["description"].partition(":")[0] for mutant in MUTANTS.values()}
    defined = spec_requirement_ids(PROJECT_ROOT / "SPEC.md")
    assert cited <= set(defined)
    pending = read_id_list(PROJECT_ROOT / "conformance" / "pending.txt")
    assert {r for r in pending if r.startswith(FAMILIES)} <= cited
    # The catalogue judges R-PG's cases on SQLite only, so every R-PG requirement has its bug
    # in the PostgreSQL code here too.
    assert {r for r in defined if r.startswith("R-PG-")} <= cited


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_the_python_tests_catch_the_seeded_bug(name: str, copy: Path, postgres: str | None) -> None:
    mutant: dict[str, Any] = MUTANTS[name]
    assert set(mutant) == {"id", "description", "file", "find", "replace", "tests"}
    assert mutant["id"] == name
    if postgres is None and needs_postgres(mutant):
        pytest.skip("no PostgreSQL server binaries or no psycopg (apt-get install postgresql; pip install '.[postgres]')")
    original = (copy / mutant["file"]).read_text(encoding="utf-8")
    apply([Edit(mutant["file"], mutant["find"], mutant["replace"])], copy)
    try:
        result = pytest_run(copy, mutant["tests"], postgres)
    finally:
        (copy / mutant["file"]).write_text(original, encoding="utf-8")
    surviving = [test for test in mutant["tests"] if f"FAILED {test}" not in result.stdout]
    assert result.returncode == 1 and not surviving, f"{name} survives:\n{result.stdout}"
