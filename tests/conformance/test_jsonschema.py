"""The stdlib JSON Schema subset validator, and the shipped schemas it checks."""

from __future__ import annotations

from typing import Any

import pytest

from conformance import OPS, PROTOCOL_VERSION
from conformance.runner._jsonschema import SCHEMA_DIR, SchemaDefinitionError, Validator, load_schema


def errors(schema: Any, instance: Any) -> list[str]:
    return Validator(schema).errors(instance)


@pytest.mark.parametrize(
    ("type_name", "good", "bad"),
    [
        ("integer", [0, -3, 2.0], [True, 1.5, "1", None]),
        ("number", [0, 1.5], [False, "1"]),
        ("string", ["", "x"], [1, None]),
        ("boolean", [True, False], [0, "true"]),
        ("null", [None], [0, ""]),
        ("array", [[], [1]], [{}, "[]"]),
        ("object", [{}, {"a": 1}], [[], None]),
    ],
)
def test_type(type_name: str, good: list[Any], bad: list[Any]) -> None:
    for value in good:
        assert errors({"type": type_name}, value) == []
    for value in bad:
        assert errors({"type": type_name}, value) != []


def test_type_list_and_message() -> None:
    assert errors({"type": ["string", "null"]}, None) == []
    assert errors({"type": ["string", "null"]}, 3) == ["(root): expected string or null, got 3"]


def test_object_keywords_report_pointers() -> None:
    schema = {
        "type": "object",
        "required": ["a", "b"],
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "object", "additionalProperties": False},
        },
        "additionalProperties": False,
    }
    assert errors(schema, {"a": 1, "b": {"x/y": 1}, "c": 2}) == [
        "/a: expected string, got 1",
        "/b/x~1y: unexpected key (allowed keys: none)",
        "/c: unexpected key (allowed keys: a, b)",
    ]
    assert errors(schema, {}) == [
        '(root): missing required key "a"',
        '(root): missing required key "b"',
    ]


def test_additional_properties_schema() -> None:
    assert errors({"additionalProperties": {"type": "integer"}}, {"a": 1, "b": "x"}) == [
        '/b: expected integer, got "x"'
    ]


def test_array_and_string_keywords() -> None:
    schema = {
        "type": "array",
        "minItems": 2,
        "items": {"type": "string", "minLength": 2, "pattern": "^R-"},
    }
    assert errors(schema, ["R-1", "R-2"]) == []
    assert errors(schema, ["x"]) == [
        "(root): expected at least 2 items, got 1",
        "/0: expected at least 2 characters, got 1",
        '/0: "x" does not match ^R-',
    ]


def test_enum_and_const_use_json_equality() -> None:
    assert errors({"enum": [1, "a"]}, 1.0) == []
    assert errors({"enum": [1, "a"]}, True) == ['(root): expected one of 1, "a"; got true']
    assert errors({"const": 1}, True) == ["(root): expected 1, got true"]
    assert errors({"const": {"a": [1]}}, {"a": [1]}) == []


def test_one_of_needs_exactly_one_match() -> None:
    schema = {
        "oneOf": [{"type": "integer"}, {"type": "number"}, {"type": "string", "minLength": 3}]
    }
    assert errors(schema, 1.5) == []
    assert errors(schema, 1) == [
        "(root): matches 2 of the oneOf alternatives, expected exactly one"
    ]
    closest = "the closest (#2) fails with (root): expected at least 3 characters, got 2"
    assert errors(schema, "ab") == [f"(root): matches none of the 3 oneOf alternatives; {closest}"]


def test_any_of_needs_at_least_one_match() -> None:
    schema = {"anyOf": [{"type": "integer"}, {"type": "number"}]}
    assert errors(schema, 1) == []
    assert errors(schema, "1")[0].startswith("(root): matches none of the 2 anyOf alternatives")


def test_ref_resolves_against_the_whole_document() -> None:
    document = {"$defs": {"id": {"type": "string"}, "pair": {"items": {"$ref": "#/$defs/id"}}}}
    validator = Validator(document, "/$defs/pair")
    assert validator.errors(["a", 1]) == ["/1: expected string, got 1"]


def test_boolean_schemas() -> None:
    assert errors(True, 1) == []
    assert errors(False, 1) == ["(root): no value is allowed here"]
    assert errors({"items": False}, [1]) == ["/0: no value is allowed here"]


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"maxLength": 3}, "unsupported keyword 'maxLength'"),
        (
            {"oneOf": [{"type": "string"}, {"format": "email"}]},
            "#/oneOf/1 uses unsupported keyword 'format'",
        ),
        ({"$defs": {"a": {"uniqueItems": True}}}, "unsupported keyword 'uniqueItems'"),
        ({"$ref": "#/$defs/missing"}, "does not resolve"),
        ({"$ref": "other.json"}, "only local $ref"),
        ({"type": "int"}, "unknown type 'int'"),
        ({"properties": {"a": 3}}, "is not a schema"),
    ],
)
def test_schemas_it_cannot_fully_check_are_refused(schema: Any, message: str) -> None:
    with pytest.raises(SchemaDefinitionError, match=message.replace("$", r"\$")):
        Validator(schema)


@pytest.mark.parametrize("path", sorted(SCHEMA_DIR.rglob("*.json")), ids=lambda p: p.name)
def test_every_shipped_schema_is_within_the_subset(path: Any) -> None:
    load_schema(str(path.relative_to(SCHEMA_DIR)))


def _enum(relative: str, *pointer: str) -> Any:
    node = load_schema(relative).document
    for key in pointer:
        node = node[key]
    return node


def test_schemas_list_exactly_the_ops_and_the_protocol_version() -> None:
    assert _enum("case.json", "properties", "op", "enum") == list(OPS)
    assert _enum("protocol-v1/run.json", "$defs", "request", "properties", "op", "enum") == list(
        OPS
    )
    start = ("$defs", "response", "properties")
    assert _enum("protocol-v1/start.json", *start, "ops", "items", "enum") == list(OPS)
    assert _enum("protocol-v1/start.json", *start, "protocol", "const") == PROTOCOL_VERSION
    assert (
        _enum("protocol-v1/start.json", "$defs", "request", "properties", "protocol", "const")
        == PROTOCOL_VERSION
    )


@pytest.mark.parametrize(
    ("message", "valid"),
    [
        ({"seq": 1, "output": None}, True),
        ({"seq": 1, "error": {"code": "invalid_input", "message": "n is missing"}}, True),
        ({"seq": 1, "skipped": "later"}, True),
        ({"seq": 1, "output": 1, "skipped": "later"}, False),
        ({"seq": 1, "error": {"code": "", "message": ""}}, False),
        ({"output": 1}, False),
    ],
)
def test_run_response_schema(message: Any, valid: bool) -> None:
    assert (load_schema("protocol-v1/run.json", "/$defs/response").errors(message) == []) is valid
