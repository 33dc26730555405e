"""Data tools: get, has, const, merge, pick, omit, default, keys, values."""

from __future__ import annotations

from typing import Any

import pytest

import obelisk
from obelisk.errors import ArgumentValidationError
from obelisk.stdlib_tools import default_registry

R = default_registry()
DOC: dict[str, Any] = {
    "a": {"b": [10, 20, {"c": "deep"}]},
    "users": [{"name": "ann", "id": 1}, {"name": "bob"}, {"id": 3}],
    "a key": {"x": 0},
    "nothing": None,
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("", DOC),
        ("a.b[0]", 10),
        ("a.b.1", 20),
        ("a.b[-1].c", "deep"),
        ('["a key"].x', 0),
        ("users[*].name", ["ann", "bob"]),
        ("users[*].id", [1, 3]),
        ("nothing", None),
        (".a.b[1]", 20),
    ],
)
def test_get_finds_the_value_at_a_relative_path(path: str, expected: Any) -> None:
    assert R["get"](DOC, path) == expected


def test_get_relative_path_starting_with_an_index() -> None:
    assert R["get"]([{"name": "x"}, {"name": "y"}, {"name": "z"}], "[2].name") == "z"
    assert R["get"]([1, 2], "0") == 1


@pytest.mark.parametrize("path", ["missing", "a.b[3]", "a.b.c", "users[0].age", "a[0]"])
def test_get_missing_path_returns_the_default(path: str) -> None:
    assert R["get"](DOC, path) is None
    assert R["get"](DOC, path, default="fallback") == "fallback"


def test_get_star_key_is_a_plain_key() -> None:
    assert R["get"]({"a": 1, "*": 2}, '["*"]') == 2
    assert R["get"]({"a": 1}, '["*"]', default="none") == "none"


@pytest.mark.parametrize("path", ["a.b[-1].c", "users[*].name", '["a key"]', "users[1]"])
def test_get_agrees_with_a_state_read_of_the_same_path(path: str) -> None:
    separator = "" if path.startswith("[") else "."
    plan = [
        {"_tool": "const", "value": DOC, "_outputPath": "†state.doc"},
        {"_tool": "const", "value": f"†state.doc{separator}{path}", "_outputPath": "†state.out"},
    ]
    result = obelisk.run_sync(plan, R, {})
    assert result.state["out"] == R["get"](DOC, path)


def test_get_null_value_is_found_not_defaulted() -> None:
    assert R["get"](DOC, "nothing", default=5) is None


def test_get_wildcard_over_a_missing_container_is_the_default() -> None:
    assert R["get"](DOC, "missing[*].x", default=[]) == []
    assert R["get"]({"a": 3}, "a[*]", default="no") == "no"
    assert R["get"]({"a": []}, "a[*]", default="no") == []


def test_get_bad_path_raises_value_error_with_the_position() -> None:
    with pytest.raises(ValueError) as caught:
        R["get"](DOC, "a..b")
    assert str(caught.value) == (
        "invalid path 'a..b': expected a name or an integer after '.', found '.' (at character 2)"
    )


def test_get_refuses_a_full_reference() -> None:
    with pytest.raises(ValueError, match=r"^invalid path '†state.a': write a relative path"):
        R["get"](DOC, "†state.a")


def test_has() -> None:
    assert R["has"](DOC, "nothing") is True
    assert R["has"](DOC, "a.b[2].c") is True
    assert R["has"](DOC, "a.b[5]") is False


def test_const_returns_its_argument() -> None:
    assert R["const"]({"x": [1, 2]}) == {"x": [1, 2]}
    assert R["const"](None) is None


def test_merge_is_deep_and_left_to_right() -> None:
    objects = [
        {"a": {"x": 1, "y": 2}, "list": [1, 2], "keep": True},
        {"a": {"y": 3, "z": 4}, "list": [3]},
        {"a": {"z": {"deep": 1}}, "new": None},
    ]
    assert R["merge"](objects) == {
        "a": {"x": 1, "y": 3, "z": {"deep": 1}},
        "list": [3],
        "keep": True,
        "new": None,
    }
    assert objects[0] == {"a": {"x": 1, "y": 2}, "list": [1, 2], "keep": True}
    assert R["merge"]([]) == {}


def test_merge_validates_that_items_are_objects() -> None:
    with pytest.raises(ArgumentValidationError):
        R["merge"].validate_arguments({"objects": [{"a": 1}, [1]]})


def test_pick_and_omit() -> None:
    value = {"a": 1, "b": 2, "c": 3}
    assert R["pick"](value, ["c", "a", "zz", "a"]) == {"c": 3, "a": 1}
    assert list(R["pick"](value, ["c", "a"])) == ["c", "a"]
    assert R["omit"](value, ["b", "zz"]) == {"a": 1, "c": 3}


def test_default_replaces_only_null() -> None:
    assert R["default"](None, "fallback") == "fallback"
    assert R["default"](0, "fallback") == 0
    assert R["default"](False, "fallback") is False
    assert R["default"]("", "fallback") == ""


def test_keys_and_values() -> None:
    assert R["keys"]({"b": 1, "a": 2}) == ["b", "a"]
    assert R["values"]({"b": 1, "a": [2]}) == [1, [2]]
