"""A parsed call's fields live in a key-sharing dict (issue 31, memory per call).

Every :class:`Call` parsing makes keeps its 16 fields in a dict that shares its table
of keys with every other call's (benchmarks/memory.py): about 230 bytes instead of
about 580.  It is a plain ``dict``, so the call compares, dumps and copies as before.
"""

from __future__ import annotations

import sys

from obelisk.interpreter.plan.model import Call
from obelisk.interpreter.plan.parse import parse_plan

PLAN = [
    {"_tool": "add", "a": 1, "b": "†state.x", "_outputPath": "†state.y"},
    {"_tool": "add", "a": 2, "_outputPath": "†state.z", "_id": "two", "_reasoningForCall": "r"},
]


def test_a_parsed_call_keeps_its_fields_in_a_key_sharing_dict() -> None:
    for call in parse_plan(PLAN).calls:
        fields = call.__dict__
        assert type(fields) is dict and list(fields) == list(Call.model_fields)
        assert sys.getsizeof(fields) < sys.getsizeof(dict(fields))


def test_a_parsed_call_is_the_call_its_fields_make() -> None:
    plan = parse_plan(PLAN)
    for call in plan.calls:
        same = Call.model_construct(**dict(call.__dict__))
        assert call == same and hash(call.label) == hash(same.label)
        assert call.model_dump() == same.model_dump()
        assert call.to_data() == same.to_data()
    assert parse_plan(plan.to_json()).to_json() == plan.to_json()


def test_a_plain_calls_written_meta_is_a_dict_as_before() -> None:
    call = parse_plan(PLAN).calls[0]  # _tool, arguments and _outputPath only: the fast path
    assert call.written_meta == {"_outputPath": "†state.y"}
    assert type(call.written_meta) is dict and list(call.written_meta) == ["_outputPath"]
    assert call.to_data() == PLAN[0]
