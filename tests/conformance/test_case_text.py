"""Long repeated text in case files (R-CASE-1): the notation, its errors, lint, and what adapters get."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance import Adapter, CaseError, lint_cases, load_cases, run_case
from conformance.runner._case_text import LONGEST_LITERAL_RUN, LONGEST_PART, expand, literal_runs

from .toy import case_data, fake, toy_suite, write_json


def repeat(unit: str, times: Any) -> dict[str, Any]:
    return {"repeat": unit, "times": times}


def test_text_objects_expand_anywhere_and_other_values_stay() -> None:
    value = {
        "a": [{"$text": ["h1:", repeat(".", 5), " and ", repeat("ab", 3)]}, 7, None],
        "b": {"$text": [repeat("中", 2)]},
        "c": {"text": ["kept"], "$other": 1},
    }
    assert expand(value) == {"a": ["h1:..... and ababab", 7, None], "b": "中中", "c": {"text": ["kept"], "$other": 1}}


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"$text": []}, "/x/$text: expected a non-empty array of parts"),
        ({"$text": "abc"}, "/x/$text: expected a non-empty array of parts"),
        ({"$text": ["a"], "b": 1}, "/x: a $text object has no other members"),
        ({"$text": [7]}, '/x/$text/0: a part is a string or {"repeat": STRING, "times": N}'),
        ({"$text": [{"repeat": "a"}]}, "/x/$text/0: a part is a string"),
        ({"$text": ["a", repeat("", 3)]}, "/x/$text/1/repeat: expected a non-empty string"),
        ({"$text": [repeat("a", 0)]}, "/x/$text/0/times: expected an integer of at least 1"),
        ({"$text": [repeat("a", True)]}, "/x/$text/0/times: expected an integer of at least 1"),
        ({"$text": [repeat("a", 2.0)]}, "/x/$text/0/times: expected an integer of at least 1"),
        ({"$text": [repeat("ab", LONGEST_PART // 2 + 1)]}, "/x/$text/0/times: the part would be longer than 16777216"),
    ],
)
def test_a_malformed_text_object_is_an_error_naming_where(value: Any, problem: str) -> None:
    with pytest.raises(ValueError) as raised:
        expand({"x": value})
    assert str(raised.value).startswith(problem)


def test_loading_expands_input_and_expect_and_refuses_a_malformed_one(tmp_path: Path) -> None:
    toy_suite(tmp_path)
    long = case_data("LONG01", input={"n": {"$text": ["1", repeat("0", 3)]}}, expect={"output": {"$text": [repeat("9", 2)]}})
    write_json(tmp_path / "fmt" / "long.json", long)
    loaded = next(case for case in load_cases(tmp_path) if case.id == "LONG01")
    assert (loaded.input, loaded.expect) == ({"n": "1000"}, {"output": "99"})
    bad = case_data("BAD001", expect={"output": {"$text": [repeat("9", -1)]}})
    write_json(tmp_path / "fmt" / "bad.json", bad)
    with pytest.raises(CaseError) as raised:
        load_cases(tmp_path)
    assert len(raised.value.problems) == 1
    assert raised.value.problems[0].endswith("bad.json: /expect/output/$text/0/times: expected an integer of at least 1")


def test_lint_asks_for_the_notation_past_the_longest_literal_run(cases_dir: Path, spec: Path) -> None:
    write_json(cases_dir / "fmt" / "at.json", case_data("LONG02", input={"n": "x" * LONGEST_LITERAL_RUN}))
    assert lint_cases(cases_dir, spec) == []
    write_json(cases_dir / "fmt" / "past.json", case_data("LONG03", input={"n": "y" * (LONGEST_LITERAL_RUN + 1)}))
    (problem,) = lint_cases(cases_dir, spec)
    assert "past.json: 4097 copies of 'y' written out" in problem and "R-CASE-1" in problem
    assert literal_runs("a" * 5000 + "b" * 10) == [literal_runs("a" * 5000)[0]]


def test_the_adapter_receives_the_plain_string(tmp_path: Path) -> None:
    # The fake answers str(input["n"]): the text object itself would come back as a dict's repr.
    write_json(tmp_path / "fmt" / "long.json", case_data(
        "LONG04", input={"n": {"$text": ["1", repeat("0", 3)]}}, expect={"output": "1000"}
    ))
    (case,) = load_cases(tmp_path)
    with Adapter(fake("good")) as adapter:
        verdict = run_case(adapter, case)
    assert verdict.status == "passed", verdict.detail
