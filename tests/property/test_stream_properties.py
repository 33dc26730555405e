"""Streaming dispatch gives the same result as waiting for the whole plan (docs/loop.md).

Random valid DAG plans written in dependency order (node ``k`` reads outputs of
earlier nodes, directly or through a ``||`` fallback onto an error arm; some
nodes' tools raise; some nodes push onto a shared list), cut into chunks of a
random size: the streamed run and the whole-plan run end in the same state,
with the same call statuses, under random tool delays.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import obelisk


@st.composite
def dag_plans(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[int, float]]:
    size = draw(st.integers(1, 8))
    calls: list[dict[str, Any]] = []
    delays: dict[int, float] = {}
    writers: list[int] = []  # nodes that write †state.n<k> (the others push onto the log)
    for k in range(size):
        reads = draw(st.lists(st.sampled_from(writers), unique=True, max_size=2)) if writers else []
        arguments = {
            f"a{position}": (
                f"†state.n{j} || †state.e{j}" if draw(st.booleans()) else f"†state.n{j}"
            )
            for position, j in enumerate(reads)
        }
        fails = draw(st.booleans())
        target = f"†state.n{k}"
        if draw(st.booleans()):
            target += f" || †state.e{k}"
        call: dict[str, Any] = {"_tool": "node", "k": k, "fail": fails, "inputs": arguments}
        if draw(st.integers(0, 4)) == 0:
            call["_outputPath"], call["_outputMethod"] = "†state.log", "push"
        else:
            call["_outputPath"] = target
            writers.append(k)
        calls.append(call)
        delays[k] = draw(st.sampled_from([0.0, 0.0005, 0.002]))
    return calls, delays


def _tool(delays: dict[int, float]) -> obelisk.Tool:
    @obelisk.tool
    async def node(k: int, fail: bool, inputs: dict[str, Any]) -> dict[str, Any]:
        "A node of the random DAG."
        await asyncio.sleep(delays[k])
        if fail:
            raise RuntimeError(f"node {k} failed")
        return {"k": k, "seen": inputs}

    return node


@given(dag_plans(), st.integers(1, 40), st.data())
def test_streamed_and_whole_plan_runs_agree(
    plan: tuple[list[dict[str, Any]], dict[int, float]], chunk: int, data: st.DataObject
) -> None:
    calls, delays = plan
    answers = [{"calls": calls, "output": None}, {"calls": [], "output": "done"}]
    whole_model = obelisk.ScriptedModel(answers)
    whole = obelisk.Loop(whole_model, [_tool(delays)]).run_sync()
    other_delays = {k: data.draw(st.sampled_from([0.0, 0.001])) for k in delays}
    streamed_model = obelisk.ScriptedModel(answers, tokens_per_second=1e6, chars_per_token=chunk)
    streamed = obelisk.Loop(streamed_model, [_tool(other_delays)], stream=True).run_sync()
    assert streamed.state == whole.state
    first_whole, first_streamed = whole.turns[0].run, streamed.turns[0].run
    assert first_whole is not None and first_streamed is not None
    assert [c.status for c in first_streamed.calls] == [c.status for c in first_whole.calls]
    assert [c.output for c in first_streamed.calls] == [c.output for c in first_whole.calls]
