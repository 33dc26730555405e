"""Arithmetic and comparison tools.

Numbers are JSON numbers: ints stay ints when every input is an int (``add(1, 2)``
is ``3``), otherwise the result is a float.  Results must be finite.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any

from obelisk.interpreter.tools.tool import Tool, standard_tool
from obelisk.stdlib_tools._common import json_equal, json_type, one_line

__all__ = [
    "TOOLS",
    "abs_value",
    "add",
    "compare",
    "divide",
    "equals",
    "greater_than",
    "less_than",
    "max_value",
    "mean",
    "min_value",
    "modulo",
    "multiply",
    "power",
    "round_number",
    "subtract",
    "sum_values",
]

Number = int | float
_MAX_DIGITS = 4300  # Python's default limit for int <-> str conversion


def _finite(result: Number, expression: str) -> Number:
    if isinstance(result, float) and not math.isfinite(result):
        raise OverflowError(f"{expression} is not a finite number")
    return result


@standard_tool(pure=True)
def add(a: Number, b: Number) -> Number:
    """a + b."""
    return _finite(a + b, f"{a} + {b}")


@standard_tool(pure=True)
def subtract(a: Number, b: Number) -> Number:
    """a - b."""
    return _finite(a - b, f"{a} - {b}")


@standard_tool(pure=True)
def multiply(a: Number, b: Number) -> Number:
    """a * b."""
    return _finite(a * b, f"{a} * {b}")


@standard_tool(pure=True)
def divide(a: Number, b: Number) -> float:
    """a / b, always a float (7 / 2 = 3.5). b = 0: ZeroDivisionError."""
    if b == 0:
        raise ZeroDivisionError(f"cannot divide {a} by zero")
    return _finite(a / b, f"{a} / {b}")


@standard_tool(pure=True)
def modulo(a: Number, b: Number) -> Number:
    """The remainder of a / b; it takes the sign of b (-7 mod 3 = 2).
    b = 0: ZeroDivisionError."""
    if b == 0:
        raise ZeroDivisionError(f"cannot take {a} modulo zero")
    return a % b


@standard_tool(pure=True)
def power(base: Number, exponent: Number) -> Number:
    """base ** exponent (an int when both are ints and exponent >= 0). A result that is
    not a real number (ValueError) or too large (OverflowError) is refused."""
    expression = f"({base}) ** {exponent}" if base < 0 else f"{base} ** {exponent}"
    if base == 0 and exponent < 0:
        raise ZeroDivisionError(f"{expression}: zero cannot be raised to a negative power")
    if (
        isinstance(base, int)
        and isinstance(exponent, int)
        and abs(base) > 1
        and exponent * math.log10(abs(base)) > _MAX_DIGITS
    ):
        raise OverflowError(f"{expression} has more than {_MAX_DIGITS} digits")
    try:
        result: Any = base**exponent
    except OverflowError:
        raise OverflowError(f"{expression} is not a finite number") from None
    if isinstance(result, complex):
        raise ValueError(f"{expression} is not a real number")
    return _finite(result, expression)


@standard_tool(name="round", pure=True)
def round_number(value: Number, digits: int = 0) -> Number:
    """`value` rounded to `digits` decimals, halves away from zero (2.5 -> 3, 2.675 -> 2.68,
    -0.5 -> -1); negative digits round to tens, hundreds... An int when digits <= 0."""
    if not math.isfinite(value):
        raise ValueError(f"cannot round {value}")
    if (isinstance(value, int) and digits >= 0) or digits > 400:
        return value  # a float has fewer than 400 decimals
    if digits < -_MAX_DIGITS:
        return 0
    exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    with localcontext() as context:
        context.prec = 2 * _MAX_DIGITS
        rounded = exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return int(rounded) if digits <= 0 else float(rounded)


@standard_tool(name="abs", pure=True)
def abs_value(value: Number) -> Number:
    """The absolute value of a number."""
    return abs(value)


@standard_tool(name="min", pure=True)
def min_value(values: list[Number]) -> Number:
    """The smallest number of `values`. An empty list: ValueError."""
    if not values:
        raise ValueError("min of an empty list")
    return min(values)


@standard_tool(name="max", pure=True)
def max_value(values: list[Number]) -> Number:
    """The largest number of `values`. An empty list: ValueError."""
    if not values:
        raise ValueError("max of an empty list")
    return max(values)


@standard_tool(name="sum", pure=True)
def sum_values(values: list[Number]) -> Number:
    """The total of `values` (0 for an empty list); an int when every value is an int."""
    if all(isinstance(value, int) for value in values):
        return sum(values)
    return _finite(math.fsum(values), "the sum")


@standard_tool(pure=True)
def mean(values: list[Number]) -> float:
    """The arithmetic mean of `values`, a float. An empty list: ValueError."""
    if not values:
        raise ValueError("mean of an empty list")
    return _finite(math.fsum(values) / len(values), "the mean")


def _order(left: Any, right: Any) -> int:
    kinds = json_type(left), json_type(right)
    if kinds not in (("number", "number"), ("string", "string")):
        raise TypeError(
            f"cannot compare a {kinds[0]} with a {kinds[1]}; both must be numbers or both strings"
        )
    return int(left > right) - int(left < right)


@standard_tool(pure=True)
def compare(left: Number | str, right: Number | str) -> int:
    """-1 if left < right, 0 if equal, 1 if left > right. Both numbers, or both strings
    (compared by code point, so ISO dates order correctly); else TypeError."""
    return _order(left, right)


@standard_tool(pure=True)
def less_than(left: Number | str, right: Number | str) -> bool:
    """left < right; both numbers or both strings (else TypeError)."""
    return _order(left, right) < 0


@standard_tool(pure=True)
def greater_than(left: Number | str, right: Number | str) -> bool:
    """left > right; both numbers or both strings (else TypeError)."""
    return _order(left, right) > 0


@standard_tool(pure=True)
def equals(left: Any, right: Any) -> bool:
    """Whether two JSON values are equal (1 equals 1.0; true does not equal 1; object key
    order does not matter)."""
    return json_equal(left, right)


TOOLS: tuple[Tool, ...] = one_line(
    add,
    subtract,
    multiply,
    divide,
    modulo,
    power,
    round_number,
    abs_value,
    min_value,
    max_value,
    sum_values,
    mean,
    compare,
    less_than,
    greater_than,
    equals,
)
