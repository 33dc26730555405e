"""Data tools: read, build and reshape JSON values.

Paths are relative paths in the reference syntax without the ``†kind``
(``"a.b[0]"``, ``"[2].name"``, ``'["a key"]'``, ``"items[*].id"``; ``""`` is the
whole value).
"""

from __future__ import annotations

from typing import Any

from obelisk.interpreter.tools.tool import Tool, standard_tool
from obelisk.json_values import deep_merge
from obelisk.stdlib_tools._common import lookup, one_line

__all__ = [
    "TOOLS",
    "const",
    "default_value",
    "get",
    "has",
    "keys",
    "merge",
    "omit",
    "pick",
    "values",
]


@standard_tool(pure=True)
def get(value: Any, path: str, default: Any = None) -> Any:
    """The part of `value` at relative `path` ("a.b[0]", "[2].name", "items[*].id"; "" = all
    of it); `default` when nothing is there. `[*]` yields a list. Bad path syntax: ValueError."""
    found, result = lookup(value, path)
    return result if found else default


@standard_tool(pure=True)
def has(value: Any, path: str) -> bool:
    """True when something (even null) is at relative `path` in `value` ("a.b[0]")."""
    return lookup(value, path)[0]


@standard_tool(pure=True)
def const(value: Any) -> Any:
    """Return `value` unchanged (writes a literal to the output path)."""
    return value


@standard_tool(pure=True)
def merge(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """Deep-merge objects left to right: nested objects merge key by key, anything else
    (lists too) is replaced by the later value. [] gives {}."""
    result: dict[str, Any] = {}
    for item in objects:
        result = deep_merge(result, item)
    return result


@standard_tool(pure=True)
def pick(value: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """An object with only the given `keys` of `value`, in the order of `keys`; absent keys
    are left out."""
    return {key: value[key] for key in dict.fromkeys(keys) if key in value}


@standard_tool(pure=True)
def omit(value: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """`value` without the given `keys` (absent keys are ignored)."""
    drop = set(keys)
    return {key: item for key, item in value.items() if key not in drop}


@standard_tool(name="default", pure=True)
def default_value(value: Any, fallback: Any) -> Any:
    """`value`, or `fallback` when `value` is null."""
    return fallback if value is None else value


@standard_tool(pure=True)
def keys(value: dict[str, Any]) -> list[str]:
    """The keys of an object, in order."""
    return list(value)


@standard_tool(pure=True)
def values(value: dict[str, Any]) -> list[Any]:
    """The values of an object, in key order."""
    return list(value.values())


TOOLS: tuple[Tool, ...] = one_line(get, has, const, merge, pick, omit, default_value, keys, values)
