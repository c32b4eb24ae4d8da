"""Results per requirement: aggregation, known failures by requirement, and every output."""

from __future__ import annotations

import json
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance import PROJECT_ROOT, SuiteResult, Verdict, load_cases
from conformance._cli import main
from conformance.runner._requirements import (
    requirement_lines,
    requirement_results,
    requirement_titles,
    stale_requirements,
)
from conformance.runner._results import case_result

from .toy import case_data, fake, write_json

GOOD = shlex.join(fake("good"))


@pytest.fixture
def cases_dir(tmp_path: Path) -> Path:
    """AAAAA1 cites R-FMT-1, AAAAA2 both requirements, BBBBB1 R-FMT-2 and expects a wrong answer."""
    root = tmp_path / "cases"
    write_json(root / "fmt" / "n-5.json", case_data("AAAAA1", 5))
    write_json(root / "fmt" / "n-7.json", case_data("AAAAA2", 7, spec=["R-FMT-1", "R-FMT-2"]))
    write_json(
        root / "fmt" / "n-9.json",
        case_data("BBBBB1", 9, spec=["R-FMT-2"], expect={"output": "nine"}),
    )
    return root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    """Exit code, stdout lines without the profiles' last line (test_profiles.py), stderr."""
    code = main(list(args))
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    if code != 2:
        assert out[-1].startswith("harness9 conformance: "), out
        out.pop()
    return code, out, captured.err


def known_file(tmp_path: Path, *lines: str) -> str:
    path = tmp_path / "known.txt"
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return str(path)


def suite_of(cases_dir: Path, *statuses: str, listed: frozenset[str] = frozenset()) -> SuiteResult:
    cases = load_cases(cases_dir)
    results = tuple(
        case_result(
            case,
            Verdict(status, "" if status == "passed" else "why"),  # type: ignore[arg-type]
            known_failure=case.id in listed,
            by_requirement=any(r in listed for r in case.spec),
        )
        for case, status in zip(cases, statuses)
    )
    return SuiteResult({}, results, bool(listed), listed)


def test_a_case_citing_two_requirements_counts_for_each(cases_dir: Path) -> None:
    suite = suite_of(cases_dir, "passed", "failed", "unsupported")
    first, second = requirement_results(suite.results)
    assert first.id == "R-FMT-1" and second.id == "R-FMT-2"
    assert (first.counts["passed"], first.counts["failed"], first.total) == (1, 1, 2)
    assert (second.counts["failed"], second.counts["unsupported"], second.total) == (1, 1, 2)
    assert first.failing == second.failing == ("AAAAA2",)


def test_requirements_sort_by_area_then_number(tmp_path: Path) -> None:
    root = tmp_path / "cases"
    for number, (case_id, spec) in enumerate(
        [("AAAAA1", ["R-TOK-10"]), ("AAAAA2", ["R-TOK-2"]), ("AAAAA3", ["R-MSG-1"]), ("AAAAA4", ["R-ZZZ-9b", "R-ZZZ-9a"])]
    ):
        write_json(root / "fmt" / f"n-{number}.json", case_data(case_id, number, spec=spec))
    suite = suite_of(root, "passed", "passed", "passed", "passed")
    assert [r.id for r in requirement_results(suite.results)] == ["R-MSG-1", "R-TOK-2", "R-TOK-10", "R-ZZZ-9a", "R-ZZZ-9b"]


def test_text_lines_fold_passing_requirements_per_area_unless_verbose(cases_dir: Path) -> None:
    suite = suite_of(cases_dir, "passed", "passed", "errored")
    assert requirement_lines(suite) == [
        "R-FMT-2: 1 of 2 cases fails (BBBBB1); 1 passed, 1 errored",
        "R-FMT: 1 requirement, all cases pass",
    ]
    assert requirement_lines(suite, verbose=True) == [
        "R-FMT-1: all 2 cases pass",
        "R-FMT-2: 1 of 2 cases fails (BBBBB1); 1 passed, 1 errored",
    ]
    unsupported = suite_of(cases_dir, "unsupported", "unsupported", "unsupported")
    assert requirement_lines(unsupported) == ["R-FMT: 2 requirements, all cases unsupported"]


def test_a_long_list_of_failing_ids_is_cut_on_the_text_line(tmp_path: Path) -> None:
    root = tmp_path / "cases"
    for n in range(7):
        write_json(root / "fmt" / f"n-{n}.json", case_data(f"AAAAA{n}", n))
    suite = suite_of(root, *["failed"] * 7)
    assert requirement_lines(suite) == [
        "R-FMT-1: 7 of 7 cases fail (AAAAA0, AAAAA1, AAAAA2, AAAAA3, AAAAA4, … 2 more); 7 failed"
    ]


def test_cli_prints_requirements_between_cases_and_summary(
    cases_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "run", "--adapter", GOOD, "--cases", str(cases_dir))
    assert code == 1
    assert out == [
        'BBBBB1 (fmt/n-9) [R-FMT-2] (root): expected "nine", got "9"',
        "R-FMT-2: 1 of 2 cases fails (BBBBB1); 1 passed, 1 failed",
        "R-FMT: 1 requirement, all cases pass",
        "2 passed, 1 failed, 0 skipped, 0 unsupported, 0 errored",
    ]


def test_known_failure_by_requirement_covers_its_failing_cases_and_lets_others_pass(
    cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = known_file(tmp_path, "R-FMT-2  # wording not ported yet")
    code, out, _ = run(
        capsys, "run", "--adapter", GOOD, "--cases", str(cases_dir), "--known-failures", known
    )
    assert code == 0
    assert out == [
        "R-FMT-2: 0 of 2 cases fail; 1 passed, 1 known failures",
        "R-FMT: 1 requirement, all cases pass",
        "2 passed, 0 failed, 0 skipped, 0 unsupported, 0 errored, 1 known failures",
    ]


def test_a_listed_requirement_whose_cases_all_pass_fails_the_run(
    cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = known_file(tmp_path, "R-FMT-1", "R-FMT-2")
    code, out, _ = run(
        capsys, "run", "--adapter", GOOD, "--cases", str(cases_dir), "--known-failures", known
    )
    assert code == 1
    assert out == [
        "R-FMT-1: listed as a known failure, but no case fails any more (2 passed); "
        "remove it from the known-failures file",
        "R-FMT-2: 0 of 2 cases fail; 1 passed, 1 known failures",
        "2 passed, 0 failed, 0 skipped, 0 unsupported, 0 errored, 1 known failures, "
        "1 listed requirement no longer failing",
    ]


def test_a_case_listed_by_id_still_must_fail_when_its_requirement_is_listed(
    cases_dir: Path,
) -> None:
    suite = suite_of(cases_dir, "passed", "passed", "failed", listed=frozenset({"AAAAA1"}))
    assert [r.outcome for r in suite.results] == ["failed", "passed", "failed"]
    listed = frozenset({"AAAAA1", "R-FMT-1"})
    suite = suite_of(cases_dir, "passed", "failed", "passed", listed=listed)
    assert [r.outcome for r in suite.results] == ["failed", "known_failure", "passed"]
    assert stale_requirements(suite) == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("R-FMT-1\nR-ZZZ-9\n", "known.txt: requirement ids that no case cites: R-ZZZ-9"),
        ("R-FMT-3\nNOPE99\n", "not case ids: NOPE99; requirement ids that no case cites: R-FMT-3"),
    ],
)
def test_unknown_requirement_id_is_an_error(
    cases_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: str,
    message: str,
) -> None:
    known = tmp_path / "known.txt"
    known.write_text(content, encoding="utf-8")
    args = ["run", "--adapter", GOOD, "--cases", str(cases_dir), "--known-failures", str(known)]
    code, out, err = run(capsys, *args)
    assert (code, out) == (2, [])
    assert message in err


def test_json_report_has_counts_and_failing_ids_per_requirement(
    cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    args = ["run", "--adapter", GOOD, "--cases", str(cases_dir), "--report", "json", str(report)]
    assert main(args) == 1
    requirements = json.loads(report.read_text(encoding="utf-8"))["requirements"]
    assert list(requirements) == ["R-FMT-1", "R-FMT-2"]
    assert requirements["R-FMT-2"] == {
        "passed": 1,
        "failed": 1,
        "skipped": 0,
        "unsupported": 0,
        "errored": 0,
        "known_failure": 0,
        "failing": ["BBBBB1"],
        "stale_known_failure": False,
    }
    assert requirements["R-FMT-1"]["passed"] == 2 and requirements["R-FMT-1"]["failing"] == []


def test_junit_report_has_a_testsuite_per_requirement_area(
    cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.xml"
    args = ["run", "--adapter", GOOD, "--cases", str(cases_dir), "--report", "junit", str(report)]
    assert main(args) == 1
    cases_suite, requirements_suite, _profiles = ET.parse(report).getroot().findall("testsuite")
    assert len(cases_suite.findall("testcase")) == 3
    assert requirements_suite.get("name") == "requirements R-FMT"
    assert (requirements_suite.get("tests"), requirements_suite.get("failures")) == ("2", "1")
    first, second = requirements_suite.findall("testcase")
    assert (first.get("classname"), first.get("name")) == ("requirements.R-FMT", "R-FMT-1")
    assert len(first) == 0  # passed: no failure, error or skipped child
    failure = second.find("failure")
    assert failure is not None
    assert failure.get("message") == "R-FMT-2: 1 of 2 cases fails (BBBBB1); 1 passed, 1 failed"
    assert str(failure.text).endswith("failing cases: BBBBB1")


def test_junit_requirement_with_only_unsupported_cases_is_skipped(
    cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.xml"
    adapter = shlex.join(fake("no_ops"))
    args = ["run", "--adapter", adapter, "--cases", str(cases_dir), "--report", "junit", str(report)]
    assert main(args) == 0
    requirements_suite = ET.parse(report).getroot().findall("testsuite")[1]
    assert requirements_suite.get("skipped") == "2"
    skipped = requirements_suite.find("testcase/skipped")
    assert skipped is not None and skipped.get("message") == "R-FMT-1: all 2 cases unsupported"


def test_junit_requirement_with_known_failures_is_skipped_not_passed(
    cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.xml"
    known = known_file(tmp_path, "BBBBB1")
    args = ["run", "--adapter", GOOD, "--cases", str(cases_dir), "--known-failures", known]
    assert main([*args, "--report", "junit", str(report)]) == 0
    requirements_suite = ET.parse(report).getroot().findall("testsuite")[1]
    first, second = requirements_suite.findall("testcase")
    assert len(first) == 0
    skipped = second.find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "R-FMT-2: 0 of 2 cases fail; 1 passed, 1 known failures"


def markdown_rows(path: Path) -> list[list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    table = [line for line in lines if line.startswith("| ")]
    # Cells split at pipes that are not escaped; the header and its rule are left out.
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", row[1:-1])] for row in table[2:]]


def test_markdown_table_has_a_row_per_requirement_with_its_spec_title(
    cases_dir: Path, spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "compliance.md"
    args = ["run", "--adapter", GOOD, "--cases", str(cases_dir)]
    assert main([*args, "--markdown", str(table), "--spec", str(spec)]) == 1
    text = table.read_text(encoding="utf-8")
    assert "| requirement | title | passed | failing cases |\n| --- | --- | --- | --- |\n" in text
    assert text.startswith("# Conformance of fake 0\n\n2 passed, 1 failed, 0 skipped,")
    assert markdown_rows(table) == [
        ["R-FMT-1", "Counts below 1000 MUST be written as decimal integers.", "2/2", ""],
        ["R-FMT-2", "Negative counts MUST be written with a minus sign.", "1/2", "BBBBB1"],
    ]


def test_titles_are_the_first_words_of_the_bullet_without_markup(tmp_path: Path) -> None:
    spec = tmp_path / "SPEC.md"
    spec.write_text(
        '- <a id="R-A-1"></a>**R-A-1** MUST write `a|b` as one two three four five six seven\n'
        '- <a id="R-ZZZ-9a"></a>**R-ZZZ-9a** MUST count.\n',
        encoding="utf-8",
    )
    assert requirement_titles(spec) == {
        "R-A-1": "MUST write a|b as one two three four five six …",
        "R-ZZZ-9a": "MUST count.",
    }
    assert requirement_titles(tmp_path / "missing.md") == {}
    # cases may cite the suite's own requirements, which conformance/SUITE.md beside SPEC.md holds
    (tmp_path / "conformance").mkdir()
    (tmp_path / "conformance" / "SUITE.md").write_text('- <a id="R-Y-2"></a>**R-Y-2** MUST run.\n', encoding="utf-8")
    assert requirement_titles(spec)["R-Y-2"] == "MUST run."


@pytest.mark.tooling  # tier 2 of tests/README.md: the whole suite through the adapter
def test_real_suite_tokens_through_the_reference_adapter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "tokens.md"
    assert main(["run", "--filter", "tokens/*", "--markdown", str(table)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "R-TOK: 3 requirements, all cases pass" in out
    rows = {row[0]: row for row in markdown_rows(table)}
    assert {"R-TOK-1", "R-TOK-2", "R-MSG-8"} <= rows.keys()
    assert rows["R-TOK-1"][1].startswith("MUST use CHARS_PER_TOKEN = 4")
    for requirement, _title, passed, failing in rows.values():
        done, total = passed.split("/")
        assert done == total and int(total) > 0 and failing == "", requirement
    cited = {r for case in load_cases() if case.area == "tokens" for r in case.spec}
    assert rows.keys() == cited
    assert (PROJECT_ROOT / "SPEC.md").is_file()
