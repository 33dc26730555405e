"""Call records (docs/semantics.md, "RunResult and CallRecord"): the constructor takes
the output by name; a record that shares its output with a write log entry compares,
prints, pickles and copies as one that holds the same output."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

from pydantic_core import to_json

from obelisk import CallRecord, WriteEntry


def test_the_constructor_takes_the_output_and_no_private_parameter() -> None:
    names = list(inspect.signature(CallRecord).parameters)
    assert [name for name in names if name.startswith("_")] == []
    assert names[:6] == ["index", "id", "tool", "status", "arguments", "output"]
    record = CallRecord(0, None, "t", "succeeded", {}, {"a": [1]})
    assert record.output == {"a": [1]}
    assert record == CallRecord(0, None, "t", "succeeded", {}, output={"a": [1]})
    assert [f.name for f in dataclasses.fields(CallRecord)][5] == "output"


def test_a_record_sharing_a_log_entry_s_value_behaves_as_one_holding_it() -> None:
    held = CallRecord(0, None, "t", "succeeded", {}, {"a": [1]}, attempts=1)
    entry = WriteEntry(0, 0, None, "†state.v", "set", time=1.0, json=to_json({"a": [1]}))
    shared = CallRecord(0, None, "t", "succeeded", {}, attempts=1)
    shared.output_from(entry)
    assert shared.output is entry.value
    assert shared == held
    assert repr(shared) == repr(held)
    assert "output={'a': [1]}" in repr(shared)
    assert shared.to_dict() == held.to_dict()
    for copied in (
        pickle.loads(pickle.dumps(shared)),
        copy.copy(shared),
        copy.deepcopy(shared),
        dataclasses.replace(shared),
    ):
        assert copied == held
        assert copied.output == {"a": [1]}
    assert dataclasses.replace(shared, status="failed").output == {"a": [1]}
    shared.output = 5  # a value set later replaces the shared one
    assert shared.output == 5
    assert entry.value == {"a": [1]}
    assert shared != held
