"""The session cases of the conformance suite, on PostgreSQL, through the reference adapter (SPEC R-PG-2).

Every session case not marked SQLite-only runs as ``<id>@postgresql`` on a fresh schema of the
private server, next to its SQLite run; both must pass. A case bound to SQLite's file must be
marked so, which ``python -m conformance lint`` checks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conformance import load_cases
from conformance._suite import run_suite
from conformance.runner._backends import BACKENDS, POSTGRES_ENV, case_backends
from conformance.runner._cases import CASES_DIR, PROJECT_ROOT, read_json
from conformance.runner._lint import lint_cases


def test_every_backend_neutral_session_case_passes_on_postgresql(pg_server_url: str) -> None:
    cases = [case for case in load_cases() if case.area == "sessions"]
    neutral = [case for case in cases if "postgresql" in case_backends(case)]
    suite = run_suite(cases, postgres=pg_server_url, validate=True)
    failed = [f"{r.case.id}: {r.verdict.detail}" for r in suite.results if r.verdict.status != "passed"]
    assert failed == []
    on_postgres = [r.case.id for r in suite.results if r.case.id.endswith("@postgresql")]
    assert sorted(on_postgres) == sorted(f"{case.id}@postgresql" for case in neutral)
    only_there = [case for case in cases if "sqlite" not in case_backends(case)]  # run once, on PostgreSQL
    assert only_there and len(neutral) > 90 and len(suite.results) == len(cases) + len(neutral) - len(only_there)


def test_run_postgres_url_runs_the_session_cases_on_that_server_too(pg_server_url: str) -> None:
    neutral = next(case for case in load_cases() if case.area == "sessions" and case_backends(case) == BACKENDS)
    env = {k: v for k, v in os.environ.items() if k != POSTGRES_ENV}
    command = [sys.executable, "-m", "conformance", "run", "--filter", neutral.id, "-v"]
    without = subprocess.run(command, check=False, capture_output=True, text=True, cwd=PROJECT_ROOT, env=env, timeout=120)
    done = subprocess.run([*command, "--postgres", pg_server_url], check=False, capture_output=True, text=True, cwd=PROJECT_ROOT,
                          env=env, timeout=120)
    assert (without.returncode, done.returncode) == (0, 0), done.stdout + done.stderr
    assert f"{neutral.id}@postgresql" not in without.stdout
    cited = ", ".join(neutral.spec)
    assert f"{neutral.id}@postgresql ({neutral.area}/{neutral.slug}) [{cited}] passed" in done.stdout


SQLITE_BOUND = {  # a case of each kind that cannot pass on PostgreSQL, and the reason lint gives
    "read-document-schema-file": "it opens a fixture database file",
    "new-file-modes": "it checks file modes",
    "checkpoint-column-types": "it runs SQLite's own SQL",
}


def test_lint_refuses_a_session_case_bound_to_sqlite_but_not_marked_so(tmp_path: Path) -> None:
    folder = tmp_path / "cases" / "sessions"
    folder.mkdir(parents=True)
    for slug in SQLITE_BOUND:
        data = read_json(CASES_DIR / "sessions" / f"{slug}.json")
        assert data.pop("backends") == ["sqlite"]
        (folder / f"{slug}.json").write_text(json.dumps(data), encoding="utf-8")
    problems = sorted(lint_cases(tmp_path / "cases"))
    assert len(problems) == len(SQLITE_BOUND)
    for problem, (slug, reason) in zip(problems, sorted(SQLITE_BOUND.items())):
        assert f"{slug}.json: {reason}" in problem and problem.endswith('must be marked "backends": ["sqlite"]')
