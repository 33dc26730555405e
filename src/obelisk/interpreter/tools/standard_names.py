"""The names of the standard tools, for diagnostics below the standard library.

The interpreter never imports :mod:`obelisk.stdlib_tools` (the import contracts in
pyproject.toml), yet ``obelisk.run(plan, [my_tool])`` with a standard tool in the plan
should say where that tool lives.  This is the list of their names; a test keeps it
equal to ``obelisk.stdlib_tools.default_registry().names()`` (docs/diagnostics.md).
"""

from __future__ import annotations

__all__ = ["STANDARD_TOOL_NAMES", "standard_tool_hint"]

STANDARD_TOOL_NAMES = frozenset(
    (
        "abs",
        "add",
        "add_seconds",
        "all_true",
        "any_true",
        "branch",
        "compare",
        "concat",
        "const",
        "contains",
        "count",
        "default",
        "divide",
        "ends_with",
        "equals",
        "filter",
        "first",
        "flatten",
        "format",
        "get",
        "greater_than",
        "has",
        "if_else",
        "join",
        "json_dump",
        "json_parse",
        "json_validate",
        "keys",
        "last",
        "length",
        "less_than",
        "list_dir",
        "lower",
        "map",
        "max",
        "mean",
        "merge",
        "min",
        "modulo",
        "multiply",
        "not",
        "now",
        "omit",
        "path_exists",
        "pick",
        "power",
        "range",
        "read_json",
        "read_text",
        "regex_find_all",
        "regex_match",
        "regex_replace",
        "replace",
        "reverse",
        "round",
        "seconds_between",
        "sleep",
        "slice",
        "sort",
        "split",
        "starts_with",
        "strip",
        "subtract",
        "sum",
        "to_number",
        "to_string",
        "today",
        "unique",
        "upper",
        "values",
        "write_json",
        "write_text",
        "zip",
    )
)
"""Every tool of ``obelisk.stdlib_tools.default_registry()``, by name."""


def standard_tool_hint(name: str) -> str | None:
    """For an unknown tool that has a standard tool's name: where to get the standard
    tools, as the end of an ``unknown_tool`` message; else ``None``."""
    if name not in STANDARD_TOOL_NAMES:
        return None
    return (
        f"; '{name}' is a standard tool: pass obelisk.stdlib_tools.default_registry() "
        "with your tools added to it (on the command line, leave out --no-stdlib)"
    )
