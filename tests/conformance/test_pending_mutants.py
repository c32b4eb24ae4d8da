"""Seeded bugs of pending requirements (SPEC R-REC, R-PG, R-CASE), each caught by the Python tests.

The bugs live in conformance/mutants/pytest/ and are judged in the background, beside the other
tests (``tests/pending_bugs.py``, started by ``tests/conftest.py``); the tests here assert the
verdicts. Without PostgreSQL binaries or psycopg, the bugs judged by tests/postgres/ are skipped.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from conformance._cases import PROJECT_ROOT, read_id_list, spec_requirement_ids
from tests import background
from tests.pending_bugs import MUTANTS, PendingVerdicts, needs_postgres

# Families whose pending requirements must each have a seeded bug here.
FAMILIES = ("R-REC-", "R-PG-")


@pytest.fixture(scope="session")
def pending_verdicts(request: pytest.FixtureRequest) -> PendingVerdicts:
    verdicts: PendingVerdicts = background.result(request.config, background.PENDING)
    return verdicts


@pytest.fixture
def baseline(pending_verdicts: PendingVerdicts) -> PendingVerdicts:
    """The verdicts, once the listed tests were seen to pass, none skipped, on the unmutated copy."""
    run = pending_verdicts.baseline
    assert run is not None
    assert run.returncode == 0, f"the listed tests fail without any bug:\n{run.stdout}"
    assert not re.search(r"\d+ skipped", run.stdout), f"a listed test skips, so it cannot fail:\n{run.stdout}"
    return pending_verdicts


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
def test_the_python_tests_catch_the_seeded_bug(name: str, baseline: PendingVerdicts) -> None:
    mutant: dict[str, Any] = MUTANTS[name]
    assert set(mutant) == {"id", "description", "file", "find", "replace", "tests"}
    assert mutant["id"] == name
    if not baseline.postgres and needs_postgres(mutant):
        pytest.skip("no PostgreSQL server binaries or no psycopg (apt-get install postgresql; pip install '.[postgres]')")
    result = baseline.runs[name]
    surviving = [test for test in mutant["tests"] if f"FAILED {test}" not in result.stdout]
    assert result.returncode == 1 and not surviving, f"{name} survives:\n{result.stdout}"
