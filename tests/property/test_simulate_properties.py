"""Property: a dry run predicts the real run (docs/simulate.md).

For random plans (the random DAGs of ``test_engine_properties``: reads with and
without fallbacks, error arms, pushes, a path written by several calls, plan order
unlike dependency order) every call's outcome is left open: its stub lists
success and failure, so :func:`obelisk.simulate` explores every combination.  One
explored scenario is drawn, and the plan is really run with tools that succeed or
fail exactly as in that scenario.  The simulation's call records (status, output,
error, skip reason, untaken), its final state and each path's last writer must be
the real run's.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from test_engine_properties import Scenario, build_plan, scenarios

import obelisk


def plan_with_ids(scenario: Scenario) -> list[dict[str, Any]]:
    return [{**call, "_id": f"c{call['k']}"} for call in build_plan(scenario)]


def node_tool(fails: dict[int, bool]) -> obelisk.Tool:
    @obelisk.tool(name="node")
    async def node(k: int, inputs: list) -> Any:  # type: ignore[type-arg]
        """A node of the random DAG: {"k": k}, or it raises."""
        await asyncio.sleep(0)
        if fails.get(k, False):
            raise ValueError(f"node {k} failed")
        return {"k": k}

    return node


def records(calls: Any) -> list[tuple[Any, ...]]:
    return [(r.status, r.output, r.error, r.reason, r.untaken) for r in calls]


@given(st.data())
def test_a_dry_run_predicts_the_real_run(data: st.DataObject) -> None:
    scenario = data.draw(scenarios())
    plan = plan_with_ids(scenario)
    stubs = {f"c{n.k}": [{"k": n.k}, ValueError(f"node {n.k} failed")] for n in scenario.nodes}
    report = obelisk.simulate(plan, [node_tool({})], stubs=stubs, max_scenarios=2**7)
    assert [d for d in report.diagnostics if d.severity == "error"] == []
    assert not report.truncated
    chosen = data.draw(st.sampled_from(report.scenarios))
    # the outcome each call took in that scenario, by node id
    fails = {
        plan[i]["k"]: record.error is not None
        for i, record in enumerate(chosen.calls)
        if record.status != "skipped"
    }
    real = obelisk.run_sync(plan, [node_tool(fails)])
    assert records(chosen.calls) == records(real.calls)
    assert chosen.state == real.state
    labels = [record.label for record in real.calls]
    last_writer = {entry.path: labels[entry.call] for entry in real.log}
    assert chosen.writes == dict(sorted(last_writer.items()))
    assert chosen.ran == [labels[i] for i, r in enumerate(real.calls) if r.status != "skipped"]
