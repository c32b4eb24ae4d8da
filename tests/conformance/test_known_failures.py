"""The shipped known-failures files name only cases and requirements the suite has.

Why: a port runs with ``--known-failures conformance/known-failures/<port>.txt``; a case that
was renamed or removed would make that run abort, so the files are checked with every change.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from conformance._cli import _known_failures
from tests.reference import suite_cases

KNOWN_FAILURES = sorted((Path(__file__).resolve().parents[2] / "conformance" / "known-failures").glob("*.txt"))
CASE_IDS = {case.id for case in suite_cases()}


@pytest.mark.parametrize("path", KNOWN_FAILURES, ids=lambda p: p.name)
def test_every_listed_entry_is_a_case_or_a_cited_requirement_and_listed_once(path: Path) -> None:
    listed = _known_failures(path, suite_cases())
    assert listed
    assert [entry for entry, n in Counter(listed).items() if n > 1] == []


@pytest.mark.parametrize("path", KNOWN_FAILURES, ids=lambda p: p.name)
def test_case_ids_in_comments_name_cases_too(path: Path) -> None:
    commented = re.findall(r"^#\s+([A-Z0-9]{6})\s", path.read_text(encoding="utf-8"), re.MULTILINE)
    assert [case_id for case_id in commented if case_id not in CASE_IDS] == []
