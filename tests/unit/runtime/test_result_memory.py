"""What a RunResult keeps of the check (issue 31, memory per call; benchmarks/memory.py).

A result that did not pause keeps no :class:`PlanGraph`: the check's graph is about a
third of what a check builds per call, and is built again from the same plan and
basis if the result is ever resumed.  A paused result keeps it, since it is resumed.
"""

from __future__ import annotations

import gc

import pytest

import obelisk
from obelisk.interpreter.analysis.graph import PlanGraph


@obelisk.tool
async def add(a: int = 0, b: int = 0) -> int:
    """a + b."""
    return a + b


@obelisk.tool
async def boom(a: int = 0) -> int:
    """Always fails."""
    raise ValueError("boom")


PLAN = [
    {"_tool": "add", "a": 1, "b": 2, "_outputPath": "†state.x"},
    {"_tool": "add", "a": "†state.x", "b": 3, "_outputPath": "†state.y"},
]


def _graphs() -> int:
    gc.collect()
    # type(), not isinstance(): a lazy proxy (openai's numpy one) imports on __class__
    return sum(1 for o in gc.get_objects() if type(o) is PlanGraph)


def test_a_finished_result_keeps_no_graph() -> None:
    before = _graphs()
    result = obelisk.run_sync(PLAN, [add])
    assert result.state == {"x": 3, "y": 6}
    assert _graphs() == before


def test_a_failed_result_is_retried_with_its_graph_built_again() -> None:
    plan = [*PLAN, {"_tool": "boom", "a": "†state.y", "_outputPath": "†state.z"}]
    attempts: list[int] = []

    @obelisk.tool(name="boom")
    async def flaky(a: int = 0) -> int:
        """Fails the first time."""
        attempts.append(a)
        if len(attempts) == 1:
            raise ValueError("first")
        return a

    result = obelisk.run_sync(plan, [add, flaky])
    assert result.status == "failed"
    before = _graphs()
    again = obelisk.resume_sync(result, retry="failed")
    assert again.status == "completed"
    assert again.state == {"x": 3, "y": 6, "z": 6}
    assert attempts == [6, 6]
    assert _graphs() == before


@pytest.mark.parametrize("decision", [True, False])
def test_a_paused_result_keeps_its_graph_and_resumes(decision: bool) -> None:
    @obelisk.tool(requires_approval=True)
    async def send(a: int = 0) -> int:
        """Needs a person."""
        return a

    plan = [*PLAN, {"_tool": "send", "a": "†state.y", "_outputPath": "†state.sent"}]
    result = obelisk.run_sync(plan, [add, send])
    assert result.status == "awaiting_approval"
    assert _graphs() >= 1
    again = obelisk.resume_sync(result, {result.pending[0].id: decision})
    assert ("sent" in again.state) is decision
