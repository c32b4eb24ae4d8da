"""Every conformance case against the Python reference adapter, one test per case.

The reference is one implementation that passes the suite; this is the same run a port makes
with ``python -m conformance run``, one adapter process taking the cases in order, with case
ids as test ids. It runs in the background from the end of collection (``tests/background.py``),
since many cases wait on timeouts by design; each test asserts its case's verdict.
"""

from __future__ import annotations

import pytest

from conformance import Case, Verdict, lint_cases
from conformance._backends import case_backends
from tests import background

CASES = background.suite_cases()
assert CASES, "no conformance cases found"


@pytest.fixture(scope="session")
def reference_verdicts(request: pytest.FixtureRequest) -> dict[str, Verdict]:
    verdicts: dict[str, Verdict] = background.result(request.config, background.REFERENCE)
    return verdicts


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{case.id}-{case.area}/{case.slug}" for case in CASES]
)
def test_reference_passes_case(case: Case, reference_verdicts: dict[str, Verdict]) -> None:
    verdict = reference_verdicts[case.id]
    if "sqlite" not in case_backends(case):  # a server's case: tests/postgres/test_pg_conformance.py runs it there
        assert verdict.status == "unsupported", verdict.detail
    else:
        assert verdict.status == "passed", verdict.detail


def test_case_files_lint_clean() -> None:
    problems = lint_cases()
    assert not problems, "\n".join(problems)
