"""``sorted_keys`` lives once, in ``obelisk.json_values`` (issue 26: the CLI had its own copy).

The command line prints a final state with its keys sorted (``obelisk run --json``,
``obelisk loop --json``), so the same run prints the same bytes; the walk is the one
``copy_json`` falls back to for deep nesting.
"""

from __future__ import annotations

import json

from obelisk.json_values import copy_json, sorted_keys


def test_sorted_keys_sorts_every_object_and_keeps_list_order() -> None:
    value = {"b": [{"z": 1, "y": {"d": 2, "c": 3}}, 2], "a": None}
    result = sorted_keys(value)
    assert json.dumps(result) == '{"a": null, "b": [{"y": {"c": 3, "d": 2}, "z": 1}, 2]}'
    assert value == {"b": [{"z": 1, "y": {"d": 2, "c": 3}}, 2], "a": None}  # not changed
    assert result["b"] is not value["b"]


def test_sorted_keys_takes_any_nesting() -> None:
    deep: object = 1
    for n in range(5000):
        deep = {"k": deep, "a": n} if n % 2 else [deep]
    node = sorted_keys(deep)
    levels = 0
    while isinstance(node, (dict, list)):
        levels += 1
        if isinstance(node, dict):
            assert list(node) == ["a", "k"]
            node = node["k"]
        else:
            node = node[0]
    assert (levels, node) == (5000, 1)


def test_sorted_keys_orders_non_string_keys_by_their_text() -> None:
    assert list(sorted_keys({2: "x", 10: "y", "a": "z"})) == [10, 2, "a"]


def test_copy_json_keeps_key_order_when_deep() -> None:
    deep: object = {"b": 1, "a": 2}
    for _ in range(5000):
        deep = {"z": deep, "y": 0}
    node = copy_json(deep)
    for _ in range(5000):
        assert list(node) == ["z", "y"]
        node = node["z"]
    assert list(node.items()) == [("b", 1), ("a", 2)]
