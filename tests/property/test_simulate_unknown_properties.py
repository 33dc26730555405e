"""Property: a dry run whose values are all unknown still predicts the real run
(docs/simulate.md, "Unknown values").

The random plans of ``test_engine_properties`` call one tool described the way
OpenAI describes functions: parameters, no output schema.  With no stubs, every
result is unknown; the dry run explores the success and the error arm of each call
that has one.  One explored scenario is drawn, and the plan is really run with a
tool that fails exactly where that scenario took the error arm.  Every call's
status, skip reason and ``untaken``, the calls that ran, each path's last writer and
the shape of the final state (a result where the dry run has an unknown value) must
be the real run's.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from test_engine_properties import build_plan, scenarios

import obelisk

SPEC = {
    "type": "function",
    "function": {
        "name": "node",
        "description": "A node of the random DAG.",
        "parameters": {
            "type": "object",
            "properties": {"k": {"type": "integer"}, "inputs": {"type": "array"}},
            "required": ["k", "inputs"],
        },
    },
}


def node_tool(fails: set[int]) -> obelisk.Tool:
    def node(k: int, inputs: list[Any]) -> Any:
        if k in fails:
            raise ValueError(f"node {k} failed")
        return {"k": k}

    return obelisk.Tool.from_schema(SPEC, function=node)


def shape(value: Any) -> Any:
    """A result (unknown, or the real ``{"k": k}``) is ``"result"``; an error arm's
    value is ``"error"``; containers keep their shape."""
    if isinstance(value, obelisk.UnknownValue) or (isinstance(value, dict) and "k" in value):
        return "result"
    if isinstance(value, dict) and set(value) == {"error"}:
        return "error"
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    return value


@given(st.data())
def test_a_dry_run_of_unknown_values_predicts_the_real_run(data: st.DataObject) -> None:
    scenario = data.draw(scenarios())
    plan = build_plan(scenario)
    report = obelisk.simulate(plan, [node_tool(set())], max_scenarios=2**7)
    assert [d for d in report.diagnostics if d.severity == "error"] == []
    assert not report.truncated
    chosen = data.draw(st.sampled_from(report.scenarios))
    fails = {
        plan[i]["k"]
        for i, record in enumerate(chosen.calls)
        if record.error is not None and record.status != "skipped"
    }
    real = obelisk.run_sync(plan, [node_tool(fails)])
    statuses = [(r.status, r.reason, r.untaken) for r in real.calls]
    assert [(r.status, r.reason, r.untaken) for r in chosen.calls] == statuses
    assert shape(chosen.state) == shape(real.state)
    labels = [record.label for record in real.calls]
    last_writer = {entry.path: labels[entry.call] for entry in real.log}
    assert chosen.writes == dict(sorted(last_writer.items()))
    ran = [labels[i] for i, r in enumerate(real.calls) if r.status != "skipped"]
    assert chosen.ran == ran
    assert set(report.unknown) <= set(labels)
