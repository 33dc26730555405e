"""List tools: count, order, deduplicate, reshape and select items.

``key`` and ``path`` arguments are relative paths into each item, as in ``get``
(``"price"``, ``"user.name"``, ``"[0]"``; ``""`` is the item itself).
"""

from __future__ import annotations

from typing import Any

from obelisk.interpreter.tools.tool import Tool, standard_tool
from obelisk.stdlib_tools._common import (
    check_output_size,
    compile_path,
    json_equal,
    json_key,
    json_type,
    lookup,
    one_line,
)

__all__ = [
    "MAX_RANGE",
    "TOOLS",
    "count",
    "filter_items",
    "first",
    "flatten",
    "last",
    "map_items",
    "range_list",
    "reverse",
    "slice_items",
    "sort",
    "unique",
    "zip_lists",
]

MAX_RANGE = 1_000_000


@standard_tool(pure=True)
def count(items: list[Any]) -> int:
    """The number of items in a list."""
    return len(items)


@standard_tool(pure=True)
def sort(items: list[Any], key: str | None = None, reverse: bool = False) -> list[Any]:
    """`items` sorted (stable) by themselves or by the value at relative path `key` in each
    ("price", "user.name"); items without a value there (or null) go last. The values must
    be all numbers, all strings or all booleans, else TypeError."""
    path = "" if key is None else key
    compile_path(path)  # report a bad path even for an empty list
    keyed: list[tuple[Any, Any]] = []
    absent: list[Any] = []
    kinds: set[str] = set()
    for item in items:
        found, value = lookup(item, path)
        if not found or value is None:
            absent.append(item)
            continue
        kinds.add(json_type(value))
        keyed.append((value, item))
    where = f" at key {key!r}" if key else ""
    if len(kinds) > 1:
        raise TypeError(f"cannot sort a mix of {' and '.join(sorted(kinds))} values{where}")
    if kinds - {"number", "string", "boolean"}:
        raise TypeError(f"cannot sort {kinds.pop()} values{where}; they have no order")
    keyed.sort(key=lambda pair: pair[0], reverse=reverse)
    return [item for _value, item in keyed] + absent


@standard_tool(pure=True)
def unique(items: list[Any]) -> list[Any]:
    """`items` without repeats (JSON equality, so objects and lists work too), keeping the
    first occurrence of each, in order."""
    seen: set[Any] = set()
    result: list[Any] = []
    for item in items:
        marker = json_key(item)
        if marker not in seen:
            seen.add(marker)
            result.append(item)
    return result


def _flatten(items: list[Any], depth: int) -> list[Any]:
    result: list[Any] = []
    for item in items:
        if isinstance(item, list) and depth > 0:
            result.extend(_flatten(item, depth - 1))
        else:
            result.append(item)
    return result


@standard_tool(pure=True)
def flatten(items: list[Any], depth: int = 1) -> list[Any]:
    """`items` with nested lists spliced in, `depth` levels deep ([[1, [2]], 3] -> [1, [2], 3]
    with depth 1). Negative depth: ValueError."""
    if depth < 0:
        raise ValueError(f"depth must be >= 0, got {depth}")
    return _flatten(items, depth)


@standard_tool(name="zip", pure=True)
def zip_lists(lists: list[list[Any]], strict: bool = False) -> list[list[Any]]:
    """Rows made of the i-th item of every list ([[1, 2], ["a", "b"]] -> [[1, "a"], [2, "b"]]),
    stopping at the shortest list; with `strict`, lists of different lengths: ValueError."""
    if strict and len({len(items) for items in lists}) > 1:
        lengths = ", ".join(str(len(items)) for items in lists)
        raise ValueError(f"lists have different lengths: {lengths}")
    return [list(row) for row in zip(*lists, strict=False)]


@standard_tool(name="range", pure=True)
def range_list(start: int, stop: int | None = None, step: int = 1) -> list[int]:
    """The integers from `start` up to but not including `stop`, every `step`; with no
    `stop`, 0 .. start - 1 (as Python's range). step 0 or over 1000000 items: ValueError."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("step must not be zero")
    numbers = range(start, stop, step)
    try:
        size = len(numbers)
    except OverflowError:
        size = MAX_RANGE + 1
    if size > MAX_RANGE:
        raise ValueError(f"range would have more than {MAX_RANGE} items")
    check_output_size("range", 2 * size + 1)  # a digit and a comma each, at least
    return list(numbers)


@standard_tool(name="filter", pure=True)
def filter_items(
    items: list[Any], path: str, equals: Any = None, exists_only: bool = False
) -> list[Any]:
    """The items whose value at relative path `path` equals `equals` (JSON equality; default
    null), or, with `exists_only`, that have any value (even null) there. Order is kept."""
    compile_path(path)
    kept: list[Any] = []
    for item in items:
        found, value = lookup(item, path)
        if found and (exists_only or json_equal(value, equals)):
            kept.append(item)
    return kept


@standard_tool(name="map", pure=True)
def map_items(items: list[Any], path: str) -> list[Any]:
    """The value at relative path `path` in each item ("user.name"), null where missing."""
    compile_path(path)
    return [lookup(item, path)[1] for item in items]


@standard_tool(pure=True)
def first(items: list[Any]) -> Any:
    """The first item of a list. An empty list: ValueError."""
    if not items:
        raise ValueError("first of an empty list")
    return items[0]


@standard_tool(pure=True)
def last(items: list[Any]) -> Any:
    """The last item of a list. An empty list: ValueError."""
    if not items:
        raise ValueError("last of an empty list")
    return items[-1]


@standard_tool(pure=True)
def reverse(items: list[Any]) -> list[Any]:
    """The items in reverse order."""
    return items[::-1]


@standard_tool(name="slice", pure=True)
def slice_items(items: list[Any], start: int = 0, stop: int | None = None) -> list[Any]:
    """items[start:stop] (Python slicing: negative indexes count from the end; stop null: to
    the end)."""
    return items[start:stop]


TOOLS: tuple[Tool, ...] = one_line(
    count,
    sort,
    unique,
    flatten,
    zip_lists,
    range_list,
    filter_items,
    map_items,
    first,
    last,
    reverse,
    slice_items,
)
