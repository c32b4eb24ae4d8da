"""The session cases of the conformance suite, on PostgreSQL, through the reference adapter (SPEC R-PG-2).

Every session case not marked SQLite-only runs as ``<id>@postgresql`` on a fresh schema of the
private server, next to its SQLite run; both must pass.
"""

from __future__ import annotations

from conformance import load_cases
from conformance._backends import case_backends
from conformance._runner import run_suite
from tests.postgres.server import PgServer


def test_every_backend_neutral_session_case_passes_on_postgresql(pg_server: PgServer) -> None:
    cases = [case for case in load_cases() if case.area == "sessions"]
    neutral = [case for case in cases if "postgresql" in case_backends(case)]
    suite = run_suite(cases, postgres=pg_server.url, validate=True)
    failed = [f"{r.case.id}: {r.verdict.reason}" for r in suite.results if r.verdict.status != "passed"]
    assert failed == []
    on_postgres = [r.case.id for r in suite.results if r.case.id.endswith("@postgresql")]
    assert sorted(on_postgres) == sorted(f"{case.id}@postgresql" for case in neutral)
    assert len(neutral) > 90 and len(suite.results) == len(cases) + len(neutral)


def test_sqlite_only_cases_are_those_about_the_file() -> None:
    for case in load_cases():
        if case.op == "session" and ("fixture" in case.input or "modes" in case.expect):
            assert case_backends(case) == ("sqlite",), f"{case.id} reads an SQLite file but is not marked so"
