"""JSON values as obelisk handles them: deep copies and deep merges.

Shared by the state (copies on the way in and out, the ``merge`` output method),
the execution loop and the standard tools.  A bottom layer: it imports nothing
from the rest of obelisk.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["copy_json", "deep_merge"]

_SCALARS = (str, int, float, bool, type(None))


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON-like value: dicts and lists are rebuilt, anything else
    is shared (dict and list subclasses go through :func:`copy.deepcopy`).  About
    5x faster than ``deepcopy`` on JSON documents (no memo bookkeeping).

    >>> original = {"a": [1, {"b": 2}]}
    >>> copied = copy_json(original)
    >>> copied == original, copied["a"] is original["a"]
    (True, False)
    """
    kind = type(value)
    if kind is dict:
        return {
            key: item if type(item) in _SCALARS else copy_json(item) for key, item in value.items()
        }
    if kind is list:
        return [item if type(item) in _SCALARS else copy_json(item) for item in value]
    if isinstance(value, (dict, list)):  # subclasses: keep their type
        return copy.deepcopy(value)
    return value


def deep_merge(base: Any, update: Any) -> Any:
    """Merge ``update`` into a copy of ``base``: objects merge key by key, recursively;
    anything else is replaced by ``update``.  Neither argument is changed.

    >>> deep_merge({"x": {"p": 1}, "y": 1}, {"x": {"q": 2}, "y": [2]})
    {'x': {'p': 1, 'q': 2}, 'y': [2]}
    """
    if isinstance(base, dict) and isinstance(update, dict):
        merged = dict(base)
        for key, value in update.items():
            merged[key] = deep_merge(merged[key], value) if key in merged else value
        return merged
    return update
