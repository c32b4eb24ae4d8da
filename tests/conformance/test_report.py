"""The JSON and JUnit reports, and how each outcome reads on one line."""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance import Response, SuiteResult, Verdict, evaluate, load_cases
from conformance._cli import main
from conformance.runner._report import format_result, summary_line, write_junit_report
from conformance.runner._results import case_result

from .toy import fake


def mixed_run(cases_dir: Path, tmp_path: Path, *reports: str) -> int:
    """Run the crash-first fake with AAAAA3 listed as a known failure that passes."""
    known = tmp_path / "known.txt"
    known.write_text("AAAAA3\n", encoding="utf-8")
    adapter = shlex.join(fake("crash_first", str(tmp_path / "crashed")))
    args = ["run", "--adapter", adapter, "--cases", str(cases_dir), "--known-failures", str(known)]
    return main([*args, *reports])


def test_json_report_lists_every_case_and_the_totals(
    cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    assert mixed_run(cases_dir, tmp_path, "--report", "json", str(report)) == 1
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["implementation"] == {"name": "fake", "version": "0", "language": "python"}
    assert data["ok"] is False
    assert data["totals"] == {
        "passed": 1,
        "failed": 1,
        "skipped": 0,
        "unsupported": 0,
        "errored": 1,
        "known_failure": 0,
    }
    first, second, third = data["cases"]
    assert first["id"] == "AAAAA1" and first["status"] == "errored"
    assert "adapter exited with status 3" in first["detail"]
    assert second == {
        "id": "AAAAA2",
        "area": "fmt",
        "slug": "n-7",
        "spec": ["R-FMT-1"],
        "status": "passed",
        "detail": "",
    }
    assert third["detail"] == "unexpectedly passed, remove it from the known-failures file"
    assert capsys.readouterr().out.splitlines()[-2:] == [
        "1 passed, 1 failed, 0 skipped, 0 unsupported, 1 errored, 0 known failures",
        "harness9 conformance: core 33%",
    ]
    assert data["profiles"]["core"] == {"claimed": False, "passed": False, "cases": 3,
                                        "passed_cases": 1, "percent": 33,
                                        "failing": ["AAAAA1", "AAAAA3"], "left_out": 0}  # fmt: skip


def test_junit_report_has_one_testcase_per_case(cases_dir: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    assert mixed_run(cases_dir, tmp_path, "--report", "junit", str(report)) == 1
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None
    assert (
        suite.get("tests"),
        suite.get("failures"),
        suite.get("errors"),
        suite.get("skipped"),
    ) == (
        "3",
        "1",
        "1",
        "0",
    )
    cases = suite.findall("testcase")
    assert [(case.get("classname"), case.get("name")) for case in cases] == [
        ("fmt", "AAAAA1 n-5"),
        ("fmt", "AAAAA2 n-7"),
        ("fmt", "AAAAA3 n-9"),
    ]
    error = cases[0].find("error")
    assert error is not None and "exited with status 3" in str(error.get("message"))
    assert cases[1].find("failure") is None and cases[1].find("error") is None
    failure = cases[2].find("failure")
    assert failure is not None and "unexpectedly passed" in str(failure.text)
    prop = cases[0].find("properties/property")
    assert prop is not None and (prop.get("name"), prop.get("value")) == ("spec", "R-FMT-1")


def test_both_reports_at_once_and_a_bad_format(cases_dir: Path, tmp_path: Path) -> None:
    json_path, xml_path = tmp_path / "r.json", tmp_path / "r.xml"
    reports = ["--report", "json", str(json_path), "--report", "junit", str(xml_path)]
    assert mixed_run(cases_dir, tmp_path, *reports) == 1
    assert json_path.exists() and xml_path.exists()
    assert mixed_run(cases_dir, tmp_path, "--report", "html", str(tmp_path / "r.html")) == 2


def test_junit_report_survives_characters_xml_cannot_carry(cases_dir: Path, tmp_path: Path) -> None:
    case = load_cases(cases_dir)[0]
    verdict = evaluate(case, Response("skipped", message="bell \x07 and \ud800"))
    suite = SuiteResult({}, (case_result(case, verdict, known_failure=False),))
    write_junit_report(suite, tmp_path / "r.xml")
    skipped = ET.parse(tmp_path / "r.xml").getroot().find("testsuite/testcase/skipped")
    assert skipped is not None
    assert (
        skipped.get("message")
        == "skipped: bell \N{REPLACEMENT CHARACTER} and \N{REPLACEMENT CHARACTER}"
    )


@pytest.mark.parametrize(
    ("status", "known", "verbose", "line"),
    [
        ("passed", False, False, None),
        ("passed", False, True, "AAAAA1 (fmt/n-5) [R-FMT-1] passed"),
        ("failed", False, False, "AAAAA1 (fmt/n-5) [R-FMT-1] /x: expected 1, got 2"),
        ("errored", False, False, "AAAAA1 (fmt/n-5) [R-FMT-1] errored: /x: expected 1, got 2"),
        ("failed", True, False, None),
        ("failed", True, True, "AAAAA1 (fmt/n-5) [R-FMT-1] known failure: /x: expected 1, got 2"),
        ("skipped", True, True, "AAAAA1 (fmt/n-5) [R-FMT-1] skipped: /x: expected 1, got 2"),
    ],
)
def test_format_result(
    cases_dir: Path, status: str, known: bool, verbose: bool, line: str | None
) -> None:
    case = load_cases(cases_dir)[0]
    detail = "" if status == "passed" else "/x: expected 1, got 2"
    result = case_result(case, Verdict(status, detail), known_failure=known)  # type: ignore[arg-type]
    assert format_result(result, verbose=verbose) == line


def test_summary_line_mentions_known_failures_only_when_a_file_was_given(cases_dir: Path) -> None:
    case = load_cases(cases_dir)[0]
    results = (case_result(case, Verdict("failed", "x"), known_failure=True),)
    assert summary_line(SuiteResult({}, results)) == (
        "0 passed, 0 failed, 0 skipped, 0 unsupported, 0 errored"
    )
    assert summary_line(SuiteResult({}, results, known_failures_given=True)) == (
        "0 passed, 0 failed, 0 skipped, 0 unsupported, 0 errored, 1 known failures"
    )
