"""Argument values of a call: the expressions inside them, and the limits they break.

Shared by the general call parser (:mod:`obelisk.interpreter.plan.call`) and its
fast path (:mod:`obelisk.interpreter.plan.plain`): :func:`scan_value` finds the
``†`` strings of a nested value and stops at the first value past a limit;
:func:`path_depth_problem` measures the references of a parsed expression.
"""

from __future__ import annotations

from typing import Any

from obelisk.diagnostics import DiagnosticCode
from obelisk.grammar import DAGGER, Escaped, Expression
from obelisk.json_values import decimal_digits, json_kind
from obelisk.limits import Limits, int_digits_limit

__all__ = [
    "SMALL_INT",
    "ArgPath",
    "ValueProblem",
    "huge_digits",
    "huge_message",
    "json_kind",
    "path_depth_problem",
    "scan_value",
]


ArgPath = tuple[str | int, ...]


_LOG2_10 = 3.3219280948873626
SMALL_INT = 10**18  # an integer below this in absolute value needs no scan (both parsers)


class ValueProblem(Exception):
    """A value that breaks a limit (``code`` ``limit``) or is not JSON data
    (``plan_shape``): ``message``, at argument path ``path``."""

    def __init__(self, code: DiagnosticCode, message: str, path: ArgPath) -> None:
        self.code, self.message, self.path = code, message, path


def huge_digits(value: int, digits_limit: int) -> int:
    """The decimal digits of ``value`` when more than ``digits_limit`` (else 0)."""
    if not digits_limit or value.bit_length() <= digits_limit * _LOG2_10 - 4:
        return 0
    digits = decimal_digits(value)
    return digits if digits > digits_limit else 0


def huge_message(value: int) -> str:
    return (
        f"integer of {decimal_digits(value)} digits is too long: Python converts at most "
        f"{int_digits_limit()} digits to text"
    )


def scan_value(value: Any, path: ArgPath, limits: Limits, found: list[tuple[ArgPath, str]]) -> None:
    """Append ``(path, text)`` for every string starting with ``†`` inside ``value``,
    in document order; iterative, so any nesting is safe.

    Raises ``ValueProblem`` for the first container nested deeper than
    ``limits.max_argument_depth`` levels (``[[1]]`` is 2 levels deep; the path is cut
    after three parts) or integer of more digits than Python converts to text.
    """
    max_depth = limits.max_argument_depth
    digits_limit = int_digits_limit()
    stack: list[tuple[Any, ArgPath, int]] = [(value, path, 1)]
    while stack:
        item, where, depth = stack.pop()
        kind = type(item)
        if kind is str:
            if item.startswith(DAGGER):
                found.append((where, item))
            continue
        if kind is int or (isinstance(item, int) and not isinstance(item, bool)):
            if huge_digits(item, digits_limit):
                raise ValueProblem("limit", huge_message(item), where)
            continue
        if isinstance(item, dict):
            for key in item:
                if type(key) is not str:
                    raise ValueProblem(
                        "plan_shape",
                        f"object keys must be strings, found {json_kind(key)} key",
                        where,
                    )
            children: list[tuple[Any, ArgPath, int]] = [
                (child, (*where, key), depth + 1) for key, child in item.items()
            ]
        elif isinstance(item, list):
            children = [(child, (*where, n), depth + 1) for n, child in enumerate(item)]
        else:
            continue
        if depth > max_depth:
            raise ValueProblem(
                "limit",
                f"nested deeper than {max_depth} levels (Limits.max_argument_depth)",
                (*where[: len(path) + 2], "..."),
            )
        stack.extend(reversed(children))


def path_depth_problem(
    node: Expression | Escaped, limits: Limits
) -> tuple[str, tuple[int, int]] | None:
    """``(message, span)`` when a reference of ``node`` has more segments than
    ``limits.max_path_depth`` (the span covers the segments past the limit), else None."""
    allowed = limits.max_path_depth
    if isinstance(node, Escaped):
        return None
    for ref in node.references:
        if len(ref.segments) > allowed:
            first = ref.segments[allowed].span[0]
            return (
                f"reference has {len(ref.segments)} path segments; at most {allowed} are "
                f"allowed (Limits.max_path_depth)",
                (first, ref.span[1]),
            )
    return None
