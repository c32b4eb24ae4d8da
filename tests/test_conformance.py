"""Every conformance case against the Python reference adapter, one test per case.

The reference is one implementation that passes the suite; this is the same run a port makes
with ``python -m conformance run``, with case ids as test ids.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance import (
    DEFAULT_ADAPTER_COMMAND,
    PROJECT_ROOT,
    Adapter,
    Case,
    lint_cases,
    load_cases,
    run_case,
)

CASES = load_cases()
assert CASES, "no conformance cases found"


@pytest.fixture(scope="module")
def reference() -> Iterator[Adapter]:
    with Adapter(DEFAULT_ADAPTER_COMMAND, cwd=PROJECT_ROOT) as adapter:
        yield adapter


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{case.id}-{case.area}/{case.slug}" for case in CASES]
)
def test_reference_passes_case(case: Case, reference: Adapter) -> None:
    verdict = run_case(reference, case)
    assert verdict.status == "passed", verdict.detail


def test_case_files_lint_clean() -> None:
    problems = lint_cases()
    assert not problems, "\n".join(problems)
