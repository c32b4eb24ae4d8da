"""Every conformance case against the Python reference, one test per case, in this process.

The reference is one implementation that passes the suite. Each case is judged by the runner's
own ``run_case`` against ``tests.reference.InProcessReference``, so what is measured and
debugged here is what ``python -m conformance run`` judges; that black-box run, an adapter
process taking every case, is a step of CI of its own, and the last test here checks that the
real adapter process answers as the in-process one does.
"""

from __future__ import annotations

import pytest

from conformance import DEFAULT_ADAPTER_COMMAND, PROJECT_ROOT, Adapter, Case, lint_cases, run_case
from conformance.runner._backends import case_backends
from tests.reference import InProcessReference, suite_cases

CASES = suite_cases()
assert CASES, "no conformance cases found"


@pytest.fixture(scope="module")
def reference() -> InProcessReference:
    return InProcessReference()


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{case.id}-{case.area}/{case.slug}" for case in CASES]
)
def test_reference_passes_case(case: Case, reference: InProcessReference) -> None:
    verdict = run_case(reference, case)
    if "sqlite" not in case_backends(case):  # a server's case: tests/postgres/test_pg_conformance.py runs it there
        assert verdict.status == "unsupported", verdict.detail
    else:
        assert verdict.status == "passed", verdict.detail


def test_the_adapter_process_passes_a_case_of_each_op() -> None:
    cases = {case.op: case for case in CASES if "sqlite" in case_backends(case)}
    with Adapter(DEFAULT_ADAPTER_COMMAND, cwd=PROJECT_ROOT, validate=True) as adapter:
        assert adapter.ops == InProcessReference().ops
        for case in cases.values():
            assert run_case(adapter, case).status == "passed", case.id


def test_case_files_lint_clean() -> None:
    problems = lint_cases()
    assert not problems, "\n".join(problems)
