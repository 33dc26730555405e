"""Arithmetic and comparison tools."""

from __future__ import annotations

from typing import Any

import pytest

from obelisk.errors import ArgumentValidationError
from obelisk.stdlib_tools import default_registry

R = default_registry()


def _same(actual: Any, expected: Any) -> None:
    """Equal and of the same type (3 is not 3.0 here)."""
    assert (actual, type(actual)) == (expected, type(expected))


def test_basic_operations_keep_ints_as_ints() -> None:
    _same(R["add"](1, 2), 3)
    _same(R["add"](1, 2.5), 3.5)
    _same(R["subtract"](10, 4), 6)
    _same(R["subtract"](0.5, 0.25), 0.25)
    _same(R["multiply"](6, 7), 42)
    _same(R["multiply"](1.5, 2), 3.0)
    _same(R["divide"](7, 2), 3.5)
    _same(R["divide"](6, 3), 2.0)
    _same(R["modulo"](7, 3), 1)
    _same(R["modulo"](-7, 3), 2)
    _same(R["modulo"](5.5, 2), 1.5)
    _same(R["power"](2, 10), 1024)
    _same(R["power"](2, -1), 0.5)
    _same(R["power"](9, 0.5), 3.0)
    _same(R["abs"](-3), 3)


def test_division_by_zero_messages() -> None:
    with pytest.raises(ZeroDivisionError) as caught:
        R["divide"](5, 0)
    assert str(caught.value) == "cannot divide 5 by zero"
    with pytest.raises(ZeroDivisionError) as caught:
        R["modulo"](5, 0.0)
    assert str(caught.value) == "cannot take 5 modulo zero"
    with pytest.raises(ZeroDivisionError) as caught:
        R["power"](0, -2)
    assert str(caught.value) == "0 ** -2: zero cannot be raised to a negative power"


def test_power_refuses_complex_and_huge_results() -> None:
    with pytest.raises(ValueError) as complex_result:
        R["power"](-8, 0.5)
    assert str(complex_result.value) == "(-8) ** 0.5 is not a real number"
    with pytest.raises(OverflowError) as too_large:
        R["power"](10, 5000)
    assert str(too_large.value) == "10 ** 5000 has more than 4300 digits"
    with pytest.raises(OverflowError) as too_large:
        R["power"](10.0, 400)
    assert str(too_large.value) == "10.0 ** 400 is not a finite number"


def test_float_overflow_is_refused() -> None:
    with pytest.raises(OverflowError) as caught:
        R["multiply"](1e308, 10)
    assert str(caught.value) == "1e+308 * 10 is not a finite number"


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (2.5, 0, 3),
        (3.5, 0, 4),
        (-0.5, 0, -1),
        (2.675, 2, 2.68),
        (1.005, 2, 1.01),
        (1234.5678, 1, 1234.6),
        (1250, -2, 1300),
        (1249, -2, 1200),
        (1249.9, -3, 1000),
        (7, 2, 7),
        (0.1, 30, 0.1),
        (123.0, -5000, 0),
    ],
)
def test_round_halves_away_from_zero(value: float, digits: int, expected: float) -> None:
    _same(R["round"](value, digits), expected)


def test_round_default_digits_gives_an_int() -> None:
    _same(R["round"](2.4), 2)


def test_min_max_sum_mean() -> None:
    _same(R["min"]([3, 1.5, 2]), 1.5)
    _same(R["max"]([3, 1.5, 2]), 3)
    _same(R["sum"]([1, 2, 3]), 6)
    _same(R["sum"]([0.1, 0.2, 0.3]), 0.6)
    _same(R["sum"]([]), 0)
    _same(R["mean"]([1, 2, 3, 4]), 2.5)
    for name in ("min", "max", "mean"):
        with pytest.raises(ValueError) as caught:
            R[name]([])
        assert str(caught.value) == f"{name} of an empty list"


def test_compare_less_than_greater_than() -> None:
    assert [R["compare"](1, 2), R["compare"](2, 2.0), R["compare"](3, 2)] == [-1, 0, 1]
    assert R["compare"]("2024-01-31", "2024-02-01") == -1
    assert R["less_than"](1, 2) is True
    assert R["greater_than"]("b", "a") is True
    with pytest.raises(TypeError) as caught:
        R["compare"]("1", 2)
    assert str(caught.value) == (
        "cannot compare a string with a number; both must be numbers or both strings"
    )


def test_equals_uses_json_equality() -> None:
    assert R["equals"](1, 1.0) is True
    assert R["equals"](1, True) is False
    assert R["equals"]({"a": [1, {"b": None}], "c": 2}, {"c": 2, "a": [1, {"b": None}]}) is True
    assert R["equals"]([1, 2], [2, 1]) is False
    assert R["equals"](None, None) is True
    assert R["equals"]("1", 1) is False


def test_number_schema_rejects_text_and_coerces_numeric_strings() -> None:
    with pytest.raises(ArgumentValidationError) as caught:
        R["add"].validate_arguments({"a": "abc", "b": 1})
    assert {p.loc[0] for p in caught.value.problems} == {"a"}
    assert R["add"].validate_arguments({"a": 1, "b": 2.5}) == {"a": 1, "b": 2.5}
    assert R["add"].validate_arguments({"a": "3", "b": 1}) == {"a": 3, "b": 1}
    with pytest.raises(ArgumentValidationError) as caught:
        R["mean"].validate_arguments({"values": [1, "x"]})
    assert caught.value.problems[0].loc[:2] == ("values", 1)
    with pytest.raises(ArgumentValidationError):
        R["compare"].validate_arguments({"left": [1], "right": 2})
