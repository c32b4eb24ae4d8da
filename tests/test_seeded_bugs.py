"""The seeded-bug catalogue: every mutant in conformance/mutants/ must be caught by the suite.

Each mutant imitates a real porting mistake; one that survives means the suite has a hole.
This is the same run as ``python -m conformance mutants``, one test per mutant.
"""

from __future__ import annotations

import json

import pytest

from conformance import PROJECT_ROOT, load_cases
from conformance._mutants import MutantResult, run_mutants

MUTANTS_DIR = PROJECT_ROOT / "conformance" / "mutants"
MUTANT_IDS = sorted(json.loads(p.read_text(encoding="utf-8"))["id"] for p in MUTANTS_DIR.glob("*.json"))


@pytest.fixture(scope="module")
def results() -> dict[str, MutantResult]:
    return {r.id: r for r in run_mutants(PROJECT_ROOT, MUTANTS_DIR, load_cases())}


def test_catalogue_has_at_least_twelve_mutants() -> None:
    assert len(MUTANT_IDS) >= 12


@pytest.mark.parametrize("mutant_id", MUTANT_IDS)
def test_suite_kills_mutant(mutant_id: str, results: dict[str, MutantResult]) -> None:
    result = results[mutant_id]
    assert result.status == "killed", f"{mutant_id}: {result.status}: {result.detail}"
