"""Loading and linting case files, SPEC.md requirement ids, and id-list files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance import (
    CaseError,
    defined_requirement_ids,
    lint_cases,
    load_cases,
    read_id_list,
    spec_requirement_ids,
)
from conformance._cli import main
from conformance.runner._cases import spec_groups

from .toy import SPEC_TEXT, case_data, toy_suite, write_json


def test_load_cases_reads_every_field_in_path_order(tmp_path: Path) -> None:
    write_json(tmp_path / "cases" / "b" / "x.json", case_data("BBBBB1", note="why"))
    write_json(tmp_path / "cases" / "a" / "y.json", case_data("AAAAA1", n=7))
    first, second = load_cases(tmp_path / "cases")
    assert (first.id, first.area, first.slug, first.name) == ("AAAAA1", "a", "y", "a/y")
    assert (first.op, first.input, first.expect, first.note) == (
        "format_token_count",
        {"n": 7},
        {"output": "7"},
        None,
    )
    assert (second.id, second.spec, second.note) == ("BBBBB1", ("R-FMT-1",), "why")
    assert second.path == tmp_path / "cases" / "b" / "x.json"


def test_missing_case_directory_holds_no_cases(tmp_path: Path) -> None:
    assert load_cases(tmp_path / "nowhere") == []


def test_load_cases_refuses_a_suite_with_a_broken_case(tmp_path: Path) -> None:
    toy_suite(tmp_path)
    write_json(tmp_path / "fmt" / "bad.json", case_data("BADBAD", op="nope"))
    with pytest.raises(CaseError) as raised:
        load_cases(tmp_path)
    assert len(raised.value.problems) == 1
    assert "bad.json: /op: expected one of" in raised.value.problems[0]


def test_a_clean_suite_lints_clean(tmp_path: Path, spec: Path) -> None:
    assert lint_cases(toy_suite(tmp_path / "cases"), spec) == []


def _raw(text: str) -> Any:
    return lambda path: path.write_text(text, encoding="utf-8")


# One fault per entry: (what the faulty file at fmt/faulty.json contains, the one problem).
FAULTS: list[tuple[str, Any, str]] = [
    ("invalid-json", _raw("{"), "faulty.json: invalid JSON: Expecting property name"),
    (
        "duplicate-key",
        _raw('{"id": "A", "id": "B"}'),
        'faulty.json: invalid JSON: duplicate key "id"',
    ),
    ("nan", _raw('{"id": NaN}'), "faulty.json: invalid JSON: NaN is not JSON"),
    ("duplicate-id", case_data("AAAAA1", 8), ": duplicate id AAAAA1 (also in"),
    (
        "unknown-op",
        case_data("FAULT1", op="format_tokens"),
        'faulty.json: /op: expected one of "estimate_tokens"',
    ),
    (
        "no-requirement",
        case_data("FAULT1", spec=[]),
        "faulty.json: /spec: expected at least 1 items, got 0",
    ),
    (
        "undefined-requirement",
        case_data("FAULT1", spec=["R-FMT-9"]),
        "cites R-FMT-9, which SPEC.md does not define",
    ),
    (
        "requirement-twice",
        case_data("FAULT1", spec=["R-FMT-1", "R-FMT-1"]),
        "cites R-FMT-1 more than once",
    ),
    (
        "malformed-requirement",
        case_data("FAULT1", spec=["FMT-1"]),
        '/spec/0: "FMT-1" does not match',
    ),
    ("bad-id", case_data("fault1"), '/id: "fault1" does not match ^[A-Z0-9]{6}$'),
    (
        "extra-key",
        case_data("FAULT1", tags=["x"]),
        "/tags: unexpected key (allowed keys: id, description",
    ),
    (
        "missing-key",
        {k: v for k, v in case_data("FAULT1").items() if k != "input"},
        'missing required key "input"',
    ),
    (
        "two-expectations",
        case_data("FAULT1", expect={"output": "5", "error": {"code": "x"}}),
        "/expect: matches none of the 3 oneOf",
    ),
    (
        "empty-error-code",
        case_data("FAULT1", expect={"error": {"code": ""}}),
        "/expect: matches none",
    ),
    (
        "real-path-in-a-file-op",
        case_data("FAULT1", op="session", input={"steps": [{"do": "delete", "id": "/tmp"}]}, expect={"steps": [{"ok": None}]}),
        "input names the real path '/tmp'",
    ),
]


@pytest.mark.parametrize(
    ("content", "problem"), [f[1:] for f in FAULTS], ids=[f[0] for f in FAULTS]
)
def test_lint_reports_each_fault_once(
    tmp_path: Path, spec: Path, content: Any, problem: str
) -> None:
    cases = toy_suite(tmp_path / "cases")
    faulty = cases / "fmt" / "faulty.json"
    if callable(content):
        content(faulty)
    else:
        write_json(faulty, content)
    problems = lint_cases(cases, spec)
    assert len(problems) == 1, problems
    assert problem in problems[0]


def test_lint_accepts_absolute_paths_that_exist_nowhere_and_real_paths_outside_file_ops(
    tmp_path: Path, spec: Path
) -> None:
    cases = toy_suite(tmp_path / "cases")
    write_json(
        cases / "fmt" / "nowhere.json",
        case_data(
            "NOWHR1", op="session", input={"steps": [{"do": "delete", "id": "/nonexistent/x"}]}, expect={"steps": [{"ok": None}]}
        ),
    )
    text_case = case_data("TEXT01", op="tui_input", input={"action": "complete", "text": "/"}, expect={"output": "/"})
    write_json(cases / "fmt" / "text.json", text_case)
    assert lint_cases(cases, spec) == []


def test_lint_reports_a_case_outside_an_area_folder(tmp_path: Path, spec: Path) -> None:
    cases = toy_suite(tmp_path / "cases")
    write_json(cases / "loose.json", case_data("LOOSE1"))
    write_json(cases / "fmt" / "deep" / "nested.json", case_data("DEEP01"))
    assert [problem.split(": ", 1)[1] for problem in lint_cases(cases, spec)] == [
        "not in an area folder; a case lives at <cases>/<area>/<slug>.json"
    ] * 2


def test_lint_needs_the_spec_and_some_cases(tmp_path: Path, spec: Path) -> None:
    cases = toy_suite(tmp_path / "cases")
    assert lint_cases(cases, tmp_path / "NOSPEC.md")[0].endswith(
        "NOSPEC.md: not found, so cited ids cannot be checked"
    )
    (tmp_path / "empty").mkdir()
    assert lint_cases(tmp_path / "empty", spec)[0].endswith("empty: no case files found")
    assert lint_cases(tmp_path / "nowhere", spec)[0].endswith("nowhere: no such directory")


def test_lint_command_prints_problems_and_exits_non_zero(
    tmp_path: Path, spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = toy_suite(tmp_path / "cases")
    assert main(["lint", "--cases", str(cases), "--spec", str(spec)]) == 0
    assert capsys.readouterr().out == "3 case files in 1 areas, citing 1 requirements: no problem found\n"
    write_json(cases / "fmt" / "bad.json", case_data("BADBAD", spec=["R-XYZ-1"]))
    assert main(["lint", "--cases", str(cases), "--spec", str(spec)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1
    assert out[0].endswith("bad.json: cites R-XYZ-1, which SPEC.md does not define")


def test_spec_requirement_ids_reads_definition_lines_only(tmp_path: Path) -> None:
    path = tmp_path / "SPEC.md"
    path.write_text(
        SPEC_TEXT
        + "See **R-FMT-1** above; this line defines nothing.\n"
        + '- <a id="R-TOK-12"></a>**R-TOK-12** MUST count bytes.\n'
        + '- <a id="R-TOK-12"></a>**R-TOK-12** is defined twice here.\n',
        encoding="utf-8",
    )
    assert spec_requirement_ids(path) == ["R-FMT-1", "R-FMT-2", "R-TOK-12", "R-TOK-12"]


SPLIT_SPEC = SPEC_TEXT + (
    '- <a id="R-ZZZ-9"></a>**R-ZZZ-9** Counting, in two parts: R-ZZZ-9a, R-ZZZ-9b.\n'
    '- <a id="R-ZZZ-9a"></a>**R-ZZZ-9a** MUST count bytes.\n'
    '- <a id="R-ZZZ-9b"></a>**R-ZZZ-9b** MUST round up.\n'
)


def test_sub_ids_are_requirements_and_their_parent_is_a_group(tmp_path: Path) -> None:
    path = tmp_path / "SPEC.md"
    path.write_text(SPLIT_SPEC, encoding="utf-8")
    assert spec_requirement_ids(path) == ["R-FMT-1", "R-FMT-2", "R-ZZZ-9a", "R-ZZZ-9b"]
    assert spec_groups(path) == {"R-ZZZ-9": ("R-ZZZ-9a", "R-ZZZ-9b")}


def test_lint_accepts_a_sub_id_and_rejects_its_group_parent(tmp_path: Path) -> None:
    spec = tmp_path / "SPEC.md"
    spec.write_text(SPLIT_SPEC, encoding="utf-8")
    cases = toy_suite(tmp_path / "cases")
    write_json(cases / "fmt" / "sub.json", case_data("SUBID1", spec=["R-ZZZ-9b"]))
    assert lint_cases(cases, spec) == []
    write_json(cases / "fmt" / "parent.json", case_data("PARENT", spec=["R-ZZZ-9"]))
    (problem,) = lint_cases(cases, spec)
    assert problem.endswith("parent.json: cites R-ZZZ-9, a group of SPEC.md: cite R-ZZZ-9a … R-ZZZ-9b instead")
@pytest.mark.parametrize("place", ["conformance/SUITE.md", "SUITE.md"])
def test_the_suite_document_beside_spec_adds_its_ids(tmp_path: Path, place: str) -> None:
    """conformance/SUITE.md in a checkout, SUITE.md beside the wheel's SPEC.md: both count."""
    spec = tmp_path / "SPEC.md"
    spec.write_text(SPEC_TEXT, encoding="utf-8")
    cases = toy_suite(tmp_path / "cases")
    write_json(cases / "fmt" / "suite.json", case_data("SUITE1", spec=["R-Y-2"]))
    assert defined_requirement_ids(spec) == ["R-FMT-1", "R-FMT-2"]  # no suite document yet
    assert [p.rsplit(": ", 1)[1] for p in lint_cases(cases, spec)] == ["cites R-Y-2, which SPEC.md does not define"]
    suite = tmp_path / place
    suite.parent.mkdir(exist_ok=True)
    suite.write_text('- <a id="R-Y-2"></a>**R-Y-2** MUST run.\n', encoding="utf-8")
    assert defined_requirement_ids(spec) == ["R-FMT-1", "R-FMT-2", "R-Y-2"]
    assert spec_requirement_ids(spec) == ["R-FMT-1", "R-FMT-2"]
    assert lint_cases(cases, spec) == []


def test_read_id_list_skips_comments_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "ids.txt"
    path.write_text("# header\n\nR-SES-1  # needs sessions\n  R-SES-2\n", encoding="utf-8")
    assert read_id_list(path) == ["R-SES-1", "R-SES-2"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("A\nB C\n", "ids.txt:2: expected one id, got 'B C'"),
        ("A\n\nA\n", "ids.txt:3: A is already listed on line 1"),
    ],
)
def test_read_id_list_rejects_ambiguous_lines(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "ids.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_id_list(path)


def test_read_id_list_of_a_missing_file(tmp_path: Path) -> None:
    assert read_id_list(tmp_path / "absent.txt", missing_ok=True) == []
    with pytest.raises(FileNotFoundError):
        read_id_list(tmp_path / "absent.txt")
