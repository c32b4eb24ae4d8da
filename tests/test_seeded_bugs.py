"""The seeded-bug catalogue: every mutant in conformance/mutants/ still applies to the code.

Each mutant imitates a real porting mistake; ``python -m conformance mutants``, a step of CI of
its own, judges whether the suite catches each one (it fails when one survives). This fast check
says here which mutants no longer apply to the code, so that a change that moves a mutant's text
is seen without that run.
"""

from __future__ import annotations

import json

import pytest

from conformance.mutation._mutants import edit_problems
from conformance.runner._cases import PROJECT_ROOT
from tests.reference import suite_cases

MUTANTS_DIR = PROJECT_ROOT / "conformance" / "mutants"
MUTANT_IDS = sorted(json.loads(p.read_text(encoding="utf-8"))["id"] for p in MUTANTS_DIR.glob("*.json"))


@pytest.fixture(scope="module")
def edits() -> dict[str, str]:
    return edit_problems(PROJECT_ROOT, MUTANTS_DIR, {case.id for case in suite_cases()})


def test_catalogue_has_at_least_twelve_mutants() -> None:
    assert len(MUTANT_IDS) >= 12


@pytest.mark.parametrize("mutant_id", MUTANT_IDS)
def test_each_edit_applies_exactly_once(mutant_id: str, edits: dict[str, str]) -> None:
    assert edits[mutant_id] == "", f"{mutant_id}: {edits[mutant_id]}"
