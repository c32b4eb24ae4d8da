"""The one strict JSON reader (harness9_ref/schema/strict_json.py; SPEC R-PRV-21, R-TOOL-2, R-DB-6)."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness9_ref.schema.strict_json import (
    JSONError,
    describe,
    element_spans,
    json_kind,
    loads,
    member_spans,
    value_start,
)


@pytest.mark.parametrize(
    ("text", "message", "pos"),
    [
        ("NaN", "NaN is not JSON (RFC 8259)", 0),
        ('{"a": [1, -Infinity]}', "-Infinity is not JSON (RFC 8259)", 10),
        ('["NaN", Infinity]', "Infinity is not JSON (RFC 8259)", 8),
        ('{"x": 1e400}', "the number '1e400' is out of range", 6),
        ('{"a": 1, "b": {"c": 2, "c": 3}}', 'duplicate key "c"', 23),
        ('[{"a": 1}, {"b": 2, "b": 3}]', 'duplicate key "b"', 20),
        ('{"n": -' + "9" * 310 + "}", f"the number '-{'9' * 35}... is out of range", 6),
        ("[1, 2", "Expecting ',' delimiter", 5),
    ],
)
def test_every_refusal_says_where(text: str, message: str, pos: int) -> None:
    with pytest.raises(JSONError) as info:
        loads(text, unique_keys=True)
    error = info.value
    assert (error.msg, error.pos, error.doc) == (message, pos, text)
    assert str(error) == f"{message}: line 1 column {pos + 1} (char {pos})"
    assert isinstance(error, ValueError)


def test_positions_count_lines_and_columns() -> None:
    with pytest.raises(JSONError) as info:
        loads('{\n  "a": NaN\n}')
    assert (info.value.pos, info.value.lineno, info.value.colno) == (9, 2, 8)


def test_overflow_and_repeated_keys_are_refused_only_when_asked() -> None:
    assert loads('{"x": 1e400, "x": 2}', finite=False) == {"x": 2}
    with pytest.raises(JSONError, match="out of range"):
        loads("1e400")


def test_nesting_too_deep_is_an_error_at_the_deepest_bracket() -> None:
    depth = sys.getrecursionlimit() * 2
    # the brackets after the deep run, shallower, are not the deepest: closing ones count down
    text = '{"a": ' + "[" * depth + "]" * depth + ', "b": [[0]]}'
    with pytest.raises(JSONError, match="nested too deeply") as info:
        loads(text)
    assert info.value.pos == 6 + depth - 1


def test_an_integer_too_long_to_convert_is_an_error() -> None:
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if not limit:
        pytest.skip("this Python converts integers of any length")
    with pytest.raises(JSONError) as info:
        loads("[1, " + "9" * (limit + 1) + "]")
    assert info.value.pos == 4


def test_surrogates_are_replaced_only_when_asked() -> None:
    assert loads('["\\ud800", {"\\udc00": 1}]') == ["\ud800", {"\udc00": 1}]
    assert loads('["\\ud800", {"\\udc00": 1}]', replace_surrogates=True) == ["\ufffd", {"\ufffd": 1}]


def test_spans_give_each_value_source_text_with_the_last_repeated_member() -> None:
    text = ' { "a" : [1, {"b": 2}] , "c": "x", "a" : 3 } '
    spans = member_spans(text, value_start(text))
    assert {name: text[a:b] for name, (a, b) in spans.items()} == {"a": "3", "c": '"x"'}
    array = ' [ 1 , {"k": []}, "s" ] '
    assert [array[a:b] for a, b in element_spans(array, value_start(array))] == ["1", '{"k": []}', '"s"']
    assert element_spans("[]", 0) == [] and member_spans("{ }", 0) == {}


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(), lambda inner: st.lists(inner, max_size=3)))
def test_spans_of_any_array_read_back_its_elements(value: object) -> None:
    text = json.dumps([value, value], indent=1)
    assert [json.loads(text[a:b]) for a, b in element_spans(text, 0)] == [value, value]


def test_kinds_and_descriptions() -> None:
    kinds: tuple[object, ...] = (None, True, 1, 1.5, "s", [], {})
    assert [json_kind(v) for v in kinds] == [
        "null", "a boolean", "a number", "a number", "a string", "an array", "an object",
    ]
    described: tuple[object, ...] = (5, "custom", [], None, "x" * 50)
    assert [describe(v) for v in described] == ["5", "'custom'", "an array", "null", "'" + "x" * 36 + "..."]
