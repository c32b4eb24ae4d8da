"""``python -m conformance new-case``: a fresh id and a skeleton that cannot pass by accident."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from conformance import lint_cases, load_cases
from conformance._cli import main
from conformance.runner._new_case import _taken_ids, mint_id

from .toy import write_json


def one_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    return line


def test_a_skeleton_gets_a_new_id_and_the_areas_op_and_fails_lint_until_written(
    cases_dir: Path, spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["new-case", "fmt", "n-11", "--cases", str(cases_dir)]) == 0
    case_id, path = capsys.readouterr().out.split()
    assert Path(path) == cases_dir / "fmt" / "n-11.json"
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    assert data["id"] == case_id and len(case_id) == 6 and case_id not in {"AAAAA1", "AAAAA2", "AAAAA3"}
    assert data["op"] == "format_token_count"
    assert case_id in {case.id for case in load_cases(cases_dir)}  # a valid case file
    assert lint_cases(cases_dir, spec) == [f"{path}: cites R-TODO-1, which SPEC.md does not define"]


def test_an_existing_slug_is_refused_and_left_as_it_was(cases_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (cases_dir / "fmt" / "n-5.json").read_bytes()
    assert main(["new-case", "fmt", "n-5", "--cases", str(cases_dir)]) == 2
    assert one_error(capsys) == f"error: {cases_dir / 'fmt' / 'n-5.json'} already exists: choose another slug"
    assert (cases_dir / "fmt" / "n-5.json").read_bytes() == before


@pytest.mark.parametrize(("area", "slug"), [("Fmt", "x"), ("fmt", "a b"), ("fmt", "../x"), ("fmt", "x.json")])
def test_a_bad_name_is_refused(cases_dir: Path, area: str, slug: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new-case", area, slug, "--cases", str(cases_dir)]) == 2
    assert "use lower-case letters, digits, '-' and '_'" in one_error(capsys)
    assert sorted(p.name for p in cases_dir.iterdir()) == ["fmt"]


def test_a_new_area_needs_its_op(cases_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new-case", "tokens", "first", "--cases", str(cases_dir)]) == 2
    assert one_error(capsys) == "error: area 'tokens' has no cases yet: name the op with --op"
    assert not (cases_dir / "tokens").exists()
    assert main(["new-case", "tokens", "first", "--op", "estimate_tokens", "--cases", str(cases_dir)]) == 0
    assert json.loads((cases_dir / "tokens" / "first.json").read_text(encoding="utf-8"))["op"] == "estimate_tokens"


def test_an_id_is_never_one_already_written(tmp_path: Path) -> None:
    first = mint_id(set(), random.Random(7))
    second = mint_id({first}, random.Random(7))
    assert first != second and all(len(i) == 6 and i.isalnum() and i.upper() == i for i in (first, second))
    write_json(tmp_path / "cases" / "a" / "x.json", {"id": "CASE01", "input": {"broken": True}})
    (tmp_path / "cases" / "a" / "broken.json").write_text('{"id": "CASE02", ', encoding="utf-8")
    write_json(tmp_path / "mutants" / "m.json", {"kills": ["KILL01"]})
    assert _taken_ids(tmp_path / "cases", tmp_path / "mutants") == {"CASE01", "CASE02", "KILL01"}
