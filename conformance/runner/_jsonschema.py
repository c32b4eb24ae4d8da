"""A small JSON Schema (draft 2020-12) validator for the subset the suite's own schemas use.

The runner must stay standard-library only, and its schemas are small, so it carries its own
validator instead of a dependency. It refuses, when built, any keyword it does not implement:
a schema can never be silently half-checked. Equality for ``enum`` and ``const`` follows the
suite's JSON rules (``_compare.json_equal``), so ``true`` never equals ``1``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Final

from ._compare import compact_json, format_pointer, json_equal

__all__ = ["SCHEMA_DIR", "SchemaDefinitionError", "Validator", "load_schema"]

SCHEMA_DIR: Final = Path(__file__).parents[1] / "schema"

_ASSERTIONS: Final = frozenset(
    {
        "$ref",
        "type",
        "enum",
        "const",
        "pattern",
        "minLength",
        "minItems",
        "items",
        "required",
        "properties",
        "additionalProperties",
        "oneOf",
        "anyOf",
    }
)
# Keywords that assert nothing; "$defs" is reached through "$ref".
_ANNOTATIONS: Final = frozenset({"$schema", "$id", "$comment", "$defs", "title", "description"})

_TYPE_NAMES: Final = ("null", "boolean", "integer", "number", "string", "array", "object")


class SchemaDefinitionError(Exception):
    """A schema uses something this validator does not implement, or a ``$ref`` dangles."""


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _has_type(value: Any, name: str) -> bool:
    actual = _type_of(value)
    return actual == name or (name == "number" and actual == "integer")


def _types(schema: dict[str, Any]) -> list[str]:
    names = schema["type"]
    return names if isinstance(names, list) else [names]


def _child(pointer: str, token: str | int) -> str:
    return f"{pointer}/{str(token).replace('~', '~0').replace('/', '~1')}"


class Validator:
    """Validate JSON values against one schema inside a schema document.

    Args:
        document: the whole schema document (``$ref`` resolves against it).
        at: a JSON pointer to the schema to apply, e.g. ``"/$defs/request"``; ``""`` is the
            whole document.
        name: how messages name the schema, e.g. ``"protocol-v1/run.json#/$defs/request"``.

    Raises:
        SchemaDefinitionError: on an unsupported keyword or an unresolvable ``$ref`` anywhere in the
            document.
    """

    def __init__(self, document: Any, at: str = "", *, name: str = "schema") -> None:
        self.document = document
        self.name = name
        self._check(document, "#")
        self.schema = self._resolve("#" + at)

    def _resolve(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise SchemaDefinitionError(f"{self.name}: only local $ref values are supported, got {ref!r}")
        node = self.document
        for raw in ref[1:].split("/")[1:]:
            token = raw.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or token not in node:
                raise SchemaDefinitionError(f"{self.name}: $ref {ref!r} does not resolve")
            node = node[token]
        return node

    def _check(self, schema: Any, where: str) -> None:
        if isinstance(schema, bool):
            return
        if not isinstance(schema, dict):
            raise SchemaDefinitionError(f"{self.name}: {where} is not a schema (object or boolean)")
        for key, value in schema.items():
            if key not in _ASSERTIONS and key not in _ANNOTATIONS:
                raise SchemaDefinitionError(f"{self.name}: {where} uses unsupported keyword {key!r}")
            if key == "$ref":
                self._resolve(value)
            elif key in ("properties", "$defs"):
                for name, sub in value.items():
                    self._check(sub, f"{where}/{key}/{name}")
            elif key in ("items", "additionalProperties"):
                self._check(value, f"{where}/{key}")
            elif key in ("oneOf", "anyOf"):
                for index, sub in enumerate(value):
                    self._check(sub, f"{where}/{key}/{index}")
            elif key == "type" and any(name not in _TYPE_NAMES for name in _types(schema)):
                raise SchemaDefinitionError(f"{self.name}: {where} has unknown type {value!r}")

    def errors(self, instance: Any) -> list[str]:
        """Every violation, each as ``"<instance pointer>: <problem>"``; empty when valid."""
        return self._errors(self.schema, instance, "")

    def _errors(self, schema: Any, value: Any, ptr: str) -> list[str]:
        if schema is True:
            return []
        if schema is False:
            return [f"{format_pointer(ptr)}: no value is allowed here"]
        where = format_pointer(ptr)
        found: list[str] = []
        if "$ref" in schema:
            found += self._errors(self._resolve(schema["$ref"]), value, ptr)
        if "type" in schema and not any(_has_type(value, name) for name in _types(schema)):
            wanted = " or ".join(_types(schema))
            return [*found, f"{where}: expected {wanted}, got {compact_json(value, 60)}"]
        if "enum" in schema and not any(json_equal(value, item) for item in schema["enum"]):
            options = ", ".join(compact_json(item) for item in schema["enum"])
            found.append(f"{where}: expected one of {options}; got {compact_json(value, 60)}")
        if "const" in schema and not json_equal(value, schema["const"]):
            wanted = compact_json(schema["const"])
            found.append(f"{where}: expected {wanted}, got {compact_json(value, 60)}")
        if isinstance(value, str):
            found += self._string_errors(schema, value, where)
        if isinstance(value, list):
            if len(value) < schema.get("minItems", 0):
                found.append(
                    f"{where}: expected at least {schema['minItems']} items, got {len(value)}"
                )
            if "items" in schema:
                for index, item in enumerate(value):
                    found += self._errors(schema["items"], item, _child(ptr, index))
        if isinstance(value, dict):
            found += self._object_errors(schema, value, ptr)
        for key in ("oneOf", "anyOf"):
            if key in schema:
                found += self._alternative_errors(key, schema[key], value, ptr)
        return found

    def _string_errors(self, schema: dict[str, Any], value: str, where: str) -> list[str]:
        found = []
        if len(value) < schema.get("minLength", 0):
            found.append(
                f"{where}: expected at least {schema['minLength']} characters, got {len(value)}"
            )
        if "pattern" in schema and re.search(schema["pattern"], value) is None:
            found.append(f"{where}: {compact_json(value, 60)} does not match {schema['pattern']}")
        return found

    def _object_errors(self, schema: dict[str, Any], value: dict[str, Any], ptr: str) -> list[str]:
        found = [
            f"{format_pointer(ptr)}: missing required key {json.dumps(key)}"
            for key in schema.get("required", ())
            if key not in value
        ]
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                found += self._errors(properties[key], item, _child(ptr, key))
            elif extra is False:
                allowed = ", ".join(properties) or "none"
                found.append(f"{_child(ptr, key)}: unexpected key (allowed keys: {allowed})")
            else:
                found += self._errors(extra, item, _child(ptr, key))
        return found

    def _type_fits(self, schema: Any, value: Any) -> bool:
        if isinstance(schema, dict) and "$ref" in schema:
            return self._type_fits(self._resolve(schema["$ref"]), value)
        if not isinstance(schema, dict) or "type" not in schema:
            return True
        return any(_has_type(value, name) for name in _types(schema))

    def _alternative_errors(self, key: str, options: list[Any], value: Any, ptr: str) -> list[str]:
        results = [self._errors(option, value, ptr) for option in options]
        matched = sum(1 for errors in results if not errors)
        if matched == 1 or (matched and key == "anyOf"):
            return []
        where = format_pointer(ptr)
        if matched:
            return [f"{where}: matches {matched} of the {key} alternatives, expected exactly one"]

        # The closest alternative is one of the value's type with the fewest problems.
        def distance(index: int) -> tuple[bool, int]:
            return (not self._type_fits(options[index], value), len(results[index]))

        closest = min(range(len(results)), key=distance)
        problem = f"matches none of the {len(options)} {key} alternatives"
        return [f"{where}: {problem}; the closest (#{closest}) fails with {results[closest][0]}"]


def load_schema(relative: str, at: str = "") -> Validator:
    """Build a validator for a schema shipped in ``conformance/schema``.

    Args:
        relative: the file under ``SCHEMA_DIR``, e.g. ``"protocol-v1/run.json"``.
        at: a JSON pointer inside it, e.g. ``"/$defs/response"``.
    """
    document = json.loads((SCHEMA_DIR / relative).read_text(encoding="utf-8"))
    return Validator(document, at, name=f"conformance/schema/{relative}#{at}")
