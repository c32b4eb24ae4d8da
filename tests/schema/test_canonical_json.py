"""Canonical JSON of tool schemas, the bytes estimate_tool_tokens counts (harness9_ref/schema/_canonical_json.py)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness9_ref.schema import canonical_json


def test_keys_are_sorted_at_every_level_and_there_is_no_white_space() -> None:
    value = {"type": "object", "required": ["b", "a"], "properties": {"b": {"type": "string"}, "a": {}}}
    assert canonical_json(value) == '{"properties":{"a":{},"b":{"type":"string"}},"required":["b","a"],"type":"object"}'


def test_keys_are_sorted_by_code_point_not_utf16_unit_or_locale() -> None:
    value = {"b": 1, "a": 2, "B": 3, "é": 4, "\U0001f600": 5, "\uffff": 6, "aa": 7}
    assert canonical_json(value) == '{"B":3,"a":2,"aa":7,"b":1,"é":4,"\uffff":6,"\U0001f600":5}'


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
        ('"', '\\"'),
        ("\\", "\\\\"),
        ("\n", "\\n"),
        ("\r", "\\r"),
        ("\t", "\\t"),
        ("\x00", "\\u0000"),
        ("\x08", "\\u0008"),
        ("\x0c", "\\u000c"),
        ("\x1b", "\\u001b"),
        ("\x1f", "\\u001f"),
        ("\x7f", "\x7f"),
        ("/", "/"),
        ("'", "'"),
        ("é", "é"),
        ("中文", "中文"),
        ("\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f468\u200d\U0001f469\u200d\U0001f467"),
        ("\ufeff", "\ufeff"),
    ],
)
def test_strings_escape_html_characters_line_separators_and_controls_and_keep_other_text_raw(
    text: str, written: str
) -> None:
    assert canonical_json(text) == f'"{written}"'
    assert canonical_json({text: 0}) == f'{{"{written}":0}}'


@pytest.mark.parametrize(
    ("number", "written"),
    [
        (0, "0"),
        (7, "7"),
        (-12, "-12"),
        (0.0, "0"),
        (-0.0, "-0"),
        (1.0, "1"),
        (-3.0, "-3"),
        (1.5, "1.5"),
        (1e2, "100"),
        (0.0001, "0.0001"),
        (0.1, "0.1"),
        (0.1 + 0.2, "0.30000000000000004"),
        (12345.678, "12345.678"),
        (1e20, "100000000000000000000"),
        (2.0**53 + 2, "9007199254740994"),
        (2.0**64, "18446744073709552000"),
        (1.2345678901234568e20, "123456789012345680000"),
        (1e21, "1e+21"),
        (1.2345e21, "1.2345e+21"),
        (0.000001, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (-2.5e-8, "-2.5e-8"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
    ],
)
def test_numbers_are_written_as_ecmascript_writes_them(number: float, written: str) -> None:
    assert canonical_json(number) == written


def test_literals_and_arrays() -> None:
    assert canonical_json([None, True, False, [], {}, ("a", 1)]) == '[null,true,false,[],{},["a",1]]'


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, [1, {"x": math.nan}], {1, 2}, b"bytes", object()])
def test_values_json_cannot_represent_are_rejected(value: object) -> None:
    with pytest.raises(ValueError):
        canonical_json(value)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


def _same(parsed: object, value: object) -> bool:
    """Equal as JSON values: an integral float is written without a fraction and parses back as an int."""
    if isinstance(value, float):
        return isinstance(parsed, (int, float)) and float(parsed) == value
    if isinstance(value, list):
        return isinstance(parsed, list) and len(parsed) == len(value) and all(map(_same, parsed, value))
    if isinstance(value, dict):
        if not isinstance(parsed, dict) or parsed.keys() != value.keys():
            return False
        return all(_same(parsed[k], value[k]) for k in value)
    return type(parsed) is type(value) and parsed == value


@settings(max_examples=200, deadline=None)
@given(_json_values)
def test_canonical_json_parses_back_to_the_same_value(value: object) -> None:
    assert _same(json.loads(canonical_json(value)), value)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_keep_their_value_through_the_text(number: float) -> None:
    assert float(canonical_json(number)) == number
