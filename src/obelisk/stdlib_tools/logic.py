"""Logic tools: route a value by a condition (docs/language.md), and boolean helpers."""

from __future__ import annotations

from typing import Any

from obelisk.interpreter.tools.options import Outcome
from obelisk.interpreter.tools.tool import Tool, standard_tool
from obelisk.stdlib_tools._common import one_line

__all__ = ["TOOLS", "all_true", "any_true", "branch", "if_else", "not_"]


@standard_tool(pure=True)
def branch(condition: bool, value: Any = None) -> Outcome:
    """Route `value` (default null) by `condition`: to the first alternative of the output
    path when true, else to the second (e.g. "_outputPath": "†state.yes || †state.no");
    only the written branch's readers run."""
    return Outcome(0 if condition else 1, value)


@standard_tool(pure=True)
def if_else(condition: bool, then: Any, otherwise: Any) -> Any:
    """`then` when `condition` is true, else `otherwise` (both are evaluated; see `branch`
    to run only one side)."""
    return then if condition else otherwise


@standard_tool(name="not", pure=True)
def not_(value: bool) -> bool:
    """The negation of a boolean."""
    return not value


@standard_tool(pure=True)
def all_true(values: list[bool]) -> bool:
    """True when every item of `values` is true (true for an empty list)."""
    return all(values)


@standard_tool(pure=True)
def any_true(values: list[bool]) -> bool:
    """True when at least one item of `values` is true (false for an empty list)."""
    return any(values)


TOOLS: tuple[Tool, ...] = one_line(branch, if_else, not_, all_true, any_true)
