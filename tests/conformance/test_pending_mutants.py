"""Seeded bugs of pending requirements (SPEC R-REC, R-PG, R-CASE, R-RUN, R-PROF, R-MTX, R-FORK, R-INST, R-APPR):
their catalogue is complete.

The bugs live in conformance/mutants/pytest/; ``python -m tests.pending_bugs``, a step of CI of
its own, judges that the Python tests they name catch each one (``tests/pending_bugs.py``).
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.mutation._mutant_copy import Edit, patched
from conformance.runner._cases import PROJECT_ROOT, read_id_list, spec_requirement_ids
from tests.pending_bugs import MUTANTS

# Families whose pending requirements must each have a seeded bug here.
FAMILIES = ("R-REC-", "R-PG-", "R-RUN-", "R-PROF-", "R-MTX-", "R-FORK-", "R-INST-", "R-APPR-", "R-LANG-")


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
def test_the_seeded_bug_is_well_formed_and_applies_once(name: str) -> None:
    mutant: dict[str, Any] = MUTANTS[name]
    assert set(mutant) == {"id", "description", "file", "find", "replace", "tests"}
    assert mutant["id"] == name
    text = (PROJECT_ROOT / mutant["file"]).read_text(encoding="utf-8")
    patched(Edit(mutant["file"], mutant["find"], mutant["replace"]), text)  # Broken unless it applies once
    for test in mutant["tests"]:
        assert (PROJECT_ROOT / test.split("::")[0]).is_file(), test
