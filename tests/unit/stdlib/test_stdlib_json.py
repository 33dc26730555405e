"""JSON tools."""

from __future__ import annotations

import pytest

from obelisk.stdlib_tools import default_registry

R = default_registry()


def test_json_parse() -> None:
    assert R["json_parse"]('{"a": [1, 2.5, null, true, "é"]}') == {"a": [1, 2.5, None, True, "é"]}


def test_json_parse_error_names_line_and_column() -> None:
    with pytest.raises(ValueError) as caught:
        R["json_parse"]('{\n  "a": 1,\n  "b": }')
    assert str(caught.value) == "invalid JSON at line 3, column 8: Expecting value"
    with pytest.raises(ValueError) as caught:
        R["json_parse"]("[NaN]")
    assert str(caught.value) == "NaN is not valid JSON"


def test_json_dump() -> None:
    value = {"b": [1, None], "a": "é"}
    assert R["json_dump"](value) == '{"b":[1,null],"a":"é"}'
    assert R["json_dump"](value, sort_keys=True) == '{"a":"é","b":[1,null]}'
    assert R["json_dump"]({"a": [1]}, indent=2) == '{\n  "a": [\n    1\n  ]\n}'
    with pytest.raises(ValueError) as caught:
        R["json_dump"](1, indent=-1)
    assert str(caught.value) == "indent must be >= 0, got -1"
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        R["json_dump"](float("nan"))


SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "items": {"type": "array", "items": {"type": "object", "required": ["sku"]}},
        "email": {"type": "string", "format": "email"},
        "a key": {"type": "string"},
    },
    "required": ["id"],
}


def test_json_validate_valid() -> None:
    assert R["json_validate"]({"id": 1, "items": [{"sku": "x"}]}, SCHEMA) == {
        "valid": True,
        "errors": [],
    }


def test_json_validate_reports_every_error_with_relative_paths() -> None:
    value = {"items": [{"sku": 1}, {}], "email": "not-an-email", "a key": 3}
    report = R["json_validate"](value, SCHEMA)
    assert report == {
        "valid": False,
        "errors": [
            {"path": "", "message": "'id' is a required property"},
            {"path": '["a key"]', "message": "3 is not of type 'string'"},
            {"path": "email", "message": "'not-an-email' is not a 'email'"},
            {"path": "items[1]", "message": "'sku' is a required property"},
        ],
    }
    assert R["json_validate"].validate_output(report) == []
    assert R["get"](value, report["errors"][1]["path"]) == 3


def test_json_validate_bad_schema_is_a_value_error() -> None:
    with pytest.raises(ValueError) as caught:
        R["json_validate"](1, {"properties": {"x": {"type": "nope"}}})
    assert str(caught.value).startswith("invalid schema at properties.x.type: ")
    with pytest.raises(ValueError) as caught:
        R["json_validate"](1, {"$ref": "https://example.com/schema.json"})
    assert str(caught.value) == (
        "invalid schema: cannot resolve $ref 'https://example.com/schema.json'"
    )
