"""The ``arguments`` of plain calls share one table of keys per set of names (issue 31,
point 6; docs/performance.md, "Memory"): a plain ``dict``, equal, in the same order,
that dumps and copies as before, at about half the bytes."""

from __future__ import annotations

import copy
import json
import sys

from obelisk.interpreter.plan.parse import parse_plan


def _calls() -> list[dict[str, object]]:
    return [
        {"_tool": "t", "b": i, "a": "†state.x", "c": {"d": [1]}, "_outputPath": f"†state.v{i}"}
        for i in range(3)
    ]


def test_arguments_are_equal_dicts_in_order() -> None:
    plan = parse_plan(_calls())
    for i, call in enumerate(plan.calls):
        assert type(call.arguments) is dict
        assert call.arguments == {"b": i, "a": "†state.x", "c": {"d": [1]}}
        assert list(call.arguments) == ["b", "a", "c"]
        assert json.dumps(call.arguments) == json.dumps({"b": i, "a": "†state.x", "c": {"d": [1]}})
        assert copy.deepcopy(call.arguments) == call.arguments
    assert plan.calls[0].to_data() == _calls()[0]
    assert parse_plan(plan.to_json()) == plan


def _many_calls(name: str = "a") -> list[dict[str, object]]:
    return [{"_tool": "t", "b": i, name: i, "_outputPath": f"†state.v{i}"} for i in range(50)]


def test_arguments_share_their_keys() -> None:
    # measured on the last of many calls: a key table's first users see it still growing
    plan = parse_plan(_many_calls())
    own = dict(plan.calls[-1].arguments)  # a dict of its own, keys and all
    assert sys.getsizeof(plan.calls[-1].arguments) < sys.getsizeof(own)


def test_a_long_argument_name_is_not_shared() -> None:
    long = "n" * 65  # longer than any name the tables keep alive
    plan = parse_plan(_many_calls(long))
    arguments = plan.calls[-1].arguments
    assert arguments == {"b": 49, long: 49}
    assert sys.getsizeof(arguments) >= sys.getsizeof(dict(arguments))  # not smaller: no shared keys


def test_shared_arguments_can_still_change() -> None:
    call = parse_plan(_calls()).calls[0]
    arguments = call.arguments
    arguments["e"] = 5
    del arguments["b"]
    assert arguments == {"a": "†state.x", "c": {"d": [1]}, "e": 5}
    assert parse_plan(_calls()).calls[0].arguments == {"b": 0, "a": "†state.x", "c": {"d": [1]}}
