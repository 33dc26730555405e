"""The 40 NESTFUL v2 math tools as obelisk tools.

Written clean-room from ``tests/data/nestful/v2_math_functions.json`` (a
description of the semantics of upstream's ``basic_functions.py``; no upstream
code was read or copied).  Every tool takes ``arg_0`` (and ``arg_1`` where the
spec has one) and returns ``{"result": value}``, the single output field.

Numbers are strict ``int | float`` (:data:`Number`): an int stays an int and a
float a float, as in upstream's untyped Python (``volume_cube(2)`` is ``8``, not
``8.0``), even where a record's catalog says ``float`` (records pass ints
there); strings and booleans are rejected.  Parameters the spec calls integers
(``sqrt``, ``factorial``, ``permutation``, ``choose``) take only ints, as the
``math`` functions behind them do (``25.0`` is rejected).

Quirks kept from the spec:

* ``sqrt`` is the *integer* square root (``isqrt``: ``sqrt(26) == 5``) and
  takes only an int (``25.0`` is rejected, as ``isqrt`` rejects it);
  ``square_edge_by_area`` and ``diagonal`` use the float square root.
* ``log`` truncates the logarithm to an int (toward zero), so the float error
  shows: ``log(1000, 10) == 2`` (``log`` is 2.9999999999999996); the base
  defaults to e.
* ``gcd`` truncates both arguments to int first; ``lcm`` is
  ``abs(a * b) // gcd(int(a), int(b))`` -- floor division of the *untruncated*
  product, so ``lcm(4.5, 6) == 13.0``.
* ``floor`` returns an int; ``factorial`` raises for a negative number, so
  ``permutation(n, r)`` with ``r > n`` raises too.
* ``reminder`` (sic) is ``remainder``; ``circumface`` (sic) is the circumference.
* ``remainder`` is Python's modulo (the sign follows the divisor).
* ``max_number`` / ``min_number`` take one list argument.
* ``cube_edge_by_volume`` is ``arg_0 ** (1/3)`` with float pow, so
  ``cube_edge_by_volume(64) == 3.9999999999999996``.
* Float formulas keep the spec's order of operations (``(4/3) * pi * r**3``),
  which decides the last bits.

A result that is not a JSON number (``power(-8, 1/3)`` is complex) does not fit
the output schema, so under obelisk that call fails (``OutputValidationError``).
"""

from __future__ import annotations

import math
from typing import Any, TypeAlias

from pydantic import StrictFloat, StrictInt
from typing_extensions import TypedDict

from obelisk import Registry, Tool, tool

__all__ = ["MATH_TOOL_NAMES", "TOOLS", "MathResult", "Number", "registry"]

Number: TypeAlias = StrictInt | StrictFloat
"""A JSON number, kept as it came: an int stays an int, a float a float; no strings, no bools."""


class MathResult(TypedDict):
    """The output of every math tool: the single field ``result``."""

    result: int | float


def _result(value: Any) -> MathResult:
    return {"result": value}


# -- arithmetic ---------------------------------------------------------------------


@tool(pure=True)
def add(arg_0: Number, arg_1: Number) -> MathResult:
    """Add two numbers: arg_0 + arg_1."""
    return _result(arg_0 + arg_1)


@tool(pure=True)
def subtract(arg_0: Number, arg_1: Number) -> MathResult:
    """Subtract two numbers: arg_0 - arg_1."""
    return _result(arg_0 - arg_1)


@tool(pure=True)
def multiply(arg_0: Number, arg_1: Number) -> MathResult:
    """Multiply two numbers: arg_0 * arg_1."""
    return _result(arg_0 * arg_1)


@tool(pure=True)
def divide(arg_0: Number, arg_1: Number) -> MathResult:
    """Divide two numbers: arg_0 / arg_1 (true division, always a float)."""
    return _result(arg_0 / arg_1)


@tool(pure=True)
def power(arg_0: Number, arg_1: Number) -> MathResult:
    """Raise a number to a power: arg_0 ** arg_1."""
    return _result(arg_0**arg_1)


@tool(pure=True)
def sqrt(arg_0: StrictInt) -> MathResult:
    """Integer square root: floor(sqrt(arg_0)); arg_0 must be an int."""
    return _result(math.isqrt(arg_0))


@tool(pure=True)
def inverse(arg_0: Number) -> MathResult:
    """The reciprocal of a number: 1 / arg_0."""
    return _result(1 / arg_0)


@tool(pure=True)
def negate(arg_0: Number) -> MathResult:
    """The negation of a number: -arg_0."""
    return _result(-arg_0)


@tool(pure=True)
def negate_prob(arg_0: Number) -> MathResult:
    """The probability of an event not occurring: 1 - arg_0."""
    return _result(1 - arg_0)


def _modulo(arg_0: Number, arg_1: Number) -> MathResult:
    return _result(arg_0 % arg_1)


@tool(pure=True)
def remainder(arg_0: Number, arg_1: Number) -> MathResult:
    """The remainder of arg_0 divided by arg_1 (Python modulo)."""
    return _modulo(arg_0, arg_1)


@tool(pure=True)
def reminder(arg_0: Number, arg_1: Number) -> MathResult:
    """The remainder of arg_0 divided by arg_1 (Python modulo; the benchmark's spelling)."""
    return _modulo(arg_0, arg_1)


@tool(pure=True)
def floor(arg_0: Number) -> MathResult:
    """The largest integer <= arg_0 (an int)."""
    return _result(math.floor(arg_0))


@tool(pure=True)
def log(arg_0: Number, arg_1: Number = math.e) -> MathResult:
    """The logarithm of arg_0 in base arg_1 (default e), truncated to an int."""
    return _result(int(math.log(arg_0, arg_1)))


# -- number theory and combinatorics -------------------------------------------------


@tool(pure=True)
def gcd(arg_0: Number, arg_1: Number) -> MathResult:
    """Greatest common divisor of int(arg_0) and int(arg_1)."""
    return _result(math.gcd(int(arg_0), int(arg_1)))


@tool(pure=True)
def lcm(arg_0: Number, arg_1: Number) -> MathResult:
    """Least common multiple: abs(arg_0 * arg_1) // gcd(int(arg_0), int(arg_1))."""
    return _result(abs(arg_0 * arg_1) // math.gcd(int(arg_0), int(arg_1)))


def _factorial(n: int) -> int:
    if n < 0:
        raise ValueError(f"factorial is not defined for negative numbers: {n}")
    return math.factorial(n)


@tool(pure=True)
def factorial(arg_0: StrictInt) -> MathResult:
    """arg_0! for a non-negative integer (0! = 1; a negative number raises)."""
    return _result(_factorial(arg_0))


@tool(pure=True)
def permutation(arg_0: StrictInt, arg_1: StrictInt) -> MathResult:
    """Permutations of arg_0 items taken arg_1 at a time: arg_0! // (arg_0 - arg_1)!."""
    return _result(_factorial(arg_0) // _factorial(arg_0 - arg_1))


@tool(pure=True)
def choose(arg_0: StrictInt, arg_1: StrictInt) -> MathResult:
    """The binomial coefficient C(arg_0, arg_1)."""
    return _result(math.comb(arg_0, arg_1))


@tool(pure=True)
def max_number(arg_0: list[Number]) -> MathResult:
    """The largest number of the list arg_0."""
    return _result(max(arg_0))


@tool(pure=True)
def min_number(arg_0: list[Number]) -> MathResult:
    """The smallest number of the list arg_0."""
    return _result(min(arg_0))


# -- geometry and motion -------------------------------------------------------------


@tool(pure=True)
def speed(arg_0: Number, arg_1: Number) -> MathResult:
    """Speed from distance arg_0 and time arg_1: arg_0 / arg_1."""
    return _result(arg_0 / arg_1)


@tool(pure=True)
def rectangle_area(arg_0: Number, arg_1: Number) -> MathResult:
    """Area of a rectangle of length arg_0 and width arg_1: arg_0 * arg_1."""
    return _result(arg_0 * arg_1)


@tool(pure=True)
def rectangle_perimeter(arg_0: Number, arg_1: Number) -> MathResult:
    """Perimeter of a rectangle: 2 * (arg_0 + arg_1)."""
    return _result(2 * (arg_0 + arg_1))


@tool(pure=True)
def diagonal(arg_0: Number, arg_1: Number) -> MathResult:
    """Diagonal of a rectangle: sqrt(arg_0**2 + arg_1**2) (float square root)."""
    return _result(math.sqrt(arg_0**2 + arg_1**2))


@tool(pure=True)
def square_area(arg_0: Number) -> MathResult:
    """Area of a square of side arg_0: arg_0 * arg_0."""
    return _result(arg_0 * arg_0)


@tool(pure=True)
def square_perimeter(arg_0: Number) -> MathResult:
    """Perimeter of a square of side arg_0: 4 * arg_0."""
    return _result(4 * arg_0)


@tool(pure=True)
def square_edge_by_area(arg_0: Number) -> MathResult:
    """Side of a square of area arg_0: sqrt(arg_0) (float square root)."""
    return _result(math.sqrt(arg_0))


@tool(pure=True)
def square_edge_by_perimeter(arg_0: Number) -> MathResult:
    """Side of a square of perimeter arg_0: arg_0 / 4."""
    return _result(arg_0 / 4)


@tool(pure=True)
def rhombus_area(arg_0: Number, arg_1: Number) -> MathResult:
    """Area of a rhombus with diagonals arg_0 and arg_1: 0.5 * arg_0 * arg_1."""
    return _result(0.5 * arg_0 * arg_1)


@tool(pure=True)
def triangle_area(arg_0: Number, arg_1: Number) -> MathResult:
    """Area of a triangle with base arg_0 and height arg_1: 0.5 * arg_0 * arg_1."""
    return _result(0.5 * arg_0 * arg_1)


@tool(pure=True)
def circle_area(arg_0: Number) -> MathResult:
    """Area of a circle of radius arg_0: pi * arg_0**2."""
    return _result(math.pi * arg_0**2)


@tool(pure=True)
def circumface(arg_0: Number) -> MathResult:
    """Circumference of a circle of radius arg_0: 2 * pi * arg_0 (the benchmark's spelling)."""
    return _result(2 * math.pi * arg_0)


@tool(pure=True)
def volume_cube(arg_0: Number) -> MathResult:
    """Volume of a cube of edge arg_0: arg_0 ** 3."""
    return _result(arg_0**3)


@tool(pure=True)
def surface_cube(arg_0: Number) -> MathResult:
    """Surface area of a cube of edge arg_0: 6 * arg_0**2."""
    return _result(6 * arg_0**2)


@tool(pure=True)
def cube_edge_by_volume(arg_0: Number) -> MathResult:
    """Edge of a cube of volume arg_0: arg_0 ** (1/3) (float pow)."""
    return _result(arg_0 ** (1 / 3))


@tool(pure=True)
def volume_sphere(arg_0: Number) -> MathResult:
    """Volume of a sphere of radius arg_0: (4/3) * pi * arg_0**3."""
    return _result((4 / 3) * math.pi * arg_0**3)


@tool(pure=True)
def surface_sphere(arg_0: Number) -> MathResult:
    """Surface area of a sphere of radius arg_0: 4 * pi * arg_0**2."""
    return _result(4 * math.pi * arg_0**2)


@tool(pure=True)
def volume_cylinder(arg_0: Number, arg_1: Number) -> MathResult:
    """Volume of a cylinder of radius arg_0 and height arg_1: pi * arg_0**2 * arg_1."""
    return _result(math.pi * arg_0**2 * arg_1)


@tool(pure=True)
def surface_cylinder(arg_0: Number, arg_1: Number) -> MathResult:
    """Surface area of a cylinder of radius arg_0 and height arg_1.

    2 * pi * arg_0 * (arg_0 + arg_1)
    """
    return _result(2 * math.pi * arg_0 * (arg_0 + arg_1))


@tool(pure=True)
def volume_cone(arg_0: Number, arg_1: Number) -> MathResult:
    """Volume of a cone of radius arg_0 and height arg_1: (1/3) * pi * arg_0**2 * arg_1."""
    return _result((1 / 3) * math.pi * arg_0**2 * arg_1)


TOOLS: tuple[Tool, ...] = (
    add,
    subtract,
    multiply,
    divide,
    power,
    sqrt,
    inverse,
    negate,
    negate_prob,
    remainder,
    reminder,
    floor,
    log,
    gcd,
    lcm,
    factorial,
    permutation,
    choose,
    max_number,
    min_number,
    speed,
    rectangle_area,
    rectangle_perimeter,
    diagonal,
    square_area,
    square_perimeter,
    square_edge_by_area,
    square_edge_by_perimeter,
    rhombus_area,
    triangle_area,
    circle_area,
    circumface,
    volume_cube,
    surface_cube,
    cube_edge_by_volume,
    volume_sphere,
    surface_sphere,
    volume_cylinder,
    surface_cylinder,
    volume_cone,
)
"""The 40 math tools, in the order of ``v2_math_functions.json``."""

MATH_TOOL_NAMES: frozenset[str] = frozenset(t.name for t in TOOLS)


def registry() -> Registry:
    """A fresh registry of the 40 math tools."""
    return Registry(TOOLS)
