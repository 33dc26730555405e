"""List tools."""

from __future__ import annotations

from typing import Any

import pytest

from obelisk.errors import ArgumentValidationError
from obelisk.stdlib_tools import default_registry

R = default_registry()
PEOPLE: list[dict[str, Any]] = [
    {"name": "cy", "age": 40, "team": {"id": "b"}},
    {"name": "ann", "age": 31, "team": {"id": "a"}},
    {"name": "bob"},
    {"name": "dee", "age": 31, "team": None},
]


def test_count() -> None:
    assert R["count"]([]) == 0
    assert R["count"]([1, [2, 3], None]) == 3


def test_sort_plain_values() -> None:
    assert R["sort"]([3, 1.5, 2]) == [1.5, 2, 3]
    assert R["sort"](["b", "a", "C"]) == ["C", "a", "b"]
    assert R["sort"]([3, None, 1], reverse=True) == [3, 1, None]
    assert R["sort"]([True, False]) == [False, True]


def test_sort_by_key_is_stable_and_puts_missing_values_last() -> None:
    by_age = R["sort"](PEOPLE, key="age")
    assert [p["name"] for p in by_age] == ["ann", "dee", "cy", "bob"]
    by_age_desc = R["sort"](PEOPLE, key="age", reverse=True)
    assert [p["name"] for p in by_age_desc] == ["cy", "ann", "dee", "bob"]
    by_team = R["sort"](PEOPLE, key="team.id")
    assert [p["name"] for p in by_team] == ["ann", "cy", "bob", "dee"]
    assert R["sort"]([[2, "b"], [1, "a"]], key="[0]") == [[1, "a"], [2, "b"]]


def test_sort_refuses_mixed_or_unordered_values() -> None:
    with pytest.raises(TypeError) as caught:
        R["sort"]([{"v": 1}, {"v": "1"}], key="v")
    assert str(caught.value) == "cannot sort a mix of number and string values at key 'v'"
    with pytest.raises(TypeError) as caught:
        R["sort"]([{"a": 1}, {"a": 2}])
    assert str(caught.value) == "cannot sort object values; they have no order"
    with pytest.raises(ValueError, match=r"^invalid path 'a b'"):
        R["sort"]([], key="a b")


def test_unique_keeps_first_occurrences_and_handles_unhashable_values() -> None:
    items = [1, {"a": [1]}, 1.0, True, "1", {"a": [1]}, [1, 2], [1, 2], None, None, 2]
    assert R["unique"](items) == [1, {"a": [1]}, True, "1", [1, 2], None, 2]
    assert R["unique"]([{"a": 1, "b": 2}, {"b": 2, "a": 1}]) == [{"a": 1, "b": 2}]


def test_flatten() -> None:
    nested = [[1, [2, [3]]], 4, [], [[5]]]
    assert R["flatten"](nested) == [1, [2, [3]], 4, [5]]
    assert R["flatten"](nested, depth=2) == [1, 2, [3], 4, 5]
    assert R["flatten"](nested, depth=10) == [1, 2, 3, 4, 5]
    assert R["flatten"](nested, depth=0) == nested
    with pytest.raises(ValueError) as caught:
        R["flatten"]([], depth=-1)
    assert str(caught.value) == "depth must be >= 0, got -1"


def test_zip() -> None:
    assert R["zip"]([[1, 2, 3], ["a", "b"]]) == [[1, "a"], [2, "b"]]
    assert R["zip"]([]) == []
    with pytest.raises(ValueError) as caught:
        R["zip"]([[1, 2, 3], ["a", "b"]], strict=True)
    assert str(caught.value) == "lists have different lengths: 3, 2"


def test_range() -> None:
    assert R["range"](4) == [0, 1, 2, 3]
    assert R["range"](2, 5) == [2, 3, 4]
    assert R["range"](10, 0, -3) == [10, 7, 4, 1]
    assert R["range"](5, 2) == []
    assert len(R["range"](1_000_000)) == 1_000_000
    with pytest.raises(ValueError) as caught:
        R["range"](0, 1_000_001)
    assert str(caught.value) == "range would have more than 1000000 items"
    with pytest.raises(ValueError, match=r"^range would have more than"):
        R["range"](0, 10**30)
    with pytest.raises(ValueError) as caught:
        R["range"](0, 5, 0)
    assert str(caught.value) == "step must not be zero"


def test_range_schema_rejects_floats() -> None:
    with pytest.raises(ArgumentValidationError):
        R["range"].validate_arguments({"start": 1.5})


def test_filter_by_value_and_by_existence() -> None:
    assert [p["name"] for p in R["filter"](PEOPLE, "age", equals=31)] == ["ann", "dee"]
    assert [p["name"] for p in R["filter"](PEOPLE, "team.id", equals="b")] == ["cy"]
    assert [p["name"] for p in R["filter"](PEOPLE, "team")] == ["dee"]
    assert [p["name"] for p in R["filter"](PEOPLE, "team", exists_only=True)] == [
        "cy",
        "ann",
        "dee",
    ]
    assert R["filter"]([1, 2, 1.0, True], "", equals=1) == [1, 1.0]


def test_map() -> None:
    assert R["map"](PEOPLE, "name") == ["cy", "ann", "bob", "dee"]
    assert R["map"](PEOPLE, "team.id") == ["b", "a", None, None]
    assert R["map"]([[1, 2], [3]], "[1]") == [2, None]


def test_first_last_reverse_slice() -> None:
    assert (R["first"]([1, 2, 3]), R["last"]([1, 2, 3])) == (1, 3)
    with pytest.raises(ValueError) as caught:
        R["first"]([])
    assert str(caught.value) == "first of an empty list"
    with pytest.raises(ValueError) as caught:
        R["last"]([])
    assert str(caught.value) == "last of an empty list"
    assert R["reverse"]([1, 2, 3]) == [3, 2, 1]
    assert R["slice"]([0, 1, 2, 3, 4], 1, 3) == [1, 2]
    assert R["slice"]([0, 1, 2, 3, 4], -2) == [3, 4]
    assert R["slice"]([0, 1, 2, 3, 4], stop=-3) == [0, 1]
