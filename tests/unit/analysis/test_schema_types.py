"""Unit tests for schema_types: what JSON types a schema admits (the type_mismatch check)."""

from __future__ import annotations

from typing import Any

import pytest

from obelisk.grammar import Field, Index, Wildcard
from obelisk.interpreter.analysis.schema_types import (
    JSON_TYPES,
    admitted_types,
    describe_types,
    schema_at,
    types_compatible,
)


def types(*names: str) -> frozenset[str]:
    return frozenset(names)


# -- admitted_types -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, types("string")),
        ({"type": "integer", "minimum": 0}, types("integer")),
        ({"type": ["string", "null"]}, types("string", "null")),
        ({"type": "object", "properties": {}}, types("object")),
        ({"type": "date"}, None),
        ({"type": ["string", "date"]}, None),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, types("integer", "null")),
        (
            {"oneOf": [{"type": "array"}, {"type": ["object", "string"]}]},
            types("array", "object", "string"),
        ),
        ({"anyOf": [{"type": "integer"}, {}]}, None),
        ({"oneOf": [{"type": "integer"}, True]}, None),
        ({"anyOf": []}, types()),
        (
            {"enum": ["a", 1, 1.5, None, True, [1], {"k": 1}]},
            types("string", "integer", "number", "null", "boolean", "array", "object"),
        ),
        ({"enum": ["red", "green"]}, types("string")),
        ({"const": 3}, types("integer")),
        ({"const": False}, types("boolean")),
        ({"const": None}, types("null")),
        ({"const": "x", "type": "integer"}, types("string")),  # const wins over type
        ({"enum": [1, 2], "type": "string"}, types("integer")),
        (True, None),
        ({}, None),
        ({"description": "anything"}, None),
        ({"allOf": [{"type": "string"}]}, None),
        (False, types()),
        (None, None),
        ("string", None),
    ],
)
def test_admitted_types(schema: Any, expected: frozenset[str] | None) -> None:
    assert admitted_types(schema) == expected


def test_admitted_types_resolves_refs_against_the_root() -> None:
    root = {
        "$defs": {
            "Id": {"type": "string"},
            "Alias": {"$ref": "#/$defs/Id"},
            "Maybe": {"anyOf": [{"$ref": "#/$defs/Id"}, {"type": "null"}]},
        }
    }
    assert admitted_types({"$ref": "#/$defs/Id"}, root) == types("string")
    assert admitted_types({"$ref": "#/$defs/Alias"}, root) == types("string")
    assert admitted_types({"$ref": "#/$defs/Maybe"}, root) == types("string", "null")
    assert admitted_types({"$ref": "#/$defs/Missing"}, root) is None
    assert admitted_types({"$ref": "#/$defs/Id/type/deeper"}, root) is None
    assert admitted_types({"$ref": "https://example.com/id.json"}, root) is None
    assert admitted_types({"$ref": 5}, root) is None


def test_admitted_types_root_defaults_to_the_schema_itself() -> None:
    schema = {"$defs": {"N": {"type": "integer"}}, "$ref": "#/$defs/N"}
    assert admitted_types(schema) == types("integer")
    with_defs = {
        "$defs": {"N": {"type": "number"}},
        "anyOf": [{"$ref": "#/$defs/N"}, {"type": "null"}],
    }
    assert admitted_types(with_defs) == types("number", "null")


def test_admitted_types_of_a_ref_loop_is_unknown() -> None:
    schema = {
        "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
        "$ref": "#/$defs/A",
    }
    assert admitted_types(schema) is None
    nested: dict[str, Any] = {"type": "string"}
    for _ in range(40):
        nested = {"anyOf": [nested]}
    assert admitted_types(nested) is None  # deeper than the depth limit


def test_json_types() -> None:
    assert types("null", "boolean", "integer", "number", "string", "array", "object") == JSON_TYPES


# -- types_compatible --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("produced", "accepted", "expected"),
    [
        (None, types("string"), True),
        (types("string"), None, True),
        (None, None, True),
        (types("string"), types("string"), True),
        (types("integer"), types("number"), True),
        (types("number"), types("integer"), True),
        (types("string"), types("integer"), False),
        (types("object"), types("integer"), False),
        (types("integer"), types("string", "null"), False),
        (types("object", "null"), types("object"), True),
        (types("null"), types("string", "null"), True),
        (types("boolean"), types("integer", "number"), False),
        (types("array"), types("object"), False),
    ],
)
def test_types_compatible(
    produced: frozenset[str] | None, accepted: frozenset[str] | None, expected: bool
) -> None:
    assert types_compatible(produced, accepted) is expected


# -- schema_at ---------------------------------------------------------------------------

USER = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "address": {
            "type": "object",
            "properties": {"zip": {"type": "string"}},
            "additionalProperties": False,
        },
        "nickname": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "manager": {
            "anyOf": [
                {"type": "object", "properties": {"id": {"type": "integer"}}},
                {"type": "null"},
            ]
        },
        "either": {"anyOf": [{"type": "object"}, {"type": "array"}]},
        "meta": {"type": "object", "additionalProperties": {"type": "number"}},
    },
}


@pytest.mark.parametrize(
    ("segments", "expected"),
    [
        ((), (USER, None)),
        ((Field("name"),), ({"type": "string"}, None)),
        ((Field("tags"), Index(0)), ({"type": "string"}, None)),
        ((Field("tags"), Index(-1)), ({"type": "string"}, None)),
        ((Field("address"), Field("zip")), ({"type": "string"}, None)),
        ((Field("manager"), Field("id")), ({"type": "integer"}, None)),
        ((Field("nickname"),), ({"anyOf": [{"type": "string"}, {"type": "null"}]}, None)),
        ((Field("meta"), Field("score")), ({"type": "number"}, None)),
        ((Field("tags"), Wildcard()), ({"type": "string"}, None)),  # [*]: the items' schema
        # the path leaves what the schema describes
        ((Field("unknown"),), (None, None)),
        ((Field("unknown"), Field("deeper")), (None, None)),
        ((Field("either"), Field("x")), (None, None)),
        # the schema rules the path out
        ((Field("address"), Field("street")), (None, "it has no field 'street'")),
        ((Field("name"), Field("first")), (None, "it is a string, which has no field 'first'")),
        ((Field("name"), Index(0)), (None, "it is a string, which cannot be indexed")),
        ((Field("tags"), Field("length")), (None, "it is an array, which has no field 'length'")),
        ((Field("tags"), Index(0), Field("x")), (None, "it is a string, which has no field 'x'")),
        ((Index(0),), (None, "it is an object, which cannot be indexed")),
        ((Field("nickname"), Field("x")), (None, "it is a string, which has no field 'x'")),
    ],
)
def test_schema_at(segments: tuple[Any, ...], expected: tuple[Any, str | None]) -> None:
    assert schema_at(USER, segments) == expected


def test_schema_at_non_object_schemas() -> None:
    assert schema_at({"type": "integer"}, (Field("x"),)) == (
        None,
        "it is an integer, which has no field 'x'",
    )
    assert schema_at({"type": ["string", "null"]}, (Index(2),)) == (
        None,
        "it is null or a string, which cannot be indexed",
    )
    assert schema_at({"enum": [1, "a"]}, (Field("x"),)) == (
        None,
        "it is an integer or a string, which has no field 'x'",
    )
    # unknown types: nothing is ruled out
    assert schema_at({}, (Field("x"),)) == (None, None)
    assert schema_at(True, (Field("x"),)) == (None, None)
    assert schema_at(
        {"type": ["object", "null"], "properties": {"a": {"type": "null"}}}, (Field("a"),)
    ) == (
        {"type": "null"},
        None,
    )


def test_schema_at_follows_refs() -> None:
    schema = {
        "type": "object",
        "properties": {
            "owner": {"$ref": "#/$defs/User"},
            "maybe": {"anyOf": [{"$ref": "#/$defs/User"}, {"type": "null"}]},
        },
        "$defs": {
            "User": {
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "additionalProperties": False,
            }
        },
    }
    assert schema_at(schema, (Field("owner"), Field("id"))) == ({"type": "integer"}, None)
    assert schema_at(schema, (Field("owner"), Field("name"))) == (None, "it has no field 'name'")
    assert schema_at(schema, (Field("maybe"), Field("id"))) == ({"type": "integer"}, None)
    assert schema_at(schema, (Field("maybe"), Field("name"))) == (None, "it has no field 'name'")
    # an explicit root
    part = {"type": "object", "properties": {"u": {"$ref": "#/$defs/User"}}}
    assert schema_at(part, (Field("u"), Field("id")), root=schema) == ({"type": "integer"}, None)
    assert schema_at(part, (Field("u"), Field("id"))) == (None, None)  # unresolvable here


# -- describe_types ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (("string",), "a string"),
        (("string", "null"), "null or a string"),
        (("object", "array"), "an array or an object"),
        (("integer",), "an integer"),
        (("number", "boolean"), "a boolean or a number"),
        ((), "nothing"),
    ],
)
def test_describe_types(names: tuple[str, ...], expected: str) -> None:
    assert describe_types(frozenset(names)) == expected
