"""The seeded-bug catalogue: every mutant in conformance/mutants/ must be caught by the suite.

Each mutant imitates a real porting mistake; one that survives means the suite has a hole. The
verdicts come from the same machinery as ``python -m conformance mutants``, in its "targeted"
scope (``conformance/_mutants.py``), judged in the background (``tests/background.py``); the
full scope is that command. A fast check first says which mutants no longer apply to the code.
"""

from __future__ import annotations

import json

import pytest

from conformance._cases import PROJECT_ROOT
from conformance._mutants import MutantResult, edit_problems
from tests import background

MUTANT_IDS = sorted(
    json.loads(p.read_text(encoding="utf-8"))["id"] for p in background.MUTANTS_DIR.glob("*.json")
)


@pytest.fixture(scope="session")
def catalogue(request: pytest.FixtureRequest) -> dict[str, MutantResult]:
    verdicts: dict[str, MutantResult] = background.result(request.config, background.CATALOGUE)
    return verdicts


@pytest.fixture(scope="module")
def edits() -> dict[str, str]:
    return edit_problems(PROJECT_ROOT, background.MUTANTS_DIR, {case.id for case in background.suite_cases()})


def test_catalogue_has_at_least_twelve_mutants() -> None:
    assert len(MUTANT_IDS) >= 12


@pytest.mark.parametrize("mutant_id", MUTANT_IDS)
def test_each_edit_applies_exactly_once(mutant_id: str, edits: dict[str, str]) -> None:
    assert edits[mutant_id] == "", f"{mutant_id}: {edits[mutant_id]}"


@pytest.mark.parametrize("mutant_id", MUTANT_IDS)
def test_suite_kills_mutant(mutant_id: str, catalogue: dict[str, MutantResult]) -> None:
    result = catalogue[mutant_id]
    assert result.status == "killed", f"{mutant_id}: {result.status}: {result.detail}"
