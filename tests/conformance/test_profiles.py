"""Profiles (conformance/SUITE.md §4): the grouping of the real suite, the verdicts a run prints and writes,
and what a claim does to the run, through the real command line and real adapter processes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance import PROJECT_ROOT, SPEC_PATH, defined_requirement_ids
from conformance.runner._backends import POSTGRES_ENV, POSTGRES_KEY, case_backends
from conformance.runner._ops import OPS
from conformance.runner._profiles import PROFILES, ProfileResult, profile_of
from conformance.runner._requirements import area_of
from tests.reference import suite_cases
from tests.spec_text import spec_section

from .toy import fake

pytestmark = pytest.mark.tooling  # tier 2 of tests/README.md: whole programs of the suite's tooling

LONG_AREAS = {"R-LONG", "R-CKP", "R-FOLD", "R-TRIM", "R-RCL", "R-FIT"}
PROVIDER_FIXTURES = PROJECT_ROOT / "fixtures" / "providers"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command, without a PostgreSQL server even when the caller has one: these runs
    judge the reference as a porter without a server runs it (PostgreSQL cases unsupported)."""
    env = {k: v for k, v in os.environ.items() if k != POSTGRES_ENV}
    return subprocess.run(
        [sys.executable, "-m", "conformance", *args],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False, env=env,
    )  # fmt: skip


def _run(adapter: list[str], tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], list[str]]:
    """``run`` through the real CLI: exit code, JSON report, stdout lines."""
    report = tmp_path / "report.json"
    done = _cli("run", "--adapter", " ".join(adapter), "--report", "json", str(report), *args)
    assert report.exists(), done.stdout + done.stderr
    return done.returncode, json.loads(report.read_text(encoding="utf-8")), done.stdout.splitlines()


def test_every_case_belongs_to_one_profile_by_backend_local_recordings_long_areas_and_op() -> None:
    """R-PROF-1 and R-PROF-4, recomputed from their sentences over the real suite."""
    cases = suite_cases()
    homes = {op: p.name for p in PROFILES for op in p.ops}
    assert set(homes) == set(OPS)
    for case in cases:
        fixture = str(case.input.get("fixture", ""))
        if case.op == "session" and case_backends(case) == ("postgresql",):
            want = "postgresql"
        elif re.fullmatch(r"[a-z]+/local-.+", fixture):
            want = "local"
        elif any(area_of(requirement) in LONG_AREAS for requirement in case.spec):
            want = "long"
        else:
            want = homes[case.op]
        assert profile_of(case) == want, case.id
    tally = Counter(profile_of(case) for case in cases)
    assert set(tally) == {p.name for p in PROFILES} - {"traffic"}
    long_by_area = [c for c in cases if c.op in ("compact", "engine_run", "session") and profile_of(c) == "long"]
    assert long_by_area, "the long areas take cases of other profiles' ops"
    on_postgres = next(c for c in cases if c.op == "session" and "sqlite" in case_backends(c))
    assert profile_of(replace(on_postgres, input={**on_postgres.input, POSTGRES_KEY: "x"})) == "postgresql"
    local = [c for c in cases if profile_of(c) == "local"]
    assert {c.op for c in local} == {"provider_parse", "provider_call"}, "local takes cases of providers' ops"
    assert all(c.op.startswith("provider_") for c in cases if "llama-cpp" in str(c.input.get("fixture", "")))


def test_every_local_fixture_is_a_recording_of_a_local_server() -> None:
    """R-PROF-4: a ``local-`` fixture is never written by hand; its provenance says where it was
    recorded (a loopback address), by what, and the server, its build, the model and options."""
    folders = sorted(PROVIDER_FIXTURES.glob("*/local-*"))
    assert folders
    for folder in folders:
        provenance = json.loads((folder / "exchange.json").read_text(encoding="utf-8"))["provenance"]
        assert re.match(r"Recorded from http://127\.0\.0\.1:\d+ on \d{4}-\d\d-\d\d by python -m conformance ", provenance)
        servers = (("llama-server", "11434", "--ctx-size"), ("llama-cpp-python", "0.3.36", "--n_ctx"))
        assert "SmolLM2" in provenance and any(all(w in provenance for w in words) for words in servers), folder


def test_spec_table_is_the_data() -> None:
    """conformance/SUITE.md §4's table and conformance/runner/_profiles.py name the same parts."""
    section = spec_section("Profiles and the compliance matrix")
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert len(rows) == len(PROFILES)
    # postgresql and local take other profiles' cases by R-PROF-1's rules, no op of their own
    by_rule = {"postgresql": ["session"], "local": ["provider_parse", "provider_call"]}
    for row, profile in zip(rows, PROFILES, strict=True):
        name, title, sections, areas, ops = (cell.strip() for cell in row.strip("|").split("|"))
        assert name == f"`{profile.name}`"
        assert (title, sections) == (profile.title, profile.sections)
        assert areas.split(", ") == list(profile.areas) if profile.areas else areas.startswith("none: ")
        assert re.findall(r"`([a-z_]+)`", ops) == by_rule.get(profile.name, list(profile.ops))


def test_a_run_prints_and_writes_each_profiles_verdict(tmp_path: Path) -> None:
    """R-PROF-2 on the reference, which claims every profile but postgresql."""
    code, report, lines = _run(
        [sys.executable, "-m", "conformance.reference_adapter"], tmp_path,
        "--filter", "format/*", "--filter", "sessions/backend-*", "--filter", "sessions/*-postgresql",
        "--filter", "call_openai/*",
    )  # fmt: skip
    assert code == 0, lines
    profiles = report["profiles"]
    assert list(profiles) == [p.name for p in PROFILES]
    by_status = Counter(case["status"] for case in report["cases"])
    assert sum(entry["cases"] for entry in profiles.values()) == len(report["cases"])
    n = profiles["core"]["cases"]
    assert n > 0
    core_total = sum(profile_of(case) == "core" for case in suite_cases())
    assert profiles["core"] == {"claimed": True, "passed": True, "cases": n, "passed_cases": n,
                                "percent": 100, "failing": [], "left_out": core_total - n}  # fmt: skip
    assert profiles["providers"]["passed"] and profiles["sessions"]["passed"]
    pg = profiles["postgresql"]  # PostgreSQL-only cases, no server: unsupported, not claimed
    assert pg["cases"] == by_status["unsupported"] > 0
    assert pg == {"claimed": False, "passed": False, "cases": pg["cases"], "passed_cases": 0,
                  "percent": 0, "failing": [], "left_out": pg["left_out"]}  # fmt: skip
    engine_total = sum(profile_of(case) == "engine" for case in suite_cases())
    assert profiles["engine"] == {"claimed": True, "passed": False, "cases": 0, "passed_cases": 0,
                                  "percent": None, "failing": [], "left_out": engine_total}  # fmt: skip
    assert profiles["local"]["passed"] and profiles["local"]["cases"] == sum(
        case["slug"].startswith("local-") for case in report["cases"]
    )
    # R-PROF-2c: a part of a profile is never ✓, and PostgreSQL cases without a server did not run
    assert re.fullmatch(
        r"harness9 conformance: core (\d+)/(\d+) \(filtered\) sessions \d+/\d+ \(filtered\)"
        r" postgresql not run providers \d+/\d+ \(filtered\) local \d+/\d+ \(filtered\)",
        lines[-1],
    ), lines[-1]
    assert f" core {n}/{core_total} (filtered) " in lines[-1]


@pytest.mark.parametrize(
    ("judged", "left_out", "verdict"),
    [(0, 0, "not run"), (0, 30, "not run"), (3, 30, "3/33 (filtered)"), (3, 0, "✓")],
)
def test_a_profile_not_run_or_filtered_is_never_a_tick_nor_0_percent(judged: int, left_out: int, verdict: str) -> None:
    """R-PROF-2c: a profile none of whose cases ran says so; one judged on a part says which part."""
    result = ProfileResult(PROFILES[0], False, 3, judged, (), judged, left_out)
    assert result.verdict == verdict
    failing = ProfileResult(PROFILES[0], False, 25, 24, ("X",), 25, 197)
    assert failing.verdict == "96% of 25/222 (filtered)"


def test_a_claimed_profile_not_passed_fails_the_run(tmp_path: Path) -> None:
    """R-PROF-3 over the real suite: the fake passes the format cases and declares no other
    op, so its claimed core is a percentage and the run fails; unclaimed, the same run passes."""
    code, report, lines = _run(fake("claims", "core"), tmp_path)
    core = report["profiles"]["core"]
    assert 0 < core["passed_cases"] < core["cases"]
    assert core["passed_cases"] == report["totals"]["passed"]
    percent = core["passed_cases"] * 100 // core["cases"]
    assert core["percent"] == percent and core["claimed"] and not core["passed"]
    assert code == 1 and report["ok"] is False
    assert report["totals"]["failed"] == report["totals"]["errored"] == 0
    assert lines[-1].startswith(f"harness9 conformance: core {percent}% (claimed) sessions not run ")
    code, report, lines = _run(fake("claims"), tmp_path)
    assert code == 0 and report["ok"] and not report["profiles"]["core"]["claimed"]
    assert lines[-1].startswith(f"harness9 conformance: core {percent}% sessions not run ")


@pytest.mark.parametrize(("passed", "cases", "verdict"), [(2, 3, "66%"), (199, 200, "99%"), (3, 3, "✓"), (0, 5, "0%")])
def test_the_percentage_is_rounded_down(passed: int, cases: int, verdict: str) -> None:
    """R-PROF-2a: the whole percentage of the cases that passed, rounded down (2 of 3 is 66%, never 67%)."""
    result = ProfileResult(PROFILES[0], claimed=False, cases=cases, passed_cases=passed, failing=(), judged=cases)
    assert result.verdict == verdict


def test_a_claim_is_judged_on_the_cases_run(tmp_path: Path, cases_dir: Path) -> None:
    """A claimed profile passed in full, one with no case in the run, one failing, one with a
    known failure only (a known failure is not a pass)."""
    code, report, lines = _run(fake("claims", "core", "sessions"), tmp_path, "--cases", str(cases_dir))
    assert code == 0, lines
    assert lines[-1] == "harness9 conformance: core ✓"
    assert report["profiles"]["sessions"]["cases"] == 0
    code, report, lines = _run(fake("claims", "--wrong", "core"), tmp_path, "--cases", str(cases_dir))
    assert code == 1 and lines[-1] == "harness9 conformance: core 0% (claimed)"
    assert report["profiles"]["core"]["failing"] == ["AAAAA1", "AAAAA2", "AAAAA3"]
    known = tmp_path / "known.txt"
    known.write_text("R-FMT-1  # the fake adds one\n", encoding="utf-8")
    args = ("--cases", str(cases_dir), "--known-failures", str(known))
    code, report, lines = _run(fake("claims", "--wrong"), tmp_path, *args)
    assert code == 0 and report["totals"]["known_failure"] == 3, lines
    code, report, lines = _run(fake("claims", "--wrong", "core"), tmp_path, *args)
    assert code == 1 and report["totals"]["known_failure"] == 3, lines
    assert lines[-1] == "harness9 conformance: core 0% (claimed)"


@pytest.mark.parametrize(
    ("claims", "named"),
    [(["memory"], "'memory'"), (["core", "traffic"], "'traffic'"), (["core", 5], "5")],
    ids=["unknown", "traffic", "not-a-name"],
)
def test_a_claim_of_no_profile_stops_the_adapter_from_starting(
    tmp_path: Path, cases_dir: Path, claims: list[Any], named: str
) -> None:
    script = tmp_path / "adapter.py"
    reply = {"protocol": 1, "implementation": {"name": "x", "version": "0", "language": "py"},
             "ops": ["format_token_count"], "profiles": claims}  # fmt: skip
    script.write_text(
        f"import json, sys\nfor line in sys.stdin:\n    print(json.dumps({reply!r}), flush=True)\n",
        encoding="utf-8",
    )
    done = _cli("run", "--adapter", f"{sys.executable} {script}", "--cases", str(cases_dir))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "failed to start" in done.stderr and named in done.stderr and "profile" in done.stderr


def test_claims_fit_the_start_schema(tmp_path: Path, cases_dir: Path) -> None:
    code, report, lines = _run(fake("claims", "core"), tmp_path, "--cases", str(cases_dir), "--validate")
    assert code == 0 and report["profiles"]["core"]["passed"], lines


def test_the_junit_and_markdown_reports_carry_the_profiles(tmp_path: Path, cases_dir: Path) -> None:
    """R-PROF-2's "every report": a claimed profile not passed is a JUnit failure, one neither
    passed nor claimed is skipped; the Markdown table carries the profiles' line."""
    junit, table = tmp_path / "report.xml", tmp_path / "table.md"
    args = ("--cases", str(cases_dir), "--report", "junit", str(junit), "--markdown", str(table))
    code, _report, lines = _run(fake("claims", "--wrong", "core"), tmp_path, *args)
    assert code == 1
    suite = ET.parse(junit).getroot().find("testsuite[@name='profiles']")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("1", "1")
    failure = suite.find("testcase[@name='core']/failure")
    assert failure is not None and failure.get("message") == "core: 0 of 3 cases passed; claimed"
    assert failure.text == "failing cases: AAAAA1, AAAAA2, AAAAA3"
    assert lines[-1] in table.read_text(encoding="utf-8").splitlines()
    code, _report, lines = _run(fake("claims", "--wrong"), tmp_path, *args)
    suite = ET.parse(junit).getroot().find("testsuite[@name='profiles']")
    assert suite is not None and (suite.get("failures"), suite.get("skipped")) == ("0", "1")
    assert suite.find("testcase[@name='core']/skipped") is not None


def test_the_start_schema_names_the_claimable_profiles() -> None:
    schema = json.loads((PROJECT_ROOT / "conformance/schema/protocol-v1/start.json").read_text(encoding="utf-8"))
    listed = schema["$defs"]["response"]["properties"]["profiles"]["items"]["enum"]
    assert listed == [p.name for p in PROFILES if p.name != "traffic"]


def test_every_requirement_area_of_spec_is_in_one_profile() -> None:
    """So that a new area of SPEC.md gets its place in the table (R-CASE, R-RUN, R-PROF and R-MTX are the runner's own)."""
    areas = {area_of(requirement) for requirement in defined_requirement_ids(SPEC_PATH)}
    placed = [area for profile in PROFILES for area in profile.areas]
    assert len(placed) == len(set(placed))
    assert areas - set(placed) == {"R-CASE", "R-RUN", "R-PROF", "R-MTX"}
