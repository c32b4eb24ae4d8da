"""JSON equality, the first-difference pointer, and case verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance import Case, Response, evaluate, first_difference, json_equal
from conformance.runner._compare import MISSING, compact_json, describe_difference


@pytest.mark.parametrize(
    ("expected", "got"),
    [
        (1, 1.0),
        ({"a": 1, "b": [True, None]}, {"b": [True, None], "a": 1}),
        ("ü", "ü"),
        ([], []),
    ],
)
def test_equal_values_have_no_difference(expected: Any, got: Any) -> None:
    assert first_difference(expected, got) is None


@pytest.mark.parametrize(
    ("expected", "got", "difference"),
    [
        (True, 1, ("", True, 1)),
        (0, False, ("", 0, False)),
        (None, 0, ("", None, 0)),
        ("1", 1, ("", "1", 1)),
        ([1, 2], [2, 1], ("/0", 1, 2)),
        ({"a": 1}, {}, ("/a", 1, MISSING)),
        ({}, {"x": 1}, ("/x", MISSING, 1)),
        ([1], [1, 2], ("/1", MISSING, 2)),
        ([1, 2], [1], ("/1", 2, MISSING)),
        ({"a": [1]}, {"a": {"0": 1}}, ("/a", [1], {"0": 1})),
        ({"a/b": {"m~n": 1}}, {"a/b": {"m~n": 2}}, ("/a~1b/m~0n", 1, 2)),
        (
            {"messages": [{"content": "a"}, {"content": "b"}]},
            {"messages": [{"content": "a"}, {"content": "c"}]},
            ("/messages/1/content", "b", "c"),
        ),
    ],
)
def test_first_difference_points_at_the_first_divergence(
    expected: Any, got: Any, difference: tuple[str, Any, Any]
) -> None:
    assert first_difference(expected, got) == difference


def test_missing_key_is_found_before_a_later_value_difference() -> None:
    assert first_difference({"a": 1, "b": 2}, {"b": 3}) == ("/a", 1, MISSING)


def test_non_json_values_are_rejected() -> None:
    with pytest.raises(TypeError, match="not a JSON value: tuple"):
        first_difference((1,), (1,))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=12,
)


def _resolve(document: Any, pointer: str) -> Any:
    for raw in pointer.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(document, list):
            if int(token) >= len(document):
                return MISSING
            document = document[int(token)]
        elif token not in document:
            return MISSING
        else:
            document = document[token]
    return document


def _same(x: Any, y: Any) -> bool:
    if x is MISSING or y is MISSING:
        return x is y
    return json_equal(x, y)


@given(json_values, json_values)
def test_difference_agrees_with_canonical_text_and_its_pointer_resolves(a: Any, b: Any) -> None:
    found = first_difference(a, b)
    same = json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert (found is None) == same
    if found is not None:
        pointer, want, have = found
        assert _same(_resolve(a, pointer), want)
        assert _same(_resolve(b, pointer), have)
        assert not _same(want, have)


@given(json_values)
def test_a_value_equals_its_own_copy(value: Any) -> None:
    assert json_equal(value, json.loads(json.dumps(value)))


def test_compact_json_is_one_line_cut_to_the_limit_and_printable() -> None:
    assert compact_json({"a": [1, "ü"]}) == '{"a":[1,"ü"]}'
    assert compact_json("x" * 300) == '"' + "x" * 198 + "…"
    assert compact_json("\ud800") == '"\\ud800"'
    assert compact_json(MISSING) == "nothing"


def test_describe_difference_names_the_root_and_absent_values() -> None:
    assert describe_difference("", "1.1K", "1K") == '(root): expected "1.1K", got "1K"'
    assert describe_difference("/a", MISSING, 3) == "/a: expected nothing, got 3"


def test_long_strings_are_shown_around_their_first_difference() -> None:
    expected = "a" * 500 + "XYZ" + "b" * 10
    got = "a" * 500 + "XQZ" + "b" * 10
    line = describe_difference("/content", expected, got)
    assert line == (
        f'/content: expected …"{"a" * 39}XYZ{"b" * 10}", got …"{"a" * 39}XQZ{"b" * 10}"'
        " (first difference at character 501)"
    )


def make_case(expect: dict[str, Any]) -> Case:
    return Case(
        id="AAAAA1",
        path=Path("fmt/n-5.json"),
        area="fmt",
        slug="n-5",
        description="d",
        spec=("R-FMT-1",),
        op="format_token_count",
        input={"n": 5},
        expect=expect,
    )


@pytest.mark.parametrize(
    ("expect", "response", "status", "detail"),
    [
        ({"output": "5"}, Response("output", output="5"), "passed", ""),
        (
            {"output": "5"},
            Response("output", output="6"),
            "failed",
            '(root): expected "5", got "6"',
        ),
        (
            {"output": "5"},
            Response("error", error_code="invalid_input", message="n must be an integer"),
            "failed",
            '(root): expected "5", got error "invalid_input": n must be an integer',
        ),
        (
            {"error": {"code": "invalid_input"}},
            Response("error", error_code="invalid_input", message="anything"),
            "passed",
            "",
        ),
        (
            {"error": {"code": "invalid_input"}},
            Response("error", error_code="schema_error"),
            "failed",
            'expected error "invalid_input", got error "schema_error"',
        ),
        (
            {"error": {"code": "invalid_input"}},
            Response("output", output="5"),
            "failed",
            'expected error "invalid_input", got output "5"',
        ),
        ({"output": 1}, Response("skipped", message="later"), "skipped", "later"),
        ({"output": 1}, Response("unsupported", message="no op"), "unsupported", "no op"),
        ({"output": 1}, Response("errored", message="crashed"), "errored", "crashed"),
    ],
)
def test_evaluate(expect: dict[str, Any], response: Response, status: str, detail: str) -> None:
    verdict = evaluate(make_case(expect), response)
    assert (verdict.status, verdict.detail) == (status, detail)


def test_steps_report_the_divergent_step_and_the_pointer_inside_it() -> None:
    steps = [{"messages": []}, {"messages": [{"role": "user", "content": "hi"}]}]
    got = {"steps": [{"messages": []}, {"messages": [{"role": "user", "content": "ho"}]}]}
    verdict = evaluate(make_case({"steps": steps}), Response("output", output=got))
    assert verdict.detail == '/steps/1/messages/0/content: expected "hi", got "ho"'
    assert (
        evaluate(make_case({"steps": steps}), Response("output", output={"steps": steps})).status
        == "passed"
    )


def test_steps_need_an_object_holding_steps() -> None:
    verdict = evaluate(make_case({"steps": [1]}), Response("output", output=[1]))
    assert verdict.detail == '(root): expected {"steps":[1]}, got [1]'
    verdict = evaluate(make_case({"steps": [1]}), Response("output", output={"steps": [1, 2]}))
    assert verdict.detail == "/steps/1: expected nothing, got 2"
